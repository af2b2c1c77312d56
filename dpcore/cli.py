"""The ``dpcore`` command line (also ``python -m dpcore``).

    dpcore release PLAN.toml --data SOURCE [--query SQL] [--engine duckdb|spark|pandas] --out DIR
                   [--ledger URL] [--init-ledger] [--seed N --public-data] [--master local[*]]
                   [--memory-limit 1GB] [--quiet]
    dpcore check PLAN.toml          # validate a plan and print its cost (reads no data)
    dpcore plan PLAN.toml --data SOURCE --out SOLVED.toml [--ledger URL] [--init-ledger] [--public-data]
                   # solve each statistic's epsilon from its half_width / relative_half_width target on a DP
                   # snapshot of the source (charged planning_epsilon once), or on a public source directly

Exit codes: 0 success (a ``dpcore: warning:`` line when the release was written and charged but the ledger
could not mark it revealed, or when its release card could not be written); 2 a user error (bad plan, missing column, non-numeric income, no rows, unknown
engine, budget exceeded, missing ledger, ``--out`` not writable or locked by another run, not enough space,
a ledger database fault ...), all refused before any charge, printed as one line ``dpcore: error: ...`` on
stderr without a traceback; 3 a failure after the charge (the line says that epsilon was spent and nothing
was written); 130 / 143 SIGINT / SIGTERM (the line says whether epsilon was spent); 1 an unexpected internal
error before the charge (one line too; ``DPCORE_DEBUG=1`` shows the traceback). Progress goes to stderr;
the last line on stdout is the output directory. docs/release_cli.md has the details.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from .validation import DPInputError

__all__ = ["main", "build_parser", "EXIT_CHARGED_NOT_DELIVERED"]

#: exit code of a run that charged the ledger and then failed (nothing written): the epsilon is spent
EXIT_CHARGED_NOT_DELIVERED = 3


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(
            f"dpcore: error: {message} (see 'dpcore {self.subcommand or ''} --help')".replace("  ", " "),
            file=sys.stderr,
        )
        raise SystemExit(2)

    subcommand = ""


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="dpcore", description="Differentially private income statistics: release plans at scale.")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    rel = sub.add_parser(
        "release",
        help="run a release plan on a data source",
        description="Run a release plan (TOML) on a data source and write one table per statistic "
        "(CSV and Parquet) and release_record.json into DIR, atomically.",
    )
    rel.subcommand = "release"
    rel.add_argument("plan", help="the release plan (TOML; docs/plan_format.md)")
    rel.add_argument(
        "--data",
        required=True,
        help="CSV or Parquet file, a directory or glob of Parquet files, duckdb:///file.db?query=SELECT..., "
        "or postgresql://user@host:port/db with --query",
    )
    rel.add_argument("--query", help="SQL query for a database source (duckdb:///... or postgresql://...)")
    rel.add_argument("--engine", default="duckdb", help="duckdb (default), spark or pandas")
    rel.add_argument("--out", required=True, help="output directory (must not exist or be empty)")
    rel.add_argument(
        "--ledger",
        default=None,
        help="ledger URL (sqlite:///path.db or postgresql://...), which must exist (see --init-ledger and "
        "'dpcore ledger init'); default: $DPCORE_LEDGER_URL or ~/.local/share/dpcore/ledger.db",
    )
    rel.add_argument(
        "--init-ledger",
        action="store_true",
        help="first release only: create the ledger at --ledger when it does not exist (refused on a "
        "ledger that holds charges). Without it a missing ledger is refused, never created silently",
    )
    rel.add_argument(
        "--seed",
        default=None,
        help="simulation mode: numpy noise with this seed; NOT a release, the ledger is not charged. "
        "Needs --public-data: with the seed the noise can be subtracted, revealing the data",
    )
    rel.add_argument(
        "--public-data",
        action="store_true",
        help="I declare this source public: simulation output may reveal it exactly (required by "
        "--seed; for synthetic or public files such as the bundled examples)",
    )
    rel.add_argument(
        "--master", default=None, help="Spark master (default local[*]; under spark-submit: the submission's)"
    )
    rel.add_argument("--memory-limit", default=None, help="DuckDB memory limit (default 1GB; it spills to disk beyond)")
    rel.add_argument("--tmpdir", default=None, help="directory for temporary files (DuckDB spill, Spark, staging)")
    rel.add_argument("--quiet", action="store_true", help="no progress on stderr")
    pln = sub.add_parser(
        "plan",
        help="solve a plan's epsilons from accuracy targets on a DP snapshot of the source",
        description="Solve each statistic's smallest epsilon for its half_width or relative_half_width target "
        "and write the plan with the epsilons filled in (releasable as it is). On a confidential source the "
        "targets are solved on a DP snapshot charged planning_epsilon (default 0.1) once to the plan's "
        "population, and reused by later runs; --public-data plans on a public source directly.",
    )
    pln.subcommand = "plan"
    pln.add_argument("plan", help="the plan (TOML; statistics with half_width / relative_half_width targets)")
    pln.add_argument("--data", required=True, help="the source (as for dpcore release)")
    pln.add_argument("--query", help="SQL query for a database source")
    pln.add_argument("--engine", default="duckdb", help="duckdb (default), spark or pandas")
    pln.add_argument("--out", required=True, help="the solved plan file to write (TOML)")
    pln.add_argument("--ledger", default=None, help="ledger URL (as for dpcore release)")
    pln.add_argument("--init-ledger", action="store_true", help="create the ledger (a first run only)")
    pln.add_argument(
        "--public-data",
        action="store_true",
        help="I declare this source public: plan on it directly (no snapshot, nothing charged)",
    )
    pln.add_argument("--quiet", action="store_true", help="no progress on stderr")
    sub.add_parser("ledger", help="init, verify, show or back up the budget ledger (dpcore ledger --help)")
    chk = sub.add_parser("check", help="validate a plan and print its privacy cost (reads no data)")
    chk.subcommand = "check"
    chk.add_argument("plan")
    return parser


def _noise_drawn_from_the_start(args: argparse.Namespace) -> tuple[Any, Any]:
    """A real release of a large source reads its plan before the engines' imports (about 0.4 s of one core:
    pandas, DuckDB, Arrow) and draws its histograms' noise in the idle core meanwhile
    (:func:`dpcore.noise.ahead.drawn_ahead`; :func:`dpcore.engines.execute.run_plan` finds the reserve running and
    takes from it). Returns the plan (None when not read here: a bad plan is refused below, in the usual order of
    the checks) and the block."""
    if args.seed is not None or not _large_source(args.data):
        return None, contextlib.nullcontext()
    from .noise import ahead
    from .plan import load_plan

    try:
        plan = load_plan(args.plan)
    except Exception:  # read again below, where every error gets its message
        return None, contextlib.nullcontext()
    return plan, ahead.drawn_ahead(plan.histogram_noise_scales())


def _large_source(data: str | None) -> bool:
    """Whether ``--data`` names a database or files of at least ``AHEAD_MIN_SOURCE_BYTES``: a glance at the sizes
    before the source is parsed (a wrong guess only moves the moment the noise starts being drawn ahead)."""
    import glob

    from .noise.ahead import AHEAD_MIN_SOURCE_BYTES

    if not isinstance(data, str) or not data.strip():
        return False
    data = data.strip()
    if "://" in data:
        return True
    try:
        if os.path.isdir(data):
            files = glob.glob(os.path.join(glob.escape(data), "**", "*.parquet"), recursive=True)
        else:
            files = glob.glob(data) if glob.has_magic(data) else [data]
        return sum(os.path.getsize(f) for f in files) >= AHEAD_MIN_SOURCE_BYTES
    except OSError:
        return False


def _release(args: argparse.Namespace, early_plan: Any = None) -> int:
    from . import engines
    from .engines import execute
    from .plan import load_plan

    if args.engine not in engines.ENGINES:
        raise DPInputError(f"unknown engine {args.engine!r}; choose one of {', '.join(engines.ENGINES)}")
    seed = None
    if args.seed is not None:
        try:
            seed = int(args.seed)
        except ValueError:
            raise DPInputError(f"--seed must be a non-negative integer, got {args.seed!r}") from None
        if seed < 0:
            raise DPInputError(f"--seed must be a non-negative integer, got {args.seed!r}")
        execute.check_simulation_allowed(args.public_data)  # before the plan, the source or the ledger is opened
    plan = early_plan if early_plan is not None else load_plan(args.plan)
    source = engines.parse_source(args.data, args.query)
    progress = engines.Progress(quiet=args.quiet)
    if seed is not None:
        progress.say(
            f"SIMULATION (seed {seed}) of data declared public: numpy noise, the ledger is not charged; "
            "not a release (tables named SIMULATION_*)"
        )
    result = execute.run_plan(
        plan,
        source,
        engine=args.engine,
        out_dir=args.out,
        ledger_url=args.ledger,
        seed=seed,
        master=args.master,
        progress=progress,
        memory_limit=args.memory_limit,
        workdir=args.tmpdir,
        init_ledger=args.init_ledger,
        public_data=args.public_data,
    )
    if result.ledger_entry_id is not None:
        cost = result.record["privacy"]["cost"]
        progress.say(
            f"charged the ledger: entry {result.ledger_entry_id}, epsilon = {cost['epsilon']:g}"
            + (f", delta = {cost['delta']:.3g}" if cost["delta"] > 0 else "")
        )
    if result.ledger_link_warning:  # delivered and charged: a warning, not a failure (docs/release_cli.md)
        print(f"dpcore: warning: {result.ledger_link_warning}", file=sys.stderr)
    if result.card_warning:  # the tables and the record are written; said even with --quiet
        print(f"dpcore: warning: {result.card_warning}", file=sys.stderr)
    print(str(result.out_dir))
    return 0


class _TerminateAsInterrupt:
    """SIGTERM raises :class:`dpcore.engines.execute.Terminated` (a KeyboardInterrupt) while a command runs, so it
    unwinds like Ctrl-C: the staging folder and the --out lock are removed and the message says what was
    charged. Python's default for SIGTERM is to die at once, leaving both behind."""

    def __enter__(self) -> None:
        import threading

        from .engines.execute import Terminated

        def raise_terminated(signum: int, frame: object) -> None:
            raise Terminated()

        self._previous = None
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGTERM, raise_terminated)

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGTERM, self._previous)


