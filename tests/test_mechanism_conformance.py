"""One conformance test over every registered mechanism (dpcore.mechanisms.REGISTRY), as scikit-learn's
check_estimator runs one set of checks over every estimator.

For each kind (and each variant that changes its sampler: the Gini's two noises, declared or selected cells):

* it is a ``Mechanism`` (the protocol), frozen, equal to a twin built from the same public parameters, and only
  registered classes are accepted for a real release (a subclass or a look-alike is refused);
* its cost is what OpenDP's privacy map (or the certified sampler's certificate) gives for a real draw: never
  less, and at most the calibration's precision more;
* its real draws (OpenDP / the certified sampler) and its simulated draws (numpy, seeded) follow one law: a
  two-sample test (Kolmogorov-Smirnov, or chi-square on a contingency table for integer outputs) whose tolerance
  comes from the two sample sizes, at the p-value threshold P_MIN of the samplers' own tests;
* every output is on the public grid and in the statistic's public range, real or simulated;
* its record feeds the published interval of its values (dpcore.published) and names the noise for the card.

A kind registered without a case here fails ``test_every_registered_kind_has_a_case``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpcore import mechanisms
from dpcore.mechanisms import (
    REGISTRY,
    CellSizesMechanism,
    CountMechanism,
    ExponentialQuantileMechanism,
    GiniIntervalMechanism,
    GiniMechanism,
    HistogramMechanism,
    MeanMechanism,
    Mechanism,
    RelativeRiskMechanism,
    RiskSchema,
    SnapshotMechanism,
    SnapshotSchema,
    check_registered,
)
from dpcore.mechanisms.snapshot import ConfidentialTables
from dpcore.percentiles import PSEO_BIN_EDGES
from dpcore.published import published_table

#: p-value threshold of every two-sample test (the samplers' goodness-of-fit tests use the same)
P_MIN = 1e-6
#: the tight calibrations certify the loss to this relative precision below the charged epsilon
CALIBRATION_PRECISION = 1e-3


@dataclass
class Case:
    """One mechanism with example confidential inputs, and how to read and check its draws."""

    mechanism: Any
    inputs: tuple
    #: the noisy numbers whose law the real and the simulated draws must share
    samples: Callable[[Any], np.ndarray]
    #: raises when an output is off the grid or out of range
    check: Callable[[Any], None]
    #: real draws to make (each gives many samples when the mechanism draws a vector)
    real_draws: int = 1
    discrete: bool = False
    #: the published table of a draw, for mechanisms whose values carry an interval
    table: Callable[[Any], pd.DataFrame] | None = None
    kwargs: dict = field(default_factory=dict)


def _integers(values: Any) -> np.ndarray:
    x = np.asarray(values)
    assert x.dtype.kind in "iu" or np.all(x == np.round(x)), "integer outputs"
    return x


# ---------------------------------------------------------------------------------------------
# The cases: one builder per registered kind (variants in a list)
# ---------------------------------------------------------------------------------------------


def _count() -> list[Case]:
    n = 20_000

    def check(d: Any) -> None:
        c = _integers(d.counts)
        assert c.min() >= 0 and c.max() <= 100

    return [
        Case(
            CountMechanism(0.5),
            (np.full(n, 40),),
            lambda d: np.asarray(d.counts),
            check,
            discrete=True,
            kwargs={"upper": np.full(n, 100)},
            table=lambda d: pd.DataFrame({"count": d.counts, "n": 100}),
        )
    ]


def _cell_sizes() -> list[Case]:
    n = 20_000
    keys = [(f"c{i}",) for i in range(n)]
    declared = CellSizesMechanism(1.0, 1, select=False)
    selected = CellSizesMechanism(1.0, 1, select=True, selection_delta=1e-10)
    threshold = selected.threshold

    def check_declared(d: Any) -> None:
        assert set(d.counts) == set(keys)
        _integers(list(d.counts.values()))

    def check_selected(d: Any) -> None:
        assert set(d.counts) <= set(keys)
        assert all(v >= threshold for v in d.counts.values()), "only cells at or above the threshold are listed"
        _integers(list(d.counts.values()) or [0])

    return [
        Case(
            declared,
            (keys, np.full(n, 10)),
            lambda d: np.asarray(list(d.counts.values())),
            check_declared,
            discrete=True,
        ),
        Case(
            selected,
            (keys, np.full(n, threshold)),
            lambda d: np.asarray(list(d.counts.values())),
            check_selected,
            discrete=True,
        ),
    ]


def _histogram() -> list[Case]:
    cells, bins = 500, len(PSEO_BIN_EDGES) - 1
    counts = np.full((cells, bins), 30)
    mech = HistogramMechanism(1.0, PSEO_BIN_EDGES, (25, 50, 75))

    def check(d: Any) -> None:
        _integers(d.noisy_counts)
        p = np.asarray(d.percentiles)
        assert np.all((p >= PSEO_BIN_EDGES[0]) & (p <= PSEO_BIN_EDGES[-1]))

    def table(d: Any) -> pd.DataFrame:
        out = pd.DataFrame({"n": counts.sum(axis=1)})
        for j, q in enumerate(mech.q):
            out[f"p{q:g}"] = d.percentiles[:, j]
        for j in range(bins):
            out[f"noisy_bin_{j + 1:02d}"] = d.noisy_counts[:, j]
        return out

    return [Case(mech, (counts,), lambda d: np.ravel(d.noisy_counts - counts), check, discrete=True, table=table)]


def _exponential_quantile() -> list[Case]:
    grid = (0.0, 10.0, 20.0, 30.0, 40.0, 50.0)
    counts = np.tile([3, 2, 1, 2, 2], (1_000, 1))
    mech = ExponentialQuantileMechanism(1.0, grid, q=(50,))

    def check(d: Any) -> None:
        assert np.isin(np.asarray(d.percentiles), grid).all(), "a choice is one of the public candidates"

    return [Case(mech, (counts,), lambda d: np.ravel(d.choices), check, discrete=True)]


def _mean() -> list[Case]:
    cells, n = 10_000, 100
    mech = MeanMechanism(1.0, 0.0, 1e5)
    sums = np.full(cells, 50_000 * 100 * n, dtype=float)  # a mean of $50,000 in cents: far from the clip bounds

    def check(d: Any) -> None:
        m = np.asarray(d.means)
        assert np.all((m >= 0.0) & (m <= 1e5))

    return [
        Case(
            mech,
            (sums, np.full(cells, n)),
            lambda d: np.asarray(d.means),
            check,
            table=lambda d: pd.DataFrame({"n": np.full(cells, n), "mean": d.means}),
        )
    ]


def _relative_risk() -> list[Case]:
    cells = 10_000
    x, nx = np.full(cells, 500), np.full(cells, 10_000)
    mech = RelativeRiskMechanism(1.0)

    def check(d: Any) -> None:
        assert np.all((d.cases_exposed >= 0) & (d.cases_exposed <= nx))
        assert np.all((d.cases_reference >= 0) & (d.cases_reference <= nx))
        assert np.all(d.relative_risk >= 0)

    def table(d: Any) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "n_exposed": nx,
                "n_reference": nx,
                "cases_exposed": d.cases_exposed,
                "cases_reference": d.cases_reference,
                "relative_risk": d.relative_risk,
            }
        )

    samples = lambda d: np.concatenate([d.cases_exposed, d.cases_reference])
    return [Case(mech, (x, x, nx, nx), samples, check, table=table)]


def _gini_check(d: Any) -> None:
    assert 0.0 <= d.value <= 1.0
    assert d.value == round(d.value, 6), "on the 1e-6 grid"


def _gini() -> list[Case]:
    # S_beta(X) = 0.002: the noise scale S/alpha is about 0.003 (well inside [0, 1] around the Gini 0.4)
    cauchy = GiniMechanism(1.0, 0.0, 1e5)
    laplace = GiniMechanism(1.0, 0.0, 1e5, noise="laplace", delta=1e-6)
    return [
        # the certified sampler takes about 30 ms a draw (192-bit arithmetic): fewer draws, a coarser test
        Case(cauchy, (0.4, 0.002), lambda d: np.array([d.value]), _gini_check, real_draws=60),
        Case(laplace, (0.4, 0.002), lambda d: np.array([d.value]), _gini_check, real_draws=400),
    ]


def _gini_interval() -> list[Case]:
    mech = GiniIntervalMechanism(1.0, 0.0, 1e5, noise="laplace", delta=1e-6)

    def check(d: Any) -> None:
        _gini_check(d)
        assert d.smooth_sensitivity_upper > 0

    def table(d: Any) -> pd.DataFrame:
        return pd.DataFrame({"gini": [d.value], "smooth_sensitivity_bound": [d.smooth_sensitivity_upper]})

    # the bound's law (ln S_hat = ln S + Laplace + margin): the value's is the Gini mechanism's, tested above
    return [
        Case(mech, (0.4, 0.002), lambda d: np.array([math.log(d.smooth_sensitivity_upper)]), check, 300, table=table)
    ]


def _snapshot() -> list[Case]:
    cells = tuple(f"c{i}" for i in range(300))
    schema = SnapshotSchema(upper=1e6, cells=cells, risk=RiskSchema("a", "b", outcome_below=2e4), planning_epsilon=1.0)
    bins = schema.edges.size - 1
    hist = np.full((len(cells), bins), 30, dtype=np.int64)
    tables = ConfidentialTables(hist, hist.sum(axis=1), np.full((len(cells), 2, 2), 40, dtype=np.int64))

    def samples(d: Any) -> np.ndarray:
        return np.concatenate(
            [
                np.ravel(d.noisy_histogram - tables.confidential_histogram),
                np.ravel(d.noisy_sizes - tables.confidential_sizes),
                np.ravel(d.noisy_risk - tables.confidential_risk),
            ]
        )

    def check(d: Any) -> None:
        _integers(d.noisy_histogram)
        assert _integers(d.noisy_sizes).min() >= 0 and _integers(d.noisy_risk).min() >= 0

    return [Case(SnapshotMechanism(schema), (tables,), samples, check, discrete=True)]


CASES: dict[str, Callable[[], list[Case]]] = {
    "count": _count,
    "cell_sizes": _cell_sizes,
    "histogram": _histogram,
    "exponential_quantile": _exponential_quantile,
    "mean": _mean,
    "relative_risk": _relative_risk,
    "gini": _gini,
    "gini_interval": _gini_interval,
    "snapshot": _snapshot,
}


@functools.cache
def _all_cases() -> tuple[list[Case], list[str]]:
    """Every case, built once for the module: each test function gets the same Case objects, so the real draws
    kept by :func:`_draws` (keyed by the case) are made once per case and shared by the checks."""
    params, ids = [], []
    for kind, build in CASES.items():
        for i, case in enumerate(build()):
            params.append(case)
            ids.append(f"{kind}-{i}")
    return params, ids


def pytest_generate_tests(metafunc):
    if "case" in metafunc.fixturenames:
        params, ids = _all_cases()
        metafunc.parametrize("case", params, ids=ids)


_REAL: dict[int, list[Any]] = {}


def _draws(case: Case, rng: Any) -> list[Any]:
    """``real_draws`` draws: real (rng None; made once per case, the checks share them) or simulated from one
    seeded Generator."""
    if rng is None and id(case) in _REAL:
        return _REAL[id(case)]
    gen = None if rng is None else np.random.default_rng(rng)
    out = [case.mechanism.draw(*case.inputs, rng=gen, **case.kwargs) for _ in range(case.real_draws)]
    if rng is None:
        _REAL[id(case)] = out
    return out


# ---------------------------------------------------------------------------------------------
# The checks
# ---------------------------------------------------------------------------------------------


def test_every_registered_kind_has_a_case():
    assert set(REGISTRY) == set(CASES)
    for kind, build in CASES.items():
        assert all(type(case.mechanism) is REGISTRY[kind] for case in build())


def test_protocol_public_parameters_and_registration(case):
    mech = case.mechanism
    assert isinstance(mech, Mechanism)
    assert mech.kind in REGISTRY and REGISTRY[mech.kind] is type(mech)
    fields = {f.name: getattr(mech, f.name) for f in dataclasses.fields(mech)}
    twin = type(mech)(**fields)
    assert twin == mech and hash(twin) == hash(mech)
    with pytest.raises(dataclasses.FrozenInstanceError):
        mech.epsilon = 2.0  # type: ignore[misc]
    record = mech.record()
    json.dumps(record)  # a record is plain public data
    assert check_registered(mech) is mech

    subclass = type("Impostor", (type(mech),), {"draw": lambda self, *a, **k: None})
    with pytest.raises(TypeError, match="registered mechanism"):
        check_registered(subclass(**fields))

    class LookAlike:  # every attribute of the protocol, but not a registered mechanism
        kind, epsilon, interval_kind = mech.kind, 1.0, None

        def privacy_cost(self):
            return mech.privacy_cost()

        def record(self):
            return {}

        def draw(self, *a, rng=None):
            return None

        def certified_epsilon(self, draw):
            return 1.0

    assert isinstance(LookAlike(), Mechanism)
    with pytest.raises(TypeError, match="registered mechanism"):
        check_registered(LookAlike())


def test_cost_is_the_privacy_map_or_the_certificate(case):
    mech = case.mechanism
    draw = _draws(case, None)[0]
    assert not draw.simulated and "simulation" not in draw.measurement
    charged = mech.privacy_cost().epsilon
    certified = mech.certified_epsilon(draw)
    assert certified <= charged * (1 + 1e-9), "the charge covers what the map or the certificate gives"
    assert certified >= charged * (1 - CALIBRATION_PRECISION), "and is not more than the calibration needs"


def test_draws_say_what_drew_them(case):
    """A real and a simulated draw name their sampler and privacy map and say which they are; every kind but the
    Gini's (value and bound: its own fields) carries them as :class:`dpcore.mechanisms.DrawProvenance`."""
    real = _draws(case, None)[0]
    simulated = case.mechanism.draw(*case.inputs, rng=np.random.default_rng(7), **case.kwargs)
    assert real.simulated is False and simulated.simulated is True
    if case.mechanism.kind not in ("gini", "gini_interval"):
        for draw in (real, simulated):
            assert isinstance(draw, mechanisms.DrawProvenance)
            assert draw.measurement and draw.privacy_map


