"""Tests of dpcore.release: the secure samplers, ledger charging and refusal, records without true values."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dpcore
from dpcore import budget as B
from dpcore import ledger as L
from dpcore import planner as P
from dpcore import release as R
from dpcore.ledger import accounts as ledger_accounts
from dpcore.ledger.backends import sqlite as sqlite_backend
from dpcore.validation import DPInputError


@pytest.fixture(scope="module")
def data():
    gen = np.random.default_rng(77)
    x = gen.lognormal(10.5, 0.9, 3000)
    g = gen.choice(np.array(["north", "south"]), x.size)
    return x, g


def _stats(data):
    x, g = data
    return [
        P.CountAbove(x, 50_000),
        P.ClippedMean(x, 0, 400_000),
        P.GroupMeans(x, g, 0, 400_000),
        P.RatioStatistic(120, 80, 1500, 1500),
        P.PercentilesStatistic([x[:1500], x[1500:]], n_sims=200),
        P.GiniStatistic(x, 0, 1_000_000),
    ]


def test_release_charges_ledger_and_records_fields(data, release_account):
    stats = _stats(data)
    recs = R.make_release([(s, 1.0) for s in stats], release_account)
    assert release_account.spent_epsilon() == pytest.approx(6.0)
    assert len(release_account.entries()) == 1  # one transaction for the whole release
    for s, r in zip(stats, recs, strict=True):
        assert r.labels == s.labels and len(r.released) == len(s.labels)
        assert np.all(np.isfinite(r.released))
        assert r.epsilon == 1.0 and r.delta == 0.0 and r.timestamp and r.software == f"dpcore {dpcore.__version__}"
        assert r.sampler == R.OPENDP_SAMPLER
    doc = json.loads(R.records_to_json(recs, release_account))
    assert doc["dpcore_version"] == dpcore.__version__
    assert doc["epsilon_spent_by_this_release"] == pytest.approx(6.0)
    assert {"statistic", "released", "mechanism", "parameters", "epsilon", "delta", "timestamp"} <= set(
        doc["releases"][0]
    )
    csv = R.records_to_csv(recs)
    assert csv.count("\n") == 1 + sum(len(r.labels) for r in recs)


def test_released_values_csv_carries_each_interval(data):
    """The CSV of the released values gives each value's interval (lower, upper, level), as the JSON record and the
    release card do; a value released without one has empty ends."""
    import io

    import pandas as pd

    recs = R.simulate_release([(s, 1.0) for s in _stats(data)], rng=3, level=0.9)
    table = pd.read_csv(io.StringIO(R.records_to_csv(recs)))
    assert list(table.columns)[:6] == ["statistic", "label", "released_value", "lower", "upper", "level"]
    rows = iter(table.itertuples(index=False))
    with_intervals = 0
    for r in recs:
        for value, lower, upper in zip(
            r.released,
            r.released_lower or [None] * len(r.released),
            r.released_upper or [None] * len(r.released),
            strict=True,
        ):
            row = next(rows)
            assert row.released_value == float(value)
            if lower is None:
                assert np.isnan(row.lower) and np.isnan(row.upper) and np.isnan(row.level)
            else:
                assert (row.lower, row.upper, row.level) == (float(lower), float(upper), 0.9)
                with_intervals += 1
    assert with_intervals > 0


def test_release_uses_opendp_measurements(data, release_account):
    # real releases draw their noise from OpenDP (counts: discrete Laplace; ratio: float-safe Laplace)
    x, _ = data
    stats = [(P.CountAbove(x, 50_000), 1.0), (P.RatioStatistic(120, 80, 1500, 1500), 1.0)]
    recs = R.make_release(stats, release_account)
    assert all(r.sampler == R.OPENDP_SAMPLER for r in recs)
    assert all("opendp.measurements.make_laplace" in r.measurement for r in recs)
    assert all("map(" in r.privacy_map and r.to_dict()["privacy_map"] == r.privacy_map for r in recs)


def test_release_never_contains_true_values(data, release_account):
    x, g = data
    stats = _stats(data)
    recs = R.make_release([(s, 2.0) for s in stats], release_account)
    # a noisy value may coincide with the truth by chance (geometric noise is 0 with probability ~0.76 at
    # eps = 2), so search everything except the released numbers themselves
    doc = json.loads(R.records_to_json(recs))
    for r in doc["releases"]:
        for dp_output in ("released", "released_lower", "released_upper", "published_inputs"):
            r.pop(dp_output)  # DP outputs: a published interval may contain the truth's digits (it should)
    text = json.dumps(doc)
    for s in stats:
        for t in np.atleast_1d(s.truth):
            for fmt in (repr(float(t)), f"{t:.6f}", f"{t:.2f}"):
                assert fmt not in text, (s.name, fmt)
    assert repr(float(x.mean())) not in text


def test_an_in_memory_budget_or_a_home_made_statistic_is_refused_before_anything_is_drawn(data, release_account):
    """A real release is paid from a durable ledger account and draws through the registered mechanisms only: an
    in-memory budget, an object with a ``release()`` method of its own and a subclass of a planned statistic (it
    could draw otherwise) are refused, nothing charged, nothing drawn."""
    x, _ = data
    drawn = []

    class HomeMade:
        name, kind, labels, mechanism = "home-made", "count", ("n",), "its own"

        def release(self, epsilon, rng=None):
            drawn.append(1)
            return np.array([1.0])

        def privacy_cost(self, epsilon):
            return B.pure(epsilon)

        def params(self):
            return {}

    class Subclass(P.CountAbove):
        def _draw(self, epsilon, rng=None, level=0.95, *, drawer=None):
            drawn.append(1)
            return super()._draw(epsilon, rng, level, drawer=drawer)

    with pytest.raises(TypeError, match="durable"):
        R.make_release([(P.CountAbove(x, 50_000), 0.5)], B.Ledger(cap=B.BudgetCap(epsilon=1.0)))
    for stat in (HomeMade(), Subclass(x, 50_000)):
        with pytest.raises(TypeError, match="draw through the registered mechanisms.*nothing was charged"):
            R.make_release([(stat, 0.5)], release_account)
    assert drawn == [] and release_account.entries() == []


def test_rounding_grid_applied(data):
    x, _ = data
    rec = R.simulate_release([(P.ClippedMean(x, 0, 400_000), 1.0)], rng=np.random.default_rng(1))[0]
    v = rec.released[0]
    assert abs(v * 100 - round(v * 100)) < 1e-6
    assert "NOT for real releases" in rec.sampler and rec.ledger_entry_id is None


def test_seeded_release_matches_method_module(data):
    """With a seeded generator the simulated release equals the method module's own output (same mechanism)."""
    from dpcore import stratified

    x, _ = data
    rec = R.simulate_release([(P.ClippedMean(x, 0, 400_000), 1.0)], rng=np.random.default_rng(5))[0]
    direct = stratified.clipped_laplace_mean(x, epsilon=1.0, clip_range=(0, 400_000), rng=np.random.default_rng(5))
    # the published value has honest digits: within half a step (<= width/40) of the method module's draw
    half_step = (rec.released_upper[0] - rec.released_lower[0]) / 40
    assert abs(rec.released[0] - direct.value) <= half_step + 0.01
    assert rec.released_lower[0] <= rec.released[0] <= rec.released_upper[0] and rec.interval_level == 0.95


