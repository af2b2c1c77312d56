"""The "play the attacker" game: one secret bit, one DP release, one guess.

The game is the definition of differential privacy played out. Two **neighbouring** data sets are
public to the attacker (the worst case DP protects against): ``D_in`` = a group of ``n - 1`` shared
people plus the **target** (a top earner), and ``D_out`` = the same people plus a **stand-in** in the
target's place (replace one record, n public: the project's neighbouring relation). The game flips a
fair coin (the secret: is the target in the data?), releases the statistic of the chosen data set
with an epsilon-DP mechanism, and the player guesses the coin from the release.

For any epsilon-DP mechanism and prior 1/2, no attacker (however clever) guesses right with
probability above ``e^eps / (1 + e^eps)`` (:func:`attacker_bound`): the likelihood ratio of the two
release densities is within ``e^{+-eps}`` everywhere (Wasserman & Zhou 2010, Thm 2.4; Kairouz, Oh &
Viswanath 2015). The **Bayes-optimal attacker** (:func:`optimal_guess`) is the likelihood-ratio
test: guess "in" when ``p_in(y) >= p_out(y)``, computed from the noise density; its success
probability is ``1/2 + TV(P_in, P_out)/2`` (:attr:`GameSetup.exact_success`).

Mechanisms (all pure epsilon-DP; the bound applies to each):

* ``count``: number of people earning at least ``count_threshold`` + Laplace(1/eps). Exact optimal
  success ``1 - exp(-eps/2)/2``, close to the bound for small eps.
* ``count_geometric``: the same count + two-sided geometric noise (discrete Laplace,
  ``P(k) ∝ exp(-eps|k|)``): the optimal attacker attains the bound **exactly**,
  ``1/(1 + e^-eps) = e^eps/(1+e^eps)``.
* ``mean``: mean of incomes clipped to public [lower, upper] + Laplace((upper - lower)/(n eps)).
  Exact success ``1 - exp(-eps d/(2 s))/2`` with d = |difference of the two means|, s the sensitivity.
* ``percentile``: the PSEO mechanism (``dpcore.percentiles``): every bin of the public PSEO edges gets
  two-sided geometric noise with eps/2 (a replacement moves one person between two bins, L1
  sensitivity 2); the released median is read off the noisy histogram (post-processing). Only the two
  bins the target and the stand-in fall in differ between the data sets, so the optimal attacker uses
  those two noisy counts; exact success ``e^{eps/2}/(1+e^{eps/2})`` (ties broken towards "in").
* ``gini``: the Lan & Reiter (2025) release ``g(X) + (S_beta(X)/alpha) Z``, Z with density
  ∝ 1/(1+|z|^gamma) (eqs. 9-10, tight calibration). The two data sets have different Gini *and*
  different noise scales; the likelihood ratio uses both (densities from
  :class:`dpcore.noise.GeneralizedCauchy`); exact success by numerical integration.

This is a **simulation**, not a release: it draws with numpy (``dpcore.noise`` samplers on a seeded
``numpy.random.Generator``) so that a round replays from its seed; real releases use
``dpcore.noise.secure`` (OpenDP). The shared people are synthetic (public), so nothing here is
confidential except, during a round, the secret bit and the noise draw (``confidential_*``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpcore import noise
from dpcore.validation import DPInputError, check_bounds, check_epsilon, check_int, check_probability
from dpcore.views.plain import to_plain

__all__ = [
    "MECHANISMS",
    "GameSetup",
    "GameRound",
    "AttackerView",
    "SuccessSummary",
    "attacker_bound",
    "game_setup",
    "play_round",
    "optimal_guess",
    "log_likelihood_ratio",
    "simulate_optimal_attacker",
    "success_summary",
    "success_interval",
    "attacker_view",
]

#: mechanism key -> the statistic it releases (labels for people live in ui.attacker.views)
MECHANISMS = ("count", "count_geometric", "mean", "percentile", "gini")
DEFAULT_N = 50
DEFAULT_LOWER = 0.0
DEFAULT_UPPER = 500_000.0
DEFAULT_TARGET = 500_000.0
DEFAULT_STAND_IN = 10_000.0
DEFAULT_COUNT_THRESHOLD = 100_000.0
DEFAULT_GAMMA = 2.0
#: the shared people are a fixed public synthetic group (lognormal like PSEO earnings)
SHARED_PEOPLE_SEED = 2026


def attacker_bound(epsilon: float) -> float:
    """The largest success probability of any attacker against an epsilon-DP release (prior 1/2):
    ``e^eps / (1 + e^eps)`` (hypothesis-testing view of DP, Kairouz-Oh-Viswanath 2015, Thm 2.1)."""
    epsilon = check_epsilon(epsilon)
    return 1.0 / (1.0 + math.exp(-epsilon))


@dataclass(frozen=True)
class GameSetup:
    """The public side of the game: both neighbouring data sets' statistics and the noise law.

    ``statistic_in`` / ``statistic_out`` are the true statistics of D_in / D_out. They are public in
    the game (the DP attacker knows both candidates); the secret is which one was released.
    ``noise_scale_*`` is the noise scale under each data set (equal except for the Gini, whose smooth
    sensitivity depends on the data). For ``percentile``, ``bin_counts_in/out`` are the true counts of
    the two bins that differ (target's bin, stand-in's bin).
    """

    mechanism: str
    epsilon: float
    n: int
    lower: float
    upper: float
    target_income: float
    stand_in_income: float
    statistic_in: float
    statistic_out: float
    noise_scale_in: float
    noise_scale_out: float
    exact_success: float
    bound: float
    count_threshold: float = DEFAULT_COUNT_THRESHOLD
    gamma: float = DEFAULT_GAMMA
    bin_counts_in: tuple[int, int] = (0, 0)
    bin_counts_out: tuple[int, int] = (0, 0)
    shared_incomes: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        out = {
            k: getattr(self, k)
            for k in (
                "mechanism",
                "epsilon",
                "n",
                "lower",
                "upper",
                "target_income",
                "stand_in_income",
                "statistic_in",
                "statistic_out",
                "noise_scale_in",
                "noise_scale_out",
                "exact_success",
                "bound",
                "count_threshold",
                "gamma",
                "bin_counts_in",
                "bin_counts_out",
            )
        }
        return to_plain(out)


def _shared_people(n: int, lower: float, upper: float) -> np.ndarray:
    rng = np.random.default_rng(SHARED_PEOPLE_SEED)
    return np.clip(np.round(rng.lognormal(11.003, 0.753, size=n - 1), -2), lower, upper)


def _laplace_exact(epsilon: float, difference: float, sensitivity: float) -> float:
    # TV of Laplace(0, b) and Laplace(d, b) is 1 - exp(-d / (2b)); success = 1/2 + TV/2
    return 1.0 - 0.5 * math.exp(-epsilon * abs(difference) / (2.0 * sensitivity))


def _gini_exact(g_in: float, s_in: float, g_out: float, s_out: float, gamma: float) -> float:
    from scipy import integrate

    law = noise.GeneralizedCauchy(gamma)

    def gap(y: float) -> float:
        p_in = float(law.pdf((y - g_in) / s_in)) / s_in
        p_out = float(law.pdf((y - g_out) / s_out)) / s_out
        return abs(p_in - p_out)

    # breakpoints at the two centres and at geometric distances (heavy tails: up to 1e8 scales out);
    # beyond that |p_in - p_out| <= p_in + p_out has mass about 2/(pi 1e8) for the game's gamma = 2
    scale = max(s_in, s_out)
    offsets = scale * np.logspace(-2, 8, 41)
    centre = 0.5 * (g_in + g_out)
    edges = sorted({g_in, g_out, *(centre - offsets), *(centre + offsets)})
    total = 0.0
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        total += integrate.quad(gap, a, b, limit=100)[0]
    tv = min(1.0, 0.5 * total)
    return 0.5 + 0.5 * tv


def game_setup(
    mechanism: str,
    epsilon: float,
    *,
    n: int = DEFAULT_N,
    lower: float = DEFAULT_LOWER,
    upper: float = DEFAULT_UPPER,
    target_income: float = DEFAULT_TARGET,
    stand_in_income: float = DEFAULT_STAND_IN,
    count_threshold: float = DEFAULT_COUNT_THRESHOLD,
    gamma: float = DEFAULT_GAMMA,
) -> GameSetup:
    """Both neighbouring data sets of the game and their statistics (public in the threat model)."""
    if mechanism not in MECHANISMS:
        raise DPInputError(f"unknown mechanism {mechanism!r}; choose one of {', '.join(MECHANISMS)}")
    epsilon = check_epsilon(epsilon)
    n = check_int(n, "n", minimum=3, maximum=100_000)
    lower, upper = check_bounds(lower, upper)
    if not (lower <= target_income <= upper and lower <= stand_in_income <= upper):
        raise DPInputError(
            f"the target ({target_income:g}) and the stand-in ({stand_in_income:g}) must lie in the public "
            f"bounds [{lower:g}, {upper:g}]"
        )
    if target_income == stand_in_income:
        raise DPInputError("the target and the stand-in must have different incomes (otherwise there is no secret)")
    shared = _shared_people(n, lower, upper)
    d_in = np.append(shared, target_income)
    d_out = np.append(shared, stand_in_income)
    common: dict[str, Any] = dict(
        mechanism=mechanism,
        epsilon=epsilon,
        n=n,
        lower=lower,
        upper=upper,
        target_income=float(target_income),
        stand_in_income=float(stand_in_income),
        bound=attacker_bound(epsilon),
        count_threshold=float(count_threshold),
        gamma=float(gamma),
        shared_incomes=shared,
    )
    if mechanism in ("count", "count_geometric"):
        c_in, c_out = float(np.sum(d_in >= count_threshold)), float(np.sum(d_out >= count_threshold))
        if c_in == c_out:
            raise DPInputError(
                "the target and the stand-in are on the same side of the count threshold: the counts agree"
            )
        scale = 1.0 / epsilon
        exact = _laplace_exact(epsilon, 1.0, 1.0) if mechanism == "count" else attacker_bound(epsilon)
        return GameSetup(
            statistic_in=c_in,
            statistic_out=c_out,
            noise_scale_in=scale,
            noise_scale_out=scale,
            exact_success=exact,
            **common,
        )
    if mechanism == "mean":
        m_in, m_out = float(np.mean(np.clip(d_in, lower, upper))), float(np.mean(np.clip(d_out, lower, upper)))
        sensitivity = (upper - lower) / n
        return GameSetup(
            statistic_in=m_in,
            statistic_out=m_out,
            noise_scale_in=sensitivity / epsilon,
            noise_scale_out=sensitivity / epsilon,
            exact_success=_laplace_exact(epsilon, m_in - m_out, sensitivity),
            **common,
        )
    if mechanism == "percentile":
        from dpcore import percentiles

        edges = percentiles.PSEO_BIN_EDGES
        counts_in = percentiles.histogram_counts(d_in, edges).counts
        counts_out = percentiles.histogram_counts(d_out, edges).counts
        bins = _differing_bins(counts_in, counts_out)
        med_in = float(np.median(d_in))
        med_out = float(np.median(d_out))
        eps_bin = epsilon / 2.0
        return GameSetup(
            statistic_in=med_in,
            statistic_out=med_out,
            noise_scale_in=1.0 / eps_bin,
            noise_scale_out=1.0 / eps_bin,
            exact_success=attacker_bound(eps_bin),
            bin_counts_in=(int(counts_in[bins[0]]), int(counts_in[bins[1]])),
            bin_counts_out=(int(counts_out[bins[0]]), int(counts_out[bins[1]])),
            **common,
        )
    # gini
    from dpcore import gini as gini_lib

    calibration = noise.smooth_noise_calibration(epsilon, gamma)
    g_in, g_out = gini_lib.gini(d_in), gini_lib.gini(d_out)
    s_in = gini_lib.smooth_sensitivity(d_in, lower=lower, upper=upper, beta=calibration.beta).value / calibration.alpha
    s_out = (
        gini_lib.smooth_sensitivity(d_out, lower=lower, upper=upper, beta=calibration.beta).value / calibration.alpha
    )
    return GameSetup(
        statistic_in=float(g_in),
        statistic_out=float(g_out),
        noise_scale_in=float(s_in),
        noise_scale_out=float(s_out),
        exact_success=_gini_exact(g_in, s_in, g_out, s_out, gamma),
        **common,
    )


def _differing_bins(counts_in: np.ndarray, counts_out: np.ndarray) -> tuple[int, int]:
    diff = np.asarray(counts_in) - np.asarray(counts_out)
    up, down = np.flatnonzero(diff > 0), np.flatnonzero(diff < 0)
    if up.size != 1 or down.size != 1:
        raise DPInputError("the target and the stand-in fall in the same PSEO bin: the histograms agree")
    return int(up[0]), int(down[0])


# ---------------------------------------------------------------------------------------------------
# Rounds and the optimal attacker (vectorised: one call plays many rounds)
# ---------------------------------------------------------------------------------------------------
def _draw_releases(setup: GameSetup, secrets: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Releases for an array of secrets (True = target in). Shape (rounds,) or (rounds, 2) for bins."""
    k = secrets.size
    mech = setup.mechanism
    if mech == "count":
        base = np.where(secrets, setup.statistic_in, setup.statistic_out)
        return base + noise.sample_laplace(setup.noise_scale_in, k, rng=rng)
    if mech == "count_geometric":
        base = np.where(secrets, setup.statistic_in, setup.statistic_out)
        return base + noise.sample_two_sided_geometric(setup.epsilon, k, rng=rng)
    if mech == "mean":
        base = np.where(secrets, setup.statistic_in, setup.statistic_out)
        return base + noise.sample_laplace(setup.noise_scale_in, k, rng=rng)
    if mech == "percentile":
        base = np.where(secrets[:, None], np.array(setup.bin_counts_in), np.array(setup.bin_counts_out))
        return base + noise.sample_two_sided_geometric(setup.epsilon / 2.0, (k, 2), rng=rng)
    z = noise.sample_generalized_cauchy(setup.gamma, k, rng=rng)
    return np.where(
        secrets, setup.statistic_in + setup.noise_scale_in * z, setup.statistic_out + setup.noise_scale_out * z
    )


