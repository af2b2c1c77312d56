"""The group-means page: one function per view (settings + data -> a frozen result with ``.to_dict()``).

Neighbouring relation (every view): replace one person's value, keeping their group; see
:mod:`dpcore.views.stratified`."""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ...coinpress import pure_dp_to_zcdp, zcdp_to_dp
from ...stratified import privacy_accounting, stratified_mean
from ...validation import DPInputError, check_epsilon, check_finite, check_int, check_positive
from ..plain import to_plain
from .data import (
    ACS_GROUPINGS,
    ACS_VARIABLES,
    SYNTH_EPSILONS,
    SYNTH_SIZES,
    GroupedData,
    acs_labels,
    acs_synthesizer_table,
    grouped_data,
    require_acs_frame,
)
from .paper import NYExample, bound_curves, ny_race_example
from .simulations import (
    METHODS,
    MethodsSimulation,
    grouping_sweep,
    real_epsilon_sweep,
    simulate_methods,
    synthetic_sweep,
)
from .synthesizer import synthesizer_sweep

if TYPE_CHECKING:
    from ...planner import GroupMeans

#: Simulated releases behind every error bar of the group-means view (release 0 is "one release").
N_SIMS = 200
#: delta used to express the CoinPress zCDP budget as (epsilon, delta)-DP on the page.
DELTA = 1e-6
#: The trend experiments: id -> (swept parameter, grid). "acs" sweeps the grouping (Figure 2).
SWEEPS: dict[str, tuple[str, tuple[float, ...] | None]] = {
    "n": ("n", (2000, 4000, 6000, 8000, 10_000)),
    "k": ("k", (2, 3, 6, 9, 12, 18)),
    "alpha": ("alpha", (0.1, 0.2, 0.3, 0.5, 1.0, 3.0, 10.0)),
    "epsilon": ("epsilon", (0.1, 0.2, 0.5, 1.0, 2.0, 5.0)),
    "acs": ("k", None),
    "acs_eps": ("epsilon", (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)),
}


def parity_draws(sim: MethodsSimulation, method: str) -> np.ndarray:
    """Parity error (Definition 11, omega = 1/k) of every simulated release of one method (vectorised).
    Groups whose true mean is 0 are left out (their relative error is undefined); an overall true
    mean of 0 contributes 0."""
    if method not in sim.groups:
        raise DPInputError(f"method {method!r} was not simulated; choose from {list(sim.groups)}")
    t = sim.true_groups
    ok = t != 0
    rel = np.abs(sim.groups[method][:, ok] - t[ok]) / np.abs(t[ok])
    over = np.abs(sim.overall[method] - sim.true_overall) / abs(sim.true_overall) if sim.true_overall != 0 else 0.0
    return over / sim.true_groups.size + rel.sum(axis=1)


def _clip_setting(clip: Any) -> Any:
    """A bound R (float) or a public (low, high) interval, as stratified_mean takes it."""
    if isinstance(clip, (list, tuple, np.ndarray)):
        lo, hi = (check_finite(c, "clip range") for c in clip)
        return (lo, hi)
    return check_positive(clip, "the bound R")


