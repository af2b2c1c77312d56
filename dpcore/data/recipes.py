"""Dataset recipes: one plain-data description of every data source, and the one function that builds it.

A recipe is a dict such as ``{"kind": "lognormal", "n": 10000, "sigma": 0.9, "seed": 2026}`` (kinds in
:data:`RECIPE_KINDS`). :func:`build_dataset` turns it into an :class:`~dpcore.data.io.IncomeData`; the
sidebar and the generated scripts both call it, so a script rebuilds the page's data from a literal.
:func:`recipe_from_key` converts the sidebar's key and :func:`describe_recipe` says what a recipe builds.

Privacy assumptions: a "file" recipe reads the confidential data itself (marked ``confidential=True``);
a recipe's ``seed`` draws the data only (the pages draw privacy noise from another seed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..validation import DPInputError, check_int
from .catalogue import EXAMPLES, SHARED_DATASETS, load_example, load_shared
from .io import IncomeData, load_income_file
from .synthetic import lognormal_incomes, pareto_mixture_incomes, two_point_incomes

__all__ = [
    "RECIPE_KINDS",
    "DEFAULT_RECIPE",
    "check_recipe",
    "build_dataset",
    "recipe_from_key",
    "describe_recipe",
]

#: Recipe kinds -> (required parameters, optional parameters with their defaults).
RECIPE_KINDS: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "lognormal": (("n", "sigma", "seed"), {"mu": 10.5}),
    "pareto": (("n", "gini", "seed"), {"tail_index": 2.5, "median": 30_000.0}),
    # a synthetic look-alike of a confidential file: its n (public), a published Gini and median
    "lookalike": (("n", "gini", "median", "seed"), {"tail_index": 2.5}),
    "two_point": (("n", "gini", "seed"), {"iq": None, "mean": 30_000.0}),
    "example": (("name",), {"negative": "drop", "columns": None}),
    "shared": (("name",), {"negative": "drop", "columns": None}),
    "file": (("path",), {"column": None, "negative": "refuse"}),
}
#: The sidebar's default data: log-normal incomes, n = 10,000, sigma 0.9, data seed 2026.
DEFAULT_RECIPE: dict[str, Any] = {"kind": "lognormal", "n": 10_000, "sigma": 0.9, "seed": 2026}


def check_recipe(recipe: Any) -> dict[str, Any]:
    """A validated copy of ``recipe`` with every optional parameter filled in (DPInputError if bad)."""
    if not isinstance(recipe, dict):
        raise TypeError(f"a dataset recipe is a dict such as {DEFAULT_RECIPE!r}, got {type(recipe).__name__}")
    kind = recipe.get("kind")
    if kind not in RECIPE_KINDS:
        raise DPInputError(f"unknown dataset kind {kind!r}; choose one of {', '.join(RECIPE_KINDS)}")
    required, optional = RECIPE_KINDS[kind]
    missing = [p for p in required if p not in recipe]
    if missing:
        raise DPInputError(f"a {kind!r} dataset recipe needs {', '.join(missing)}")
    unknown = sorted(set(recipe) - {"kind", *required, *optional})
    if unknown:
        raise DPInputError(
            f"a {kind!r} dataset recipe has no parameter(s) {', '.join(map(repr, unknown))}; "
            f"it takes {', '.join((*required, *optional))}"
        )
    out = {"kind": kind, **optional, **{k: v for k, v in recipe.items() if k != "kind"}}
    if out.get("columns") is not None:
        if isinstance(out["columns"], str) or not all(isinstance(c, str) for c in out["columns"]):
            raise DPInputError("columns must be a list of column names")
        out["columns"] = list(out["columns"])
    return out


def build_dataset(recipe: dict[str, Any] | None = None) -> IncomeData:
    """The data a recipe describes (None -> :data:`DEFAULT_RECIPE`), as :class:`IncomeData`.

    Kinds and parameters (see :data:`RECIPE_KINDS`): ``lognormal`` (n, sigma, seed, mu),
    ``pareto`` / ``lookalike`` (n, gini, seed, tail_index, median: :func:`pareto_mixture_incomes`),
    ``two_point`` (n, gini, seed, iq, mean: :func:`two_point_incomes`, with its public bounds),
    ``example`` (name, negative, columns: :func:`load_example`), ``shared`` (name, negative,
    columns: :func:`load_shared`; DPInputError when the file is not on this machine) and ``file``
    (path, column, negative: :func:`load_income_file`, marked confidential). ``seed`` draws the
    data only (the pages draw privacy noise from another seed). A recipe is plain data, so a
    generated script can hold it as a literal and rebuild the very same data.
    """
    spec = check_recipe(dict(DEFAULT_RECIPE) if recipe is None else recipe)
    kind = spec["kind"]
    if kind == "lognormal":
        n, sigma = check_int(spec["n"], "n", minimum=1), float(spec["sigma"])
        values = lognormal_incomes(n, mu=spec["mu"], sigma=sigma, rng=check_int(spec["seed"], "seed", minimum=0))
        return IncomeData(values=values, name=f"Synthetic log-normal (n={n:,}, sigma={sigma:g})", source="synthetic")
    if kind in ("pareto", "lookalike"):
        n, gini = check_int(spec["n"], "n", minimum=1), float(spec["gini"])
        tail, median = float(spec["tail_index"]), float(spec["median"])
        values = pareto_mixture_incomes(
            n, gini=gini, tail_index=tail, median=median, rng=check_int(spec["seed"], "seed", minimum=0)
        )
        return IncomeData(
            values=values,
            source="synthetic",
            name=f"Synthetic Pareto-tailed (n={n:,}, population Gini {gini:.2f})",
            notes=(
                f"log-normal body, top 10% Pareto with tail index {tail:g}, median "
                f"{median:,.0f}; the population Gini is {gini:.3f}, a sample's differs a little",
            ),
        )
    if kind == "two_point":
        n = check_int(spec["n"], "n", minimum=2)
        iq = None if spec["iq"] is None else float(spec["iq"])
        data = two_point_incomes(
            n, float(spec["gini"]), iq, mean=float(spec["mean"]), rng=check_int(spec["seed"], "seed", minimum=0)
        )
        return IncomeData(
            values=data.values,
            source="synthetic",
            bounds=(data.lower, data.upper),
            name=f"Two-point data (n={n:,}, Gini {data.gini:.3f}, IQ {data.iq:.3g})",
            notes=(
                f"{data.n_low:,} records at {data.low_value:,.0f} and {n - data.n_low:,} at "
                f"{data.high_value:,.0f}; public bounds L = {data.lower:,.0f}, U = {data.upper:,.0f}, "
                f"IQ = (U - L) / mean = {data.iq:.4g}",
            ),
        )
    if kind == "example":
        return load_example(str(spec["name"]), negative=spec["negative"], columns=spec["columns"])
    if kind == "shared":
        out = load_shared(str(spec["name"]), negative=spec["negative"], columns=spec["columns"])
        if out is None:
            raise DPInputError(
                f"the real file {SHARED_DATASETS[spec['name']].file_name} is not on this machine "
                "(it lives in ../shared/data next to the repository)"
            )
        return out
    # kind == "file": a user's file, read from a path (the confidential data itself)
    return load_income_file(spec["path"], column=spec["column"], negative=spec["negative"])


def recipe_from_key(key: Sequence[Any] | None) -> dict[str, Any]:
    """The recipe of a sidebar dataset key, e.g. ("lognormal", n, sigma, data_seed) ->
    {"kind": "lognormal", "n": n, "sigma": sigma, "seed": data_seed}. Keys: ("lognormal", n, sigma,
    seed), ("pareto", n, gini, tail_index, seed), ("lookalike", n, gini, median, seed),
    ("two_point", n, gini, iq, seed), ("example", name), ("shared", name, negative) and
    ("upload", sha256, file_name, column, negative) (-> a "file" recipe reading file_name)."""
    if not key:
        return dict(DEFAULT_RECIPE)
    if isinstance(key, (str, bytes)):
        raise TypeError(f"a dataset key is a tuple such as ('lognormal', 10000, 0.9, 2026), got {key!r}")
    kind, *rest = tuple(key)
    shapes = {
        "lognormal": ("n", "sigma", "seed"),
        "pareto": ("n", "gini", "tail_index", "seed"),
        "lookalike": ("n", "gini", "median", "seed"),
        "two_point": ("n", "gini", "iq", "seed"),
        "example": ("name",),
        "shared": ("name", "negative"),
        "upload": ("sha256", "path", "column", "negative"),
    }
    if kind not in shapes or len(rest) != len(shapes[kind]):
        raise DPInputError(f"this data source ({kind!r}) has no recipe")
    fields = dict(zip(shapes[kind], rest, strict=True))
    if kind == "upload":
        fields.pop("sha256")
        kind = "file"
    recipe = {"kind": kind, **fields}
    check_recipe(recipe)
    return recipe


def describe_recipe(recipe: dict[str, Any] | None) -> str:
    """One line saying what a recipe builds (for captions and script comments)."""
    spec = check_recipe(dict(DEFAULT_RECIPE) if recipe is None else recipe)
    kind = spec["kind"]
    if kind == "lognormal":
        return (
            f"synthetic log-normal incomes, n = {int(spec['n']):,}, sigma = {spec['sigma']:g}, data seed {spec['seed']}"
        )
    if kind in ("pareto", "lookalike"):
        what = "synthetic look-alike" if kind == "lookalike" else "synthetic Pareto-tailed incomes"
        return (
            f"{what}, n = {int(spec['n']):,}, population Gini {spec['gini']:g}, median "
            f"{spec['median']:,.0f}, tail index {spec['tail_index']:g}, data seed {spec['seed']}"
        )
    if kind == "two_point":
        iq = "minimum" if spec["iq"] is None else f"{spec['iq']:g}"
        return f"two-point data (Gini paper, Prop. 5.1), n = {int(spec['n']):,}, Gini {spec['gini']:g}, IQ {iq}"
    if kind == "example":
        return (
            f"bundled real example {spec['name']!r} ({EXAMPLES[spec['name']][2]})"
            if spec["name"] in EXAMPLES
            else f"bundled example {spec['name']!r}"
        )
    if kind == "shared":
        return f"real survey file {spec['name']!r}, negative incomes: {spec['negative']}"
    return f"your file {spec['path']!r}, column {spec['column']!r}, negative incomes: {spec['negative']}"
