"""A light stratified synthesizer (digest §6.6; an illustration of the paper's Section 6, not MST/GEM/AIM):
noisy 2-way marginals along a chain of columns, one model or one model per stratum, and its parity sweep."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import noise
from ...stratified import MAX_GROUPS, parity_error, readonly, resolve_weights
from ...validation import DPInputError, as_generator, check_epsilon, check_int


@dataclass(frozen=True)
class ChainSynthesis:
    """Synthetic records from noisy 2-way marginals along a chain of columns.

    ``codes`` (n_out x d) integer codes, ``strata`` (n_out) the stratum code of each row,
    ``noise_scale`` the Laplace scale per marginal cell (``2 m / epsilon`` for m marginals),
    ``epsilon`` the total budget (parallel over strata when stratified).
    """

    codes: np.ndarray
    strata: np.ndarray
    epsilon: float
    noise_scale: float
    method: str
    notes: tuple[str, ...] = ()


def _int_array(x: Any, name: str, *, maximum: float = 2**31) -> np.ndarray:
    """Integer codes/sizes given as ints or integral floats; finite and below ``maximum`` in size."""
    try:
        f = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise DPInputError(f"{name} must contain integers") from None
    if not np.all(np.isfinite(f)) or np.any(f != np.round(f)) or np.any(np.abs(f) > maximum):
        raise DPInputError(f"{name} must contain finite integers (at most {maximum:g} in size)")
    return f.astype(np.int64)


def _check_codes(codes: Any, sizes: Any) -> tuple[np.ndarray, np.ndarray]:
    c = np.asarray(codes)
    s = _int_array(sizes, "sizes", maximum=MAX_GROUPS * 100)
    if c.ndim != 2 or c.shape[1] != s.size or c.shape[1] < 2:
        raise DPInputError("codes must be an (n x d) integer table with d >= 2 columns and one size per column")
    if not np.issubdtype(c.dtype, np.integer):
        raise DPInputError("codes must be integer category codes (0 .. size-1)")
    if (s < 1).any() or (c < 0).any() or (c >= s[None, :]).any():
        raise DPInputError("every code must lie in 0 .. size-1 of its column (public domain sizes)")
    return c.astype(np.int64), s


def _noisy_chain(c: np.ndarray, s: np.ndarray, scale: float, gen: Any) -> list[np.ndarray]:
    tables = []
    for j in range(s.size - 1):
        a, b = int(s[j]), int(s[j + 1])
        t = np.bincount(c[:, j] * b + c[:, j + 1], minlength=a * b).reshape(a, b).astype(float)
        t += noise.sample_laplace(scale, a * b, rng=gen).reshape(a, b)
        tables.append(np.maximum(t, 0.0))  # post-processing: counts cannot be negative
    return tables


def _sample_rows(p: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF sampling, one categorical row distribution per draw (rows of ``p`` sum to 1)."""
    cum = np.cumsum(p, axis=1)
    return np.minimum((u[:, None] > cum).sum(axis=1), p.shape[1] - 1)


def _sample_chain(tables: list[np.ndarray], n_out: int, gen: Any) -> np.ndarray:
    first = tables[0].sum(axis=1)
    k0 = first.size
    p0 = first / first.sum() if first.sum() > 0 else np.full(k0, 1.0 / k0)
    out = np.empty((n_out, len(tables) + 1), dtype=np.int64)
    out[:, 0] = _sample_rows(np.broadcast_to(p0, (n_out, k0)), gen.random(n_out))
    for j, t in enumerate(tables):
        rows = t[out[:, j]]
        tot = rows.sum(axis=1, keepdims=True)
        cond = np.where(tot > 0, rows / np.where(tot > 0, tot, 1.0), 1.0 / t.shape[1])
        out[:, j + 1] = _sample_rows(cond, gen.random(n_out))
    return out


def synthesize_chain(codes: Any, sizes: Any, *, epsilon: float, n_out: int, rng: Any = None) -> ChainSynthesis:
    """Non-stratified ("vanilla") light synthesizer: noisy 2-way marginals of consecutive columns
    (a chain), then sampling column by column. Column 0 is the stratum (so groups exist in the
    output); it is modelled like any other column.

    Privacy: replacing one record changes each of the m = d - 1 marginals in at most 2 cells by 1,
    so the L1 sensitivity of all marginals together is 2m and ``Lap(2m / epsilon)`` per cell is
    epsilon-DP. Domain sizes are public.
    """
    c, s = _check_codes(codes, sizes)
    epsilon = check_epsilon(epsilon)
    n_out = check_int(n_out, "n_out", minimum=1, maximum=5_000_000)
    gen = as_generator(rng)
    scale = 2.0 * (s.size - 1) / epsilon
    out = _sample_chain(_noisy_chain(c, s, scale, gen), n_out, gen)
    return ChainSynthesis(
        codes=readonly(out[:, 1:]),
        strata=readonly(out[:, 0]),
        epsilon=epsilon,
        noise_scale=scale,
        method="vanilla chain",
    )


