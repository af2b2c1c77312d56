"""The count above a threshold, the clipped mean, the means by group and the relative risk, planned: closed
forms of their accuracy (Ghosh et al. 2009; stratified paper Eqs. 2-3; Shoham & Ligett Claim 3.2)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import noise
from ..errors import DPInputError
from ..validation import as_generator, check_bounds, check_epsilon, check_finite, check_int, check_positive
from .closed_forms import geometric_prob_within, laplace_interval_prob
from .statistics import PlannedStatistic, check_values, from_mechanism_draw, published_form

__all__ = ["CountAbove", "ClippedMean", "GroupMeans", "RatioStatistic"]


@dataclass(frozen=True, eq=False)
class CountAbove(PlannedStatistic):
    """Number of records with value >= threshold, released with two-sided geometric noise (sensitivity 1
    under replace-one: one replacement changes the count by at most 1; Ghosh et al. 2009)."""

    values: np.ndarray
    threshold: float
    name: str = "Count above threshold"
    kind: str = "count"
    mechanism: str = "count + two-sided geometric noise P(k) ∝ exp(-eps|k|) (sensitivity 1)"

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", check_values(self.values))
        object.__setattr__(self, "threshold", check_finite(self.threshold, "threshold"))

    @property
    def count(self) -> int:
        return int(np.count_nonzero(self.values >= self.threshold))

    @property
    def truth(self) -> np.ndarray:
        return np.array([float(self.count)])

    @property
    def labels(self) -> tuple[str, ...]:
        return (f"count >= {self.threshold:,.0f}",)

    def prob_within(self, epsilon, rel_error):
        m = int(math.floor(self._rel_tolerance(rel_error)[0]))
        return geometric_prob_within(m, check_epsilon(epsilon)), 0.0

    def simulate(self, epsilon, n, rng=None):
        k = noise.sample_two_sided_geometric(epsilon, n, rng=as_generator(rng))
        return np.clip(self.count + k, 0, self.values.size).astype(float)[:, None]  # the release's clamp to [0, n]

    def mechanism_at(self, epsilon):
        from ..mechanisms import CountMechanism

        return CountMechanism(epsilon, sensitivity=1)

    def _drawn(self, epsilon, drawer, level):
        mech = self.mechanism_at(epsilon)
        d = drawer(mech, [self.count], upper=[self.values.size])  # n is public: a count is in [0, n]
        pub = published_form("count", {"count": d.counts, "n": [self.values.size]}, mech.record(), ["count"], level)
        return from_mechanism_draw(d, d.counts, check_epsilon(epsilon), self.neighbouring, published=pub)

    def params(self):
        return {"threshold": self.threshold, "sensitivity": 1}


@dataclass(frozen=True, eq=False)
class ClippedMean(PlannedStatistic):
    """Mean income, clipped to a public [lower, upper], plus Lap((upper - lower)/(n eps)) (stratified
    paper Eq. 2, :func:`dpcore.stratified.clipped_laplace_mean`). Replace-one, n public."""

    values: np.ndarray
    lower: float
    upper: float
    name: str = "Mean income (clipped)"
    kind: str = "mean"
    mechanism: str = "clipped mean + Laplace((U - L)/(n eps))"

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", check_values(self.values))
        lo, hi = check_bounds(self.lower, self.upper, lower_name="clip lower", upper_name="clip upper")
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)

    @property
    def truth(self) -> np.ndarray:
        return np.array([float(self.values.mean())])

    @property
    def labels(self):
        return ("mean",)

    @property
    def bias(self) -> float:
        return float(np.clip(self.values, self.lower, self.upper).mean() - self.values.mean())

    def scale(self, epsilon) -> float:
        return (self.upper - self.lower) / (self.values.size * check_epsilon(epsilon))

    def prob_within(self, epsilon, rel_error):
        t = self._rel_tolerance(rel_error)
        p = laplace_interval_prob(t, np.array([self.bias]), np.array([self.scale(epsilon)]))
        return float(p[0]), 0.0

    def simulate(self, epsilon, n, rng=None):
        z = noise.sample_laplace(self.scale(epsilon), n, rng=as_generator(rng))
        return np.clip(self.truth[0] + self.bias + z, self.lower, self.upper)[:, None]  # the release's clamp

    def mechanism_at(self, epsilon):
        from ..mechanisms import MeanMechanism

        return MeanMechanism(epsilon, self.lower, self.upper)

    def _drawn(self, epsilon, drawer, level):
        """(Clipped sum in cents + OpenDP's floating-point-safe Laplace) / n (Eq. 2) by
        :class:`dpcore.mechanisms.MeanMechanism`, the command line's mechanism."""
        from ..stratified import clipped_cents

        mech = self.mechanism_at(epsilon)
        d = drawer(mech, [int(clipped_cents(self.values, self.lower, self.upper).sum())], [self.values.size])
        pub = published_form("mean", {"n": [self.values.size], "mean": d.means}, mech.record(), ["mean"], level)
        return from_mechanism_draw(
            d, d.means, mech.epsilon, "replace one record; n and the clip range public", published=pub
        )

    def params(self):
        return {"clip_lower": self.lower, "clip_upper": self.upper, "n": int(self.values.size)}


@dataclass(frozen=True, eq=False)
class GroupMeans(PlannedStatistic):
    """One clipped Laplace mean per group (stratified paper Eq. 3, :func:`dpcore.stratified.stratified_mean`).

    Neighbouring: replace one person's value inside their group; group labels and sizes public.
    Groups are disjoint, so all group means together cost epsilon (parallel composition).
    """

    values: np.ndarray
    groups: np.ndarray
    lower: float
    upper: float
    name: str = "Mean income by group"
    kind: str = "group_means"
    mechanism: str = "per-group clipped mean + Laplace((U - L)/(|G_i| eps)); parallel over groups"
    parallel_note: str = "groups are disjoint with public sizes: parallel composition (cost = epsilon once)"

    def __post_init__(self) -> None:
        from .. import stratified

        x = check_values(self.values)
        g = np.asarray(self.groups)
        if g.shape[0] != x.size:
            raise DPInputError(f"values ({x.size}) and groups ({g.shape[0]}) must have the same length")
        lo, hi = check_bounds(self.lower, self.upper, lower_name="clip lower", upper_name="clip upper")
        gi = stratified.group_index(g)
        if np.any(gi.counts == 0):
            raise DPInputError("a group is empty: remove it or give planning data with every group")
        object.__setattr__(self, "values", x)
        object.__setattr__(self, "groups", g)
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)
        self._gi: stratified.GroupIndex  # derived from the data, not a field
        object.__setattr__(self, "_gi", gi)

    @property
    def labels(self):
        return tuple(str(v) for v in self._gi.labels)

    @property
    def counts(self) -> np.ndarray:
        return self._gi.counts

    @property
    def truth(self) -> np.ndarray:
        return self._group_means()[0].copy()

    @property
    def bias(self) -> np.ndarray:
        return self._group_means()[1].copy()

    def _group_means(self) -> tuple[np.ndarray, np.ndarray]:
        """(true group means, clipping bias), computed once: the answer's error law asks for them at every
        step of its bisections. The data are never changed after __post_init__."""
        cached = self.__dict__.get("_truth_bias")
        if cached is None:
            truth = np.bincount(self._gi.codes, weights=self.values, minlength=self._gi.k) / self.counts
            clipped = np.clip(self.values, self.lower, self.upper)
            bias = np.bincount(self._gi.codes, weights=clipped, minlength=self._gi.k) / self.counts - truth
            cached = (truth, bias)
            object.__setattr__(self, "_truth_bias", cached)
        return cached

    def scale(self, epsilon) -> np.ndarray:
        return (self.upper - self.lower) / (self.counts * check_epsilon(epsilon))

    def prob_within(self, epsilon, rel_error):
        t = self._rel_tolerance(rel_error)
        p = laplace_interval_prob(t, self.bias, self.scale(epsilon))
        return float(np.prod(p)), 0.0

    def simulate(self, epsilon, n, rng=None):
        b = self.scale(epsilon)
        z = noise.sample_laplace(1.0, (n, b.size), rng=as_generator(rng))
        return np.clip((self.truth + self.bias)[None, :] + b[None, :] * z, self.lower, self.upper)  # as released

    def mechanism_at(self, epsilon):
        from ..mechanisms import MeanMechanism

        return MeanMechanism(epsilon, self.lower, self.upper)

    def _drawn(self, epsilon, drawer, level):
        """Per group: (clipped sum in cents + Laplace) / |G_i| (Eq. 3) by :class:`dpcore.mechanisms.MeanMechanism`:
        one person changes one group's sum by at most U - L, so the whole vector costs epsilon (the groups are
        disjoint with public labels and sizes: parallel composition)."""
        from ..stratified import clipped_cents

        mech = self.mechanism_at(epsilon)
        cents = clipped_cents(self.values, self.lower, self.upper)
        sums = np.zeros(self._gi.k, dtype=np.int64)
        np.add.at(sums, self._gi.codes, cents)
        d = drawer(mech, sums, self.counts)
        pub = published_form("mean", {"n": self.counts, "mean": d.means}, mech.record(), ["mean"], level)
        return from_mechanism_draw(
            d,
            d.means,
            mech.epsilon,
            "replace one person's value within their group; group labels and sizes public",
            published=pub,
        )

    def params(self):
        return {
            "clip_lower": self.lower,
            "clip_upper": self.upper,
            "group_sizes": {lab: int(c) for lab, c in zip(self.labels, self.counts, strict=True)},
        }


