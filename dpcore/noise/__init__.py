"""The noise layer: samplers, their calibration and privacy-loss certificates (above the foundation).

Submodules:

* ``samplers`` - Laplace, two-sided geometric, Gaussian (analytic calibration of Balle & Wang 2018) and
  the generalized Cauchy, numpy samplers for exploration and Monte Carlo.
* ``certificates`` - certified privacy loss of generalized-Cauchy smooth-sensitivity noise and its
  (alpha, beta) calibration (Nissim, Raskhodnikova & Smith 2007).
* ``smooth`` - the light-tailed smooth-sensitivity noises (Laplace, Laplace log-normal), their
  calibrations and privacy statements, and the registry ``SMOOTH_NOISES``.
* ``guarantees`` - what the samplers of real releases are calibrated and certified by, computed without
  drawing: OpenDP's Laplace scale for an epsilon, the certified generalized-Cauchy sampler's bounds, the
  output grid of every released Gini.
* ``secure`` - the samplers of real releases: OpenDP and the certified generalized-Cauchy sampler (called
  only by :mod:`dpcore.mechanisms`).

The public names of ``samplers`` and ``certificates`` are importable from here (``from dpcore import
noise; noise.sample_laplace(...)``), the public API's path. ``smooth`` and ``secure`` are imported where
they are used (``from dpcore.noise import smooth``): they build on ``samplers`` and ``certificates``, and
a caller of a sampler does not load them.
"""

# the public names of samplers and certificates, each listed once in its module's __all__
from . import certificates, samplers
from .certificates import *  # noqa: F403
from .samplers import *  # noqa: F403

__all__ = [*samplers.__all__, *certificates.__all__]
