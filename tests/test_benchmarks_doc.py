"""The writers of docs/benchmarks.md: each measure is one block between its markers, with the machine and the
date; a writer replaces only its own blocks, so run_all.py and bench_peers.py never erase each other's figures
nor the hand-written history. Fake results only: no benchmark runs here."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "benchmarks") not in sys.path:
    sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_peers
import run_all

FACTS = {
    "date": "2030-01-02 03:04 UTC",
    "cpu": "Test CPU 9000",
    "cores": "2",
    "ram": "24 GB",
    "os": "Linux 6.1",
    "python": "3.11.7",
    "load": "0.4",
}
PRINTED = """
Slider change latency per page (AppTest rerun, default settings; target median < 0.2 s, worst < 0.5 s)
| page | median s | worst s |
|------|----------|---------|
| Gini | 0.100 | 0.200 |
"""
HISTORY = "# Benchmarks\n\nHand-written history: 8.2 s on a quiet day.\n"


def _tables(block: str) -> int:
    """Markdown tables in ``block`` (a header line followed by a separator line)."""
    lines = block.splitlines()
    return sum(
        1
        for a, b in zip(lines, lines[1:], strict=False)
        if a.startswith("|") and re.fullmatch(r"\|[\s:|-]+\|", b.strip())
    )


def test_run_all_block_has_machine_date_and_one_table():
    block = run_all.doc_block("Slider change per page", PRINTED, FACTS, extra="numpy 2.4")
    assert block.startswith("### Slider change per page")
    assert "Measured 2030-01-02 03:04 UTC on Test CPU 9000, 2 cores, 24 GB RAM" in block
    assert "load average at start 0.4" in block and "numpy 2.4" in block
    assert "target median < 0.2 s" in block  # the printed caption stays with its table
    assert _tables(block) == 1


def test_writers_replace_only_their_own_blocks(tmp_path):
    doc = tmp_path / "benchmarks.md"
    doc.write_text(HISTORY)
    run_all.write_doc({"run_all:pages": "old pages", "run_all:startup": "old startup"}, path=doc)
    run_all.write_doc({"bench_peers": "peers table"}, path=doc, writer="benchmarks/bench_peers.py --write-doc")
    run_all.write_doc({"run_all:pages": run_all.doc_block("Slider change per page", PRINTED, FACTS)}, path=doc)
    text = doc.read_text()
    assert text.startswith(HISTORY)  # hand-written content untouched
    assert "old pages" not in text and "Test CPU 9000" in text  # re-run measure replaced
    assert "old startup" in text  # measure not re-run: kept as its table's source
    assert "peers table" in text  # the other writer's block survives
    for name in ("run_all:pages", "run_all:startup", "bench_peers"):
        assert text.count(f"<!-- begin {name};") == 1 and text.count(f"<!-- end {name} -->") == 1


def _run(tool: str, workload: str, wall: float, status: str = "ok", rows: int = 10_000_000) -> dict:
    return {
        "tool": tool,
        "workload": workload,
        "rows": rows,
        "wall_s": wall,
        "peak_rss_mb": 500.0,
        "status": status,
        "run": 0,
        "load_before": 0.5,
    }


def test_peers_section_one_table_per_workload_with_machine_and_versions():
    runs = [
        _run("dpcore", "hist", 8.0),
        _run("dpcore", "hist", 9.0),
        _run("duckdb", "hist", 2.0),
        _run("tumult", "hist", 600.5, status="stopped"),
        _run("dpcore", "mean", 1.5),
        _run("duckdb", "mean", 0.5),
        _run("dpcore", "hist-large", 12.0, rows=100_000_000),
    ]
    payload = {
        "facts": FACTS,
        "load_end": 1.0,
        "runs": runs,
        "command": "python benchmarks/bench_peers.py",
        "versions": {"dpcore": "dpcore 0.1.0", "duckdb": "DuckDB 2.0.1", "tumult": "tmlt.analytics 0.21.0"},
        "config": {"epsilon": 1.0, "timeout": 600.0, "slow_after": 120.0},
    }
    section = bench_peers.doc_section(payload)
    assert "Measured 2030-01-02 03:04 UTC on Test CPU 9000, 2 cores, 24 GB RAM" in section
    assert "Load average at the end 1.0" in section
    assert _tables(section) == 3
    assert "#### 10M rows: 28,600 cells" in section and "#### 100M rows: 28,600 cells" in section
    assert "| 8.5 s (8.0–9.0) |" in section and "| 4.2× |" in section  # median of two runs, / bare scan
    assert "> 600 s (stopped) | 500 MB (at stop) | 0/1 | > 300× |" in section
    assert "tmlt.analytics 0.21.0" in section
    assert "Load average (1 min) before the runs: 0.5–0.5." in section
