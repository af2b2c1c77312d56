"""Privacy budget accounting: a ledger of releases with sequential and parallel composition.

Three currencies are supported, with exact conversion formulas (no accounting dependency):

* **pure DP** ``epsilon`` (delta = 0);
* **approximate DP** ``(epsilon, delta)``;
* **zero-concentrated DP** ``rho`` (zCDP; CoinPress and the Gaussian mechanism are accounted in it).

Composition rules implemented (each cited):

* Sequential composition of pure / approximate DP: epsilons add, deltas add
  (Dwork & Roth 2014, Theorem 3.16, "basic composition").
* Sequential composition of zCDP: rhos add (Bun & Steinke 2016, Lemma 2.3).
* Pure epsilon-DP implies (epsilon^2 / 2)-zCDP (Bun & Steinke 2016, Proposition 1.4).
* rho-zCDP implies (rho + 2 sqrt(rho ln(1/delta)), delta)-DP for every delta in (0, 1)
  (Bun & Steinke 2016, Proposition 1.3) -- :func:`zcdp_to_approx_dp` with ``method="bun-steinke"``.
* The tighter conversion of Canonne, Kamath & Steinke 2020 ("The discrete Gaussian for
  differential privacy", Proposition 12 applied to the Renyi curve alpha * rho of zCDP,
  their Corollary 13): rho-zCDP implies (epsilon, delta)-DP with
  ``epsilon = inf_{alpha > 1} alpha*rho + ln(1 - 1/alpha) + (ln(1/delta) - ln(alpha)) / (alpha - 1)``
  -- ``method="cks"`` (the default). It is never larger than the Bun-Steinke value; the tests
  check that it is also never smaller than the exact (epsilon, delta) curve of the Gaussian
  mechanism (which is rho-zCDP and essentially tight), so it cannot be an invalid bound.

Parallel composition (a release made of several mechanisms, each run on a disjoint part of the
data: cells, groups) depends on the neighbouring relation:

* ``record_can_move=False``: the parts are defined by something public that neighbouring datasets
  share (group membership public and fixed, e.g. "replace one person's income, keep their group";
  or the add/remove-one relation, where a change touches one part). Then one change touches one
  part and the cost is the **maximum** over parts (McSherry 2009, Theorem 4; PSEO paper Thm 2.2).
* ``record_can_move=True``: under the project's default relation "replace one record, n public",
  with part costs stated for adding/removing one record in a part, a replacement is a removal plus
  an addition, in the same part or in two parts. The cost is group privacy of size 2 on the
  costliest part (pure 2 eps, zCDP 4 rho, approximate (2 eps, (1 + e^eps) delta)), which also bounds
  a move between two parts. This is the safe default.

A :class:`Ledger` records entries (each possibly parallel), reports the total spent in every
currency that applies, the remaining budget under a cap, and refuses (``DPInputError``) a charge
that would exceed the cap. The ledger is not itself private data: it holds only parameters.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import numpy as np

from .validation import DPInputError, check_delta, check_epsilon, check_positive, check_probability

__all__ = [
    "PrivacyCost",
    "pure",
    "approx",
    "zcdp",
    "pure_to_zcdp",
    "zcdp_to_approx_dp",
    "zcdp_delta_for_epsilon",
    "gaussian_exact_delta",
    "group_privacy_2",
    "compose_sequential",
    "compose_parallel",
    "LedgerEntry",
    "Ledger",
    "BudgetCap",
    "PlanCost",
    "compose_plan",
]

KINDS = ("pure", "approx", "zcdp")


@dataclass(frozen=True)
class PrivacyCost:
    """The privacy cost of one mechanism (or of a composition).

    kind: "pure" (epsilon, delta = 0), "approx" (epsilon, delta) or "zcdp" (rho).
    """

    kind: str
    epsilon: float = 0.0
    delta: float = 0.0
    rho: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise DPInputError(f"privacy cost kind must be one of {KINDS}, got {self.kind!r}")
        for name in ("epsilon", "delta", "rho"):
            v = getattr(self, name)
            if not isinstance(v, (int, float, np.floating, np.integer)) or not math.isfinite(float(v)) or v < 0:
                raise DPInputError(f"{name} of a privacy cost must be a finite number >= 0, got {v!r}")
        if self.delta >= 1:
            raise DPInputError(f"delta must be < 1, got {self.delta:g}")
        if self.kind == "pure" and self.delta != 0:
            raise DPInputError("a pure-DP cost has delta = 0; use approx(epsilon, delta)")
        if self.kind == "zcdp" and (self.epsilon != 0 or self.delta != 0):
            raise DPInputError("a zCDP cost is given by rho only")

    def as_zcdp(self) -> float:
        """rho of this cost in zCDP (pure eps -> eps^2/2); approximate DP has no zCDP form."""
        if self.kind == "zcdp":
            return float(self.rho)
        if self.kind == "pure":
            return pure_to_zcdp(self.epsilon) if self.epsilon > 0 else 0.0
        raise DPInputError("an (epsilon, delta) cost cannot be converted to zCDP; account it as (epsilon, delta)")

    def as_approx(self, delta: float, method: str = "cks") -> tuple[float, float]:
        """(epsilon, delta) of this cost; a zCDP cost is converted at the given delta."""
        if self.kind == "pure":
            return float(self.epsilon), 0.0
        if self.kind == "approx":
            return float(self.epsilon), float(self.delta)
        if self.rho == 0:
            return 0.0, 0.0
        return zcdp_to_approx_dp(self.rho, delta, method=method), float(delta)

    def describe(self) -> str:
        if self.kind == "pure":
            return f"ε = {self.epsilon:.4g}"
        if self.kind == "approx":
            return f"(ε, δ) = ({self.epsilon:.4g}, {self.delta:.3g})"
        return f"ρ = {self.rho:.4g} (zCDP)"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "epsilon": float(self.epsilon), "delta": float(self.delta), "rho": float(self.rho)}


def pure(epsilon: float) -> PrivacyCost:
    """A pure epsilon-DP cost."""
    return PrivacyCost("pure", epsilon=check_epsilon(epsilon))


def approx(epsilon: float, delta: float) -> PrivacyCost:
    """An (epsilon, delta)-DP cost (epsilon >= 0 allowed only with delta > 0)."""
    eps = check_positive(epsilon, "epsilon", allow_zero=True)
    d = check_delta(delta, allow_zero=True)
    if eps == 0 and d == 0:
        raise DPInputError("epsilon must be > 0 when delta = 0")
    return PrivacyCost("approx", epsilon=eps, delta=d)


def zcdp(rho: float) -> PrivacyCost:
    """A rho-zCDP cost."""
    return PrivacyCost("zcdp", rho=check_positive(rho, "rho"))


def pure_to_zcdp(epsilon: float) -> float:
    """rho = epsilon^2 / 2: pure epsilon-DP implies rho-zCDP (Bun & Steinke 2016, Prop. 1.4)."""
    eps = check_epsilon(epsilon)
    return eps * eps / 2.0


def _cks_epsilon(rho: float, delta: float) -> float:
    """inf over alpha > 1 of the CKS 2020 bound (Corollary 13), in t = ln(alpha - 1).

    A dense grid over t in [-20, 20] locates the minimum; a bounded scalar search refines it between
    the neighbouring grid points. Every evaluated alpha gives a valid bound, so the minimum found is
    valid whatever the optimiser does."""
    log1d = math.log(1.0 / delta)

    def eps_of_t(t: np.ndarray | float):
        a = 1.0 + np.exp(t)
        am1 = np.exp(t)
        return a * rho + np.log1p(-1.0 / a) + (log1d - np.log(a)) / am1

    ts = np.linspace(-20.0, 20.0, 4001)
    with np.errstate(over="ignore", invalid="ignore"):
        vals = eps_of_t(ts)
    vals = np.where(np.isfinite(vals), vals, np.inf)
    i = int(np.argmin(vals))
    best = float(vals[i])
    lo, hi = ts[max(i - 1, 0)], ts[min(i + 1, ts.size - 1)]
    if hi > lo:
        from scipy import optimize  # here, not at the top: 0.1 s of the command line's start-up

        try:
            res = optimize.minimize_scalar(
                lambda t: float(eps_of_t(t)), bounds=(lo, hi), method="bounded", options={"xatol": 1e-10}
            )
            if np.isfinite(res.fun):
                best = min(best, float(res.fun))
        except (ValueError, FloatingPointError):  # pragma: no cover - the grid value stands
            pass
    return best


def zcdp_to_approx_dp(rho: float, delta: float, method: str = "cks") -> float:
    """epsilon such that rho-zCDP implies (epsilon, delta)-DP.

    method="bun-steinke": epsilon = rho + 2 sqrt(rho ln(1/delta)) (Bun & Steinke 2016, Prop. 1.3).
    method="cks" (default): the tighter bound of Canonne, Kamath & Steinke 2020 (Corollary 13),
    epsilon = inf_{alpha>1} alpha rho + ln(1 - 1/alpha) + (ln(1/delta) - ln alpha)/(alpha - 1);
    never larger than the Bun-Steinke value (we return the minimum of the two, both valid).
    """
    r = check_positive(rho, "rho")
    d = check_delta(delta)
    bs = r + 2.0 * math.sqrt(r * math.log(1.0 / d))
    if method == "bun-steinke":
        return bs
    if method != "cks":
        raise DPInputError(f"method must be 'cks' or 'bun-steinke', got {method!r}")
    return max(0.0, min(bs, _cks_epsilon(r, d)))


def zcdp_delta_for_epsilon(rho: float, epsilon: float) -> float:
    """The smallest delta the CKS bound gives for rho-zCDP at a given epsilon (inverse of the above).

    delta = inf_{alpha>1} exp((alpha-1)(alpha rho - epsilon)) / alpha * (1 - 1/alpha)^(alpha-1)
    (Canonne, Kamath & Steinke 2020, Proposition 12 with the Renyi curve alpha * rho).
    """
    r = check_positive(rho, "rho")
    eps = check_epsilon(epsilon)
    alphas = 1.0 + np.exp(np.linspace(-10, 10, 4001))
    with np.errstate(over="ignore", invalid="ignore"):
        logd = (alphas - 1) * (alphas * r - eps) - np.log(alphas) + (alphas - 1) * np.log1p(-1.0 / alphas)
    logd = np.where(np.isnan(logd), np.inf, logd)
    return float(math.exp(min(0.0, float(np.min(logd)))))  # delta is at most 1 (no guarantee)


def gaussian_exact_delta(epsilon: float, sigma: float, sensitivity: float = 1.0) -> float:
    """Exact delta(epsilon) of the Gaussian mechanism (Balle & Wang 2018, Theorem 8):
    Phi(s/(2 sigma) - eps sigma/s) - e^eps Phi(-s/(2 sigma) - eps sigma/s). Used to test conversions."""
    from scipy.stats import norm

    eps = check_positive(epsilon, "epsilon", allow_zero=True)
    sg = check_positive(sigma, "sigma")
    s = check_positive(sensitivity, "sensitivity")
    a = s / (2 * sg)
    b = eps * sg / s
    # log-space for the second term to avoid overflow of e^eps
    return float(norm.cdf(a - b) - math.exp(eps + norm.logcdf(-a - b)))


def compose_sequential(costs: Iterable[PrivacyCost]) -> PrivacyCost:
    """Sequential composition of costs of one kind (pure: eps add; approx: eps and delta add; zcdp: rho add).

    Mixed pure + zCDP compose in zCDP (pure converted by eps^2/2); mixed pure + approx in approx.
    zCDP + approx cannot be composed into one number without a delta: use :class:`Ledger`.
    """
    costs = _cost_list(costs)
    if not costs:
        raise DPInputError("nothing to compose: give at least one privacy cost")
    kinds = {c.kind for c in costs}
    if kinds == {"pure"}:
        return PrivacyCost("pure", epsilon=float(sum(c.epsilon for c in costs)))
    if "zcdp" in kinds and "approx" in kinds:
        raise DPInputError("cannot compose zCDP and (epsilon, delta) costs without choosing a delta; use a Ledger")
    if "zcdp" in kinds:
        return PrivacyCost("zcdp", rho=float(sum(c.as_zcdp() for c in costs)))
    return PrivacyCost("approx", epsilon=float(sum(c.epsilon for c in costs)), delta=float(sum(c.delta for c in costs)))


def _cost_list(costs: Any) -> list[PrivacyCost]:
    if isinstance(costs, PrivacyCost):
        costs = [costs]
    try:
        out = list(costs)
    except TypeError:
        raise TypeError("costs must be a list of PrivacyCost (budget.pure / approx / zcdp)") from None
    if not all(isinstance(c, PrivacyCost) for c in out):
        raise TypeError("costs must be a list of PrivacyCost (budget.pure / approx / zcdp)")
    return out


def group_privacy_2(cost: PrivacyCost) -> PrivacyCost:
    """The cost of changing two records (a replacement = one removal + one addition) for a mechanism
    whose ``cost`` is for adding or removing one record: pure 2 eps; zCDP 4 rho (Bun & Steinke 2016,
    Prop. 1.9, group privacy k^2 rho); (eps, delta) -> (2 eps, (1 + e^eps) delta) (chaining the DP
    inequality twice, as in Dwork & Roth 2014, Thm 2.2)."""
    if not isinstance(cost, PrivacyCost):
        raise TypeError("cost must be a PrivacyCost (budget.pure / approx / zcdp)")
    if cost.kind == "pure":
        return PrivacyCost("pure", epsilon=2.0 * cost.epsilon)
    if cost.kind == "zcdp":
        return PrivacyCost("zcdp", rho=4.0 * cost.rho)
    d = (1.0 + math.exp(cost.epsilon)) * cost.delta
    if d >= 1:
        raise DPInputError("delta after group privacy would reach 1: use a smaller delta")
    return PrivacyCost("approx", epsilon=2.0 * cost.epsilon, delta=d)


def compose_parallel(costs: Sequence[PrivacyCost], *, record_can_move: bool = True) -> PrivacyCost:
    """Parallel composition over disjoint parts of the data (cells, groups).

    record_can_move=False: the cost is the maximum over parts (McSherry 2009, Thm 4; PSEO paper
    Thm 2.2). Valid when one change of the neighbouring relation touches one part only: group
    membership is public and fixed (replace one person's value, keep their group) and each part's
    cost is for that change, or the relation is add/remove-one.
    record_can_move=True (default, the safe choice): each part's cost is for adding or removing one
    record in that part, and the relation is "replace one record": a replacement removes a record
    from one part and adds one to the same or another part. The worst case is both inside the
    costliest part, so the cost is group privacy of size 2 applied to the per-coordinate maximum
    (:func:`group_privacy_2`); a cross-part move costs at most as much.
    All costs must be of one kind (pure + zCDP are composed in zCDP, pure + approx in approx).
    """
    costs = _cost_list(costs)
    if not costs:
        raise DPInputError("nothing to compose: give at least one privacy cost")
    kinds = {c.kind for c in costs}
    if "zcdp" in kinds and "approx" in kinds:
        raise DPInputError("cannot compose zCDP and (epsilon, delta) parts in parallel")
    if kinds == {"pure"}:
        worst = PrivacyCost("pure", epsilon=float(max(c.epsilon for c in costs)))
    elif "zcdp" in kinds:
        worst = PrivacyCost("zcdp", rho=float(max(c.as_zcdp() for c in costs)))
    else:
        worst = PrivacyCost(
            "approx", epsilon=float(max(c.epsilon for c in costs)), delta=float(max(c.delta for c in costs))
        )
    return group_privacy_2(worst) if record_can_move else worst


@dataclass(frozen=True)
class LedgerEntry:
    """One release charged to the ledger: its label, the per-part costs and the composed cost."""

    label: str
    cost: PrivacyCost
    parts: tuple[tuple[str, PrivacyCost], ...] = ()
    record_can_move: bool = True
    note: str = ""
    timestamp: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "cost": self.cost.to_dict(),
            "parts": [{"part": p, **c.to_dict()} for p, c in self.parts],
            "record_can_move": self.record_can_move,
            "note": self.note,
            "timestamp": self.timestamp,
        }


@dataclass(frozen=True)
class BudgetCap:
    """A total budget: pure epsilon (delta = 0), (epsilon, delta), or zCDP rho."""

    epsilon: float | None = None
    delta: float = 0.0
    rho: float | None = None

    def __post_init__(self) -> None:
        if (self.epsilon is None) == (self.rho is None):
            raise DPInputError("a budget cap is either an epsilon (with optional delta) or a zCDP rho")
        if self.epsilon is not None:
            check_epsilon(self.epsilon, "budget epsilon")
            check_delta(self.delta, "budget delta", allow_zero=True)
        else:
            check_positive(self.rho, "budget rho")
            if self.delta:
                raise DPInputError("a zCDP budget has no delta")

    def describe(self) -> str:
        if self.rho is not None:
            return f"ρ = {self.rho:.4g} (zCDP)"
        if self.delta:
            return f"(ε, δ) = ({self.epsilon:.4g}, {self.delta:.3g})"
        return f"ε = {self.epsilon:.4g}"


def _cap_epsilon(cap: BudgetCap) -> float:
    """The epsilon of a cap that is not a zCDP rho (BudgetCap.__post_init__ requires exactly one of the two)."""
    assert cap.epsilon is not None
    return cap.epsilon


@dataclass
class Ledger:
    """A privacy budget ledger (sequential composition across entries, parallel within an entry).

    ``cap`` is optional; with a cap, :meth:`charge` refuses an entry that would exceed it.
    Totals: :meth:`spent_epsilon` (pure epsilon, or epsilon at the cap's delta when zCDP or
    approximate entries are present), :meth:`spent_rho` (zCDP, when no approximate entries),
    :meth:`remaining`.
    """

    cap: BudgetCap | None = None
    entries: list[LedgerEntry] = field(default_factory=list)
    conversion: str = "cks"

    # ----- charging -----------------------------------------------------------------------------
    def charge(self, label: str, cost: PrivacyCost, *, note: str = "") -> LedgerEntry:
        """Charge one release (sequential composition with everything already in the ledger)."""
        if not isinstance(cost, PrivacyCost):
            raise TypeError("cost must be a PrivacyCost (use budget.pure / approx / zcdp)")
        return self._add(LedgerEntry(label=str(label), cost=cost, note=note, timestamp=_now()))

    def charge_parallel(
        self, label: str, parts: Mapping[str, PrivacyCost], *, record_can_move: bool = True, note: str = ""
    ) -> LedgerEntry:
        """Charge one release made of mechanisms on disjoint parts (cells, groups); see compose_parallel."""
        if not parts:
            raise DPInputError("a parallel release needs at least one part")
        cost = compose_parallel(list(parts.values()), record_can_move=record_can_move)
        entry = LedgerEntry(
            label=str(label),
            cost=cost,
            parts=tuple((str(k), v) for k, v in parts.items()),
            record_can_move=record_can_move,
            note=note,
            timestamp=_now(),
        )
        return self._add(entry)

    def would_exceed(self, cost: PrivacyCost) -> bool:
        """True when charging ``cost`` now would exceed the cap."""
        if self.cap is None:
            return False
        trial = Ledger(cap=None, entries=[*self.entries, LedgerEntry("trial", cost)], conversion=self.conversion)
        try:
            return not trial.within(self.cap)
        except DPInputError:
            return True

    def _add(self, entry: LedgerEntry) -> LedgerEntry:
        if self.cap is not None:
            trial = Ledger(cap=None, entries=[*self.entries, entry], conversion=self.conversion)
            trial._check_compatible(self.cap)
            if not trial.within(self.cap):
                spent = trial.describe_spent()
                raise DPInputError(
                    f"refused: charging '{entry.label}' ({entry.cost.describe()}) would bring the total to "
                    f"{spent}, above the budget cap {self.cap.describe()}; remaining before this release: "
                    f"{self.describe_remaining()}"
                )
        self.entries.append(entry)
        return entry

    # ----- totals -------------------------------------------------------------------------------
    @property
    def kinds(self) -> set[str]:
        return {e.cost.kind for e in self.entries}

    def spent_pure(self) -> float | None:
        """Total pure epsilon, or None when some entry is not pure DP."""
        if self.kinds - {"pure"}:
            return None
        return float(sum(e.cost.epsilon for e in self.entries))

    def spent_rho(self) -> float | None:
        """Total zCDP rho (pure entries converted by eps^2/2), or None when an (eps, delta) entry exists."""
        if "approx" in self.kinds:
            return None
        return float(sum(e.cost.as_zcdp() for e in self.entries))

    def spent_approx(self, delta: float) -> tuple[float, float]:
        """Total (epsilon, delta_total) when the zCDP part is converted at ``delta``.

        Approximate entries compose by basic composition (eps and delta add). The pure and zCDP
        entries are accounted the better of two valid ways: (a) pure epsilons added plus the zCDP
        rho converted, or (b) everything in zCDP (pure eps -> eps^2/2) converted; both use the same
        extra ``delta``. When there is no zCDP entry no extra delta is spent.
        """
        approx_eps = sum(e.cost.epsilon for e in self.entries if e.cost.kind == "approx")
        approx_delta = sum(e.cost.delta for e in self.entries if e.cost.kind == "approx")
        pure_eps = sum(e.cost.epsilon for e in self.entries if e.cost.kind == "pure")
        rho = sum(e.cost.rho for e in self.entries if e.cost.kind == "zcdp")
        if rho == 0:
            return float(approx_eps + pure_eps), float(approx_delta)
        d = check_delta(delta, "delta for the zCDP conversion")
        a = pure_eps + zcdp_to_approx_dp(rho, d, method=self.conversion)
        b = zcdp_to_approx_dp(rho + pure_eps**2 / 2.0, d, method=self.conversion)
        return float(approx_eps + min(a, b)), float(approx_delta + d)

    def _check_compatible(self, cap: BudgetCap) -> None:
        if cap.rho is not None and "approx" in self.kinds:
            raise DPInputError("an (epsilon, delta) release cannot be charged to a zCDP budget")
        if cap.rho is None and cap.delta == 0 and self.kinds - {"pure"}:
            raise DPInputError(
                "this budget is pure epsilon-DP (delta = 0); a zCDP or (epsilon, delta) release needs a budget "
                "with delta > 0"
            )
        if cap.rho is None and cap.delta > 0:
            approx_delta = sum(e.cost.delta for e in self.entries if e.cost.kind == "approx")
            has_z = any(e.cost.kind == "zcdp" for e in self.entries)
            if approx_delta > cap.delta or (has_z and approx_delta >= cap.delta):
                raise DPInputError(
                    f"the deltas of the releases ({approx_delta:.3g}) leave nothing of the budget delta {cap.delta:.3g}"
                )

    def _spent_in(self, cap: BudgetCap) -> float:
        """What is spent in the currency of a compatible cap with no delta: rho (zCDP cap) or pure epsilon
        (:meth:`_check_compatible` has refused the entries that have no total in that currency)."""
        spent = self.spent_rho() if cap.rho is not None else self.spent_pure()
        if spent is None:
            raise DPInputError(f"the releases charged so far cannot be totalled under the budget {cap.describe()}")
        return spent

    def within(self, cap: BudgetCap, tol: float = 1e-12) -> bool:
        """Whether everything spent fits under ``cap`` (relative tolerance ``tol``), in the cap's currency."""
        self._check_compatible(cap)
        if cap.rho is not None:
            return self._spent_in(cap) <= cap.rho * (1 + tol)
        cap_epsilon = _cap_epsilon(cap)
        if cap.delta == 0:
            return self._spent_in(cap) <= cap_epsilon * (1 + tol)
        eps, _ = self.spent_approx(self.zcdp_delta(cap))
        return eps <= cap_epsilon * (1 + tol)

    def zcdp_delta(self, cap: BudgetCap) -> float:
        """The delta left for converting zCDP entries: the cap's delta minus the approximate entries' deltas."""
        approx_delta = sum(e.cost.delta for e in self.entries if e.cost.kind == "approx")
        return max(cap.delta - approx_delta, 1e-300)

    def remaining(self) -> dict[str, float]:
        """Budget left under the cap, in the cap's currency: {'epsilon':..., 'delta':...} or {'rho':...}."""
        if self.cap is None:
            raise DPInputError("this ledger has no budget cap, so there is no remaining budget")
        self._check_compatible(self.cap)
        if self.cap.rho is not None:
            return {"rho": max(0.0, self.cap.rho - self._spent_in(self.cap))}
        cap_epsilon = _cap_epsilon(self.cap)
        if self.cap.delta == 0:
            return {"epsilon": max(0.0, cap_epsilon - self._spent_in(self.cap)), "delta": 0.0}
        eps, d = self.spent_approx(self.zcdp_delta(self.cap))
        return {"epsilon": max(0.0, cap_epsilon - eps), "delta": max(0.0, self.cap.delta - d)}

    def describe_spent(self, delta: float | None = None) -> str:
        if not self.entries:
            return "nothing"
        p = self.spent_pure()
        if p is not None:
            return f"ε = {p:.4g}"
        r = self.spent_rho()
        if delta is None:
            delta = (
                self.zcdp_delta(self.cap)
                if (self.cap is not None and self.cap.rho is None and self.cap.delta)
                else 1e-6
            )
        eps, d = self.spent_approx(delta)
        text = f"(ε, δ) = ({eps:.4g}, {d:.3g})"
        return f"ρ = {r:.4g} (zCDP), i.e. {text}" if r is not None else text

    def describe_remaining(self) -> str:
        if self.cap is None:
            return "no cap"
        rem = self.remaining()
        if "rho" in rem:
            return f"ρ = {rem['rho']:.4g}"
        return f"ε = {rem['epsilon']:.4g}" + (f", δ = {rem['delta']:.3g}" if self.cap.delta else "")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"entries": [e.to_dict() for e in self.entries], "conversion": self.conversion}
        if self.cap is not None:
            out["cap"] = {"epsilon": self.cap.epsilon, "delta": self.cap.delta, "rho": self.cap.rho}
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)