@dataclass(frozen=True, eq=False)
class RatioStatistic(PlannedStatistic):
    """Relative risk (x/n_x)/(y/n_y) from LaplaceNoisedCounts (Shoham & Ligett, Claim 3.1; eps/2 per count).

    Neighbours: replace one record (it may change both counts); n_x, n_y public. Accuracy from
    Claim 3.2 (:func:`dpcore.ratio.ratio_sample_accuracy`) for the unclipped ratio of noisy counts;
    the relative error of RR equals that of x/y because n_y/n_x is a public constant.
    """

    x: int
    y: int
    n_x: int
    n_y: int
    name: str = "Relative risk"
    kind: str = "ratio"
    mechanism: str = "LaplaceNoisedCounts: x + Lap(2/eps), y + Lap(2/eps), ratio (Claim 3.2)"

    def __post_init__(self) -> None:
        # x = 0 and y = 0 are valid data: the release never refuses them (a refusal that depends on one
        # person leaks); only planning (a relative error target) needs x > 0 and y > 0, see prob_within
        x = check_int(self.x, "x (cases in group x)", minimum=0)
        y = check_int(self.y, "y (cases in group y)", minimum=0)
        nx = check_int(self.n_x, "n_x", minimum=1)
        ny = check_int(self.n_y, "n_y", minimum=1)
        if x > nx or y > ny:
            raise DPInputError("a count cannot exceed its group size")
        for k, v in (("x", x), ("y", y), ("n_x", nx), ("n_y", ny)):
            object.__setattr__(self, k, v)

    @property
    def truth(self):
        if self.y == 0:
            return np.array([math.nan])  # undefined: planning refuses it, the release does not care
        return np.array([(self.x / self.n_x) / (self.y / self.n_y)])

    @property
    def labels(self):
        return ("relative risk",)

    def prob_within(self, epsilon, rel_error):
        from .. import ratio as _r

        if self.x == 0 or self.y == 0:
            raise DPInputError(
                f"{'x' if self.x == 0 else 'y'} = 0 on the planning data: the relative risk is "
                f"{'0' if self.x == 0 else 'undefined'} and a relative error target is undefined; "
                "plan on data with cases in both groups"
            )
        alpha = check_positive(rel_error, "relative error") * self.x / self.y
        beta = float(_r.ratio_sample_accuracy(self.x, self.y, epsilon=epsilon, alpha=alpha))
        return 1.0 - beta, 0.0

    def simulate(self, epsilon, n, rng=None):
        b = 2.0 / check_epsilon(epsilon)
        gen = as_generator(rng)
        xs = np.clip(self.x + noise.sample_laplace(b, n, rng=gen), 0.0, self.n_x)  # the release's clamp to [0, n]
        ys = np.clip(self.y + noise.sample_laplace(b, n, rng=gen), 0.0, self.n_y)
        return ((xs / np.maximum(ys, 1.0)) * (self.n_y / self.n_x))[:, None]

    def mechanism_at(self, epsilon):
        from ..mechanisms import RelativeRiskMechanism

        return RelativeRiskMechanism(epsilon)

    def _drawn(self, epsilon, drawer, level):
        """LaplaceNoisedCounts (Claim 3.1) by :class:`dpcore.mechanisms.RelativeRiskMechanism` (the command line's
        mechanism); the ratio (x~/n_x) / (max(y~, 1)/n_y) (Claim 3.4) is post-processing."""
        mech = self.mechanism_at(epsilon)
        d = drawer(mech, [self.x], [self.y], [self.n_x], [self.n_y])
        table = {
            "n_exposed": [self.n_x],
            "n_reference": [self.n_y],
            "cases_exposed": d.cases_exposed,
            "cases_reference": d.cases_reference,
            "relative_risk": d.relative_risk,
        }
        pub = published_form(
            "relative_risk", table, mech.record(), ["relative_risk"], level, inputs=["cases_exposed", "cases_reference"]
        )
        return from_mechanism_draw(d, d.relative_risk, mech.epsilon, self.neighbouring, published=pub)

    def params(self):
        return {
            "n_x": self.n_x,
            "n_y": self.n_y,
            "split": "epsilon/2 per count",
            "denominator": "max(y~, 1) in the released ratio (Claim 3.4)",
        }
