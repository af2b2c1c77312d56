"""The Gini index (Lan & Reiter 2025): its value (:class:`GiniMechanism`) and the value with the DP upper bound on
its smooth sensitivity that its published interval needs (:class:`GiniIntervalMechanism`).

The mathematics is elsewhere: the smooth sensitivity S_beta(X) and the calibration (alpha, beta, the certificate,
the cost) in :mod:`dpcore.gini` (:class:`dpcore.gini.GiniCalibration`), the split of epsilon between value and
bound and the published interval in :mod:`dpcore.intervals`. The draws are here: the value's (certified
generalized-Cauchy sampler or OpenDP's Laplace) and the bound's (:func:`gini_bound_release`, OpenDP's Laplace on
ln S_beta).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .. import budget, intervals
from ..gini import CONFIDENTIAL_SCALE_LABEL, FLOAT_SLACK, GINI_MIN_SCALE, GiniCalibration
from ..gini.calibration import GiniParameters
from ..noise import guarantees as noise_guarantees
from ..noise import secure as secure_noise
from ..validation import DPInputError, check_epsilon, check_int, check_positive, check_probability
from .base import register

__all__ = [
    "GiniMechanism",
    "GiniDraw",
    "GiniIntervalMechanism",
    "GiniIntervalDraw",
    "GiniBoundRelease",
    "gini_bound_release",
    "GINI_PLANNING_N",
    "gini_min_scale",
]


@dataclass(frozen=True)
class GiniDraw:
    """One draw of :class:`GiniMechanism`: ``value`` is the published number (clamped to [0, 1] on the public
    grid); ``noisy_value`` the noisy number before that post-processing (a DP output too: the posterior needs it);
    ``measurement`` / ``privacy_map`` name the sampler and its statement (public text: the confidential scale is
    named, never written)."""

    value: float
    noisy_value: float
    measurement: str
    privacy_map: str
    simulated: bool


@register
@dataclass(frozen=True)
class GiniMechanism(GiniCalibration):
    """The one mechanism of every released Gini index (eqs. (9)-(10)): the public calibration of
    :class:`dpcore.gini.GiniCalibration` (alpha, beta, the certificate, the cost, the record) and its draw.

    Real draw, "cauchy": the certified generalized-Cauchy sampler
    (:func:`dpcore.noise.secure.release_generalized_cauchy`) in its pure-DP mode (window [0, 1], grid 1e-6, the
    scale clamped to [GINI_MIN_SCALE, 1/alpha], alpha with the float slack: the calibration's docstring);
    "laplace": OpenDP's floating-point-safe Laplace at the confidential scale; "laplace_lognormal": refused (no
    floating-point-safe sampler). A simulation draws the calibrated law with numpy (:meth:`GiniCalibration.simulate`,
    the same law :func:`dpcore.gini.release_gini` draws). Every value is published by
    :func:`dpcore.noise.guarantees.publish_gini`.
    """

    kind = "gini"
    interval_kind = None  # the value alone: its interval needs the DP bound of GiniIntervalMechanism

    def draw(self, confidential_gini: float, confidential_smooth_sensitivity: float, rng: Any = None) -> GiniDraw:
        """One cell's release. ``rng`` None (or a ``dpcore.rng.SecureRandom``): the real sampler; a numpy
        Generator or seed: a simulation of the same law on the same grid (NOT a release). A real Cauchy draw's
        ``noisy_value`` lies in the sampler's window [0, 1] (the window is part of its pure-DP mode). A smooth sensitivity
        <= 0 marks a cell whose Gini is the same for every data set of its size (n <= 1): 0 is released exactly."""
        if float(confidential_smooth_sensitivity) <= 0.0:
            return GiniDraw(
                0.0,
                0.0,
                "none: the Gini of n <= 1 records is 0 on every data set (public)",
                "no data-dependent output",
                secure_noise.is_simulation(rng),
            )
        g = float(confidential_gini)
        simulated = secure_noise.is_simulation(rng)
        if simulated:
            # the calibrated law S/alpha that the pages explore (the real sampler's float-slack margin, 2e-6 of the
            # scale, and its floor are safety margins of the real draw), without the sampler's window: the
            # published value is the same (publish_gini clamps to the window and rounds to the grid), and the
            # noisy value keeps the density the posterior reads
            noisy = float(self.simulate(g, self.noise_scale(confidential_smooth_sensitivity), 1, rng)[0])
            return GiniDraw(
                noise_guarantees.publish_gini(noisy),
                noisy,
                f"simulation: value + scale * {self.noise} noise (numpy), clamped to [0, 1] on the grid "
                "1e-06 (NOT a real release)",
                self.smooth_calibration.statement(),
                True,
            )
        scale = self.confidential_noise_scale(confidential_smooth_sensitivity)
        if self.noise == "cauchy":
            loss, _ = self.certified
            d = secure_noise.release_generalized_cauchy(
                g,
                scale=scale,
                gamma=self.gamma,
                grid=noise_guarantees.GINI_GRID,
                rng=rng,
                window=noise_guarantees.GINI_WINDOW,
                epsilon=loss,
                min_scale=GINI_MIN_SCALE,
                max_scale=self.max_scale,
            )
            noisy = float(d.values[0])
            statement = (
                f"smooth-sensitivity certificate (dpcore.noise.smooth_noise_privacy_loss, gamma={self.gamma:g}, "
                f"alpha={self.release_alpha:.6g}, beta={self.smoothness:.6g}, float slack {FLOAT_SLACK:g}) -> epsilon "
                f"{loss:.6g} per cell; {d.privacy_map}"
            )
            return GiniDraw(noise_guarantees.publish_gini(noisy), noisy, d.measurement, statement, simulated)
        self.check_real_release()
        d = secure_noise.release_real_values(
            [g], scale=scale, rng=rng, confidential_scale_label=CONFIDENTIAL_SCALE_LABEL
        )
        noisy = float(d.values[0])
        return GiniDraw(
            noise_guarantees.publish_gini(noisy), noisy, d.measurement, self.smooth_calibration.statement(), False
        )

    def certified_epsilon(self, draw: GiniDraw | None = None) -> float:
        """The certificate: m (certified loss + sampler excess) per cell for the Cauchy (its pure-DP mode), m times
        the calibration's epsilon at its delta for the light-tailed noises (group privacy over m rows)."""
        loss, excess = self.certified
        if self.noise == "cauchy":
            return float(self.rows_per_person * (loss + excess))
        return float(self.rows_per_person * self.smooth_calibration.epsilon)