@dataclass(frozen=True)
class GroupMeansView:
    """The group-means view: ``n_sims`` simulated releases of every method on one dataset.

    Per group (sorted-label order): ``labels``, ``sizes``, ``shares`` (the public group shares),
    ``pubstrat_shares`` (from the public hold-out), ``true_means``, ``release`` (release 0 of
    ``method``), ``q05``/``q95``/``sd`` of its releases. Per method: ``overall[m]`` (n_sims overall
    estimates) and ``parity[m]`` (n_sims parity errors, Def. 11). ``notes`` come from one real
    stratified release (seed + 2). Laplace methods cost ``epsilon``; CoinPress ``rho`` (zCDP),
    i.e. ``(epsilon_at_delta, delta)``-DP."""

    epsilon: float
    rho: float
    delta: float
    epsilon_at_delta: float
    method: str
    n_sims: int
    seed: int
    clip: Any
    prior: tuple[float, float]
    labels: tuple[str, ...]
    sizes: np.ndarray
    shares: np.ndarray
    pubstrat_shares: np.ndarray
    true_means: np.ndarray
    release: np.ndarray
    q05: np.ndarray
    q95: np.ndarray
    sd: np.ndarray
    true_overall: float
    overall: Mapping[str, np.ndarray]
    parity: Mapping[str, np.ndarray]
    notes: tuple[str, ...]
    recipe: dict
    match: str = "same_rho"

    @property
    def n(self) -> int:
        return int(self.sizes.sum())

    @property
    def k(self) -> int:
        return len(self.labels)

    def group_rows(self) -> list[dict]:
        """One row per group, largest group first (the page's table)."""
        order = np.argsort(-self.sizes, kind="stable")
        return [
            {
                "group": self.labels[i],
                "size": int(self.sizes[i]),
                "share (public)": float(self.shares[i]),
                "PubStrat share": float(self.pubstrat_shares[i]),
                "true mean": float(self.true_means[i]),
                "release": float(self.release[i]),
                "q05": float(self.q05[i]),
                "q95": float(self.q95[i]),
                "sd of releases": float(self.sd[i]),
            }
            for i in order
        ]

    def method_rows(self) -> list[dict]:
        """One row per method: one release, the true overall mean, RMSE of the overall mean over the
        simulated releases, and the parity error's mean and 5%/95% quantiles."""
        rows = []
        for m in METHODS:
            e = self.overall[m] - self.true_overall
            ph = self.parity[m]
            rows.append(
                {
                    "method": m,
                    "one release": float(self.overall[m][0]),
                    "true overall mean": float(self.true_overall),
                    "RMSE of overall": float(np.sqrt(np.mean(e**2))),
                    "mean parity error": float(ph.mean()),
                    "parity q05": float(np.quantile(ph, 0.05)),
                    "parity q95": float(np.quantile(ph, 0.95)),
                }
            )
        return rows

    def to_dict(self) -> dict:
        return to_plain(
            {
                "epsilon": self.epsilon,
                "privacy_match": self.match,
                "coinpress_rho": self.rho,
                "coinpress_epsilon_at_delta": {"delta": self.delta, "epsilon": self.epsilon_at_delta},
                "people n": self.n,
                "groups k": self.k,
                "smallest group": int(self.sizes.min()),
                "largest group": int(self.sizes.max()),
                "group means": {"method": self.method, "groups": self.group_rows()},
                "overall mean by method": {r.pop("method"): r for r in self.method_rows()},
                "notes": list(self.notes),
                "data": self.recipe,
            }
        )


#: how CoinPress's zCDP budget is matched to the Laplace methods' epsilon ("equal privacy")
PRIVACY_MATCHES = ("same_rho", "epsilon_delta")


def coinpress_rho(epsilon: float, match: str = "same_rho", delta: float = DELTA) -> float:
    """CoinPress's rho for a comparison with Laplace methods at ``epsilon``.

    ``"same_rho"`` (the paper's convention): rho = epsilon^2/2, the zCDP level epsilon-DP implies
    (Bun & Steinke 2016, Prop. 1.4); both are then rho-zCDP, but CoinPress is only
    (rho + 2 sqrt(rho ln(1/delta)), delta)-DP, e.g. (5.76, 1e-6) at epsilon = 1.
    ``"epsilon_delta"``: the largest rho whose (Prop. 1.3) conversion gives (epsilon, delta)-DP,
    rho = (sqrt(ln(1/delta) + epsilon) - sqrt(ln(1/delta)))^2, so every method is (epsilon, delta)-DP
    (Laplace even with delta = 0): equal privacy in the (epsilon, delta) currency.
    """
    epsilon = check_epsilon(epsilon)
    if match == "same_rho":
        return pure_dp_to_zcdp(epsilon)
    if match == "epsilon_delta":
        log_term = math.log(1.0 / delta)
        rho = (math.sqrt(log_term + epsilon) - math.sqrt(log_term)) ** 2
        while zcdp_to_dp(rho, delta) > epsilon:  # rounding: never above epsilon
            rho -= 4 * math.ulp(rho)
        return rho
    raise DPInputError(f"unknown privacy match {match!r}; choose from {list(PRIVACY_MATCHES)}")