def _check(args: argparse.Namespace) -> int:
    from .engines.record import delta_sources, plan_cost
    from .plan import load_plan

    plan = load_plan(args.plan)
    cost = plan_cost(plan)
    print(
        f"plan OK: dataset {plan.dataset!r}, {len(plan.statistics)} statistic(s), epsilon = {cost.epsilon:g} of cap "
        f"{plan.cap_epsilon:g}" + (f", delta = {cost.delta:.3g} (from {delta_sources(plan)})" if cost.delta else "")
    )
    for s, (_, c) in zip(plan.statistics, cost.per_statistic, strict=True):
        print(
            f"  {s.index}. {s.name}: {s.kind} by {', '.join(s.by) or '(whole table)'}, epsilon = {c.epsilon:g}"
            + (f", delta = {c.delta:.3g}" if c.delta else "")
        )
        if s.margins is not None:  # each level measured with its share (they add up to the statistic's epsilon)
            for cols, name, eps in zip(s.level_columns(), s.level_names(), s.level_epsilons(), strict=True):
                print(f"     level {name}: by {', '.join(cols) or '(whole table)'}, epsilon = {eps:g}")
            print("     post-processing: least squares over the levels, then non-negative integers that add up")
    return 0


def _plan(args: argparse.Namespace) -> int:
    from . import engines
    from .plan_command import plan_command

    if args.engine not in engines.ENGINES:
        raise DPInputError(f"unknown engine {args.engine!r}; choose one of {', '.join(engines.ENGINES)}")
    progress = engines.Progress(quiet=args.quiet)
    result = plan_command(
        args.plan,
        args.data,
        out=args.out,
        query=args.query,
        engine=args.engine,
        ledger_url=args.ledger,
        init_ledger=args.init_ledger,
        public_data=args.public_data,
        progress=progress,
    )
    for line in result.header[1:]:
        progress.say(line.strip())
    if result.warning:  # the solved plan is written; said even with --quiet
        print(f"dpcore: warning: {result.warning}", file=sys.stderr)
    print(str(result.out))
    return 0