@dataclass(frozen=True)
class GiniBoundRelease:
    """The released DP upper bound on S_beta(X): ``log_s_upper`` = ln S + Laplace(scale) + margin, ``s_upper``
    its exponential (both DP outputs). ``scale`` (OpenDP's for epsilon at L1 sensitivity beta) and ``margin`` =
    scale ln(1/(2 eta)) are public; S_hat >= S with probability 1 - eta. ``measurement`` names the sampler."""

    log_s_upper: float
    s_upper: float
    epsilon: float
    beta: float
    eta: float
    scale: float
    margin: float
    measurement: str
    simulated: bool
    #: OpenDP's privacy map of the bound's Laplace at L1 sensitivity beta (<= epsilon)
    map_epsilon: float | None = None


def gini_bound_release(
    confidential_smooth_sensitivity: float, *, beta: float, epsilon_bound: float, eta: float, rng: Any = None
) -> GiniBoundRelease:
    """An epsilon_bound-DP upper bound on S_beta(X) that holds with probability >= 1 - eta.

    Sensitivity of ln S_beta. S_beta(X) = max_k e^{-k beta} A^(k)(X) (Lan & Reiter eq. (8)) with
    A^(k)(X') <= A^(k+1)(X) for neighbours X, X' (the smoothness of ``dpcore.gini``'s A^(k): the k-ball of X'
    lies in the (k+1)-ball of X, and A^(k) is monotone in the ball). Hence
    S_beta(X') = max_k e^{-k beta} A^(k)(X') <= max_k e^{-k beta} A^(k+1)(X) = e^beta max_k e^{-(k+1) beta}
    A^(k+1)(X) <= e^beta S_beta(X), and by symmetry |ln S_beta(X) - ln S_beta(X')| <= beta. S_beta > 0 always
    (A^(n) = GS > 0, so S_beta >= e^{-n beta} GS), so the logarithm is defined.

    Release. T = ln S + L + scale ln(1/(2 eta)), L ~ Laplace(scale), scale = beta/epsilon_bound (OpenDP's, with
    its rounding allowance): the Laplace mechanism on a beta-sensitive number, pure epsilon_bound-DP. The bound
    fails (e^T < S) iff L < -scale ln(1/(2 eta)), probability (1/2) e^{-ln(1/(2 eta))} = eta exactly.

    ``rng`` None (or a SecureRandom): OpenDP's floating-point-safe Laplace (a real release); a numpy Generator or
    seed: the same law with numpy (a simulation, NOT a release). ``beta`` must be the beta at which S_beta(X)
    was computed, i.e. the value's calibration beta (:class:`dpcore.intervals.GiniIntervalPlan`).
    """
    s = check_positive(confidential_smooth_sensitivity, "confidential_smooth_sensitivity")
    beta = check_positive(beta, "beta")
    eps = check_epsilon(epsilon_bound, "epsilon_bound")
    eta = check_probability(eta, "eta")
    scale = noise_guarantees.laplace_scale_for(eps, beta)
    margin = scale * math.log(1.0 / (2.0 * eta))
    draw = secure_noise.release_real_values([math.log(s)], scale=scale, rng=rng, sensitivity=beta)
    log_upper = float(np.asarray(draw.values)[0]) + margin
    return GiniBoundRelease(
        log_upper, math.exp(log_upper), eps, beta, eta, scale, margin, draw.measurement, draw.simulated, draw.epsilon
    )


