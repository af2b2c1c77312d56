"""Randomness sources for dpcore: ``as_generator``, the OS-CSPRNG source :class:`SecureRandom`.

Split out of :mod:`dpcore.noise` and :mod:`dpcore.validation` (which import each other's names
otherwise); ``dpcore.validation`` re-exports them, so ``from dpcore.validation import as_generator``
keeps working.

Uniforms are strictly inside (0, 1): a 52-bit word k (0 <= k < 2^52) becomes
``(k + 1/2) * 2^-52``, computed exactly in double precision (k + 1/2 < 2^52 is representable), so the
extremes are 2^-53 and 1 - 2^-53. (The earlier 53-bit version ``(k + 1/2) / 2^53`` rounded to
exactly 1.0 for k = 2^53 - 1, and Laplace / Gaussian / Cauchy noise became inf or NaN.) Every
sampler below is therefore finite for every word, including all-0x00 and all-0xFF bytes.
"""

from __future__ import annotations

import os
from numbers import Integral
from typing import cast

import numpy as np

from .errors import DPInputError

__all__ = ["SecureRandom", "secure_generator", "as_generator", "uniform_from_words"]

_TWO_POW_MINUS_52 = 2.0**-52


def uniform_from_words(words: np.ndarray) -> np.ndarray:
    """Map uint64 words to uniforms in (0, 1): the top 52 bits k give (k + 1/2) 2^-52 (exact in float64)."""
    arr = np.asarray(words)
    if arr.dtype != np.uint64:
        raise DPInputError("words must be a numpy array of dtype uint64 (64 random bits each)")
    k = arr >> np.uint64(12)
    return (k.astype(np.float64) + 0.5) * _TWO_POW_MINUS_52


class SecureRandom:
    """Random numbers from the operating system's CSPRNG (``os.urandom``), for real releases.

    Implements the small part of the ``numpy.random.Generator`` interface that dpcore uses
    (``random``, ``uniform``, ``standard_normal``, ``normal``, ``laplace``, ``exponential``,
    ``standard_exponential``, ``standard_gamma``, ``gamma``, ``beta``, ``integers``, ``choice``),
    each by inverse-CDF transformation of 52-bit uniforms in (0, 1) drawn from ``os.urandom``.
    Its state cannot be reconstructed from its outputs (unlike PCG64), and it cannot be seeded.

    Caveat, stated honestly: the transformations are in double precision, so real numbers made
    from them carry floating-point artefacts (Mironov 2012). Real releases therefore do not use
    these float samplers for their noise: :mod:`dpcore.noise.secure` draws it with OpenDP's
    exact samplers or with the certified generalized-Cauchy sampler.
    """

    def random(self, size=None) -> np.ndarray | float:
        n = 1 if size is None else int(np.prod(size))
        u = uniform_from_words(np.frombuffer(os.urandom(8 * n), dtype=np.uint64))
        return float(u[0]) if size is None else u.reshape(size)

    def uniform(self, low=0.0, high=1.0, size=None):
        return low + (high - low) * self.random(size)

    def standard_normal(self, size=None):
        from scipy import special

        return special.ndtri(self.random(size))

    def normal(self, loc=0.0, scale=1.0, size=None):
        return loc + scale * self.standard_normal(size)

    def standard_cauchy(self, size=None):
        return np.tan(np.pi * (self.random(size) - 0.5))

    def __getattr__(self, name: str):
        # a method numpy's Generator has but this source does not: say so with a TypeError that
        # names rng, so callers can fall back deliberately instead of crashing
        if name.startswith("__"):
            raise AttributeError(name)
        raise TypeError(f"rng: SecureRandom does not provide {name}(); use a numpy Generator for this method")

    def standard_exponential(self, size=None):
        return -np.log(self.random(size))

    def exponential(self, scale=1.0, size=None):
        return scale * self.standard_exponential(size)

    def laplace(self, loc=0.0, scale=1.0, size=None):
        u = self.random(size) - 0.5  # in [-1/2 + 2^-53, 1/2 - 2^-53]: 1 - 2|u| >= 2^-52 > 0
        return loc - scale * np.sign(u) * np.log1p(-2.0 * np.abs(u))

    def standard_gamma(self, shape, size=None):
        from scipy import special

        return special.gammaincinv(shape, self.random(size))

    def gamma(self, shape, scale=1.0, size=None):
        return scale * self.standard_gamma(shape, size)

    def beta(self, a, b, size=None):
        from scipy import special

        return special.betaincinv(a, b, self.random(size))

    def geometric(self, p, size=None):
        """Number of trials to the first success (support 1, 2, ...), as numpy's."""
        return np.floor(np.log(self.random(size)) / np.log1p(-p)).astype(np.int64) + 1

    def integers(self, low, high=None, size=None):
        if high is None:
            low, high = 0, low
        span = int(high) - int(low)
        if span <= 0:
            raise DPInputError("integers: high must be larger than low")
        n = 1 if size is None else int(np.prod(size))
        # rejection sampling on 64-bit words: exactly uniform
        limit = (2**64 // span) * span
        out = np.empty(0, dtype=np.uint64)
        while out.size < n:
            words = np.frombuffer(os.urandom(8 * 2 * n), dtype=np.uint64)
            out = np.concatenate([out, words[words < np.uint64(limit)] if limit < 2**64 else words])
        vals = (out[:n] % np.uint64(span)).astype(np.int64) + int(low)
        return int(vals[0]) if size is None else vals.reshape(size)

    def choice(self, a, size=None, replace=True):
        pool = np.arange(a) if isinstance(a, (int, np.integer)) else np.asarray(a)
        if not replace:
            perm = np.argsort(self.random(len(pool)))
            k = 1 if size is None else int(np.prod(size))
            picked = pool[perm[:k]]
            return picked[0] if size is None else picked.reshape(size)
        idx = self.integers(0, len(pool), size=size)
        return pool[idx]


def secure_generator() -> SecureRandom:
    """A CSPRNG-backed source (``os.urandom``) usable as ``rng`` by every dpcore sampler."""
    return SecureRandom()


def as_generator(rng: np.random.Generator | SecureRandom | int | None) -> np.random.Generator:
    """Return a ``numpy.random.Generator`` (pass one through, seed one from an int, or make a fresh one),
    or pass a :class:`SecureRandom` through unchanged."""
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (Integral, np.integer)) and not isinstance(rng, bool):
        if int(rng) < 0:
            raise DPInputError(f"a random seed must be a non-negative integer, got {rng}")
        return np.random.default_rng(int(rng))
    if isinstance(rng, SecureRandom):
        # the OS-CSPRNG source, typed as the Generator whose methods it duck-types (those dpcore uses)
        return cast(np.random.Generator, rng)
    raise TypeError(f"rng must be a numpy.random.Generator, an int seed or None, got {type(rng).__name__}")