def exit_after_command(code: int) -> NoReturn:
    """End the process with ``code`` once a command is done, as a normal exit does (non-daemon threads joined,
    the ``atexit`` handlers run: temporary directories, Spark's gateway), but without the interpreter's teardown
    of every module, which frees nothing the operating system would not: with pandas, Arrow and DuckDB imported it
    took 0.10 s of every release (0.46 s against 0.36 s for a process that only imports them)."""
    import atexit
    import threading

    shutdown = getattr(threading, "_shutdown", None)  # what the interpreter's exit calls first: it also tells
    if callable(shutdown):  # thread pools kept by libraries to stop (threading._register_atexit), then joins
        shutdown()
    else:  # pragma: no cover - every CPython has it
        for thread in threading.enumerate():
            if thread is not threading.main_thread() and not thread.daemon:
                thread.join()
    atexit._run_exitfuncs()  # noqa: SLF001 - the handlers now, before os._exit skips them; no public way
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be said
            pass
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["ledger"]:  # init / verify / show / backup: dpcore.ledger_cli
        from .ledger_cli import main as ledger_main

        return ledger_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    early_plan, reserve = _noise_drawn_from_the_start(args) if args.command == "release" else (None, None)
    with reserve or contextlib.nullcontext():
        return _command(args, early_plan)