#: the cell size the Gini's epsilon split and beta are optimised for when the release does not say (a typical
#: PSEO-size cell). The choice only moves the interval's width, never its coverage: every interval is valid for
#: any n, and a smaller cell than planned gets a wider interval.
GINI_PLANNING_N = 500


@dataclass(frozen=True)
class GiniIntervalDraw:
    """One cell of :class:`GiniIntervalMechanism`: the published value, the noisy value before the [0, 1] clamp,
    the published DP upper bound on S_beta(X) (NaN for a cell with n <= 1, which releases 0 exactly), and what drew
    them."""

    value: float
    noisy_value: float
    smooth_sensitivity_upper: float
    measurement: str
    privacy_map: str
    bound_measurement: str
    simulated: bool
    #: OpenDP's privacy map of the bound's Laplace (None for a cell with n <= 1, which draws no bound)
    bound_map_epsilon: float | None = None


@register
@dataclass(frozen=True)
class GiniIntervalMechanism(GiniParameters):
    """A Gini released with an interval anyone can recompute: the value by :class:`GiniMechanism` at
    epsilon_value, plus a DP upper bound on S_beta(X) at epsilon_bound (:func:`gini_bound_release`:
    ln S_beta changes by at most beta between neighbours), with epsilon_value + epsilon_bound = epsilon and beta
    chosen by :func:`dpcore.intervals.optimise_gini_split` from public inputs only (epsilon, delta, the noise, the
    bounds, ``level`` and a planning cell size). The published interval is
    :func:`dpcore.intervals.gini_interval_from_release` of the value and the bound (``dpcore.published``).

    Cost (basic composition; per cell, then group privacy over ``rows_per_person`` m, the cells being disjoint):
    the value's cost at m epsilon_value plus the bound's pure m epsilon_bound = epsilon in total, with the value's
    delta ("laplace") or none ("cauchy")."""

    level: float = 0.95
    planning_n: int = GINI_PLANNING_N

    kind = "gini_interval"
    interval_kind = "gini"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "rows_per_person", check_int(self.rows_per_person, "rows per person", minimum=1))
        object.__setattr__(self, "planning_n", check_int(self.planning_n, "planning cell size", minimum=2))
        self._value_mechanism_at(self.epsilon)  # the value's public parameters are checked by its mechanism

    @functools.cached_property
    def plan(self):
        """The :class:`dpcore.intervals.GiniIntervalPlan` of one cell (public: the split, beta, eta).

        The optimiser takes a few tenths of a second (the Gini page's grid is shipped with it); its choice (split,
        beta, eta) and the model's widths depend on public inputs only, so they are kept in a file cache
        (:func:`_split_cache_dir`) and every process with the same inputs reuses them. The plan is rebuilt from the
        cached choice with :func:`dpcore.intervals.gini_plan` (which certifies the value's calibration again), after
        checking that the split adds up to the cell's epsilon: a damaged or edited cache file can change the
        interval's width, never the privacy cost."""
        cell = self._value_mechanism_at(self.epsilon)
        delta = cell.delta_cell or None
        key = {
            "v": 1,
            "epsilon": cell.epsilon_cell,
            "delta": delta,
            "noise": cell.noise,
            "n": self.planning_n,
            "lower": cell.lower,
            "upper": cell.upper,
            "level": self.level,
            "gamma": cell.gamma,
            "calibration": cell.calibration,
        }
        choice = _read_split(key, cell.epsilon_cell)
        if choice is not None:
            try:
                plan = intervals.gini_plan(
                    choice["epsilon_value"],
                    choice["epsilon_bound"],
                    choice["beta"],
                    noise=cell.noise,
                    n=self.planning_n,
                    lower=cell.lower,
                    upper=cell.upper,
                    delta=delta,
                    level=self.level,
                    eta=choice["eta"],
                    method=choice["method"],
                    gamma=cell.gamma,
                    calibration_mode=cell.calibration,
                )
                return replace(plan, **_cached_widths(choice))
            except DPInputError:
                pass  # an unusable cached choice: optimise again
        plan = intervals.optimise_gini_split(
            cell.epsilon_cell,
            delta,
            cell.noise,
            self.planning_n,
            cell.lower,
            cell.upper,
            self.level,
            gamma=cell.gamma,
            calibration_mode=cell.calibration,
        )
        _write_split(
            key,
            {
                k: getattr(plan, k)
                for k in (
                    "epsilon_value",
                    "epsilon_bound",
                    "beta",
                    "eta",
                    "method",
                    "model_width",
                    "model_oracle_width",
                )
            },
        )
        return plan

    @functools.cached_property
    def value_mechanism(self) -> GiniMechanism:
        """The value's mechanism: epsilon_value per cell, the plan's beta."""
        return self._value_mechanism_at(self.rows_per_person * self.plan.epsilon_value, beta=self.plan.beta)

    def _value_mechanism_at(self, epsilon: float, beta: float | None = None) -> GiniMechanism:
        """A :class:`GiniMechanism` with this release's public parameters at ``epsilon`` (and ``beta``; None: the
        calibration's default): the whole epsilon checks them and plans the split, epsilon_value draws."""
        return GiniMechanism(
            epsilon,
            self.lower,
            self.upper,
            noise=self.noise,
            gamma=self.gamma,
            calibration=self.calibration,
            delta=self.delta,
            rows_per_person=self.rows_per_person,
            beta=beta,
        )

    @property
    def smoothness(self) -> float:
        """beta of S_beta: the engines compute S_beta(X) at this beta."""
        return self.value_mechanism.smoothness

    def privacy_cost(self) -> budget.PrivacyCost:
        value = self.value_mechanism.privacy_cost()
        bound_eps = self.rows_per_person * self.plan.epsilon_bound
        if value.kind == "pure":
            return budget.pure(value.epsilon + bound_eps)
        if value.kind == "approx":
            return budget.approx(value.epsilon + bound_eps, value.delta)
        raise DPInputError("a Gini with a published interval is offered for the 'cauchy' and 'laplace' noises")

    def interval_constants(self) -> dict[str, Any]:
        """What the published interval is computed from besides the table: the plan, with the alpha and the scale
        window of the value's actual draw (``dpcore.published``)."""
        mech = self.value_mechanism
        out = dict(self.plan.to_dict())
        out.update(
            release_alpha=mech.release_alpha,
            min_scale=gini_min_scale(mech),
            max_scale=mech.max_scale if mech.noise == "cauchy" else float("inf"),
        )
        return out

    def record(self) -> dict[str, Any]:
        rec = dict(self.value_mechanism.record())
        rec.update(
            interval_plan=self.interval_constants(),
            interval_level=self.level,
            epsilon_value=self.rows_per_person * self.plan.epsilon_value,
            epsilon_bound=self.rows_per_person * self.plan.epsilon_bound,
            bound=(
                "smooth_sensitivity_bound = exp(ln S_beta(X) + Laplace(beta/epsilon_bound per cell) + "
                "margin): a DP upper bound on S_beta(X) that fails with probability eta"
            ),
        )
        return rec

    def draw(
        self, confidential_gini: float, confidential_smooth_sensitivity: float, rng: Any = None
    ) -> GiniIntervalDraw:
        s = float(confidential_smooth_sensitivity)
        d = self.value_mechanism.draw(confidential_gini, s, rng=rng)
        if s <= 0.0:
            return GiniIntervalDraw(
                d.value, d.noisy_value, float("nan"), d.measurement, d.privacy_map, "none: n <= 1", d.simulated
            )
        plan = self.plan
        bound = gini_bound_release(s, beta=self.smoothness, epsilon_bound=plan.epsilon_bound, eta=plan.eta, rng=rng)
        return GiniIntervalDraw(
            d.value,
            d.noisy_value,
            bound.s_upper,
            d.measurement,
            d.privacy_map,
            bound.measurement,
            d.simulated,
            bound.map_epsilon,
        )

    def certified_epsilon(self, draw: GiniIntervalDraw) -> float:
        """The value's certificate (:meth:`GiniMechanism.certified_epsilon`) plus OpenDP's map of the bound's
        Laplace, m times per cell (group privacy over m rows; basic composition of value and bound)."""
        value = self.value_mechanism.certified_epsilon()
        bound = draw.bound_map_epsilon if draw.bound_map_epsilon is not None else self.plan.epsilon_bound
        return float(value + self.rows_per_person * bound)


