"""The group-means page's data: the plain-dict recipes (the synthetic mixture, the ACS excerpt, the sidebar's
columns) that :func:`grouped_data` builds, the ACS excerpt's variables, groupings and codes, and the coded table
of the light synthesizer."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...stratified import MAX_GROUPS, group_index, public_weights, split_public_private
from ...validation import DPInputError, check_int, check_positive
from .paper import gaussian_mixture, preset_counts, sizes_from_proportions
from .simulations import mixture_sigma

#: ACS variables of the group-means view. sigma: the standard deviation published in the paper's
#: Table 1 (ACS New York 2018, a different, public dataset) given to CoinPress; prior: a generous
#: public prior interval; clip: the default public clip range (max: the slider's end, step: its step).
ACS_VARIABLES: dict[str, dict[str, Any]] = {
    "PINCP (personal income, $)": dict(
        col="PINCP",
        sigma=76_027.3,
        prior=(-20_000.0, 500_000.0),
        clip=(0.0, 200_000.0),
        clip_max=1_000_000.0,
        step=5_000.0,
    ),
    "AGEP (age, years)": dict(
        col="AGEP", sigma=23.554, prior=(0.0, 100.0), clip=(0.0, 100.0), clip_max=120.0, step=1.0
    ),
}
#: Groupings of the ACS excerpt (columns whose codes are combined, joined by " × ").
ACS_GROUPINGS: dict[str, tuple[str, ...]] = {
    "SEX × RAC1P": ("SEX", "RAC1P"),
    "RAC1P": ("RAC1P",),
    "SEX": ("SEX",),
    "SEX × HISP": ("SEX", "HISP"),
    "SEX × RAC1P × HISP": ("SEX", "RAC1P", "HISP"),
}
#: Short names of the ACS codes (PUMS 2019 data dictionary).
ACS_CODE_NAMES: dict[str, dict[int, str]] = {
    "SEX": {1: "Male", 2: "Female"},
    "RAC1P": {
        1: "White",
        2: "Black",
        3: "AmInd",
        4: "AlaskaNat",
        5: "AIAN tribes",
        6: "Asian",
        7: "NHPI",
        8: "Other race",
        9: "Two+ races",
    },
    "HISP": {0: "Not Hisp.", 1: "Mexican", 2: "Puerto Rican", 3: "Cuban", 4: "Other Hisp."},
}
#: The light synthesizer's public column domains (age band, education, married, income band).
SYNTH_COLUMNS = ("age band", "education", "married", "income band")
SYNTH_SIZES = (5, 5, 2, 6)
SYNTH_EPSILONS = (0.05, 0.1, 0.5, 1.0, 5.0)


@dataclass(frozen=True)
class GroupedData:
    """The group-means page's data: a private half and the public hold-out's group labels.

    ``sigma`` is what CoinPress is told (one sd per group in sorted-label order, or one public
    number); ``sigma_global`` the sd for the global CoinPress run; ``shares`` the synthetic group
    shares (None for real data). ``recipe`` is the plain-dict recipe that rebuilds it."""

    values: np.ndarray
    groups: np.ndarray
    public_groups: np.ndarray
    sigma: Any
    sigma_global: float | None
    shares: np.ndarray | None
    recipe: dict = field(default_factory=dict)

    @property
    def k(self) -> int:
        return self.index.k

    @functools.cached_property
    def index(self):
        """The private groups' :func:`dpcore.stratified.group_index` (sorted labels, codes, counts), built
        once per dataset: sorting text labels is most of a view's cost. Not a dataclass field."""
        return group_index(self.groups)

    @functools.cached_property
    def pubstrat_weights(self) -> np.ndarray:
        """PubStrat weights (:func:`dpcore.stratified.public_weights`) of the public hold-out, in the
        order of ``index.labels``; built once per dataset."""
        return public_weights(self.public_groups, self.index.labels)