def test_bad_inputs(data, release_account):
    x, _ = data
    with pytest.raises(DPInputError):
        R.make_release([], release_account)
    with pytest.raises(DPInputError):
        R.make_release([(P.CountAbove(x, 1.0), 0.0)], release_account)
    with pytest.raises(TypeError):
        R.make_release([(P.CountAbove(x, 1.0), 1.0)], None)
    with pytest.raises(DPInputError):
        R.simulate_release([], rng=1)
    assert release_account.entries() == []


def test_records_type_checks():
    with pytest.raises(TypeError):
        R.records_to_json("abc")
    with pytest.raises(TypeError):
        R.records_to_csv([1, 2])


# ---- the durable ledger (dpcore.ledger accounts) ------------------------------------------------------


@pytest.fixture
def account(tmp_path):
    db = L.open_ledger(f"sqlite:///{tmp_path}/ledger.db")
    return db.account("fingerprint-of-test-data", cap_epsilon=3.0, label="test data")


def test_release_with_account_charges_once_and_records_identity(data, account):
    x, g = data
    stats = [P.CountAbove(x, 50_000), P.ClippedMean(x, 0, 400_000), P.GroupMeans(x, g, 0, 400_000)]
    recs = R.make_release(
        [(s, 0.5) for s in stats],
        account,
        dataset={"income_column": "income", "group_column": "region", "n": int(x.size)},
    )
    entries = account.entries()
    assert len(entries) == 1  # one transaction for the whole release
    entry = entries[0]
    assert entry.cost == B.pure(1.5) and account.spent_epsilon() == pytest.approx(1.5)
    assert all(r.ledger_entry_id == entry.id for r in recs)
    for r in recs:
        assert r.dataset == {
            "ledger_account": account.public_id,
            "label": "test data",
            "income_column": "income",
            "group_column": "region",
            "n": x.size,
        }
        assert r.software == f"dpcore {dpcore.__version__}" and r.mechanism and r.epsilon == 0.5
        assert r.measurement and r.privacy_map  # the sampler's measurement and privacy map reach the record
        assert r.to_dict()["measurement"] == r.measurement
    # the record written WITH the charge has everything public but no released number
    planned = entry.record
    assert planned["dataset"]["ledger_account"] == account.public_id
    assert [s["statistic"] for s in planned["statistics"]] == [s.name for s in stats]
    assert planned["total_cost"] == B.pure(1.5).to_dict() and planned["software"] == f"dpcore {dpcore.__version__}"
    assert "released" not in json.dumps(planned)
    # the released records were appended to the entry before being returned
    assert entry.result == {"records": [r.to_dict() for r in recs]}
    text = R.records_to_json(recs, account)
    doc = json.loads(text)
    assert doc["dataset"]["ledger_account"] == account.public_id
    assert doc["ledger"]["spent_epsilon"] == pytest.approx(1.5) and doc["ledger"]["cap_epsilon"] == 3.0