def log_likelihood_ratio(setup: GameSetup, releases: Any) -> np.ndarray:
    """``log p_in(y) - log p_out(y)`` from the noise density (vectorised over releases)."""
    y = np.asarray(releases, dtype=float)
    mech = setup.mechanism
    if mech in ("count", "mean"):
        b = setup.noise_scale_in
        return (np.abs(y - setup.statistic_out) - np.abs(y - setup.statistic_in)) / b
    if mech == "count_geometric":
        return setup.epsilon * (np.abs(y - setup.statistic_out) - np.abs(y - setup.statistic_in))
    if mech == "percentile":
        y = np.atleast_2d(y)
        c_in, c_out = np.array(setup.bin_counts_in, dtype=float), np.array(setup.bin_counts_out, dtype=float)
        return (setup.epsilon / 2.0) * np.sum(np.abs(y - c_out) - np.abs(y - c_in), axis=1)
    law = noise.GeneralizedCauchy(setup.gamma)
    s_in, s_out = setup.noise_scale_in, setup.noise_scale_out
    return (
        law.logpdf((y - setup.statistic_in) / s_in)
        - math.log(s_in)
        - law.logpdf((y - setup.statistic_out) / s_out)
        + math.log(s_out)
    )


def optimal_guess(setup: GameSetup, releases: Any) -> np.ndarray:
    """The Bayes-optimal guess (prior 1/2): "target in" iff p_in(y) >= p_out(y) (ties -> in)."""
    return log_likelihood_ratio(setup, releases) >= 0.0


@dataclass(frozen=True)
class GameRound:
    """One round: the release the player sees, and (confidential until the guess) the secret.

    ``release`` is the released statistic; for ``percentile`` it is the released median and
    ``release_bins`` the two noisy bin counts (target's bin, stand-in's bin) that the optimal
    attacker uses. ``optimal_guess`` depends on the release only, but is shown after the guess.
    """

    round_seed: int
    release: float
    release_bins: tuple[float, float] | None
    optimal_guess: bool
    confidential_secret: bool

    def to_dict(self) -> dict[str, Any]:
        return to_plain(
            {
                "round_seed": self.round_seed,
                "release": self.release,
                "release_bins": self.release_bins,
                "optimal_guess": self.optimal_guess,
            }
        )


def play_round(setup: GameSetup, round_seed: int) -> GameRound:
    """One reproducible round: the seed fixes the secret and the noise (numpy, a simulation)."""
    round_seed = check_int(round_seed, "round seed", minimum=0, maximum=2**63 - 1)
    rng = np.random.default_rng(round_seed)
    secret = bool(rng.integers(0, 2))
    draw = _draw_releases(setup, np.array([secret]), rng)
    guess = bool(optimal_guess(setup, draw)[0])
    if setup.mechanism == "percentile":
        from dpcore import percentiles

        bins = np.asarray(draw[0], dtype=float)
        counts = _full_noisy_histogram(setup, secret, bins, rng)
        median = float(percentiles.percentiles_from_histogram(counts, percentiles.PSEO_BIN_EDGES, q=(50,))[0])
        return GameRound(round_seed, median, (float(bins[0]), float(bins[1])), guess, secret)
    return GameRound(round_seed, float(draw[0]), None, guess, secret)


