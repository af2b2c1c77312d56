"""The plan writer: TOML text of a validated plan (:func:`plan_to_toml`, readable by
:func:`~dpcore.plan.validate.parse_plan`) and :func:`write_plan` (atomically, or only the text for a download)."""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .model import PlanError, ReleasePlan, plan_to_dict
from .validate import plan_from_dict


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if not math.isfinite(v):
            raise PlanError(f"cannot write a non-finite number ({v}) into a plan")
        if v.is_integer() and abs(v) < 1e15:
            return f"{v:.1f}"
        return repr(v)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise PlanError(f"cannot write {type(value).__name__} into a plan")


def _toml_key(key: str) -> str:
    return key if re.match(r"^[A-Za-z0-9_-]+$", key) else json.dumps(key)


def plan_to_toml(plan: ReleasePlan | Mapping[str, Any], *, header: Sequence[str] = ()) -> str:
    """TOML text of a plan (validated first), readable by :func:`parse_plan`; comments explain the fields.
    ``header``: lines written as comments at the top (e.g. how ``python -m dpcore plan`` solved the epsilons)."""
    if not isinstance(plan, ReleasePlan):
        plan = plan_from_dict(plan)
    data = plan_to_dict(plan)
    comments = {
        "version": "plan format version",
        "population": "the registered population whose ledger budget pays (dpcore ledger population add)",
        "dataset": "the ledger account (id and label)",
        "income": "income column",
        "cap_epsilon": "the dataset's total budget in the ledger",
        "cap_delta": "the ledger account's delta cap (set when the account is created)",
        "privacy_unit": "one person = one value of this column",
        "max_rows_per_person": "rows kept per person (a seeded uniform sample)",
        "cell_sizes": "\"noisy\": n is a noisy count (cells from [keys] or DP-selected); \"public\": exact n",
        "n_epsilon": "epsilon of each statistic's noisy cell sizes, on top of its epsilon",
        "selection_delta": "delta of each DP cell selection (statistics whose cells are not in [keys])",
        "missing_income": "a missing income: 'lower' (kept in n at the public lower bound) or 'refuse'",
        "level": "level of the interval published next to every released value",
        "negative_incomes": "a negative income: 'refuse', 'clip' (to the lower bound) or 'drop' (as missing)",
        "planning_epsilon": "epsilon of the DP snapshot 'python -m dpcore plan' solves the targets on",
    }
    lines = [f"# {line}" if line else "#" for text in header for line in str(text).splitlines() or [""]]
    lines += [
        "# dpcore release plan: python -m dpcore release THIS_FILE --data SOURCE --out DIR",
        f"# total epsilon {plan.total_epsilon:g} of cap {plan.cap_epsilon:g} (docs/plan_format.md)",
    ]
    for key, value in data.items():
        if key in ("statistics", "keys"):
            continue
        note = f"  # {comments[key]}" if key in comments else ""
        lines.append(f"{_toml_key(key)} = {_toml_value(value)}{note}")
    if "keys" in data:  # the public cells: a table before the statistics
        lines.append("")
        lines.append("[keys]")
        for key, value in data["keys"].items():
            lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
    for stat in data["statistics"]:
        lines.append("")
        lines.append("[[statistics]]")
        for key, value in stat.items():
            lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


def write_plan(
    plan: ReleasePlan | Mapping[str, Any], path: str | os.PathLike | None = None, *, header: Sequence[str] = ()
) -> str:
    """Validate and write ``plan`` as TOML to ``path`` (atomically) and return the text; ``path=None``
    only returns the text (e.g. for a download button). ``header``: comment lines at the top."""
    text = plan_to_toml(plan, header=header)
    if path is not None:
        p = Path(path)
        tmp = p.with_name(f".{p.name}.tmp-{os.getpid()}")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, p)
    return text