def group_means_view(
    data: GroupedData | Mapping[str, Any],
    *,
    epsilon: float,
    clip: Any,
    prior: Sequence[float],
    clamp: bool = False,
    method: str = "Stratified Laplace",
    seed: int,
    n_sims: int = N_SIMS,
    values: Any = None,
    frame: Any = None,
    match: str = "same_rho",
) -> GroupMeansView:
    """The group-means view: every method simulated ``n_sims`` times (rng ``seed + 1``) on ``data``
    (a :class:`GroupedData` or a recipe for :func:`grouped_data`, which then uses ``values`` /
    ``frame``), plus one real stratified release (rng ``seed + 2``) for its notes.

    ``clip``: a bound R (synthetic data: Laplace clips at ``R + sqrt(ln|G|/0.1)``, paper Eq. 3) or a
    public ``(low, high)`` range; ``prior``: CoinPress's public prior interval; ``clamp``: clamp
    CoinPress estimates into the prior (free post-processing). Neighbours: replace one person's
    value within their group; Laplace epsilon-DP, CoinPress rho-zCDP with rho from
    :func:`coinpress_rho` (``match``: ``"same_rho"`` = epsilon^2/2, or ``"epsilon_delta"`` = every
    method (epsilon, DELTA)-DP; the page uses the latter).
    """
    rho = coinpress_rho(epsilon, match)
    if not isinstance(data, GroupedData):
        data = grouped_data(data, values=values, frame=frame)
    epsilon = check_epsilon(epsilon)
    if method not in METHODS:
        raise DPInputError(f"unknown method {method!r}; choose from {list(METHODS)}")
    clip = _clip_setting(clip)
    prior = tuple(float(p) for p in prior)
    if len(prior) != 2:
        raise DPInputError("prior must be a (lower, upper) interval")
    seed = check_int(seed, "seed", minimum=0)
    index = data.index
    pw = data.pubstrat_weights
    # the integer codes (sorted-label order) instead of the text labels: the same groups in the same
    # order, hence the same draws, without sorting the text again (simulate_methods codes them anyway)
    sim = simulate_methods(
        data.values,
        index.codes,
        epsilon=epsilon,
        clip_range=clip,
        lower=prior[0],
        upper=prior[1],
        sigma=data.sigma,
        sigma_global=data.sigma_global,
        public_w=pw,
        n_sims=n_sims,
        rng=seed + 1,
        clamp_to_prior=bool(clamp),
        rho=rho,
    )
    draws = sim.groups[method]
    # one real release (seed + 2) only for its notes, which exist only for single-member groups
    notes = (
        stratified_mean(data.values, data.groups, epsilon=epsilon, clip_range=clip, rng=seed + 2).notes
        if int(index.counts.min()) <= 1
        else ()
    )
    return GroupMeansView(
        epsilon=epsilon,
        rho=rho,
        delta=DELTA,
        epsilon_at_delta=zcdp_to_dp(rho, DELTA),
        method=method,
        n_sims=int(n_sims),
        seed=seed,
        clip=clip,
        prior=prior,
        labels=tuple(str(x) for x in index.labels),
        sizes=np.asarray(sim.counts),
        shares=np.asarray(sim.weights),
        pubstrat_shares=np.asarray(pw),
        true_means=np.asarray(sim.true_groups),
        release=draws[0],
        q05=np.quantile(draws, 0.05, axis=0),
        q95=np.quantile(draws, 0.95, axis=0),
        sd=draws.std(axis=0),
        true_overall=float(sim.true_overall),
        overall=dict(sim.overall),
        parity={m: parity_draws(sim, m) for m in METHODS},
        notes=tuple(notes),
        recipe=dict(data.recipe),
        match=match,
    )