def stratified_synthesize(
    codes: Any, sizes: Any, strata: Any, k: int, *, epsilon: float, weights: Any, n_out: int, rng: Any = None
) -> ChainSynthesis:
    """Stratified light synthesizer (paper §6 method, digest §6.6): an independent noisy-chain model
    per stratum with the **full** epsilon (strata are disjoint: parallel composition), sampled in
    proportion to **public** stratum weights: stratum s gets ``max(1, round(n_out w_s))`` rows when
    ``w_s > 0``. A stratum with public weight but no private records is sampled from the uniform
    distribution (no data, no budget) and noted.
    """
    c, s = _check_codes(codes, sizes)
    st_codes = _int_array(strata, "strata")
    k = check_int(k, "k", minimum=1, maximum=MAX_GROUPS)
    if st_codes.shape != (c.shape[0],) or (st_codes < 0).any() or (st_codes >= k).any():
        raise DPInputError("strata must be one code 0 .. k-1 per record")
    w, _ = resolve_weights(weights, tuple(range(k)), np.bincount(st_codes, minlength=k))
    epsilon = check_epsilon(epsilon)
    n_out = check_int(n_out, "n_out", minimum=1, maximum=5_000_000)
    gen = as_generator(rng)
    scale = 2.0 * (s.size - 1) / epsilon
    parts, labels, notes = [], [], []
    order = np.argsort(st_codes, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(st_codes, minlength=k))])
    for g in range(k):
        if w[g] <= 0:
            continue
        m = max(1, int(round(n_out * w[g])))
        rows = c[order[bounds[g] : bounds[g + 1]]]
        if rows.shape[0] == 0:
            notes.append(f"stratum {g} has public weight but no records: sampled uniformly (uses no data)")
            tables = [np.ones((int(s[j]), int(s[j + 1]))) for j in range(s.size - 1)]
        else:
            tables = _noisy_chain(rows, s, scale, gen)
        parts.append(_sample_chain(tables, m, gen))
        labels.append(np.full(m, g, dtype=np.int64))
    return ChainSynthesis(
        codes=readonly(np.concatenate(parts)),
        strata=readonly(np.concatenate(labels)),
        epsilon=epsilon,
        noise_scale=scale,
        method="stratified chain",
        notes=tuple(notes),
    )


def synthetic_parity(real_codes: Any, real_strata: Any, syn_codes: Any, syn_strata: Any, k: int) -> dict:
    """Parity error (Def. 11, omega = 1/k) of the **means of every variable** between real and
    synthetic data, per variable and averaged over variables (our choice for the paper's
    "aggregate normalized difference of means across all variables"). Codes are shifted by +1 so
    that no mean is 0. A stratum with no synthetic rows is given the overall synthetic mean
    (stated). Also returns the max disparity ``max |real - syn| / |real|`` over strata and variables.
    """
    rc = _int_array(real_codes, "real_codes").astype(float) + 1.0
    sc = _int_array(syn_codes, "syn_codes").astype(float) + 1.0
    rs = _int_array(real_strata, "real_strata")
    ss = _int_array(syn_strata, "syn_strata")
    k = check_int(k, "k", minimum=1, maximum=MAX_GROUPS)
    if (
        rc.ndim != 2
        or sc.ndim != 2
        or rc.shape[1] != sc.shape[1]
        or rs.shape != (rc.shape[0],)
        or ss.shape != (sc.shape[0],)
        or sc.shape[0] == 0
    ):
        raise DPInputError("real and synthetic tables need the same columns and one stratum code per row")
    if (rs < 0).any() or (rs >= k).any() or (ss < 0).any() or (ss >= k).any():
        raise DPInputError("stratum codes must lie in 0 .. k-1")
    phis, maxdisp, empty = [], 0.0, 0
    rcount = np.bincount(rs, minlength=k)
    scount = np.bincount(ss, minlength=k)
    keep = rcount > 0
    for j in range(rc.shape[1]):
        rmean = np.bincount(rs, weights=rc[:, j], minlength=k)[keep] / rcount[keep]
        soverall = float(sc[:, j].mean())
        smean_all = np.where(
            scount > 0, np.bincount(ss, weights=sc[:, j], minlength=k) / np.maximum(scount, 1), soverall
        )
        smean = smean_all[keep]
        phi = parity_error(float(rc[:, j].mean()), soverall, rmean, smean, omega=1.0 / int(keep.sum()))
        phis.append(float(phi))
        maxdisp = max(maxdisp, float(np.max(phi.per_group)))
    empty = int(np.sum(keep & (scount == 0)))
    return {
        "parity per variable": phis,
        "parity (mean over variables)": float(np.mean(phis)),
        "max disparity": maxdisp,
        "strata without synthetic rows": empty,
    }


def synthesizer_sweep(
    codes: Any,
    sizes: Any,
    strata: Any,
    k: int,
    *,
    public_w: Any,
    epsilons: Sequence[float],
    runs: int = 3,
    n_out: int | None = None,
    rng: Any = None,
    progress: Any = None,
) -> list[dict]:
    """Paper Fig. 5 / 7a shape with the light synthesizer: parity error of means and max disparity
    against epsilon, vanilla chain vs stratified chain. ``public_w`` are the public stratum
    weights used to size the stratified output."""
    c, s = _check_codes(codes, sizes)
    st_codes = _int_array(strata, "strata")
    runs = check_int(runs, "runs", minimum=1, maximum=100)
    n_out = c.shape[0] if n_out is None else check_int(n_out, "n_out", minimum=1)
    gen = as_generator(rng)
    rows: list[dict] = []
    eps_list = list(epsilons)
    for i, eps in enumerate(eps_list):
        for run in range(runs):
            v = synthesize_chain(
                np.column_stack([st_codes, c]), np.concatenate([[k], s]), epsilon=eps, n_out=n_out, rng=gen
            )
            sy = stratified_synthesize(c, s, st_codes, k, epsilon=eps, weights=public_w, n_out=n_out, rng=gen)
            for name, syn in (("vanilla (one model)", v), ("stratified (one model per group)", sy)):
                res = synthetic_parity(c, st_codes, syn.codes, syn.strata, k)
                rows.append(
                    {
                        "epsilon": float(eps),
                        "run": run,
                        "method": name,
                        "parity error": res["parity (mean over variables)"],
                        "max disparity": res["max disparity"],
                    }
                )
        if progress is not None:
            progress((i + 1) / len(eps_list), f"epsilon = {eps:g} done")
    return rows
