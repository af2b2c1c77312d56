"""A real release draws its noise beside the record fingerprint (dpcore.engines.draws.DrawAhead).

What must hold, whatever the timing: the draw is the one that followed the charge (the same mechanisms, the same
record); nothing noisy is written or used before the charge; a refusal before the charge (another population)
writes and charges nothing, however far the draw got; a failure of the draw is reported after the charge, as
when the draw followed it (charged, not delivered), so neighbouring data cannot be told apart by an uncharged
refusal; and the step-times line says where the noise went.
"""

from __future__ import annotations

import io
import threading

import numpy as np
import pandas as pd
import pytest

from dpcore import ledger as L
from dpcore import pipeline
from dpcore.engines import Progress, draws, execute, parse_source
from dpcore.engines import fingerprint as engine_fingerprint
from dpcore.plan import plan_from_dict


def _plan(dataset: str = "draw-ahead", population: str | None = None):
    raw = {
        "version": 1,
        "dataset": dataset,
        "income": "earnings",
        "cap_epsilon": 3.0,
        "cell_sizes": "public",
        "statistics": [
            {"kind": "percentiles", "epsilon": 1.0, "bins": "pseo", "q": [50], "by": ["state"]},
            {"kind": "mean", "epsilon": 0.5, "lower": 0, "upper": 500_000, "by": ["state"]},
        ],
    }
    if population is not None:
        raw["population"] = population
    return plan_from_dict(raw)


@pytest.fixture
def data(tmp_path):
    rng = np.random.default_rng(11)
    frame = pd.DataFrame(
        {"earnings": np.round(rng.lognormal(10.5, 0.8, 3000)), "state": rng.choice(["CO", "TX", "WA"], 3000)}
    )
    path = tmp_path / "data.parquet"
    frame.to_parquet(path, index=False)
    return path


def _release(plan, data, tmp_path, name: str, url: str, **kw):
    stream = io.StringIO()
    result = execute.run_plan(
        plan,
        parse_source(str(data)),
        engine="duckdb",
        out_dir=tmp_path / name,
        ledger_url=url,
        progress=Progress(stream=stream),
        **kw,
    )
    return result, stream.getvalue()


def test_the_noise_is_drawn_beside_the_fingerprint_before_the_charge_and_used_after_it(data, tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path}/ledger.db"
    events: list[tuple[str, str]] = []
    drawn = threading.Event()
    real_release = draws.released_table
    real_fingerprint = engine_fingerprint.engine_record_fingerprints
    real_charge = L.Account.charge

    def spied_release(plan, s, deferred, rng):
        events.append(("draw " + s.name, threading.current_thread().name))
        try:
            return real_release(plan, s, deferred, rng)
        finally:
            if len([e for e in events if e[0].startswith("draw")]) == 2:
                drawn.set()

    def fingerprint_after_the_draw(eng, versions):
        # the fingerprint waits for the draw: it can finish only if the draw runs beside it, not after it
        assert drawn.wait(60), "the noise was not drawn while the source was fingerprinted"
        events.append(("fingerprint", threading.current_thread().name))
        return real_fingerprint(eng, versions)

    def spied_charge(self, *args, **kwargs):
        events.append(("charge", threading.current_thread().name))
        return real_charge(self, *args, **kwargs)

    monkeypatch.setattr(draws, "released_table", spied_release)
    monkeypatch.setattr(execute, "engine_record_fingerprints", fingerprint_after_the_draw)
    monkeypatch.setattr(L.Account, "charge", spied_charge)
    result, progress = _release(_plan(), data, tmp_path, "out", url, init_ledger=True)
    names = [e[0] for e in events]
    stats = [s.name for s in _plan().statistics]
    assert names == [f"draw {stats[0]}", f"draw {stats[1]}", "fingerprint", "charge"]
    assert {e[1] for e in events if e[0].startswith("draw")} == {"dpcore-noise-ahead"}
    # the same release as a draw after the charge: the record's mechanisms and the tables' columns
    percentiles_info, mean_info = result.record["statistics"]
    assert "make_laplace" in percentiles_info["measurement"] and "make_laplace" in mean_info["measurement"]
    assert result.record["ledger"]["entry_id"] == 1
    assert sorted(result.tables) == sorted(stats)
    (line,) = [x for x in progress.splitlines() if "step times:" in x]
    assert "beside the fingerprint" in line and "noise " in line
    assert "charging the plan (before any noisy value is used)" in progress


def test_a_refusal_before_the_charge_writes_and_charges_nothing_though_the_noise_was_drawn(data, tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path}/ledger.db"
    db = L.init_ledger(url)
    db.register_population("households", 3.0)
    db.register_population("others", 3.0)
    _release(_plan("a", "households"), data, tmp_path, "one", url)
    drawn = threading.Event()
    real_release = draws.released_table

    def noted(*args):
        try:
            return real_release(*args)
        finally:
            drawn.set()

    real_fingerprint = engine_fingerprint.engine_record_fingerprints

    def fingerprint_after_a_draw(eng, versions):
        assert drawn.wait(60)
        return real_fingerprint(eng, versions)

    monkeypatch.setattr(draws, "released_table", noted)
    monkeypatch.setattr(execute, "engine_record_fingerprints", fingerprint_after_a_draw)
    monkeypatch.setattr(execute, "source_bytes_key", lambda source: None)  # fingerprint the records again
    with pytest.raises(L.PopulationError, match="already belong to the population 'households'"):
        _release(_plan("b", "others"), data, tmp_path, "two", url)
    assert not (tmp_path / "two").exists() or list((tmp_path / "two").iterdir()) == []
    assert db.population("others").spent_epsilon() == 0.0
    assert db.population("households").spent_epsilon() == pytest.approx(1.5)


def test_a_failed_draw_is_reported_after_the_charge_as_before(data, tmp_path, monkeypatch):
    """Were a failed draw raised before the charge, a data set whose draw fails would be refused uncharged
    and its neighbour released: the failure waits for the charge (charged, not delivered)."""
    url = f"sqlite:///{tmp_path}/ledger.db"

    def broken(plan, s, deferred, rng):
        raise FloatingPointError("the sampler failed")

    monkeypatch.setattr(draws, "released_table", broken)
    with pytest.raises(pipeline.ReleaseNotDelivered, match="was charged.*the sampler failed"):
        _release(_plan(), data, tmp_path, "out", url, init_ledger=True)
    acct = L.open_ledger(url, create=False).find_account("draw-ahead")
    assert acct.spent_epsilon() == pytest.approx(1.5)
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []
