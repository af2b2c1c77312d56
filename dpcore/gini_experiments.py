"""Moved to :mod:`dpcore.experiments.gini`; this name is kept so old imports keep working."""
from __future__ import annotations

from .experiments.gini import *  # noqa: F401,F403
from .experiments.gini import (PAPER_UPPER_EPSILON, PAPER_UPPER_INFLATION, ExperimentResult,  # noqa: F401
                               __all__)
