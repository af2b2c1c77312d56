"""A small simulated release to make release cards from, and what a card shows (for tests/test_release_card.py
and tests/test_browser_release_card.py)."""

from __future__ import annotations

import copy
import math
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd

from dpcore import intervals
from dpcore.engines import execute, parse_source
from dpcore.plan import plan_from_dict

#: every statistic kind of a plan, by one public cell column (2 cells each): percentiles, mean, Gini, relative risk
CARD_PLAN = {
    "version": 1,
    "dataset": "card-test",
    "income": "earnings",
    "cap_epsilon": 10,
    "cell_sizes": "public",
    "statistics": [
        {"kind": "percentiles", "by": ["region"], "epsilon": 1.0, "bins": "pseo", "q": [25, 50]},
        {"kind": "mean", "by": ["region"], "epsilon": 0.5, "lower": 0, "upper": 300000},
        {"kind": "gini", "by": ["region"], "epsilon": 0.5, "lower": 0, "upper": 1000000},
        {
            "kind": "relative_risk",
            "by": ["region"],
            "epsilon": 0.5,
            "group": "first_gen",
            "exposed": "yes",
            "reference": "no",
            "outcome_below": 30000,
        },
    ],
}


def card_data(n: int = 300, seed: int = 5) -> pd.DataFrame:
    gen = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "region": gen.choice(["north", "south"], n),
            "first_gen": gen.choice(["yes", "no"], n),
            "earnings": np.round(gen.lognormal(10.6, 0.7, n)),
        }
    )


def simulated_release(folder: Path, data: pd.DataFrame | None = None, *, seed: int = 3) -> execute.PlanResult:
    """A seeded simulation (public data: numpy noise, no ledger) of CARD_PLAN on ``data``, written to
    ``folder / "out"`` with its card."""
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "data.csv"
    (card_data() if data is None else data).to_csv(source, index=False)
    return execute.run_plan(
        plan_from_dict(CARD_PLAN),
        parse_source(str(source)),
        engine="pandas",
        out_dir=folder / "out",
        seed=seed,
        public_data=True,
    )


def plain(record: dict, tables: dict[str, pd.DataFrame]) -> tuple[dict, dict[str, pd.DataFrame]]:
    """The record and tables without published intervals (no ``<v>_lower`` / ``<v>_upper`` columns, no
    ``interval_level``): a release whose card rounds nothing but what it is given."""
    record = copy.deepcopy(record)
    for s in record["statistics"]:
        s.pop("interval_level", None)
    return record, {
        k: t.drop(columns=[c for c in t.columns if re.search(r"_(lower|upper)$", c)]) for k, t in tables.items()
    }


def with_intervals(tables: dict[str, pd.DataFrame], width: float = 0.08) -> dict[str, pd.DataFrame]:
    """The tables with made-up ``<v>_lower`` / ``<v>_upper`` columns (value -+ width x |value| + 0.5, not a real
    interval): what a card shows when a release publishes intervals."""
    out = {}
    for name, table in tables.items():
        t = table.copy()
        for c in [c for c in table.columns if re.fullmatch(r"p[0-9_]+|mean|gini|relative_risk", c)]:
            v = pd.to_numeric(t[c], errors="coerce")
            t[f"{c}_lower"], t[f"{c}_upper"] = v - width * v.abs() - 0.5, v + width * v.abs() + 0.5
        out[name] = t
    return out


def _finite(x) -> float | None:
    return None if x is None or not math.isfinite(float(x)) else float(x)


def expected_text(
    value: float,
    lower: float | None = None,
    upper: float | None = None,
    *,
    integer: bool = False,
    published: bool = False,
) -> tuple[float | None, tuple | None]:
    """What a card must show, computed here from the table's numbers: (value, (lower, upper)) with an interval
    (an open end None), (value, None) without. ``published``: the release rounded them itself, so exactly the
    table's numbers; otherwise rounded with dpcore.intervals' grid helpers."""
    value, lower, upper = _finite(value), _finite(lower), _finite(upper)
    if value is None:
        return None, None
    if published:
        return value, (lower, upper) if (lower, upper) != (None, None) else None
    if lower is not None and upper is not None and upper > lower:
        step = intervals.honest_grid(lower, upper)
        return float(intervals.round_to_grid(value, step)), intervals.round_interval(lower, upper, step)
    one_sided = (lower, upper) if (lower is None) != (upper is None) else None
    one_sided = None if one_sided is None else tuple(None if x is None else float(f"{x:.6g}") for x in one_sided)
    if integer or float(value).is_integer():
        return float(round(value)), one_sided
    return float(f"{value:.6g}"), one_sided


def number(text: str) -> float | None:
    """A number as a card prints it (thousands separators), None for "undefined"."""
    return None if text == "undefined" else float(text.replace(",", ""))


def interval(text: str) -> tuple[float | None, float | None]:
    """An interval as a card prints it: "a to b", "a or more" (no upper end) or "up to b"."""
    if text.endswith(" or more"):
        return number(text[: -len(" or more")]), None
    if text.startswith("up to "):
        return None, number(text[len("up to ") :])
    a, b = re.split(r"\s+to\s+", text)
    return number(a), number(b)


class CardCells(HTMLParser):
    """The value and interval cells of a card's tables: ``values[statistic][column]`` and
    ``intervals[statistic][column]`` list the texts row by row."""

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, dict[str, list[str]]] = {}
        self.intervals: dict[str, dict[str, list[str]]] = {}
        self._stat: str | None = None
        self._cell: tuple[dict, str] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and "data-statistic" in a:
            self._stat = a["data-statistic"]
        elif tag == "td" and self._stat is not None and "data-column" in a:
            kind = self.intervals if "interval" in (a.get("class") or "") else self.values
            self._cell, self._text = (kind.setdefault(self._stat, {}), a["data-column"]), []

    def handle_data(self, data):
        if self._cell is not None:
            self._text.append(data)

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            cells, column = self._cell
            cells.setdefault(column, []).append("".join(self._text))
            self._cell = None
        elif tag == "table":
            self._stat = None


def card_cells(html_text: str) -> CardCells:
    parser = CardCells()
    parser.feed(html_text)
    return parser
