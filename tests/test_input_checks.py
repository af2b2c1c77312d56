"""Argument checks: dpcore.validation.check_int and the Gini page's dot plot (plausible_releases)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.noise import GeneralizedCauchy
from dpcore.validation import DPInputError, NotAnIntegerError, check_int
from dpcore.views import gini as gini_experiments


@pytest.mark.parametrize("value", [2.5, -0.5, math.nan, math.inf, "3", None, True, np.float64(7.25)])
def test_check_int_refuses_what_is_not_an_integer(value):
    """Never truncated by int(); a DPInputError (pages show ValueErrors) that is still a TypeError (as before)."""
    with pytest.raises(NotAnIntegerError, match="group size must be an integer") as caught:
        check_int(value, "group size", minimum=1)
    assert isinstance(caught.value, DPInputError) and isinstance(caught.value, TypeError)


def test_check_int_accepts_integers_and_integral_floats():
    assert check_int(np.int32(4), "n") == 4 and check_int(10.0, "n") == 10 and check_int(np.float64(3.0), "n") == 3
    with pytest.raises(DPInputError, match="n must be >= 2, got 1"):
        check_int(1, "n", minimum=2)


def test_plausible_releases_checks_its_noise_law():
    dots = gini_experiments.plausible_releases(0.4, 0.05, 2.0, 20)
    want = 0.4 + 0.05 * GeneralizedCauchy(2.0).ppf((np.arange(20) + 0.5) / 20)
    np.testing.assert_allclose(dots, want, rtol=1e-12)
    # a law given explicitly is used (gamma then plays no part)
    np.testing.assert_allclose(
        gini_experiments.plausible_releases(0.4, 0.05, math.nan, 20, noise_law=GeneralizedCauchy(2.0)), want, rtol=1e-12
    )
    # noise_law = NaN used to fail with AttributeError "'float' object has no attribute 'ppf'"
    for bad in (math.nan, "laplace", 3):
        with pytest.raises(DPInputError, match="noise_law must be a noise distribution with a .ppf method"):
            gini_experiments.plausible_releases(0.4, 0.05, 2.0, 20, noise_law=bad)

    class NanLaw:
        def ppf(self, p):
            return np.full_like(p, np.nan)

    with pytest.raises(DPInputError, match="non-finite"):  # never NaN dots on the page
        gini_experiments.plausible_releases(0.4, 0.05, 2.0, 20, noise_law=NanLaw())
    with pytest.raises(DPInputError, match="noise_scale must be >= 0"):
        gini_experiments.plausible_releases(0.4, -0.05, 2.0, 20)