def group_means_answer_statistic(values: Any, groups: Any, *, clip: Sequence[float]):
    """The planner statistic behind :func:`dpcore.views.answers.group_means_answer` (the same
    call): every group's mean by stratified Laplace on values clipped to the public ``clip``
    (Laplace((U - L) / (n_g epsilon)) per group, parallel composition; neighbouring: replace one
    person's value within their group, group sizes public). It does not depend on epsilon, so the page
    builds it once per data and clip range."""
    from ...validation import check_finite

    lower, upper = (check_finite(v, "clip bound") for v in clip)
    statistic = _planner().make_statistic("group_means", values, groups, lower=lower, upper=upper)
    return _group_means_once_class()(**{f.name: getattr(statistic, f.name) for f in dataclasses.fields(statistic)})


def _planner():
    from ... import planner as planner_lib

    return planner_lib


@functools.lru_cache(maxsize=1)
def _group_means_once_class() -> type[GroupMeans]:
    """``dpcore.planner.GroupMeans`` whose true group means and clipping bias (properties recomputed
    over all n values at every call, ~90 calls per answer sentence) are computed once: the same
    numbers, half the time."""
    from ...planner import GroupMeans

    class GroupMeansComputedOnce(GroupMeans):
        @functools.cached_property
        def truth(self) -> np.ndarray:
            return super().truth

        @functools.cached_property
        def bias(self) -> np.ndarray:
            return super().bias

    return GroupMeansComputedOnce


def group_means_answer_at_epsilon(statistic: Any, *, epsilon: float):
    """The sentence half of :func:`dpcore.views.answers.group_means_answer` for a statistic from
    :func:`group_means_answer_statistic` (the same numbers and sentence), without the epsilon
    recommendation, which does not depend on ``epsilon`` (the page computes it once per target)."""
    from .. import answers as answer_experiments

    return answer_experiments.group_means_sentence(statistic, epsilon=epsilon)


def summarise(rows: Sequence[Mapping[str, Any]], x: str, y: str):
    """Mean, sd, count and standard error of column ``y`` per (``x``, method), sorted by ``x``."""
    import pandas as pd

    df = pd.DataFrame(list(rows))
    if df.empty or x not in df or y not in df:
        raise DPInputError(f"no rows with columns {x!r} and {y!r} to summarise")
    g = df.groupby([x, "method"], sort=False)[y]
    out = g.agg(["mean", "std", "count"]).reset_index()
    out["se"] = out["std"].fillna(0) / np.sqrt(out["count"])
    return out.sort_values([x])


@dataclass(frozen=True)
class TrendView:
    """A trend experiment (paper Figs. 2, 3, 6, 7): one row per (value, run, method) in ``rows``;
    ``x`` the swept column; ``measures`` the summarised columns ("error", and "parity error" on
    real data)."""

    experiment: str
    x: str
    grid: tuple
    runs: int
    rows: tuple[dict, ...]
    measures: tuple[str, ...]
    settings: dict

    def summary(self, measure: str = "error"):
        return summarise(self.rows, self.x, measure)

    def to_dict(self) -> dict:
        return to_plain(
            {
                "experiment": self.experiment,
                "x": self.x,
                "grid": list(self.grid),
                "runs": self.runs,
                "settings": self.settings,
                "summary": {m: self.summary(m).to_dict("records") for m in self.measures},
            }
        )


