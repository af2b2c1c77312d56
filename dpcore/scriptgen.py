"""Generate a stand-alone Python script that reproduces a page's view with dpcore.

A generated script has three parts: a header (what view, when, which dpcore version), the
**data** (the sidebar's dataset rebuilt from its public recipe: generator, parameters and data
seed, or the loader of a bundled / shared file; an uploaded file is read from a path the user
fills in, because the confidential file is never embedded), and the **view** (page-specific
code that calls dpcore and prints its numbers as JSON). It runs as is with ``python script.py``
from the repository root (or with dpcore installed), and prints the same numbers as the page.

Scripts are built from Python literals (``repr`` of plain dicts, lists, numbers and strings),
never from free text a user typed, and checked with ``compile`` before they are returned.

Pages other than the planner call :func:`build_script` with their own ``body`` (code that uses
``values``, ``frame``, ``seed`` and fills a dict ``results``); see docs/planner.md.
"""
from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import Any, Sequence

from . import __version__
from .validation import DPInputError

__all__ = ["dataset_code", "build_script", "planner_script", "literal", "DEFAULT_DATASET_KEY"]

#: The sidebar's default data: log-normal, n = 10,000, sigma 0.9, data seed 2026.
DEFAULT_DATASET_KEY = ("lognormal", 10_000, 0.9, 2026)


def literal(obj: Any) -> str:
    """A Python literal for plain data (dict/list/tuple/str/int/float/bool/None); refuses anything else."""
    if obj is None or isinstance(obj, (bool, str)):
        return repr(obj)
    if isinstance(obj, int):
        return repr(int(obj))
    if isinstance(obj, float) or type(obj).__name__.startswith(("float", "int")):
        v = float(obj)
        if not math.isfinite(v):
            return f"float({str(v)!r})"
        if type(obj).__name__.startswith("int"):
            return repr(int(obj))
        return repr(v)
    if isinstance(obj, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in obj.items()) + "}"
    if isinstance(obj, (list, tuple)):
        inner = ", ".join(literal(v) for v in obj)
        return f"[{inner}]" if isinstance(obj, list) else (f"({inner},)" if len(obj) == 1 else f"({inner})")
    raise DPInputError(f"cannot write a {type(obj).__name__} into a script")


def dataset_code(key: Sequence[Any] | None) -> str:
    """Code that defines ``values`` (incomes, numpy array) and ``frame`` (pandas DataFrame or None)
    from the sidebar's dataset recipe ``key`` (None -> the default dataset; ("none",) -> both None,
    for a view that does not use the income data)."""
    key = tuple(DEFAULT_DATASET_KEY if not key else key)
    kind = key[0]
    if kind == "none":  # a view that does not use the sidebar's income data (e.g. the ratios page)
        return ("# this view does not use the sidebar's income data\n"
                "values = None\n"
                "frame = None\n")
    if kind == "lognormal":
        _, n, sigma, seed = key
        return ("from dpcore.data import lognormal_incomes\n"
                f"values = lognormal_incomes({literal(int(n))}, sigma={literal(float(sigma))}, rng={literal(int(seed))})\n"
                "frame = None\n")
    if kind == "pareto":
        _, n, gini, tail, seed = key
        return ("from dpcore.data import pareto_mixture_incomes\n"
                f"values = pareto_mixture_incomes({literal(int(n))}, gini={literal(float(gini))}, "
                f"tail_index={literal(float(tail))}, median=30000.0, rng={literal(int(seed))})\n"
                "frame = None\n")
    if kind == "lookalike":
        _, n, gini, median, seed = key
        return ("from dpcore.data import pareto_mixture_incomes\n"
                "# synthetic look-alike of a confidential file (its n, a published Gini and median)\n"
                f"values = pareto_mixture_incomes({literal(int(n))}, gini={literal(float(gini))}, tail_index=2.5, "
                f"median={literal(float(median))}, rng={literal(int(seed))})\n"
                "frame = None\n")
    if kind == "two_point":
        _, n, gini, iq, seed = key
        return ("from dpcore.data import two_point_incomes\n"
                f"values = two_point_incomes({literal(int(n))}, {literal(float(gini))}, "
                f"{literal(None if iq is None else float(iq))}, mean=30000.0, rng={literal(int(seed))}).values\n"
                "frame = None\n")
    if kind == "example":
        return ("from dpcore.data import load_example\n"
                f"_ds = load_example({literal(str(key[1]))})\n"
                "values, frame = _ds.values, _ds.frame\n")
    if kind == "shared":
        _, name, negative = key
        return ("from dpcore.data import load_shared\n"
                f"_ds = load_shared({literal(str(name))}, negative={literal(str(negative))})\n"
                "if _ds is None:\n"
                "    raise SystemExit('this view uses a real file from ../shared/data, which is not on this machine')\n"
                "values, frame = _ds.values, _ds.frame\n")
    if kind == "upload":
        _, _digest, name, column, negative = key
        return ("from dpcore.data import load_income_file\n"
                "# Your confidential file is not embedded: put it next to this script (or edit the path).\n"
                f"DATA_FILE = {literal(str(name))}\n"
                f"_ds = load_income_file(DATA_FILE, column={literal(str(column))}, negative={literal(str(negative))})\n"
                "values, frame = _ds.values, _ds.frame\n")
    raise DPInputError(f"this data source ({kind!r}) cannot be written into a script")