def gini_min_scale(mechanism: GiniCalibration) -> float:
    """The floor a draw clamps the Gini's noise scale to (the Cauchy's; none for the other noises)."""
    if not isinstance(mechanism, GiniCalibration):
        raise TypeError(f"gini_min_scale takes a dpcore.gini.GiniCalibration, got {type(mechanism).__name__}")
    return GINI_MIN_SCALE if mechanism.noise == "cauchy" else 0.0


def _split_cache_dir():
    """Where the Gini split choices are kept: $DPCORE_CACHE_DIR, else $XDG_CACHE_HOME/dpcore, else ~/.cache/dpcore."""
    import os
    from pathlib import Path

    base = os.environ.get("DPCORE_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "dpcore"


def _split_file(key: dict):
    import hashlib
    import json

    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode("utf-8")).hexdigest()[:32]
    return _split_cache_dir() / f"gini_split_{digest}.json"


def _read_split(key: dict, epsilon_cell: float) -> dict | None:
    """The cached choice for these public inputs, or None (missing, unreadable, or not adding up to epsilon)."""
    import json
    import math

    try:
        saved = json.loads(_split_file(key).read_text(encoding="utf-8"))
        choice = saved["choice"] if saved.get("key") == key else None
        if choice is None:
            return None
        ev, eb, beta, eta = (float(choice[k]) for k in ("epsilon_value", "epsilon_bound", "beta", "eta"))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    ok = (
        ev > 0
        and eb > 0
        and beta > 0
        and 0 < eta < 1
        and choice.get("method") in ("pivot", "union")
        and math.isclose(ev + eb, epsilon_cell, rel_tol=1e-12, abs_tol=0.0)
    )
    return choice if ok else None


def _cached_widths(choice: dict) -> dict:
    """The planning model's widths kept with a cached choice (public numbers; without them the Gini view recomputes
    them from the planning S_beta at a small beta, seconds for n = 10,000), when they are positive numbers."""
    import math

    widths = {k: choice.get(k) for k in ("model_width", "model_oracle_width")}
    ok = all(isinstance(v, float) and math.isfinite(v) and v > 0 for v in widths.values())
    return widths if ok else {}


def _write_split(key: dict, choice: dict) -> None:
    """Keep a choice for the next process (best effort: a read-only home only costs the optimisation again)."""
    import json
    import os

    path = _split_file(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"key": key, "choice": choice}), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass
