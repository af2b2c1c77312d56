"""Vectorised Monte Carlo of many releases of every method on one dataset, and the sweeps behind the paper's
Figures 2, 3, 6 and 7. Planning simulations: they use the confidential true means."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import noise
from ...coinpress import pure_dp_to_zcdp, simulate_coinpress
from ...stratified import (
    DEFAULT_GAMMA,
    MAX_GROUPS,
    SimulatedGroupMeans,
    clip_thresholds,
    clipped_group_means,
    group_index,
    parity_error,
    public_weights,
    readonly,
    resolve_weights,
    split_public_private,
)
from ...validation import DPInputError, as_finite_array, as_generator, check_epsilon, check_int, check_positive
from .paper import gaussian_mixture

# ---------------------------------------------------------------------------------------------
# Vectorised Monte Carlo on one dataset (for the page's error bars)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LaplaceSimulation(SimulatedGroupMeans):
    """``n_sims`` simulated releases on one dataset.

    ``strat_groups`` (n_sims x k), ``strat_overall`` (n_sims): stratified Laplace.
    ``global_overall`` (n_sims): global Laplace (its per-group "estimate" is the same number).
    ``true_groups`` / ``true_overall``: the non-private (unclipped) means.
    """

    global_overall: np.ndarray
    epsilon: float


def simulate_laplace_releases(
    values: Any,
    groups: Any,
    *,
    epsilon: float,
    clip_range: Any,
    n_sims: int = 200,
    weights: Any = None,
    gamma: float = DEFAULT_GAMMA,
    rng: Any = None,
    max_groups: int = MAX_GROUPS,
) -> LaplaceSimulation:
    """Simulate ``n_sims`` stratified and global Laplace releases (same parameters as
    :func:`stratified_mean` / :func:`clipped_laplace_mean`), vectorised."""
    x = as_finite_array(values, "values", min_size=2)
    epsilon = check_epsilon(epsilon)
    n_sims = check_int(n_sims, "n_sims", minimum=1, maximum=1_000_000)
    gi = group_index(groups, max_groups=max_groups)
    if gi.codes.size != x.size:
        raise DPInputError("values and groups must have the same length")
    w, _ = resolve_weights(weights, gi.labels, gi.counts)
    lo, hi = clip_thresholds(clip_range, gi.counts, gamma=gamma)
    means, empty = clipped_group_means(x, gi.codes, gi.counts, lo, hi)
    scales = np.where(empty, 0.0, (hi - lo) / np.maximum(gi.counts, 1) / epsilon)
    gen = as_generator(rng)
    z = noise.sample_laplace(1.0, n_sims * gi.k, rng=gen).reshape(n_sims, gi.k)
    strat = means[None, :] + scales[None, :] * z
    glo, ghi = clip_thresholds(clip_range, np.array([x.size]), gamma=gamma)
    gmean = float(np.clip(x, glo[0], ghi[0]).mean())
    gb = (ghi[0] - glo[0]) / x.size / epsilon
    glob = gmean + gb * noise.sample_laplace(1.0, n_sims, rng=gen)
    return LaplaceSimulation(
        **LaplaceSimulation.common_fields(gi, w, x, strat),
        global_overall=readonly(glob),
        epsilon=epsilon,
    )


# ---------------------------------------------------------------------------------------------
# All methods side by side, and the sweeps behind the paper's Figures 2, 3, 6 and 7
# ---------------------------------------------------------------------------------------------

#: The five estimators compared on the page.
METHODS = ("Global Laplace", "Stratified Laplace", "CoinPress", "StratCoinpress", "PubStratCoinpress")
#: Methods whose per-group "estimate" is the single global number (what drives their parity error).
GLOBAL_METHODS = ("Global Laplace", "CoinPress")


@dataclass(frozen=True)
class MethodsSimulation:
    """``n_sims`` releases of every method on one dataset.

    ``groups[m]`` is (n_sims, k) (global methods repeat their overall value in every group),
    ``overall[m]`` is (n_sims,). ``true_groups``/``true_overall`` are the non-private means.
    Laplace methods are epsilon-DP; CoinPress methods are rho-zCDP with ``rho`` (by default
    ``epsilon^2 / 2``, the zCDP level epsilon-DP also satisfies).
    """

    labels: tuple
    counts: np.ndarray
    true_groups: np.ndarray
    true_overall: float
    groups: dict
    overall: dict
    epsilon: float
    rho: float
    weights: np.ndarray
    public_weights: np.ndarray | None


def simulate_methods(
    values: Any,
    groups: Any,
    *,
    epsilon: float,
    clip_range: Any,
    rho: float | None = None,
    lower: float,
    upper: float,
    sigma: Any,
    sigma_global: float | None = None,
    t: int = 2,
    beta: float = 0.05,
    gamma: float = 0.1,
    public_w: Any = None,
    n_sims: int = 200,
    methods: Sequence[str] = METHODS,
    rng: Any = None,
    max_groups: int = MAX_GROUPS,
    clamp_to_prior: bool = False,
) -> MethodsSimulation:
    """Simulate every requested method ``n_sims`` times on one dataset (vectorised).

    Group-size weights are the (public by assumption) proportions; ``public_w`` are the PubStrat
    weights from a public hold-out (required for "PubStratCoinpress"), in sorted-label order.
    """
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise DPInputError(f"unknown methods {unknown}; choose from {list(METHODS)}")
    gen = as_generator(rng)
    x = as_finite_array(values, "values", min_size=2)
    rho = pure_dp_to_zcdp(epsilon) if rho is None else check_positive(rho, "rho")
    gi = group_index(groups, max_groups=max_groups)
    if gi.codes.size != x.size:
        raise DPInputError("values and groups must have the same length")
    k = gi.k
    groups = gi.codes  # integer codes in sorted-label order: the simulators below need not re-sort text
    out_g: dict[str, np.ndarray] = {}
    out_o: dict[str, np.ndarray] = {}
    if "Global Laplace" in methods or "Stratified Laplace" in methods:
        ls = simulate_laplace_releases(
            x,
            groups,
            epsilon=epsilon,
            clip_range=clip_range,
            n_sims=n_sims,
            gamma=gamma,
            rng=gen,
            max_groups=max_groups,
        )
        if "Global Laplace" in methods:
            out_o["Global Laplace"] = ls.global_overall
            out_g["Global Laplace"] = np.repeat(ls.global_overall[:, None], k, axis=1)
        if "Stratified Laplace" in methods:
            out_o["Stratified Laplace"] = ls.strat_overall
            out_g["Stratified Laplace"] = ls.strat_groups
    strat = [m for m in ("StratCoinpress", "PubStratCoinpress") if m in methods]
    pw = None
    if strat or "CoinPress" in methods:
        cs = simulate_coinpress(
            x,
            groups,
            rho=rho,
            lower=lower,
            upper=upper,
            sigma=sigma,
            sigma_global=sigma_global,
            t=t,
            beta=beta,
            n_sims=n_sims,
            rng=gen,
            max_groups=max_groups,
            include_global="CoinPress" in methods,
            clamp_to_prior=clamp_to_prior,
        )
        if "CoinPress" in methods:
            assert cs.global_overall is not None  # simulated: include_global is True here
            out_o["CoinPress"] = cs.global_overall
            out_g["CoinPress"] = np.repeat(cs.global_overall[:, None], k, axis=1)
        if "StratCoinpress" in methods:
            out_o["StratCoinpress"] = cs.strat_overall
            out_g["StratCoinpress"] = cs.strat_groups
        if "PubStratCoinpress" in methods:
            if public_w is None:
                raise DPInputError("PubStratCoinpress needs weights from a public hold-out sample")
            pw, _ = resolve_weights(public_w, gi.labels, gi.counts)
            # the same private group releases, recombined with the public weights (post-processing)
            out_o["PubStratCoinpress"] = cs.strat_groups @ pw
            out_g["PubStratCoinpress"] = cs.strat_groups
    true_groups = np.bincount(gi.codes, weights=x, minlength=k) / np.maximum(gi.counts, 1)
    return MethodsSimulation(
        labels=gi.labels,
        counts=gi.counts,
        true_groups=true_groups,
        true_overall=float(x.mean()),
        groups=out_g,
        overall=out_o,
        epsilon=float(epsilon),
        rho=rho,
        weights=gi.counts / gi.counts.sum(),
        public_weights=pw,
    )


def mixture_sigma(sizes: Any, mus: Any, sigmas: Any) -> float:
    """Standard deviation of a Gaussian mixture with the given group sizes, means and sds."""
    v = as_finite_array(sizes, "sizes")
    mus = as_finite_array(mus, "mus")
    sig = as_finite_array(sigmas, "sigmas")
    if not (v.size == mus.size == sig.size) or (v < 0).any() or v.sum() <= 0 or (sig < 0).any():
        raise DPInputError("sizes, mus and sigmas need one entry per group; sizes and sigmas must be >= 0")
    v = v / v.sum()
    m = float(v @ mus)
    return math.sqrt(max(float(v @ (sig**2 + mus**2)) - m * m, 0.0))


def synthetic_sweep(
    param: str,
    grid: Sequence[float],
    *,
    n: int = 10_000,
    k: int = 9,
    alpha: float = 0.3,
    epsilon: float = 1.0,
    R: float = 3.0,
    t: int = 2,
    beta: float = 0.05,
    gamma: float = 0.1,
    runs: int = 20,
    methods: Sequence[str] = METHODS,
    rng: Any = None,
    progress: Any = None,
    clamp_to_prior: bool = False,
) -> list[dict]:
    """The paper's synthetic Gaussian-mixture experiment (Figs. 3, 6, 7; digest §4.5-4.6).

    For each value of ``param`` ("n", "k", "alpha" or "epsilon") and each of ``runs`` fresh
    datasets: draw a mixture of size 2n, keep n as private data and n as the public hold-out
    (PubStrat, as in the authors' code), and record every method's absolute error of the overall
    mean against the private data's true mean. Prior ``[-R, R]``; CoinPress knows each group's
    sigma (and the mixture's sigma for the global run); Laplace clips at the paper's
    ``R + sqrt(ln|G| / gamma)``. ``rho = epsilon^2 / 2``. ``progress(fraction, text)`` is called
    after each grid value. Returns one row per (value, run, method).
    """
    if param not in ("n", "k", "alpha", "epsilon"):
        raise DPInputError("param must be one of 'n', 'k', 'alpha', 'epsilon'")
    runs = check_int(runs, "runs", minimum=1, maximum=500)
    gen = as_generator(rng)
    rows: list[dict] = []
    grid = list(grid)
    for gi_, val in enumerate(grid):
        cfg = dict(n=n, k=k, alpha=alpha, epsilon=epsilon)
        cfg[param] = val
        nn, kk = int(cfg["n"]), int(cfg["k"])
        for run in range(runs):
            mix = gaussian_mixture(2 * nn, kk, float(cfg["alpha"]), gen)
            pv, pg, _, pubg = split_public_private(mix.values, mix.groups, public_fraction=0.5, rng=gen)
            labels = group_index(pg).labels
            pw = public_weights(pubg, labels)
            sig = mix.sigmas[np.asarray(labels, dtype=int)]
            sim = simulate_methods(
                pv,
                pg,
                epsilon=float(cfg["epsilon"]),
                clip_range=R,
                lower=-R,
                upper=R,
                sigma=sig,
                sigma_global=mixture_sigma(mix.sizes, mix.mus, mix.sigmas),
                t=t,
                beta=beta,
                gamma=gamma,
                public_w=pw,
                n_sims=1,
                methods=methods,
                rng=gen,
                clamp_to_prior=clamp_to_prior,
            )
            for m in methods:
                rows.append(
                    {param: val, "run": run, "method": m, "error": abs(float(sim.overall[m][0]) - sim.true_overall)}
                )
        if progress is not None:
            progress((gi_ + 1) / len(grid), f"{param} = {val:g} done")
    return rows


def grouping_sweep(
    values: Any,
    strata: Sequence[tuple[str, Any]],
    *,
    epsilon: float,
    clip_range: Any,
    lower: float,
    upper: float,
    sigma: float,
    t: int = 2,
    beta: float = 0.05,
    runs: int = 10,
    methods: Sequence[str] = METHODS,
    rng: Any = None,
    progress: Any = None,
    clamp_to_prior: bool = False,
) -> list[dict]:
    """The paper's Figure 2 on real data: error and parity error as the grouping gets finer.

    ``strata`` is a list of (name, labels-per-record). For each grouping and run, half of the
    records (shuffled) are the private data and half the public hold-out for PubStrat (as in the
    authors' code); every method's normalised error ``|est - mean| / |mean|`` of the overall mean
    and the parity error (Def. 11, omega = 1/k) are recorded (groups with true mean 0 skipped).
    ``sigma`` is a public standard deviation used by every CoinPress run.
    """
    runs = check_int(runs, "runs", minimum=1, maximum=500)
    x = as_finite_array(values, "values", min_size=4)
    gen = as_generator(rng)
    rows: list[dict] = []
    for si, (name, labels_all) in enumerate(strata):
        codes_all = group_index(labels_all).codes  # integer codes once: every run then works on ints
        for run in range(runs):
            pv, pg, _, pubg = split_public_private(x, codes_all, public_fraction=0.5, rng=gen)
            labels = group_index(pg).labels
            pw = public_weights(pubg, labels)
            sim = simulate_methods(
                pv,
                pg,
                epsilon=epsilon,
                clip_range=clip_range,
                lower=lower,
                upper=upper,
                sigma=sigma,
                sigma_global=sigma,
                t=t,
                beta=beta,
                public_w=pw,
                n_sims=1,
                methods=methods,
                rng=gen,
                clamp_to_prior=clamp_to_prior,
            )
            for m in methods:
                est_o = float(sim.overall[m][0])
                phi = parity_error(sim.true_overall, est_o, sim.true_groups, sim.groups[m][0], on_zero="skip")
                rows.append(
                    {
                        "grouping": name,
                        "k": len(labels),
                        "run": run,
                        "method": m,
                        "error": abs(est_o - sim.true_overall) / abs(sim.true_overall),
                        "parity error": float(phi),
                    }
                )
        if progress is not None:
            progress((si + 1) / len(strata), f"{name} done")
    return rows


def real_epsilon_sweep(
    values: Any,
    labels: Any,
    epsilons: Sequence[float],
    *,
    clip_range: Any,
    lower: float,
    upper: float,
    sigma: float,
    t: int = 2,
    beta: float = 0.05,
    runs: int = 10,
    methods: Sequence[str] = METHODS,
    rng: Any = None,
    progress: Any = None,
    clamp_to_prior: bool = False,
) -> list[dict]:
    """Normalised error of the overall mean and parity error against epsilon on real data with one
    fixed grouping (same protocol as :func:`grouping_sweep`: a fresh random half per run)."""
    gen = as_generator(rng)
    rows: list[dict] = []
    eps_list = list(epsilons)
    codes = group_index(labels).codes
    for i, eps in enumerate(eps_list):
        for r in grouping_sweep(
            values,
            [("groups", codes)],
            epsilon=float(eps),
            clip_range=clip_range,
            lower=lower,
            upper=upper,
            sigma=sigma,
            t=t,
            beta=beta,
            runs=runs,
            methods=methods,
            rng=gen,
            clamp_to_prior=clamp_to_prior,
        ):
            r["epsilon"] = float(eps)
            rows.append(r)
        if progress is not None:
            progress((i + 1) / len(eps_list), f"epsilon = {eps:g} done")
    return rows