def synthetic_groups(n: int, k: int, alpha: float, preset: str | None = None, *, seed: int) -> GroupedData:
    """The paper's mixture (Appendix B): Dirichlet(alpha) shares (or a Table 3 preset's shares),
    ``sigma_i ~ U(0.1, 2)``, ``mu_i ~ N(0, 1)``; the public hold-out is an independent sample of n/2
    group labels from the same shares. CoinPress is told each group's sigma_i (sorted labels) and
    the mixture's sd for the global run."""
    n = check_int(n, "n", minimum=2, maximum=10_000_000)
    g = np.random.default_rng(check_int(seed, "seed", minimum=0))
    if preset is None:
        k = check_int(k, "k (number of groups)", minimum=1, maximum=MAX_GROUPS)
        alpha = check_positive(alpha, "alpha")
        shares = g.dirichlet(np.full(k, alpha))
        sizes = sizes_from_proportions(shares, n)
        names = [f"G{i + 1}" for i in range(k)]
    else:
        counts = preset_counts(preset)
        names = list(counts)
        shares = np.array(list(counts.values()), dtype=float)
        shares /= shares.sum()
        sizes = sizes_from_proportions(shares, n)
    mix = gaussian_mixture(n, len(sizes), alpha, g, sizes=sizes)
    labels = np.array(names, dtype=object)[mix.groups]
    pub = np.array(names, dtype=object)[g.choice(len(names), size=max(n // 2, 1), p=shares)]
    order = np.argsort(names)  # sorted-label order used by dpcore
    return GroupedData(
        values=np.asarray(mix.values),
        groups=labels.astype(str),
        public_groups=pub.astype(str),
        sigma=np.asarray(mix.sigmas)[order],
        sigma_global=mixture_sigma(mix.sizes, mix.mus, mix.sigmas),
        shares=shares,
        recipe=dict(source="synthetic", n=int(n), k=int(k), alpha=float(alpha), preset=preset, seed=int(seed)),
    )


def acs_labels(frame: Any, columns: Sequence[str]) -> np.ndarray:
    """Group labels of ACS records: the short code names of ``columns`` joined by " × "."""
    parts = []
    for c in columns:
        if c not in ACS_CODE_NAMES:
            raise DPInputError(f"cannot group the ACS excerpt by {c!r}; choose from {list(ACS_CODE_NAMES)}")
        parts.append(frame[c].astype(int).map(ACS_CODE_NAMES[c]).fillna(frame[c].astype(str)))
    out = parts[0]
    for p in parts[1:]:
        out = out + " × " + p
    return out.to_numpy()


def require_acs_frame(frame: Any = None) -> Any:
    if frame is not None:
        return frame
    from ...data import acs_frame

    loaded = acs_frame()
    if loaded is None:
        raise DPInputError(
            "the ACS excerpt is not available on this machine (neither ../shared/data nor the "
            "copy bundled in dpcore/examples)"
        )
    return loaded


def acs_groups(variable: str, grouping: str, *, seed: int, frame: Any = None) -> GroupedData:
    """The ACS 2019 excerpt (20 PUMAs, unweighted): a random half is the 'private' file, the other
    half the public hold-out (only its group shares are used, for PubStrat), as in the authors'
    experiments. CoinPress is told the paper's published sd (:data:`ACS_VARIABLES`)."""
    if variable not in ACS_VARIABLES:
        raise DPInputError(f"unknown ACS variable {variable!r}; choose one of {list(ACS_VARIABLES)}")
    if grouping not in ACS_GROUPINGS:
        raise DPInputError(f"unknown grouping {grouping!r}; choose one of {list(ACS_GROUPINGS)}")
    spec = ACS_VARIABLES[variable]
    df = require_acs_frame(frame).dropna(subset=[spec["col"]])
    labels = acs_labels(df, ACS_GROUPINGS[grouping])
    pv, pg, _, pubg = split_public_private(
        df[spec["col"]].to_numpy(float), labels, public_fraction=0.5, rng=check_int(seed, "seed", minimum=0)
    )
    return GroupedData(
        values=pv,
        groups=np.asarray(pg).astype(str),
        public_groups=np.asarray(pubg).astype(str),
        sigma=spec["sigma"],
        sigma_global=spec["sigma"],
        shares=None,
        recipe=dict(source="acs", variable=variable, grouping=grouping, seed=int(seed)),
    )


def column_groups(values: Any, frame: Any, columns: Sequence[str], *, sigma: float, seed: int) -> GroupedData:
    """Any dataset with group columns (the sidebar's): labels are the columns' values joined by " × ";
    a random half plays the private file, the other half only gives the group shares (PubStrat).
    ``sigma`` is the public guess of the standard deviation given to CoinPress."""
    if frame is None:
        raise DPInputError("this dataset has no columns to group by")
    columns = [str(c) for c in columns]
    if not columns or any(c not in frame.columns for c in columns):
        raise DPInputError(f"choose group columns of the dataset (got {columns})")
    sigma = check_positive(sigma, "sigma (public guess of the standard deviation)")
    lab = frame[columns[0]].astype(str)
    for c in columns[1:]:
        lab = lab + " × " + frame[c].astype(str)
    labels = lab.to_numpy().astype(str)
    group_index(labels)  # the level cap, with a clear message
    pv, pg, _, pubg = split_public_private(
        np.asarray(values, float), labels, public_fraction=0.5, rng=check_int(seed, "seed", minimum=0)
    )
    return GroupedData(
        values=pv,
        groups=pg,
        public_groups=pubg,
        sigma=float(sigma),
        sigma_global=float(sigma),
        shares=None,
        recipe=dict(source="columns", columns=columns, sigma=float(sigma), seed=int(seed)),
    )


def grouped_data(recipe: Mapping[str, Any], *, values: Any = None, frame: Any = None) -> GroupedData:
    """Build the page's data from a plain-dict recipe (what the page and its script share):

    * ``{"source": "synthetic", "n", "k", "alpha", "preset", "seed"}`` -> :func:`synthetic_groups`
    * ``{"source": "acs", "variable", "grouping", "seed"}`` -> :func:`acs_groups`
    * ``{"source": "columns", "columns", "sigma", "seed", "dataset"}`` -> :func:`column_groups` on
      ``values`` / ``frame`` (the income file's values and its table) or, when they are not given, on
      the dataset that the recipe ``dataset`` builds (:func:`dpcore.data.build_dataset`).
    """
    if not isinstance(recipe, Mapping) or "source" not in recipe:
        raise DPInputError("a data recipe is a dict with a 'source' ('synthetic', 'acs' or 'columns')")
    r = dict(recipe)
    source = r.pop("source")
    try:
        if source == "synthetic":
            return synthetic_groups(r["n"], r.get("k", 9), r.get("alpha", 1.0), r.get("preset"), seed=r["seed"])
        if source == "acs":
            return acs_groups(r["variable"], r["grouping"], seed=r["seed"], frame=frame)
        if source == "columns":
            dataset = r.get("dataset")
            if values is None and dataset is not None:
                from ...data import build_dataset

                built = build_dataset(dataset)
                values, frame = built.values, built.frame
            out = column_groups(values, frame, r["columns"], sigma=r["sigma"], seed=r["seed"])
            if dataset is not None:
                out.recipe["dataset"] = dataset
            return out
    except KeyError as exc:
        raise DPInputError(f"the {source!r} data recipe needs {exc.args[0]!r}") from None
    raise DPInputError(f"unknown data source {source!r}; choose 'synthetic', 'acs' or 'columns'")


def acs_synthesizer_table(frame: Any = None, *, seed: int) -> dict:
    """ACS excerpt (people with PINCP) coded into 4 small public domains (:data:`SYNTH_COLUMNS`);
    strata SEX × RAC1P. A random half is private, the other half only gives the public stratum shares."""
    df = require_acs_frame(frame).dropna(subset=["PINCP"])
    codes = np.column_stack(
        [
            np.digitize(df["AGEP"], [25, 35, 50, 65]),  # 15-24, 25-34, 35-49, 50-64, 65+
            np.digitize(df["EDU"].fillna(0), [1, 8, 9, 10]),  # n/a, up to HS, some college, BA, graduate
            (df["MSP"] == 1).astype(int).to_numpy(),  # married, spouse present
            np.digitize(df["PINCP"], [1, 10_000, 25_000, 50_000, 100_000]),  # <=0, <10k, <25k, <50k, <100k, 100k+
        ]
    ).astype(np.int64)
    labels = acs_labels(df, ("SEX", "RAC1P")).astype(str)
    gi = group_index(labels)
    perm = np.random.default_rng(check_int(seed, "seed", minimum=0)).permutation(len(df))
    priv, pub = perm[: len(df) // 2], perm[len(df) // 2 :]
    pw = np.bincount(gi.codes[pub], minlength=gi.k) / pub.size
    return dict(codes=codes[priv], strata=gi.codes[priv], k=gi.k, labels=gi.labels, public_w=pw)
