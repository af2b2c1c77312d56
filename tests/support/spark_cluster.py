"""A throw-away Spark standalone cluster for tests: a master and one worker started with pyspark's own
``bin/spark-class`` (no Spark download: the jars of the pip package), in a temp dir, on free local ports.

``spark_cluster(tmp_dir)`` is a context manager yielding a :class:`SparkCluster` (its ``spark://`` URL and
the environment a driver needs to use it), or raising ``SparkClusterUnavailable`` with a reason (pyspark or
Java missing, a daemon would not start); test fixtures turn that into ``pytest.skip(reason)``.

Kept small for a 2-core machine: one worker with one core and 512 MB, daemons of 256 MB on the JVM's quick
JIT tier and one-thread collector (the cluster's few small jobs end before C2's compilations pay off), one
shuffle partition. Everything listens on 127.0.0.1; the master's REST submission server (a fixed port,
6066, which parallel test processes would fight over) is off, the web UIs take a free port each. The
worker runs without the test's ``PYTHONPATH``, as a node that has never seen this checkout: the driver
must ship dpcore itself. Both daemons are stopped (SIGTERM, then SIGKILL) at the end.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SparkCluster", "SparkClusterUnavailable", "find_spark_home", "spark_cluster"]

#: the JVM options of every process of the test cluster (daemons, driver, executor): the quick JIT tier and
#: the serial collector (tests/test_engines.py's local Spark: the queries end before C2 pays off)
QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

#: the driver's Spark settings (``spark-defaults.conf`` in ``SPARK_CONF_DIR``, read by the ``spark-submit``
#: that pyspark runs to start the driver's JVM): an executor that fits the worker, one shuffle partition
DRIVER_DEFAULTS = {
    "spark.executor.memory": "512m",
    "spark.executor.cores": "1",
    "spark.cores.max": "1",
    "spark.driver.memory": "512m",
    "spark.driver.extraJavaOptions": QUICK_JVM,
    "spark.executor.extraJavaOptions": QUICK_JVM,
    "spark.sql.shuffle.partitions": "1",
    "spark.default.parallelism": "1",
    "spark.shuffle.compress": "false",
    "spark.rdd.compress": "false",
}


class SparkClusterUnavailable(RuntimeError):
    """The test Spark cluster cannot run here (the message says why)."""


@dataclass(frozen=True)
class SparkCluster:
    """A running test cluster: ``master_url`` (``spark://127.0.0.1:<port>``) and ``driver_env``, the variables
    a driver process adds to its environment (``SPARK_CONF_DIR`` with ``spark-defaults.conf``,
    ``SPARK_LOCAL_IP``); ``logs`` names the daemons' log files (for a failure's message)."""

    master_url: str
    driver_env: Mapping[str, str]
    logs: tuple[Path, ...]

    def log_tails(self, chars: int = 1500) -> str:
        return "\n".join(f"--- {p.name}:\n{_tail(p, chars)}" for p in self.logs)


def find_spark_home() -> Path | None:
    """The directory of the installed pyspark package when it holds ``bin/spark-class`` and its jars."""
    spec = importlib.util.find_spec("pyspark")  # found, not imported
    if spec is None or spec.origin is None:
        return None
    home = Path(spec.origin).parent
    if os.access(home / "bin" / "spark-class", os.X_OK) and (home / "jars").is_dir():
        return home
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _tail(path: Path, chars: int) -> str:
    try:
        return path.read_text(errors="replace")[-chars:].strip()
    except OSError:
        return "(no log)"


def _wait_for(proc: subprocess.Popen, log: Path, marker: str, what: str, deadline: float) -> None:
    """Until ``marker`` appears in ``log``; raise when the daemon exits or the deadline passes."""
    while True:
        if marker in _tail(log, 1_000_000):
            return
        if proc.poll() is not None:
            raise SparkClusterUnavailable(f"the Spark {what} exited ({proc.returncode}): {_tail(log, 800)}")
        if time.monotonic() > deadline:
            raise SparkClusterUnavailable(f"the Spark {what} did not start in time: {_tail(log, 800)}")
        time.sleep(0.2)


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM (the worker's shutdown hook also ends its executors), then SIGKILL after 30 s."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=30)


@contextlib.contextmanager
def spark_cluster(base_dir: str | os.PathLike | None = None, *, start_timeout: float = 180) -> Iterator[SparkCluster]:
    """Start a master and one worker (1 core, 512 MB); yield the :class:`SparkCluster`; stop both."""
    home = find_spark_home()
    if home is None:
        raise SparkClusterUnavailable("pyspark (with its bin/spark-class and jars) is not installed")
    java_home = os.environ.get("JAVA_HOME")
    if not (java_home and (Path(java_home) / "bin" / "java").exists()) and shutil.which("java") is None:
        raise SparkClusterUnavailable("no Java runtime (Debian's default-jre-headless; .ci/run installs it)")
    tmp = Path(tempfile.mkdtemp(prefix="dpcore-spark-", dir=base_dir))
    conf_dir, work_dir, local_dir = tmp / "conf", tmp / "work", tmp / "local"
    for d in (conf_dir, work_dir, local_dir):
        d.mkdir()
    (conf_dir / "spark-defaults.conf").write_text("".join(f"{k} {v}\n" for k, v in DRIVER_DEFAULTS.items()))
    base_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_CONF_DIR")}
    daemon_env = {
        **base_env,
        "SPARK_HOME": str(home),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOCAL_DIRS": str(local_dir),
        "SPARK_DAEMON_MEMORY": "256m",
        "SPARK_DAEMON_JAVA_OPTS": f"{QUICK_JVM} -Dspark.master.rest.enabled=false",
    }
    spark_class = str(home / "bin" / "spark-class")
    master_log, worker_log = tmp / "master.log", tmp / "worker.log"
    procs: list[subprocess.Popen] = []

    def launch(args: list[str], log: Path) -> subprocess.Popen:
        with open(log, "wb") as out:  # spark-class execs the daemon's JVM: the Popen is the JVM
            proc = subprocess.Popen(
                [spark_class, *args], stdout=out, stderr=subprocess.STDOUT, env=daemon_env, cwd=str(tmp)
            )
        procs.append(proc)
        return proc

    try:
        deadline = time.monotonic() + start_timeout
        port = _free_port()
        try:
            master = launch(
                [
                    "org.apache.spark.deploy.master.Master",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--webui-port",
                    "0",
                ],
                master_log,
            )
            _wait_for(master, master_log, "I have been elected leader", "master", deadline)
            url = f"spark://127.0.0.1:{port}"
            worker = launch(
                [
                    "org.apache.spark.deploy.worker.Worker",
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    "1",
                    "--memory",
                    "512m",
                    "--work-dir",
                    str(work_dir),
                    "--webui-port",
                    "0",
                    url,
                ],
                worker_log,
            )
            _wait_for(worker, worker_log, "Successfully registered with master", "worker", deadline)
        except OSError as exc:
            raise SparkClusterUnavailable(f"spark-class could not be run: {exc}") from None
        yield SparkCluster(
            master_url=url,
            driver_env={"SPARK_CONF_DIR": str(conf_dir), "SPARK_LOCAL_IP": "127.0.0.1"},
            logs=(master_log, worker_log),
        )
    finally:
        for proc in reversed(procs):  # the worker first: the master would otherwise log its loss
            _stop(proc)
        shutil.rmtree(tmp, ignore_errors=True)
