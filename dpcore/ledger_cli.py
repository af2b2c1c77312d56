"""``python -m dpcore ledger ...``: create, check, show and back up the privacy-budget ledger.

    dpcore ledger init [URL]             # create a new, empty ledger (refused where one exists)
    dpcore ledger verify [URL]           # integrity, schema version, append-only triggers, the hash chain
    dpcore ledger show [URL]             # accounts: label, public id, cap, spent, entries
    dpcore ledger backup DEST [--ledger URL]   # a consistent copy of a SQLite ledger (mode 0600)
    dpcore ledger population add NAME --cap-epsilon E [--cap-delta D] [--label TEXT] [--ledger URL]
    dpcore ledger population list [--ledger URL]
    dpcore ledger population attach NAME FILE... [--ledger URL]   # attach a source's records (CSV/Parquet)

A population is the set of people a budget protects; the data owner registers it once with its caps,
plans name it (``population = "..."``), and every source of its records (files, tables, queries, the
app's uploads) is attached to it by a fingerprint of the records (:func:`dpcore.ledger.dataset_fingerprint`)
at its first release -- or explicitly with ``population attach`` (e.g. another extract of the same people).

URL defaults to ``$DPCORE_LEDGER_URL``, else ``~/.local/share/dpcore/ledger.db`` (:func:`dpcore.ledger.default_url`).
Exit codes: 0 success (``verify``: the ledger is intact; one ``ledger OK: ...`` line); 2 anything wrong
(``verify``: what is wrong; a missing, damaged or unreachable ledger; a bad URL), as one line
``dpcore: error: ...`` on stderr without a traceback. ``show`` never prints a dataset id (a fingerprint
of the data) or the ledger's key: accounts appear by label and keyed public id.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import ledger as ledger_lib
from .validation import DPInputError

__all__ = ["main", "build_parser"]


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit code 2 (as ``dpcore release``)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"dpcore: error: {message} (see 'dpcore ledger --help')", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="dpcore ledger", description="Create, check, show and back up the privacy-budget ledger (docs/ledger.md)."
    )
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    url_help = "ledger URL (sqlite:///path.db or postgresql://...); default: $DPCORE_LEDGER_URL or ~/.local/share/dpcore/ledger.db"
    init = sub.add_parser("init", help="create a new, empty ledger (refused where a ledger or any file exists)")
    init.add_argument("url", nargs="?", default=None, help=url_help)
    ver = sub.add_parser("verify", help="check integrity, schema, append-only triggers and the entries' hash chain")
    ver.add_argument("url", nargs="?", default=None, help=url_help)
    show = sub.add_parser("show", help="list the accounts: label, public id, cap, spent, entries")
    show.add_argument("url", nargs="?", default=None, help=url_help)
    back = sub.add_parser("backup", help="write a consistent copy of a SQLite ledger to DEST (mode 0600)")
    back.add_argument("dest", help="the copy's path (must not exist)")
    back.add_argument("--ledger", default=None, help=url_help)
    pop = sub.add_parser("population", help="register and list populations (one budget per population)")
    pop_sub = pop.add_subparsers(dest="population_command", parser_class=_Parser)
    add = pop_sub.add_parser("add", help="register a population (the people protected) with its caps, once")
    add.add_argument("name", help="the population's name, as plans give it (population = \"NAME\")")
    add.add_argument("--cap-epsilon", type=float, required=True, help="the total ε of every release about these people")
    add.add_argument(
        "--cap-delta",
        type=float,
        default=0.0,
        help="the total δ (default 0: pure ε-DP only; the Gini's Laplace noise needs e.g. 1e-8)",
    )
    add.add_argument("--label", default="", help="a longer description (shown by 'show')")
    add.add_argument("--ledger", default=None, help=url_help)
    lst = pop_sub.add_parser("list", help="the populations: name, cap, spent, sources attached")
    lst.add_argument("--ledger", default=None, help=url_help)
    att = pop_sub.add_parser("attach", help="attach the records of files (CSV or Parquet) to a population")
    att.add_argument("name", help="the registered population")
    att.add_argument("files", nargs="+", help="CSV (optionally .gz/.zst/.bz2) or Parquet files")
    att.add_argument("--ledger", default=None, help=url_help)
    return parser


def _say(line: str) -> None:
    print(f"dpcore: {line}", file=sys.stderr, flush=True)


def _init(args: argparse.Namespace) -> int:
    db = ledger_lib.init_ledger(args.url, on_wait=_say)
    print(f"created a new, empty ledger: {db.describe()}")
    return 0


def _verify(args: argparse.Namespace) -> int:
    report = ledger_lib.open_ledger(args.url, create=False, on_wait=_say).verify()
    if report.ok:
        print(report.summary())
        return 0
    print(f"dpcore: error: {report.summary()}", file=sys.stderr)
    for problem in report.problems:
        print(f"  - {problem}", file=sys.stderr)
    return 2


def _show(args: argparse.Namespace) -> int:
    db = ledger_lib.open_ledger(args.url, create=False, on_wait=_say)
    accounts = db.accounts()
    print(f"{db.describe()}: {len(accounts)} account(s)")
    for acct in accounts:
        entries = acct.entries()
        spent = acct.spent(entries)
        cap = f"ε = {acct.cap_epsilon:g}" + (f", δ = {acct.cap_delta:.3g}" if acct.cap_delta else "")
        used = f"ε = {spent['epsilon']:.6g}" + (f", δ = {spent['delta']:.3g}" if acct.cap_delta else "")
        hidden = sum(1 for e in entries if e.result is None)
        name = acct.label or ("(no label)" if acct.id_is_a_hash() else acct.dataset_id)  # a name, not a hash
        population = db.population_of_account(acct.dataset_id)
        if population is not None and population != name:
            name = f"{name} (population {population})"
        print(
            f"  {name} [public id {acct.public_id}]: spent {used} of {cap}; "
            f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}"
            + (f" ({hidden} not revealed)" if hidden else "")
            + f"; created {acct.created[:19]}"
        )
    for path, n in db.pending_results():
        print(f"  {n} result mark(s) journaled at {path}, waiting for the database to be writable")
    return 0


def _population(args: argparse.Namespace) -> int:
    if args.population_command is None:
        raise DPInputError("say what to do: 'dpcore ledger population add NAME --cap-epsilon E', 'list' or 'attach'")
    db = ledger_lib.open_ledger(args.ledger, create=False, on_wait=_say)
    if args.population_command == "add":
        existed = db.population(args.name) is not None
        acct = db.register_population(args.name, args.cap_epsilon, args.cap_delta, label=args.label)
        print(
            f"{'already registered with this cap' if existed else 'registered'}: population {acct.population!r}, cap "
            f"{acct.cap.describe()} [public id {acct.public_id}] in {db.describe()}"
        )
        return 0
    if args.population_command == "attach":
        acct = db.require_population(args.name)
        assert acct.population is not None  # require_population returns a registered population's account
        for path in args.files:
            db.attach_source(ledger_lib.dataset_fingerprints(path, db.record_fingerprint_versions), acct.population)
            print(f"attached the records of {path} to the population {acct.population!r}")
        return 0
    populations = db.populations()
    print(f"{db.describe()}: {len(populations)} population(s)")
    for acct in populations:
        spent = acct.spent()
        print(
            f"  {acct.population} [public id {acct.public_id}]: cap {acct.cap.describe()}, spent ε = "
            f"{spent['epsilon']:.6g}; {db.source_count(acct.dataset_id)} source(s) attached"
        )
    return 0


def _backup(args: argparse.Namespace) -> int:
    db = ledger_lib.open_ledger(args.ledger, create=False, on_wait=_say)
    dest = db.backup(args.dest)
    report = ledger_lib.open_ledger(f"sqlite:///{dest}", create=False).verify()
    print(f"backed up {db.describe()} to {dest}: {report.summary()}")
    return 0 if report.ok else 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return {"init": _init, "verify": _verify, "show": _show, "backup": _backup, "population": _population}[
            args.command
        ](args)
    except DPInputError as exc:
        print(f"dpcore: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dpcore: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