@dataclass(frozen=True)
class PlanCost:
    """The privacy cost of a plan: its statistics composed sequentially (:func:`compose_plan`). One type for the
    planner's views and for the release plan a ledger is charged for (``dpcore.engines.record.plan_cost``).

    ``kind``: "pure" (epsilon), "approx" ((epsilon, delta): epsilons and deltas add, Dwork & Roth
    Thm 3.16) or "zcdp" (rho: rhos add, pure epsilon counted as epsilon^2/2, Bun & Steinke 2016
    Lemma 2.3 / Prop. 1.4). ``epsilon``/``delta``: the plan as (epsilon, delta)-DP; when zCDP is in the
    plan it is converted at ``conversion_delta`` (the plan's delta, Canonne-Kamath-Steinke 2020),
    which is included in ``delta``. ``rho``: total rho when the plan has no (epsilon, delta) part.
    ``explicit_conversion``: zCDP and (epsilon, delta) parts were both present, so the zCDP part was
    converted to (epsilon, delta) at ``conversion_delta`` before composing (``compose_sequential``
    refuses to mix them without a delta). ``per_statistic``: the (name, cost) pairs composed, in order."""

    kind: str
    epsilon: float
    delta: float
    rho: float | None
    conversion_delta: float | None
    explicit_conversion: bool
    text: str
    per_statistic: tuple[tuple[str, PrivacyCost], ...] = ()

    def privacy_cost(self) -> PrivacyCost:
        """The one cost a ledger is charged for the whole plan."""
        if self.kind == "pure":
            return pure(self.epsilon)
        if self.kind == "zcdp":
            assert self.rho is not None  # a zCDP plan states its rho
            return zcdp(self.rho)
        return approx(self.epsilon, self.delta)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "rho": self.rho,
            "conversion_delta": self.conversion_delta,
            "explicit_conversion": self.explicit_conversion,
            "text": self.text,
        }


