"""Generate a PSEO-like earnings table in Parquet (synthetic; never committed).

Cells: 650 institutions x 11 degree levels x 4 cohorts = 28,600 (the size of the PSEO earnings table);
every institution lies in one of 50 states. Columns:

* ``person_id`` (int64): about 1.6 rows per person (jobs / quarters), for ``privacy_unit`` plans;
* ``institution`` (int32), ``state`` (string, "S01".."S50"), ``degree_level`` (int8, 1..11),
  ``cohort`` (int16, 2001/2004/2007/2010);
* ``earnings`` (float64, whole dollars): log-normal around PSEO's LN(11.003, 0.753^2) with a cell effect,
  about 1% zeros.

Institution sizes are skewed (Zipf-like), so cells range from a handful of rows to tens of thousands.
Written in chunks (``--chunk`` rows, default 5M) as ``part-00000.parquet`` ... into ``--out`` (default
``artifacts/pseo_like_<rows>``; ``artifacts/`` is gitignored), so memory stays bounded by one chunk.

Run: .venv/bin/python benchmarks/make_pseo_like.py --rows 10000000 [--out DIR] [--seed 0]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
N_INSTITUTIONS, N_DEGREES, N_COHORTS, N_STATES = 650, 11, 4, 50
COHORTS = np.array([2001, 2004, 2007, 2010], dtype=np.int16)


def generate(rows: int, out: Path, *, seed: int = 0, chunk: int = 5_000_000) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("part-*.parquet"):
        old.unlink()
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, N_INSTITUTIONS + 1) ** 0.8
    weights /= weights.sum()
    inst_state = rng.integers(0, N_STATES, N_INSTITUTIONS)
    state_names = np.array([f"S{i + 1:02d}" for i in range(N_STATES)])
    inst_effect = rng.normal(0.0, 0.15, N_INSTITUTIONS)
    degree_effect = np.linspace(-0.3, 0.6, N_DEGREES)
    written, part = 0, 0
    person_offset = 0
    while written < rows:
        n = min(chunk, rows - written)
        inst = rng.choice(N_INSTITUTIONS, size=n, p=weights).astype(np.int32)
        degree = rng.integers(1, N_DEGREES + 1, n).astype(np.int8)
        cohort = COHORTS[rng.integers(0, N_COHORTS, n)]
        log_mu = 11.003 + inst_effect[inst] + degree_effect[degree - 1] + 0.02 * (cohort - 2001)
        earnings = np.round(np.exp(log_mu + 0.753 * rng.standard_normal(n)))
        earnings[rng.random(n) < 0.01] = 0.0
        persons = person_offset + rng.integers(0, max(1, int(n / 1.6)), n)
        person_offset += max(1, int(n / 1.6))
        table = pa.table(
            {
                "person_id": pa.array(persons.astype(np.int64)),
                "institution": pa.array(inst),
                "state": pa.DictionaryArray.from_arrays(
                    pa.array(inst_state[inst].astype(np.int32)), pa.array(state_names)
                ),
                "degree_level": pa.array(degree),
                "cohort": pa.array(cohort),
                "earnings": pa.array(earnings),
            }
        )
        pq.write_table(table, out / f"part-{part:05d}.parquet", row_group_size=1_000_000)
        written += n
        part += 1
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--chunk", type=int, default=5_000_000)
    args = ap.parse_args()
    out = args.out or ROOT / "artifacts" / f"pseo_like_{args.rows}"
    t0 = time.perf_counter()
    generate(args.rows, out, seed=args.seed, chunk=args.chunk)
    size = sum(p.stat().st_size for p in out.glob("*.parquet"))
    print(f"wrote {args.rows:,} rows to {out} ({size / 1e6:.0f} MB) in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