def trend_view(
    experiment: str,
    *,
    runs: int = 20,
    seed: int,
    clamp: bool = False,
    epsilon: float = 1.0,
    n: int = 10_000,
    k: int = 9,
    alpha: float = 0.3,
    R: float = 3.0,
    variable: str = "PINCP (personal income, $)",
    frame: Any = None,
    progress: Any = None,
) -> TrendView:
    """The trend experiments of the page (:data:`SWEEPS`): ``"n"``, ``"k"``, ``"alpha"``, ``"epsilon"``
    re-run the synthetic mixture (:func:`synthetic_sweep`, n capped at 20,000); ``"acs"`` sweeps the
    ACS grouping (:func:`grouping_sweep`, Figure 2) and ``"acs_eps"`` epsilon on SEX × RAC1P
    (:func:`real_epsilon_sweep`), both on the ACS excerpt (``frame``, loaded when None)."""
    if experiment not in SWEEPS:
        raise DPInputError(f"unknown experiment {experiment!r}; choose one of {list(SWEEPS)}")
    x, grid = SWEEPS[experiment]
    seed = check_int(seed, "seed", minimum=0)
    if experiment in ("acs", "acs_eps"):
        if variable not in ACS_VARIABLES:
            raise DPInputError(f"unknown ACS variable {variable!r}; choose one of {list(ACS_VARIABLES)}")
        spec = ACS_VARIABLES[variable]
        df = require_acs_frame(frame).dropna(subset=[spec["col"]])
        common = dict(
            clip_range=spec["clip"],
            lower=spec["prior"][0],
            upper=spec["prior"][1],
            sigma=spec["sigma"],
            runs=runs,
            rng=seed,
            clamp_to_prior=bool(clamp),
            progress=progress,
        )
        settings = dict(variable=variable, epsilon=float(epsilon))
        if experiment == "acs_eps":
            assert grid is not None  # SWEEPS gives acs_eps its epsilon grid
            rows = real_epsilon_sweep(df[spec["col"]].to_numpy(float), acs_labels(df, ("SEX", "RAC1P")), grid, **common)
            settings.pop("epsilon")
        else:
            strata = [
                (name, acs_labels(df, cols)) for name, cols in sorted(ACS_GROUPINGS.items(), key=lambda kv: len(kv[1]))
            ]
            strata.append(("RAC1P × HISP", acs_labels(df, ("RAC1P", "HISP"))))
            rows = grouping_sweep(df[spec["col"]].to_numpy(float), strata, epsilon=float(epsilon), **common)
            grid = tuple(sorted({r["k"] for r in rows}))
        measures: tuple[str, ...] = ("error", "parity error")
    else:
        assert grid is not None  # SWEEPS gives every synthetic sweep its grid
        n = min(check_int(n, "n", minimum=2), 20_000)
        settings = dict(n=n, k=int(k), alpha=float(alpha), epsilon=float(epsilon), R=float(R))
        rows = synthetic_sweep(
            x,
            grid,
            n=n,
            k=int(k),
            alpha=float(alpha),
            epsilon=float(epsilon),
            R=float(R),
            runs=runs,
            rng=seed,
            clamp_to_prior=bool(clamp),
            progress=progress,
        )
        measures = ("error",)
    return TrendView(
        experiment=experiment,
        x=x,
        grid=tuple(grid),
        runs=int(runs),
        rows=tuple(rows),
        measures=measures,
        settings=dict(settings, clamp=bool(clamp), seed=seed),
    )


@dataclass(frozen=True)
class BoundsView:
    """Figure 1 (worst case, Theorem 10 expectation and informal lower bound of ``sum_i ln|G_i|``
    against alpha) for (n, k), the paper's New York RACE example, and the actual ``sum ln|G_i|`` of
    the NY sizes when (n, k) is the NY example's."""

    n: int
    k: int
    curves: Mapping[str, np.ndarray]
    example: NYExample
    actual: float | None

    def to_dict(self) -> dict:
        ex = self.example
        return to_plain(
            {
                "n": self.n,
                "k": self.k,
                "curves": dict(self.curves),
                "actual": self.actual,
                "ny_example": {
                    "n": ex.n,
                    "k": ex.k,
                    "alpha": ex.alpha,
                    "worst": ex.worst,
                    "expected": ex.expected,
                    "best": ex.best,
                    "lower": ex.lower,
                    "actual": ex.actual,
                    "improvement": ex.improvement,
                    "improvement_actual": ex.improvement_actual,
                    "alpha_mle": ex.alpha_mle,
                },
            }
        )