def _full_noisy_histogram(setup: GameSetup, secret: bool, bins: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    from dpcore import percentiles

    edges = percentiles.PSEO_BIN_EDGES
    people = np.append(setup.shared_incomes, setup.target_income if secret else setup.stand_in_income)
    counts = percentiles.histogram_counts(people, edges).counts.astype(float)
    shared_counts = counts + noise.sample_two_sided_geometric(setup.epsilon / 2.0, counts.size, rng=rng)
    target_bin, stand_in_bin = _differing_bins(
        percentiles.histogram_counts(np.append(setup.shared_incomes, setup.target_income), edges).counts,
        percentiles.histogram_counts(np.append(setup.shared_incomes, setup.stand_in_income), edges).counts,
    )
    shared_counts[target_bin], shared_counts[stand_in_bin] = bins[0], bins[1]
    return shared_counts


# ---------------------------------------------------------------------------------------------------
# Success rates with their Monte Carlo / class-size uncertainty
# ---------------------------------------------------------------------------------------------------
def success_interval(successes: int, rounds: int, level: float = 0.95) -> tuple[float, float]:
    """Clopper-Pearson (exact binomial) interval for a success probability."""
    from scipy import stats

    rounds = check_int(rounds, "rounds", minimum=0)
    successes = check_int(successes, "successes", minimum=0, maximum=max(rounds, 0))
    level = check_probability(level, "level")
    if rounds == 0:
        return (0.0, 1.0)
    tail = (1.0 - level) / 2.0
    low = 0.0 if successes == 0 else float(stats.beta.ppf(tail, successes, rounds - successes + 1))
    high = 1.0 if successes == rounds else float(stats.beta.ppf(1 - tail, successes + 1, rounds - successes))
    return (low, high)


@dataclass(frozen=True)
class SuccessSummary:
    """A success rate over ``rounds`` guesses against the bound e^eps/(1+e^eps).

    ``interval`` is the Clopper-Pearson interval at ``level``; ``standard_error`` = sqrt(r(1-r)/rounds).
    ``exact_success`` is the optimal attacker's exact success probability (None for a person).
    """

    who: str
    mechanism: str
    epsilon: float
    rounds: int
    successes: int
    rate: float
    interval: tuple[float, float]
    standard_error: float
    level: float
    bound: float
    exact_success: float | None = None

    @property
    def consistent_with_bound(self) -> bool:
        """The rate is not significantly above the bound (the interval's lower end is below it)."""
        return self.interval[0] <= self.bound

    def to_dict(self) -> dict[str, Any]:
        return to_plain(
            {
                k: getattr(self, k)
                for k in (
                    "who",
                    "mechanism",
                    "epsilon",
                    "rounds",
                    "successes",
                    "rate",
                    "interval",
                    "standard_error",
                    "level",
                    "bound",
                    "exact_success",
                )
            }
        )


def success_summary(
    successes: int,
    rounds: int,
    *,
    epsilon: float,
    mechanism: str = "",
    who: str = "player",
    level: float = 0.95,
    exact_success: float | None = None,
) -> SuccessSummary:
    """Summarise ``successes`` out of ``rounds`` guesses (rate, Clopper-Pearson interval, bound)."""
    epsilon = check_epsilon(epsilon)
    interval = success_interval(successes, rounds, level)
    rate = successes / rounds if rounds else float("nan")
    se = math.sqrt(rate * (1 - rate) / rounds) if rounds else float("nan")
    return SuccessSummary(
        who,
        mechanism,
        epsilon,
        int(rounds),
        int(successes),
        rate,
        interval,
        se,
        level,
        attacker_bound(epsilon),
        exact_success,
    )


def simulate_optimal_attacker(
    mechanism: str, epsilon: float, *, rounds: int = 1000, seed: int = 0, level: float = 0.95, **setup_options: Any
) -> SuccessSummary:
    """ "Let the computer play": the Bayes-optimal attacker over ``rounds`` seeded rounds (vectorised)."""
    setup = game_setup(mechanism, epsilon, **setup_options)
    rounds = check_int(rounds, "rounds", minimum=1, maximum=10_000_000)
    rng = np.random.default_rng(check_int(seed, "seed", minimum=0))
    secrets = rng.integers(0, 2, size=rounds).astype(bool)
    guesses = optimal_guess(setup, _draw_releases(setup, secrets, rng))
    successes = int(np.sum(guesses == secrets))
    return success_summary(
        successes,
        rounds,
        epsilon=setup.epsilon,
        mechanism=mechanism,
        who="optimal attacker",
        level=level,
        exact_success=setup.exact_success,
    )


# ---------------------------------------------------------------------------------------------------
# The page's view
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AttackerView:
    """The "Play the attacker" page's view: the public setup and one round.

    ``to_dict()`` is the public part only (no secret): what may be shown before the guess, plus the
    optimal attacker's guess (a function of the release). ``confidential_secret`` is read after the guess.
    """

    setup: GameSetup
    round: GameRound

    @property
    def confidential_secret(self) -> bool:
        return self.round.confidential_secret

    def to_dict(self) -> dict[str, Any]:
        return {"setup": self.setup.to_dict(), "round": self.round.to_dict()}


def attacker_view(mechanism: str, epsilon: float, round_seed: int, **setup_options: Any) -> AttackerView:
    """One round of the game for the page: setup + the round of ``round_seed``."""
    setup = game_setup(mechanism, epsilon, **setup_options)
    return AttackerView(setup, play_round(setup, round_seed))
