"""Income data: loading and validating user files, synthetic generators, bundled examples.

(Foundation stub: the full loader and generators are being written under issue 2.)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .validation import DPInputError, as_generator, check_int, check_finite, check_positive

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA_DIR = REPO_ROOT.parent / "shared" / "data"


@dataclass(frozen=True)
class IncomeData:
    """A loaded income column plus the frame it came from.

    values: the income column as finite floats (what single-column methods use).
    frame: the full table (other columns: groups, weights, ...) or None for generated data.
    confidential: True for an uploaded file (planning on it is not private; pages say so).
    notes: what validation changed (rows dropped, values clipped), shown on screen.
    """

    values: np.ndarray
    name: str
    source: str  # "synthetic" | "example" | "shared" | "upload"
    column: str = "income"
    confidential: bool = False
    frame: pd.DataFrame | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)


def shared_data_path(file_name: str) -> Path | None:
    """Path of a file in ../shared/data next to the repository, or None when it is absent."""
    path = SHARED_DATA_DIR / file_name
    return path if path.is_file() else None


def lognormal_incomes(n: int, *, mu: float = 10.5, sigma: float = 0.9, rng=None) -> np.ndarray:
    """n log-normal incomes exp(N(mu, sigma^2)); Gini = 2 Phi(sigma / sqrt 2) - 1."""
    n = check_int(n, "n", minimum=1)
    mu = check_finite(mu, "mu")
    sigma = check_positive(sigma, "sigma")
    return as_generator(rng).lognormal(mu, sigma, size=n)