def _command(args: argparse.Namespace, early_plan: Any) -> int:
    from .pipeline import InterruptedAfterCharge, ReleaseNotDelivered

    try:
        with _TerminateAsInterrupt():
            if args.command == "release":
                return _release(args, early_plan)
            if args.command == "plan":
                return _plan(args)
            return _check(args)
    except ReleaseNotDelivered as exc:
        print(f"dpcore: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return EXIT_CHARGED_NOT_DELIVERED
    except InterruptedAfterCharge as exc:
        print(f"dpcore: interrupted: {' '.join(str(exc).split())}", file=sys.stderr)
        return 128 + int(exc.signal_number)
    except DPInputError as exc:
        print(f"dpcore: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except MemoryError:
        print(
            "dpcore: error: out of memory; nothing was written to the output directory. The pandas engine holds the "
            "whole table in memory: use --engine duckdb (out of core) or spark",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt as exc:
        name = "SIGTERM" if getattr(exc, "signal_number", None) == signal.SIGTERM else "SIGINT"
        print(
            f"dpcore: interrupted by {name} before anything was charged; nothing was written to the output directory",
            file=sys.stderr,
        )
        return 128 + (signal.SIGTERM if name == "SIGTERM" else signal.SIGINT)
    except Exception as exc:  # pragma: no cover - unexpected
        if os.environ.get("DPCORE_DEBUG"):
            raise
        if type(exc).__name__ == "ArrowMemoryError":  # pyarrow's MemoryError
            print(
                "dpcore: error: out of memory (Arrow); nothing was written to the output directory. Use --engine "
                "duckdb (out of core) or spark",
                file=sys.stderr,
            )
            return 2
        print(
            f"dpcore: internal error: {type(exc).__name__}: {' '.join(str(exc).split())[:500]} "
            "(DPCORE_DEBUG=1 shows the traceback)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
