"""dpcore: differential privacy mechanisms for income statistics, without any UI.

Mechanisms, one module per method: ``gini`` (Gini index, exact smooth sensitivity, release),
``bounds`` (DP upper bound), ``posterior`` (credible intervals for additive-noise releases),
``percentiles`` (PSEO histogram mechanism and rivals), ``stratified`` and ``coinpress`` (group
means), ``ratio`` (noisy counts, ratios, confidence intervals).
Noise and randomness: ``noise`` (samplers, calibration, privacy-loss certificates),
``smooth_noises`` (light-tailed smooth-sensitivity noises), ``release_noise`` (samplers for real
releases), ``rng`` (seeded and OS-CSPRNG generators), ``validation`` (argument checks).
Views and experiments: ``experiments`` (one view function per page view, the papers' experiments;
``gini_experiments`` is the old name of ``experiments.gini``).
Data: ``data`` (file loading and validation, synthetic generators, bundled examples in
``examples/``, ``build_dataset(recipe)``).
Planning and releasing: ``planner`` (smallest epsilon for an accuracy target), ``budget``
(composition), ``risk`` (what epsilon means for a person), ``ledger`` (durable budget ledger),
``release`` (real releases and their records), ``plan`` (release plan files), ``engines``
(DuckDB / Spark / pandas aggregation), ``cli`` and ``__main__`` (the ``dpcore`` command line).
See README.md for the public API.
"""
from .validation import DPInputError

__version__ = "0.1.0"
__all__ = ["DPInputError", "__version__"]
