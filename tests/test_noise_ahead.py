"""Discrete Laplace noise drawn ahead by a low-priority process (dpcore.noise.ahead).

What must hold: the values drawn ahead follow OpenDP's discrete Laplace law of the public scale (a chi-square
test against the exact pmf); a release inside the block takes them, and its measurement, privacy map and epsilon
are the ones of the release drawn without them; each value is handed out once; the drawing process is told the
public scale only; the process ends when the reserve is taken or dropped; the sum saturates as OpenDP's does.
"""

from __future__ import annotations

import contextlib
import os
import time

import numpy as np
import pytest
from scipy import stats

from dpcore.noise import ahead as noise_ahead
from dpcore.noise import secure

_ROOT = str(__import__("pathlib").Path(__file__).resolve().parent.parent)

pytestmark = pytest.mark.skipif(os.name != "posix", reason="noise is drawn ahead on POSIX systems only")


def _wait_ready(reserve: noise_ahead.NoiseAhead, n: int, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while reserve.ready() < n:
        if time.monotonic() > end:
            pytest.fail(f"the drawing process made {reserve.ready()} of {n} values in {timeout:.0f} s")
        time.sleep(0.05)


def _discrete_laplace_pmf(k: np.ndarray, scale: float) -> np.ndarray:
    a = np.exp(-1.0 / scale)
    return (1 - a) / (1 + a) * a ** np.abs(k)


def _chi_square_p(values: np.ndarray, scale: float) -> float:
    """p-value of a chi-square goodness of fit to the discrete Laplace pmf (tails pooled to >= 5 expected)."""
    n = values.size
    edge = 1
    while n * _discrete_laplace_pmf(np.array([edge + 1]), scale)[0] >= 5:
        edge += 1
    inner = np.arange(-edge, edge + 1)
    expected = n * _discrete_laplace_pmf(inner, scale)
    tail = (n - expected.sum()) / 2
    observed = np.array([np.sum(values < -edge), *[np.sum(values == k) for k in inner], np.sum(values > edge)])
    return float(stats.chisquare(observed, np.array([tail, *expected, tail])).pvalue)


@pytest.mark.parametrize("scale", [2.0, 0.7])
def test_values_drawn_ahead_follow_the_discrete_laplace_law(scale):
    reserve = noise_ahead.NoiseAhead(scale, chunk=4096, limit=40_960)
    _wait_ready(reserve, 40_960)
    values = reserve.take(10**6)
    assert values.dtype == np.int64 and values.size == 40_960
    assert _chi_square_p(values, scale) > 1e-4


def test_a_release_inside_the_block_takes_the_reserve_and_keeps_its_measurement():
    counts = np.arange(50_000, dtype=np.int64) % 97
    outside = secure.release_integer_counts(counts, scale=2.0, sensitivity=2)
    with secure.integer_noise_ahead([2.0, 2.0]):
        reserve = noise_ahead._REGISTRY[2.0]
        _wait_ready(reserve, 8192)
        inside = secure.release_integer_counts(counts, scale=2.0, sensitivity=2)
        assert reserve.ready() == 0, "the release took the reserve"
        assert noise_ahead.take_ahead(2.0, 10) is not None and noise_ahead.take_ahead(2.0, 10).size == 0, (
            "a value drawn ahead is handed out once"
        )
    assert noise_ahead._REGISTRY == {}, "the block ends the reserve"
    assert (inside.measurement, inside.privacy_map, inside.epsilon, inside.simulated) == (
        outside.measurement,
        outside.privacy_map,
        outside.epsilon,
        outside.simulated,
    )
    assert _chi_square_p(inside.values - counts, 2.0) > 1e-4


def test_the_drawing_process_gets_the_public_scale_only_and_ends():
    reserve = noise_ahead.NoiseAhead(1.25, chunk=1024, limit=4096)
    proc = reserve._proc
    assert proc is not None
    args = proc.args[2:]
    assert args == [noise_ahead.__file__, (1.25).hex(), "1024", "4"], "the scale, the chunk and the count: nothing else"
    reserve.stop()
    assert proc.poll() is not None, "stopped with the reserve"
    assert reserve.take(10).size == 0 and reserve.ready() == 0


def test_a_reserve_taken_before_anything_is_ready_gives_nothing_and_the_release_draws_all():
    with secure.integer_noise_ahead([3.0]):
        draw = secure.release_integer_counts(np.zeros(3, dtype=np.int64), scale=3.0, sensitivity=1)
    assert draw.values.size == 3 and draw.epsilon == pytest.approx(1 / 3)


def test_the_sum_saturates_like_opendp():
    info = np.iinfo(np.int64)
    counts = np.array([2**62, -(2**62), 5, 0], dtype=np.int64)
    noise = np.array([info.max - 10, info.min + 10, -7, info.max], dtype=np.int64)
    assert secure._saturating_add(counts, noise).tolist() == [info.max, info.min, -2, info.max]


def _recording(init, started, callers=None):
    """``NoiseAhead.__init__`` that records each scale (and, with ``callers``, the functions on the stack)."""

    def wrapped(self, scale, **kw):
        started.append(scale)
        if callers is not None:
            import inspect

            callers.append({frame.function for frame in inspect.stack()})
        init(self, scale, **kw)

    return wrapped


def test_outside_a_block_nothing_is_taken():
    assert noise_ahead.take_ahead(2.0, 100).size == 0


def test_a_command_line_release_ends_its_reserve(tmp_path, monkeypatch):
    import io

    import pandas as pd

    from dpcore.engines import Progress, execute, parse_source
    from dpcore.plan import plan_from_dict

    rng = np.random.default_rng(5)
    frame = pd.DataFrame(
        {"earnings": np.round(rng.lognormal(10.5, 0.8, 2000)), "state": rng.choice(["CO", "TX"], 2000)}
    )
    frame.to_parquet(tmp_path / "d.parquet", index=False)
    plan = plan_from_dict(
        {
            "version": 1,
            "dataset": "ahead",
            "income": "earnings",
            "cap_epsilon": 2.0,
            "cell_sizes": "public",
            "statistics": [{"kind": "percentiles", "epsilon": 1.0, "bins": "pseo", "q": [50], "by": ["state"]}],
        }
    )
    assert not execute._worth_drawing_ahead(parse_source(str(tmp_path / "d.parquet"))), "a small file: no reserve"
    monkeypatch.setattr(execute, "AHEAD_MIN_SOURCE_BYTES", 0)
    started = []
    monkeypatch.setattr(noise_ahead.NoiseAhead, "__init__", _recording(noise_ahead.NoiseAhead.__init__, started))
    stream = io.StringIO()
    result = execute.run_plan(
        plan,
        parse_source(str(tmp_path / "d.parquet")),
        engine="duckdb",
        out_dir=tmp_path / "out",
        ledger_url=f"sqlite:///{tmp_path / 'l.db'}",
        init_ledger=True,
        progress=Progress(stream=stream),
    )
    assert started == [2.0], "one reserve, at the histogram's public scale 2m/epsilon"
    assert noise_ahead._REGISTRY == {}, "the release ended its reserve"
    stat = result.record["statistics"][0]
    assert "make_laplace(vector_domain(atom_domain(T=i64))" in stat["measurement"]
    assert stat["map_epsilon"] == pytest.approx(1.0)
    assert "step times:" in stream.getvalue()


def test_no_temporary_file_means_no_reserve_and_a_normal_release(monkeypatch, tmp_path):
    def no_file(*args, **kw):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(noise_ahead.tempfile, "TemporaryFile", no_file)
    with secure.integer_noise_ahead([2.0]) as report:
        draw = secure.release_integer_counts(np.zeros(5, dtype=np.int64), scale=2.0, sensitivity=2)
    assert draw.values.size == 5 and report.taken == 0


def test_blocks_nest_one_reserve_per_scale_ended_by_the_outer_block():
    with noise_ahead.drawn_ahead([2.0]) as outer:
        reserve = noise_ahead._REGISTRY[2.0]
        with noise_ahead.drawn_ahead([2.0, 3.0]) as inner:
            assert noise_ahead._REGISTRY[2.0] is reserve, "a scale already drawn is not drawn twice"
            assert [r.scale for r in inner.reserves] == [2.0, 3.0], "the inner report counts the outer reserve"
            _wait_ready(reserve, 1)
            taken = noise_ahead.take_ahead(2.0, 5)
        assert taken.size == 5 and inner.taken == 5 and outer.taken == 5
        assert 3.0 not in noise_ahead._REGISTRY, "the inner block ended the reserve it started"
        assert 2.0 in noise_ahead._REGISTRY, "and not the outer one"
    assert noise_ahead._REGISTRY == {}


def _write_plan(path, *, epsilon: float = 1.0) -> None:
    path.write_text(
        'version = 1\ndataset = "early"\nincome = "earnings"\ncap_epsilon = 4.0\ncell_sizes = "public"\n'
        f'[[statistics]]\nkind = "percentiles"\nepsilon = {epsilon}\nbins = "pseo"\nq = [50]\nby = ["state"]\n'
    )


def test_the_command_line_reads_the_plan_and_draws_before_its_engines(tmp_path, monkeypatch):
    """A real release of a large source starts the reserve at the plan's histogram scale before the engines are
    imported; a simulation, a small source or a plan that does not load start nothing (the error is said later,
    in the usual order of the checks)."""
    from dpcore import cli

    _write_plan(tmp_path / "plan.toml", epsilon=0.5)
    data = tmp_path / "d.parquet"
    data.write_bytes(b"x" * 1000)
    args = cli.build_parser().parse_args(_args(tmp_path, data))
    plan, block = cli._noise_drawn_from_the_start(args)
    assert plan is None and isinstance(block, contextlib.nullcontext), "a small file: nothing early"
    monkeypatch.setattr(noise_ahead, "AHEAD_MIN_SOURCE_BYTES", 1000)
    plan, block = cli._noise_drawn_from_the_start(args)
    assert plan is not None and plan.histogram_noise_scales() == [4.0], "2m/epsilon"
    with block as report:
        assert [r.scale for r in report.reserves] == [4.0]
    assert noise_ahead._REGISTRY == {}
    simulation = cli.build_parser().parse_args([*_args(tmp_path, data), "--seed", "1", "--public-data"])
    assert cli._noise_drawn_from_the_start(simulation)[0] is None, "a simulation draws numpy noise: no reserve"
    (tmp_path / "plan.toml").write_text("version = 1\n[[statistics]]\nkind = 'nonsense'\n")
    assert cli._noise_drawn_from_the_start(args)[0] is None, "a broken plan: refused later, with its message"


def _args(tmp_path, data) -> list[str]:
    return ["release", str(tmp_path / "plan.toml"), "--data", str(data), "--out", "o"]


def test_reading_a_plan_imports_no_pandas():
    """The early start is worth it only if reading the plan is light (pandas alone takes about 0.2 s)."""
    import subprocess
    import sys

    code = (
        "import sys, tempfile, pathlib\n"
        "from dpcore.plan import parse_plan\n"
        "p = parse_plan('version = 1\\ndataset = \"d\"\\nincome = \"x\"\\ncap_epsilon = 2.0\\ncell_sizes = \"public\"\\n"
        "[[statistics]]\\nkind = \"percentiles\"\\nepsilon = 1.0\\nbins = \"pseo\"\\nq = [50]\\nby = [\"s\"]\\n')\n"
        "p.histogram_noise_scales()\n"
        "print(sorted(m for m in ('pandas', 'pyarrow', 'duckdb', 'scipy') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=_ROOT)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_the_command_line_exits_with_its_code_after_the_atexit_handlers():
    import subprocess
    import sys

    code = (
        "import atexit, sys\n"
        "from concurrent.futures import ThreadPoolExecutor\n"
        "from dpcore.cli import exit_after_command\n"
        "pool = ThreadPoolExecutor(2)\n"  # kept by a library, never shut down: stopped as at a normal exit
        "pool.submit(print, 'pool', end=' ').result()\n"
        "atexit.register(lambda: print('atexit ran', flush=False))\n"
        "print('said', end=' ')\n"
        "sys.stderr.write('err')\n"
        "exit_after_command(3)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=_ROOT, timeout=60)
    assert out.returncode == 3
    assert out.stdout == "pool said atexit ran\n" and out.stderr == "err"


def test_a_command_line_release_with_its_reserve_started_before_the_engines(tmp_path, monkeypatch, capsys):
    """The whole command, in this process: the reserve started from the plan alone is the one the release takes
    from (one reserve, at the histogram's scale), the record's measurement is OpenDP's, and nothing is left
    running after the command."""
    import pandas as pd

    from dpcore import cli
    from dpcore.engines import execute

    rng = np.random.default_rng(9)
    pd.DataFrame(
        {"earnings": np.round(rng.lognormal(10.5, 0.8, 3000)), "state": rng.choice(["CO", "TX", "UT"], 3000)}
    ).to_parquet(tmp_path / "d.parquet", index=False)
    _write_plan(tmp_path / "plan.toml", epsilon=1.0)
    monkeypatch.setattr(noise_ahead, "AHEAD_MIN_SOURCE_BYTES", 0)  # the command line's glance: a large source
    monkeypatch.setattr(execute, "AHEAD_MIN_SOURCE_BYTES", 0)
    started, callers = [], []
    monkeypatch.setattr(
        noise_ahead.NoiseAhead, "__init__", _recording(noise_ahead.NoiseAhead.__init__, started, callers)
    )
    code = cli.main(
        [
            "release",
            str(tmp_path / "plan.toml"),
            "--data",
            str(tmp_path / "d.parquet"),
            "--out",
            str(tmp_path / "out"),
            "--ledger",
            f"sqlite:///{tmp_path / 'l.db'}",
            "--init-ledger",
            "--quiet",
        ]
    )
    assert code == 0, capsys.readouterr().err
    assert started == [2.0], "one reserve, at the histogram's scale"
    assert "run_plan" not in callers[0], "started from the plan alone, before the release ran"
    assert noise_ahead._REGISTRY == {}
    import json

    record = json.loads((tmp_path / "out" / "release_record.json").read_text())
    stat = record["statistics"][0]
    assert "make_laplace(vector_domain(atom_domain(T=i64))" in stat["measurement"]
    assert stat["map_epsilon"] == pytest.approx(1.0)