def test_real_and_simulated_draws_follow_one_law(case):
    real_draws = _draws(case, None)
    assert not any(d.simulated for d in real_draws)
    real = np.concatenate([case.samples(d) for d in real_draws]).astype(float)
    # a mechanism drawn one value at a time is simulated more often than it is drawn for real (numpy is cheap)
    more = dataclasses.replace(case, real_draws=max(case.real_draws, 2_000)) if case.real_draws > 1 else case
    sim = np.concatenate([case.samples(d) for d in _draws(more, 7)]).astype(float)
    if case.discrete:
        values = np.union1d(real, sim)
        table = np.array([[np.sum(real == v) for v in values], [np.sum(sim == v) for v in values]], dtype=float)
        table = _pool_rare_columns(table)
        p = stats.chi2_contingency(table).pvalue if table.shape[1] > 1 else 1.0
    else:
        p = stats.ks_2samp(real, sim).pvalue
    assert p > P_MIN, f"real and simulated draws differ (p = {p:.3g}, {real.size} and {sim.size} samples)"


def _pool_rare_columns(table: np.ndarray) -> np.ndarray:
    """Merge neighbouring columns until every expected count is at least 5 (what the chi-square test needs)."""
    expected = table.sum(axis=0) * table.sum(axis=1, keepdims=True) / table.sum()
    out, acc, acc_e = [], np.zeros(2), 0.0
    for j in range(table.shape[1]):
        acc = acc + table[:, j]
        acc_e = acc_e + expected[:, j].min()
        if acc_e >= 5:
            out.append(acc)
            acc, acc_e = np.zeros(2), 0.0
    if out:
        out[-1] = out[-1] + acc
    else:
        out.append(acc)
    return np.array(out).T


def test_outputs_on_the_grid_and_in_range(case):
    for draw in _draws(case, None)[:1] + _draws(dataclasses.replace(case, real_draws=1), 3):
        case.check(draw)


def test_record_feeds_the_published_interval_and_the_card(case):
    mech = case.mechanism
    record = mech.record()
    assert isinstance(record.get("noise") or record.get("n_noise"), str), "the card names the noise"
    if mech.interval_kind is None:
        assert case.table is None
        return
    draw = mech.draw(*case.inputs, rng=5, **case.kwargs)
    out = published_table(mech.interval_kind, case.table(draw), record, 0.95)
    lows = [c for c in out.columns if c.endswith("_lower")]
    assert lows, "the published table has intervals"
    for low in lows:
        value, high = low[: -len("_lower")], low[: -len("_lower")] + "_upper"
        ok = np.isfinite(out[low])
        assert ok.any()
        assert np.all(out[low][ok] <= out[value][ok]) and np.all(out[value][ok] <= out[high][ok])


def test_the_registry_is_the_package_front_door():
    for kind, cls in REGISTRY.items():
        assert getattr(mechanisms, cls.__name__) is cls, kind
        assert cls.__name__ in mechanisms.__all__