def compose_plan(costs: Sequence[tuple[str, PrivacyCost]], *, delta: float | None = None) -> PlanCost:
    """Sequential composition of ``(name, cost)`` pairs (one per statistic, each already composed in
    parallel over its groups or cells).

    ``delta``: the plan's delta, used to state a zCDP part as (epsilon, delta) (needed only then).
    Pure: sum epsilon. Pure + approximate: (sum epsilon, sum delta) (sums correctly rounded, ``math.fsum``: the
    total does not depend on the order of the statistics). Pure + zCDP: rho (pure as epsilon^2/2) and its
    (epsilon, delta) at ``delta`` (the better of two valid accountings, :meth:`Ledger.spent_approx`).
    zCDP + approximate: the zCDP part converted to (epsilon, delta) at ``delta`` explicitly, then basic
    composition (deltas add)."""
    if not costs:
        raise DPInputError("the plan has no statistics")
    ledger = Ledger()
    for name, cost in costs:
        ledger.charge(name, cost)
    pairs = tuple((str(name), cost) for name, cost in costs)
    kinds = ledger.kinds
    if "zcdp" not in kinds:
        eps = math.fsum(c.epsilon for _, c in pairs)
        if kinds == {"pure"}:
            return PlanCost("pure", eps, 0.0, None, None, False, f"ε = {eps:.4g} (pure ε-DP)", pairs)
        total_delta = math.fsum(c.delta for _, c in pairs)
        text = f"(ε, δ) = ({eps:.4g}, {total_delta:.3g})"
        return PlanCost("approx", eps, total_delta, None, None, False, text, pairs)
    if delta is None:
        raise DPInputError("a plan with a zCDP statistic needs the plan's delta to state its (epsilon, delta)")
    conversion = check_probability(delta, "delta")
    eps, total_delta = ledger.spent_approx(conversion)
    if "approx" in kinds:
        text = (
            f"(ε, δ) = ({eps:.4g}, {total_delta:.3g}): the zCDP part converted to (ε, δ) at δ = "
            f"{conversion:.3g} before adding the (ε, δ) parts"
        )
        return PlanCost("approx", float(eps), float(total_delta), None, conversion, True, text, pairs)
    rho = ledger.spent_rho()
    assert rho is not None  # zCDP and pure parts only: no (epsilon, delta) entry
    text = f"ρ = {rho:.4g} (zCDP), i.e. (ε, δ) = ({eps:.4g}, {total_delta:.3g})"
    return PlanCost("zcdp", float(eps), float(total_delta), float(rho), conversion, False, text, pairs)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
