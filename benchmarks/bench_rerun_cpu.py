"""Server CPU per slider rerun, every page at its defaults, on a real `streamlit run` (prints a table).

One fresh server; for each page one browser-like session (benchmarks/bench_load.py's client) opens
the page, then moves the page's main ε slider ``--reruns`` times (random values, seeded) with
nothing else running against that server. For every rerun we read the server process's user+system
CPU time from /proc before sending the message and after ``script_finished`` arrives: that is the
CPU the rerun cost the server (script + serialisation + hashing + websocket writes), independent
of the machine's load (unlike wall time, which is also shown). /proc counts CPU in 10 ms ticks:
the mean over the reruns (total CPU / reruns) is the precise figure, the median is tick-rounded. The first load is shown separately
(imports and cold caches). Target (docs/CONVENTIONS.md): median server CPU per slider rerun <= 50 ms per page.

On a shared machine the per-rerun CPU varies with the load (cache and core contention): ``--rounds N``
repeats the whole measurement on N fresh servers (same seeded moves each round) and pools the reruns, so the
median and mean rest on N x reruns moves; the table also gives the spread of the per-round means.

Run: .venv/bin/python benchmarks/bench_rerun_cpu.py [--reruns 15] [--rounds 1] [--pages gini,planner]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "benchmarks")]

from bench_load import Session, app_pages, pick_slider, start_server

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def cpu_seconds_precise(pid: int) -> float:
    """The process's user+system CPU (clock ticks, 10 ms). Per-thread schedstat would be finer but
    misses threads that already exited, and Streamlit runs each script run in a fresh thread."""
    return cpu_seconds(pid)


async def measure_page(base: str, pid: int, page: str, reruns: int) -> dict:
    ws = base.replace("http", "ws", 1) + "/_stcore/stream"
    session = Session(base, ws, page)
    await session.open()
    try:
        c0, t0 = cpu_seconds_precise(pid), time.perf_counter()
        _, sliders, exceptions = await session.rerun()
        first = (cpu_seconds_precise(pid) - c0, time.perf_counter() - t0)
        slider = pick_slider(sliders)
        if slider is None:
            return {"page": page, "error": "no slider"}
        cpu, wall = [], []
        for _ in range(reruns):
            await asyncio.sleep(0.05)  # let the server finish writing the previous answer
            session.move(slider)
            c0, t0 = cpu_seconds_precise(pid), time.perf_counter()
            dt, sliders, exc = await session.rerun(slider.fragment_id)
            await asyncio.sleep(0.02)
            cpu.append(cpu_seconds_precise(pid) - c0)
            wall.append(dt)
            exceptions += exc
            slider = next((s for s in sliders if s.widget_id == slider.widget_id), slider)
        return {
            "page": page or "(default)",
            "slider": slider.label,
            "fragment": bool(slider.fragment_id),
            "first_cpu": first[0],
            "first_wall": first[1],
            "cpu_med": statistics.median(cpu),
            "cpu_max": max(cpu),
            "cpu_mean": sum(cpu) / len(cpu),
            "wall_med": statistics.median(wall),
            "wall_max": max(wall),
            "exceptions": exceptions,
            "cpu": cpu,
            "wall": wall,
        }
    finally:
        await session.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reruns", type=int, default=15)
    ap.add_argument("--pages", default="all")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=1, help="fresh servers, same moves; the reruns are pooled")
    args = ap.parse_args()
    pages = app_pages() if args.pages == "all" else [p.strip() for p in args.pages.split(",")]
    rounds: list[list[dict]] = []
    loads = []
    for _ in range(max(1, args.rounds)):
        random.seed(args.seed)  # every round makes the same moves
        loads.append(os.getloadavg()[0])
        with start_server("app") as srv:
            pid = srv.pids()[0]
            rounds.append([asyncio.run(measure_page(srv.url, pid, page, args.reruns)) for page in pages])
        for r in rounds[-1]:
            print({k: v for k, v in r.items() if k not in ("cpu", "wall")}, flush=True)
    rows = [_pooled([one[i] for one in rounds]) for i in range(len(pages))]
    print(
        f"\nServer CPU per slider rerun (one user, defaults, {args.reruns} reruns per page x {len(rounds)} round(s); "
        f"load average {', '.join(f'{load:.2f}' for load in loads)} at the start of each round, "
        f"{os.getloadavg()[0]:.2f} at the end; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})"
    )
    print(
        "| page | slider moved | in fragment | first load CPU / wall s | rerun CPU mean / median / max ms | "
        "rerun wall median / max ms | exceptions |"
    )
    print("| --- | --- | --- | --- | ---: | ---: | ---: |")
    for r in rows:
        if "error" in r:
            print(f"| {r['page']} | {r['error']} |")
            continue
        print(
            f"| {r['page']} | {r['slider'][:40]} | {'yes' if r['fragment'] else 'no'} | "
            f"{r['first_cpu']:.2f} / {r['first_wall']:.2f} | {1000 * r['cpu_mean']:.0f} / {1000 * r['cpu_med']:.0f} / {1000 * r['cpu_max']:.0f} | "
            f"{1000 * r['wall_med']:.0f} / {1000 * r['wall_max']:.0f} | {r['exceptions']} |"
        )
    if len(rounds) > 1:
        print(
            "\nPer-round mean CPU per rerun (ms): "
            + "; ".join(
                f"{r['page']} " + " / ".join(f"{1000 * m:.0f}" for m in r["round_means"])
                for r in rows
                if "error" not in r
            )
        )


def _pooled(results: list[dict]) -> dict:
    """One page's rounds as one row: reruns pooled (median, mean, max), first load from the first round."""
    if any("error" in r for r in results):
        return next(r for r in results if "error" in r)
    cpu = [c for r in results for c in r["cpu"]]
    wall = [w for r in results for w in r["wall"]]
    return {
        **results[0],
        "cpu_med": statistics.median(cpu),
        "cpu_mean": sum(cpu) / len(cpu),
        "cpu_max": max(cpu),
        "wall_med": statistics.median(wall),
        "wall_max": max(wall),
        "exceptions": sum(r["exceptions"] for r in results),
        "round_means": [r["cpu_mean"] for r in results],
    }


if __name__ == "__main__":
    main()