def build_script(*, title: str, dataset_key: Sequence[Any] | None, body: str, seed: int,
                 imports: str = "") -> str:
    """Assemble header + data + ``body``; the body fills ``results`` (a dict) which is printed as JSON."""
    if not isinstance(body, str) or not body.strip():
        raise DPInputError("the script body is empty")
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    text = (
        f'"""Reproduces the view "{title}" of the DP income explorer.\n\n'
        f"Generated {stamp} with dpcore {__version__}. Run from the repository root:\n"
        "    python this_script.py\n"
        "It prints the numbers shown on the page as JSON. Simulated releases use the seed below, so\n"
        'the numbers match the page exactly; a real release never uses a fixed seed.\n"""\n'
        "import json\n"
        "import os\n"
        "import sys\n\n"
        "import numpy as np\n\n"
        "try:\n"
        "    import dpcore\n"
        "except ImportError:  # not installed: run from the repository root\n"
        "    sys.path.insert(0, os.getcwd())\n"
        "    import dpcore\n"
        f"{imports}"
        "\n# ---- data: the planning data chosen in the sidebar ----\n"
        f"{dataset_code(dataset_key)}"
        f"\nseed = {literal(int(seed))}  # the sidebar's random seed\n"
        f"results = {{'dpcore_version': dpcore.__version__}}\n"
        "\n# ---- the view ----\n"
        f"{body.rstrip()}\n"
        "\nprint(json.dumps(results, indent=2, default=float))\n"
    )
    compile(text, "<generated script>", "exec")
    return text


PLANNER_BODY = '''\
groups = None
if config["group_column"] and frame is not None:
    groups = frame[config["group_column"]].astype(str).to_numpy()
elif any(item["kind"] in ("percentiles", "group_means", "ratio") for item in config["statistics"]):
    groups = P.planning_groups(len(values), seed=config["group_seed"])

solutions = []
for item in config["statistics"]:
    stat = P.make_statistic(item["kind"], values, groups, **item["params"])
    target = P.AccuracyTarget(**item["target"])
    sol = P.solve_epsilon(stat, target)
    solutions.append({"statistic": stat.name, "kind": item["kind"], "epsilon": sol.epsilon,
                      "achieved": sol.achieved, "mc_se": sol.mc_se,
                      "epsilon_interval": list(sol.epsilon_interval), "method": sol.method})
    item["_stat"] = stat
results["accuracy_first"] = solutions
results["total_epsilon_sequential"] = P.plan_total([(s["statistic"], s["epsilon"]) for s in solutions]).epsilon

alloc = config["budget"]["allocation"]
results["budget_first"] = [
    {"statistic": item["_stat"].name, "epsilon": eps,
     "relative_error": item["_stat"].error_quantile(eps, item["target"]["confidence"])[0],
     "confidence": item["target"]["confidence"]}
    for item, eps in zip(config["statistics"], alloc)]
'''


def planner_script(dataset_key: Sequence[Any] | None, config: dict, seed: int) -> str:
    """The planner page's view: per-statistic smallest epsilon, the total, and budget-first accuracy.

    config: {"statistics": [{"kind", "params", "target": {"rel_error", "confidence"}}], "group_column",
    "group_seed", "budget": {"allocation": [eps per statistic]}} (plain data only).
    """
    for key in ("statistics", "group_column", "group_seed", "budget"):
        if key not in config:
            raise DPInputError(f"planner config is missing {key!r}")
    body = f"config = {literal(config)}\n\n" + PLANNER_BODY
    return build_script(title="Choose epsilon (planner)", dataset_key=dataset_key, body=body, seed=seed,
                        imports="from dpcore import planner as P\n")
