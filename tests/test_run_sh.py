"""`bash run.sh check PLAN.toml` (README shows `dpcore check`): run.sh passes `check` (and `ledger`) on to
`python -m dpcore` inside the project's venv, from the caller's directory, as it does `release`."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from dpcore import plan as plan_module

ROOT = Path(__file__).resolve().parents[1]


def _venv_without_installs(tmp: Path) -> Path:
    """A venv whose python is this interpreter and whose install stamp is present (nothing is installed)."""
    venv = tmp / "venv"
    (venv / "bin").mkdir(parents=True, exist_ok=True)
    wrapper = venv / "bin" / "python"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    wrapper.chmod(0o755)
    digest = hashlib.sha1((ROOT / "requirements.txt").read_bytes() + (ROOT / "requirements-dev.txt").read_bytes())
    (venv / f".installed-app-{digest.hexdigest()[:12]}").touch()
    return venv


def _run_sh(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(ROOT / "run.sh"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp,
        env={**os.environ, "VENV": str(_venv_without_installs(tmp))},
    )


def test_run_sh_check_validates_a_plan_from_the_callers_directory(tmp_path):
    (tmp_path / "plan.toml").write_text(plan_module.EXAMPLE_PLAN)
    proc = _run_sh(tmp_path, "check", "plan.toml")  # a path relative to where run.sh was called
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("plan OK: dataset"), proc.stdout
    bad = _run_sh(tmp_path, "check", "no_such_plan.toml")
    assert bad.returncode != 0 and "Traceback" not in bad.stderr and "no_such_plan.toml" in bad.stderr


def test_run_sh_names_every_mode_in_its_usage(tmp_path):
    proc = _run_sh(tmp_path, "no-such-mode")
    assert proc.returncode == 2
    assert "release|check|ledger" in proc.stderr