def test_account_release_n_defaults_from_the_statistics(data, account):
    x, _ = data
    rec = R.make_release([(P.CountAbove(x, 50_000), 0.5)], account)[0]
    assert rec.dataset["n"] == x.size and rec.dataset["ledger_account"] == account.public_id


def test_records_never_contain_the_content_fingerprint(data, tmp_path):
    """The dataset fingerprint is a hash of the confidential file (not a DP output): with all records but
    one known, hashing candidates would confirm the last. Records carry the account's keyed public id."""
    import hashlib

    x, g = data
    content = b"income\n" + "\n".join(f"{v:.2f}" for v in x).encode()
    fingerprint = L.dataset_fingerprint(content, "income")
    db = L.open_ledger(f"sqlite:///{tmp_path}/l.db")
    acct = db.account(fingerprint, cap_epsilon=5.0, label="file.csv")
    recs = R.make_release(
        [(P.CountAbove(x, 50_000), 1.0), (P.GroupMeans(x, g, 0, 400_000), 1.0)],
        acct,
        dataset={"income_column": "income", "n": int(x.size)},
    )
    published = R.records_to_json(recs, acct) + R.records_to_csv(recs) + json.dumps([r.to_dict() for r in recs])
    for secret in (fingerprint, fingerprint[:16], hashlib.sha256(content).hexdigest()[:16]):
        assert secret not in published
    assert acct.public_id in published and len(acct.public_id) == 32
    # the public id is stable for the account, differs between accounts and between ledgers (random key)
    assert db.find_account(fingerprint).public_id == acct.public_id
    assert db.account("other", cap_epsilon=1.0).public_id != acct.public_id
    other_ledger = L.open_ledger(f"sqlite:///{tmp_path}/other.db").account(fingerprint, cap_epsilon=5.0)
    assert other_ledger.public_id != acct.public_id
    assert L.open_ledger(f"sqlite:///{tmp_path}/l.db").find_account(fingerprint).public_id == acct.public_id


def test_account_charged_before_any_noise_is_drawn(data, account, tmp_path):
    """When the mechanism runs, the charge is already committed (seen from another connection)."""
    x, _ = data
    seen = []
    orig = P.CountAbove._draw

    def spy(self, eps, *args, **kw):
        other = L.open_ledger(f"sqlite:///{tmp_path}/ledger.db").find_account(account.dataset_id)
        seen.append(other.spent_epsilon())
        return orig(self, eps, *args, **kw)

    P.CountAbove._draw = spy
    try:
        R.make_release([(P.CountAbove(x, 50_000), 0.75)], account)
    finally:
        P.CountAbove._draw = orig
    assert seen == [0.75]


