"""Every number the Gini page states about the Gini is of the published value, clamped to [0, 1]
(dpcore.noise.guarantees.publish_gini): its error quantiles, RMSE, simulated releases, dots, interval widths and
chart axes. The exact formulas are checked against Monte Carlo draws (tolerances from the Monte Carlo standard
error), and the page at (n = 100, ε = 1) and (n = 200, ε = 0.05), where the noise is far larger than the Gini's
range, states no error or width above 1 (it said "typically 4.4538 wide" and "99% within ±90")."""

from __future__ import annotations

import re

import numpy as np
import pytest
from support import open_page, page_text

from dpcore.noise import GeneralizedCauchy
from dpcore.noise.smooth import LaplaceNoise
from dpcore.views import gini as gini_experiments

DRAWS = 400_000
LEVELS = (0.25, 0.5, 0.75, 0.9, 0.99)
CASES = [  # (true Gini, noise scale, law): small noise, noise across one end, noise far past both ends
    (0.3, 0.02, GeneralizedCauchy(2.0)),
    (0.3, 0.2, GeneralizedCauchy(2.0)),
    (0.7, 0.2, LaplaceNoise()),
    (0.45, 5.0, GeneralizedCauchy(4.0)),
    (0.5, 0.3, LaplaceNoise()),
]


def _published_errors(g, s, law, seed=7):
    z = law.rvs(DRAWS, np.random.default_rng(seed))
    return np.abs(np.clip(g + s * z, 0.0, 1.0) - g)


@pytest.mark.parametrize(("g", "s", "law"), CASES)
def test_published_error_quantiles_are_exact(g, s, law):
    errors = _published_errors(g, s, law)
    quantiles = gini_experiments.published_abs_error_quantiles(g, s, law, LEVELS)
    assert np.all(quantiles <= max(g, 1 - g) + 1e-12)
    for q, t in zip(LEVELS, quantiles, strict=True):
        tol = 5 * np.sqrt(q * (1 - q) / DRAWS)  # the empirical CDF's standard error, 5 sigma
        below, at_most = np.mean(errors < t - 1e-12), np.mean(errors <= t + 1e-12)
        assert below <= q + tol and at_most >= q - tol, (q, t, below, at_most)


@pytest.mark.parametrize(("g", "s", "law"), CASES)
def test_published_rmse_clamp_share_and_typical_width(g, s, law):
    errors = _published_errors(g, s, law)
    squares = errors**2
    rmse = gini_experiments.published_rmse(g, s, law)
    assert abs(rmse**2 - squares.mean()) <= 5 * squares.std() / np.sqrt(DRAWS) + 1e-4
    z = law.rvs(DRAWS, np.random.default_rng(8))
    clamped = np.mean((g + s * z <= 0) | (g + s * z >= 1))
    share = gini_experiments.clamp_probability(g, s, law)
    assert abs(share - clamped) <= 5 * np.sqrt(max(share * (1 - share), 1e-9) / DRAWS)
    h = 0.4
    v = np.clip(g + s * z, 0.0, 1.0)
    widths = np.minimum(v + h, 1.0) - np.maximum(v - h, 0.0)
    typical = gini_experiments.typical_clipped_width(g, s, h, law)
    assert typical <= 1.0
    assert np.mean(widths <= typical + 1e-9) >= 0.5 - 0.01 and np.mean(widths < typical - 1e-9) <= 0.5 + 0.01


# a number stated as an error or a width of the Gini: "±0.13", "±1.4", "typically **4.4538** wide", "4.4538 wide"
_STATED = re.compile(r"±\s*\**([0-9][0-9,]*\.?[0-9]*(?:e[+-]?\d+)?)(?!\s*S\b)|([0-9][0-9,]*\.?[0-9]*)\**\s*wide")


def _stated_numbers(text: str) -> list[float]:
    return [float((a or b).replace(",", "")) for a, b in _STATED.findall(text)]


@pytest.mark.parametrize(
    ("query", "where"),
    [
        (dict(data_n="100", gini_eps="1.0"), "n = 100, ε = 1"),
        (dict(data_n="500", gini_n="200", gini_eps="0.05"), "n = 200, ε = 0.05"),
    ],
)
def test_the_gini_page_states_no_error_or_width_above_one(query, where):
    at = open_page("app_pages/gini.py", **query)
    assert not at.exception, [e.value for e in at.exception]
    numbers = {
        str(q): float(v)
        for q, v in zip(at.dataframe[-1].value["quantity"], at.dataframe[-1].value["value"], strict=True)
    }  # the numbers table: what the generated script prints
    about_the_gini = {k: v for k, v in numbers.items() if "error" in k or "width" in k or "rmse" in k}
    assert about_the_gini and all(v <= 1.0 for v in about_the_gini.values()), (where, about_the_gini)
    stated = _stated_numbers(page_text(at))
    assert stated and max(stated) <= 1.0, (where, stated)
    for chart in at.get("plotly_chart"):
        import json

        spec = json.loads(chart.proto.spec)
        for axis in ("xaxis", "xaxis2"):  # the releases' histograms: Gini values, within [0, 1]
            bounds = spec["layout"].get(axis, {}).get("range")
            title = str(spec["layout"].get(axis, {}).get("title", ""))
            if bounds and "Gini" in title:
                assert 0.0 <= bounds[0] and bounds[1] <= 1.0, (where, axis, bounds)
        for trace in spec["data"]:  # the error-vs-ε curves: errors of the published value
            if "absolute error" in str(spec["layout"].get("yaxis", {}).get("title", "")):
                assert max(_values(trace["y"])) <= 1.0, (where, trace.get("name"), max(_values(trace["y"])))


def _values(data) -> np.ndarray:
    """A plotly data array as sent to the browser: a list, or plotly's typed array {"dtype", "bdata"}."""
    if isinstance(data, dict):
        import base64

        return np.frombuffer(base64.b64decode(data["bdata"]), dtype=data["dtype"])
    return np.asarray(data, dtype=float)