def bounds_view(n: int, k: int, *, alpha_mark: float = 0.13) -> BoundsView:
    """The theory view: :func:`bound_curves` on alpha in [0.1, 1] (91 points) and :func:`ny_race_example`."""
    curves = bound_curves(n, k, np.linspace(0.1, 1.0, 91))
    ex = ny_race_example(alpha_mark)
    actual = ex.actual if (int(n), int(k)) == (ex.n, ex.k) else None
    return BoundsView(n=int(n), k=int(k), curves=curves, example=ex, actual=actual)


@dataclass(frozen=True)
class AccountingView:
    """What each release costs (Def. 7, Prop. 8): Laplace in epsilon, CoinPress in rho (zCDP) and
    its (epsilon, delta)-DP equivalent."""

    accounting: Any  # dpcore.stratified.PrivacyAccounting
    rho: float
    delta: float
    coinpress_epsilon: float
    coinpress_fresh_epsilon: float

    def to_dict(self) -> dict:
        a = self.accounting
        return to_plain(
            {
                "lines": list(a.lines),
                "all_groups": a.all_groups,
                "combined_overall": a.combined_overall,
                "groups_plus_fresh_global": a.groups_plus_fresh_global,
                "if_group_can_change": a.if_group_can_change,
                "coinpress_rho": self.rho,
                "delta": self.delta,
                "coinpress_epsilon": self.coinpress_epsilon,
                "coinpress_plus_fresh_rho": 2 * self.rho,
                "coinpress_plus_fresh_epsilon": self.coinpress_fresh_epsilon,
            }
        )


def accounting_view(epsilon: float, k: int) -> AccountingView:
    """The privacy-accounting view for ``k`` groups at ``epsilon`` (CoinPress at rho = epsilon^2/2)."""
    acc = privacy_accounting(epsilon, k)
    rho = pure_dp_to_zcdp(epsilon)
    return AccountingView(
        accounting=acc,
        rho=rho,
        delta=DELTA,
        coinpress_epsilon=zcdp_to_dp(rho, DELTA),
        coinpress_fresh_epsilon=zcdp_to_dp(2 * rho, DELTA),
    )


@dataclass(frozen=True)
class SynthesizerView:
    """The light synthesizer (one model vs one model per SEX × RAC1P stratum) on the ACS excerpt:
    parity error of means and max disparity per (epsilon, run, method)."""

    runs: int
    epsilons: tuple[float, ...]
    rows: tuple[dict, ...]

    def summary(self, measure: str):
        return summarise(self.rows, "epsilon", measure)

    def to_dict(self) -> dict:
        return to_plain(
            {
                "runs": self.runs,
                "epsilons": list(self.epsilons),
                "summary": {m: self.summary(m).to_dict("records") for m in ("parity error", "max disparity")},
            }
        )


def synthesizer_view(*, runs: int = 3, seed: int, frame: Any = None, progress: Any = None) -> SynthesizerView:
    """The synthetic-data view: :func:`synthesizer_sweep` on :func:`acs_synthesizer_table` (data seed
    ``seed``, the same seed for the noise), epsilons :data:`SYNTH_EPSILONS`."""
    tab = acs_synthesizer_table(frame, seed=seed)
    rows = synthesizer_sweep(
        tab["codes"],
        SYNTH_SIZES,
        tab["strata"],
        tab["k"],
        public_w=tab["public_w"],
        epsilons=list(SYNTH_EPSILONS),
        runs=runs,
        rng=seed,
        progress=progress,
    )
    return SynthesizerView(runs=int(runs), epsilons=SYNTH_EPSILONS, rows=tuple(rows))
