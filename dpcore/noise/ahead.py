"""Noise drawn ahead of need, in CPU time the release leaves idle.

OpenDP's exact discrete Laplace costs about 6 µs of CPU a draw whatever the scale (5 µs user, 1 µs system:
it reads the operating system's random source many times a draw). A 28,600-cell x 21-bin histogram needs
600,600 draws, 3.6 core-seconds: more than the whole scan of its 10M rows. The noise does not depend on the
data, only on the measurement (its public scale), so it can be drawn before the aggregate exists: while the
source is opened and scanned (the scan has single-threaded stretches) and its bytes are hashed.

Why a value drawn ahead gives the same release: the measurement (:func:`discrete_laplace`) adds noise to each
entry independently of the entry and of every other entry (``x_i + Z_i``, ``Z_i`` i.i.d. discrete Laplace).
``measurement(zeros)`` is a vector of such ``Z_i``; ``x + Z`` has exactly the law of ``measurement(x)``, so the
measurement's privacy map is the release's. Each value drawn ahead is handed out once
(:meth:`NoiseAhead.take` ends the reserve), and no data reaches the drawing process: it is given the public
scale only.

The drawing runs in a separate process at the lowest CPU priority (nice 19), so it takes only the idle part of
the cores: the scan and the release's own work are not slowed. A thread would not do: a low-priority thread
returning from OpenDP needs the interpreter lock, and the release's own thread, made to hand it over, waited
for the low-priority thread to be scheduled (with both cores busy, the 10M-row aggregate took 1.5 s instead of
1.1 s). The process writes raw int64 chunks to an unlinked temporary file and one byte per finished chunk to
a pipe; a take reads the finished chunks and stops the process (what is in flight is wasted: at most one
chunk). It imports OpenDP only (this file runs as a script, outside the package; not NumPy), about 0.15 s of
CPU and 43 MB. A release takes what is ready and draws the rest at once
(:func:`dpcore.noise.secure.release_integer_counts`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = [
    "AHEAD_CHUNK",
    "AHEAD_LIMIT",
    "AHEAD_MIN_SOURCE_BYTES",
    "AheadReport",
    "NoiseAhead",
    "discrete_laplace",
    "drawn_ahead",
    "take_ahead",
]

#: draws per chunk: about 50 ms of CPU, so a take wastes little of what is in flight
AHEAD_CHUNK = 8_192
#: most draws made ahead per scale (8 MB of int64): a release needing fewer wastes at most idle CPU
AHEAD_LIMIT = 1 << 20
#: smallest source (files, in bytes) whose noise is drawn ahead: the drawing process needs about 0.15 s of CPU to
#: start, more than a smaller source's whole scan (a 1M-row PSEO-like Parquet file is 13 MB, scanned in 0.15 s)
AHEAD_MIN_SOURCE_BYTES = 32 * 2**20
_ITEM = 8  # bytes of an int64

_REGISTRY: dict[float, NoiseAhead] = {}
_REGISTRY_LOCK = threading.Lock()


def discrete_laplace(dp: Any, scale: float) -> Any:
    """OpenDP's exact discrete Laplace of ``scale`` on integer vectors under the L1 distance (``dp``: the imported
    ``opendp.prelude`` with contrib enabled): the one measurement of every integer count a release publishes, drawn
    here ahead and in :func:`dpcore.noise.secure.release_integer_counts`."""
    space = dp.vector_domain(dp.atom_domain(T="i64")), dp.l1_distance(T="i64")
    return dp.m.make_laplace(*space, scale=float(scale))


class NoiseAhead:
    """Discrete Laplace noise of one public scale, drawn ahead by a low-priority process (module docstring)."""

    def __init__(self, scale: float, *, chunk: int = AHEAD_CHUNK, limit: int = AHEAD_LIMIT) -> None:
        self.scale, self.chunk = float(scale), int(chunk)
        self._lock = threading.Lock()
        self._taken = False
        self._finished = 0
        #: values handed out by :meth:`take`
        self.taken = 0
        self._proc: subprocess.Popen | None = None
        try:
            self._start(int(limit) // self.chunk)
        except OSError:  # no temporary file, pipe or process: the release draws all its noise itself
            self._taken = True

    def _start(self, chunks: int) -> None:
        self._data = tempfile.TemporaryFile()  # unlinked: nothing is left behind
        try:
            read_ready, write_ready = os.pipe()
        except OSError:
            self._data.close()
            raise
        self._ready_fd = read_ready
        try:
            os.set_blocking(read_ready, False)
            self._proc = subprocess.Popen(
                [sys.executable, "-I", __file__, self.scale.hex(), str(self.chunk), str(chunks)],
                pass_fds=(self._data.fileno(), write_ready),
                env={**os.environ, "DPCORE_AHEAD_FDS": f"{self._data.fileno()},{write_ready}"},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except OSError:
            self._close()
            raise
        finally:
            os.close(write_ready)

    def _finished_chunks(self) -> int:
        """Chunks finished so far (the pipe's bytes are read once: counted in ``self._finished``)."""
        while True:
            try:
                got = os.read(self._ready_fd, 65536)
            except BlockingIOError:
                return self._finished
            if not got:  # the process ended
                return self._finished
            self._finished += len(got)

    def ready(self) -> int:
        """How many values are drawn and waiting (0 once taken or stopped)."""
        with self._lock:
            return 0 if self._taken else self._finished_chunks() * self.chunk

    def take(self, n: int) -> Any:
        """At most ``n`` values drawn so far (an int64 array; empty when none are ready). Ends the reserve: the
        process is stopped and its file closed; a second take returns nothing."""
        import numpy as np

        with self._lock:
            if self._taken:
                return np.zeros(0, dtype=np.int64)
            self._taken = True
            self._stop_process()
            chunks = self._finished_chunks()  # after the stop: every counted chunk was written before its byte
            wanted = min(chunks * self.chunk, max(int(n), 0))
            raw = os.pread(self._data.fileno(), wanted * _ITEM, 0) if wanted else b""
            self._close()
            self.taken = len(raw) // _ITEM
        return np.frombuffer(raw, dtype=np.int64)[: self.taken].copy()

    def _stop_process(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
        if self._proc is not None:
            self._proc.wait()

    def _close(self) -> None:
        self._data.close()
        os.close(self._ready_fd)

    def stop(self) -> None:
        """End the reserve unused."""
        with self._lock:
            if not self._taken:
                self._taken = True
                self._stop_process()
                self._close()


class AheadReport:
    """What the reserves of one :func:`drawn_ahead` block handed out (read during or after the block)."""

    def __init__(self) -> None:
        self.reserves: list[NoiseAhead] = []

    @property
    def taken(self) -> int:
        """Values handed out so far, over every scale."""
        return sum(r.taken for r in self.reserves)


@contextmanager
def drawn_ahead(scales: Iterable[float]) -> Iterator[AheadReport]:
    """Within the block, draw the discrete Laplace noise of each public ``scale`` ahead (:class:`NoiseAhead`; not
    on Windows, nor in a frozen executable) and let :func:`take_ahead` hand it out; at the end, stop and drop whatever
    was not taken. Blocks nest: a scale an enclosing block draws already is not drawn twice (this block's report
    counts it, the enclosing block ends it), so the command line starts drawing as soon as it has read the plan."""
    report = AheadReport()
    started: list[float] = []
    if os.name == "posix" and not getattr(sys, "frozen", False):  # a frozen app's executable is not Python
        with _REGISTRY_LOCK:
            for scale in sorted({float(s) for s in scales}):
                if scale not in _REGISTRY:
                    _REGISTRY[scale] = NoiseAhead(scale)
                    started.append(scale)
                report.reserves.append(_REGISTRY[scale])
    try:
        yield report
    finally:
        with _REGISTRY_LOCK:
            for scale in started:
                _REGISTRY.pop(scale).stop()


def take_ahead(scale: float, n: int) -> Any:
    """Up to ``n`` values of discrete Laplace noise of ``scale`` drawn ahead (an empty int64 array when none are)."""
    with _REGISTRY_LOCK:
        reserve = _REGISTRY.get(float(scale))
    if reserve is None:
        import numpy as np

        return np.zeros(0, dtype=np.int64)
    return reserve.take(n)


def _serve(scale_hex: str, chunk: int, chunks: int) -> None:
    """The drawing process: ``chunks`` chunks of ``chunk`` draws, each written to the data file, then one byte
    to the pipe."""
    os.nice(19)  # first: even its imports use only idle CPU
    import array

    # OpenDP takes lists when NumPy is absent: without it the process holds 43 MB instead of 55 MB
    sys.modules["numpy"] = None  # type: ignore[assignment]
    import opendp.prelude as dp

    dp.enable_features("contrib")
    data_fd, ready_fd = (int(v) for v in os.environ["DPCORE_AHEAD_FDS"].split(","))
    measurement = discrete_laplace(dp, float.fromhex(scale_hex))
    zeros = [0] * chunk
    for _ in range(chunks):
        view = memoryview(array.array("q", measurement(zeros)).tobytes())
        while view:
            view = view[os.write(data_fd, view) :]
        os.write(ready_fd, b"\x01")


if __name__ == "__main__":
    _serve(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
