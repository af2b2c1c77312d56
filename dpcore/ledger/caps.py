"""An account's cap and what it has spent: the composition of its costs, and the check that refuses a charge over it.

**Composition** uses :mod:`dpcore.budget`: pure epsilons add (Dwork & Roth 2014, Thm 3.16); (epsilon, delta) costs
add in both; zCDP rhos add (Bun & Steinke 2016, Lemma 2.3) and are converted to (epsilon, delta) at the delta the cap
leaves (Canonne, Kamath & Steinke 2020, Cor. 13). A pure-epsilon account (cap delta = 0) accepts only pure-DP costs.
"""

from __future__ import annotations

from .. import budget as _budget
from ..validation import DPInputError
from .errors import BudgetExceeded

__all__ = ["CAP_TOLERANCE"]

#: Relative tolerance of the cap check (float sums of epsilons such as 20 x 0.05 = 1.0000000000000002).
CAP_TOLERANCE = 1e-12


def composed(costs: list[_budget.PrivacyCost]) -> _budget.Ledger:
    """``costs`` as a :class:`dpcore.budget.Ledger` (which composes them)."""
    return _budget.Ledger(cap=None, entries=[_budget.LedgerEntry(f"entry {i}", c) for i, c in enumerate(costs)])


def spent_under(cap: _budget.BudgetCap, costs: list[_budget.PrivacyCost]) -> tuple[float, float]:
    """(epsilon, delta) spent by ``costs`` under ``cap`` (zCDP converted at the delta the cap leaves)."""
    if not costs:
        return 0.0, 0.0
    ledger = composed(costs)
    pure = ledger.spent_pure()
    if pure is not None:
        return pure, 0.0
    if cap.delta == 0:  # cannot happen for entries accepted by charge; say it rather than guess
        raise DPInputError("this pure-epsilon account holds non-pure entries")
    return ledger.spent_approx(ledger.zcdp_delta(cap))


def check_fits(
    cap: _budget.BudgetCap, costs: list[_budget.PrivacyCost], cost: _budget.PrivacyCost, label: str, account: str
) -> None:
    """Refuse ``cost`` (charged as ``label``) when the account ``account`` (its display name) with the cap ``cap``
    that has spent ``costs`` cannot pay for it: :class:`BudgetExceeded` over the cap, :class:`DPInputError` for a
    cost a pure-epsilon account can never take."""
    everything = [*costs, cost]
    if cap.delta == 0 and any(c.kind != "pure" for c in everything):
        raise DPInputError(
            f"the account {account!r} is pure epsilon-DP (cap delta = 0), so it cannot pay for "
            f"'{label}' ({cost.describe()}); a release with delta > 0 or a zCDP cost needs a delta cap, which is "
            "fixed when a population is registered: release pure-epsilon statistics from it (e.g. the Gini with "
            "the generalized Cauchy noise)."
        )
    approx_delta = sum(c.delta for c in everything if c.kind == "approx")
    has_zcdp = any(c.kind == "zcdp" for c in everything)
    if approx_delta > cap.delta * (1 + CAP_TOLERANCE) or (has_zcdp and approx_delta >= cap.delta):
        raise BudgetExceeded(
            f"refused: '{label}' ({cost.describe()}) would bring the total delta to {approx_delta:.3g}, "
            f"which leaves nothing of the cap {cap.describe()} of the account {account!r}. "
            "Nothing was charged or released."
        )
    trial = composed(everything)
    if not trial.within(cap, tol=CAP_TOLERANCE):
        before_eps, before_delta = spent_under(cap, costs)
        assert cap.epsilon is not None  # an account's cap is an (epsilon, delta) cap
        rem = max(0.0, cap.epsilon - before_eps)
        raise BudgetExceeded(
            f"refused: '{label}' costs {cost.describe()}, but the account {account!r} has spent "
            f"ε = {before_eps:.6g}"
            + (f" (δ = {before_delta:.3g})" if cap.delta else "")
            + f" of its cap {cap.describe()}, leaving ε = {rem:.6g}. Nothing was charged or released."
        )