def test_account_refusal_before_charge_and_noise(data, account, monkeypatch):
    x, _ = data
    account.charge("earlier", epsilon=2.75)
    called = []
    real_draw = P.CountAbove._draw
    monkeypatch.setattr(
        P.CountAbove, "_draw", lambda self, eps, *a, **kw: called.append(1) or real_draw(self, eps, *a, **kw)
    )
    with pytest.raises(L.BudgetExceeded, match="Nothing was charged or released"):
        R.make_release([(P.CountAbove(x, 50_000), 0.25), (P.CountAbove(x, 10_000), 0.25)], account)
    assert not called and len(account.entries()) == 1 and account.spent_epsilon() == pytest.approx(2.75)
    # exactly at the cap is allowed
    R.make_release([(P.CountAbove(x, 50_000), 0.25)], account)
    assert account.spent_epsilon() == pytest.approx(3.0)


def test_account_failure_after_charge_keeps_charge_without_result(data, account, monkeypatch):
    x, _ = data

    def boom(self, eps, *args, **kw):
        raise DPInputError("sampler broke")

    monkeypatch.setattr(P.ClippedMean, "_draw", boom)
    with pytest.raises(DPInputError, match="charge stands.*sampler broke"):
        R.make_release([(P.CountAbove(x, 50_000), 0.5), (P.ClippedMean(x, 0, 1e5), 0.5)], account)
    (entry,) = account.entries()
    assert entry.cost == B.pure(1.0) and entry.result is None  # charged, never revealed


def test_account_release_bad_dataset_argument(data, account):
    x, _ = data
    with pytest.raises(TypeError):
        R.make_release([(P.CountAbove(x, 1.0), 1.0)], account, dataset="income")
    with pytest.raises(TypeError):
        R.make_release([P.CountAbove(x, 1.0)], account)
    assert account.entries() == []


def test_account_result_the_ledger_cannot_record_is_journaled_and_said_in_the_records(data, tmp_path, monkeypatch):
    """After the noise is drawn another connection holds the ledger's write lock (short lock timeout and
    retries): the result mark is journaled beside the ledger and each record's last note says so; the next
    open of the ledger records it."""
    import sqlite3

    x, _ = data
    monkeypatch.setattr(sqlite_backend, "BUSY_TIMEOUT_S", 0.2)  # before the connection is opened: it keeps its timeout
    monkeypatch.setattr(ledger_accounts, "ATTACH_RETRY_DELAYS_S", (0.05,))
    url = f"sqlite:///{tmp_path}/ledger.db"
    acct = L.open_ledger(url).account("fingerprint-of-test-data", cap_epsilon=3.0, label="test data")
    holder = sqlite3.connect(str(tmp_path / "ledger.db"), isolation_level=None)
    orig = P.CountAbove._draw

    def draw_then_lock(self, eps, *args, **kw):
        values = orig(self, eps, *args, **kw)
        holder.execute("BEGIN IMMEDIATE")
        return values

    monkeypatch.setattr(P.CountAbove, "_draw", draw_then_lock)
    try:
        (rec,) = R.make_release([(P.CountAbove(x, 50_000), 0.5)], acct)
    finally:
        holder.close()
    assert rec.notes[-1].startswith("ledger: ") and "journaled at" in rec.notes[-1]
    assert (tmp_path / "ledger.db.pending.jsonl").exists()
    (entry,) = L.open_ledger(url, create=False).find_account("fingerprint-of-test-data").entries()
    assert entry.result["records"][0]["released"] == list(rec.released)


def test_a_percentile_cell_without_rows_is_released_and_marked_revealed(release_account):
    """A cell with no row has no interval: its ends are null in the JSON record (JSON has no NaN), so the ledger
    keeps the released records; the release used to fail after its charge (epsilon spent, nothing released)."""
    stat = P.PercentilesStatistic((np.array([]), np.array([30_000.0, 45_000.0])), n_sims=100)
    (rec,) = R.make_release([(stat, 1.0)], release_account)
    (entry,) = release_account.entries()
    assert entry.result == {"records": [rec.to_dict()]} and not rec.notes
    assert np.isnan(rec.released_upper[0]) and rec.to_dict()["released_upper"][0] is None
    assert json.loads(R.records_to_json([rec]))["releases"][0]["released_lower"][0] is None
