"""dpcore: differential privacy mechanisms for income statistics, without any UI.

Modules: noise (samplers, calibration, privacy-loss certificates), gini, bounds, posterior,
percentiles, stratified, ratio, simulate, data, budget. See README.md for the public API.
"""
from .validation import DPInputError

__version__ = "0.1.0"
__all__ = ["DPInputError", "__version__"]
