"""The README is the front door: short, every link resolves, its picture exists and its code runs."""

from __future__ import annotations

import re

from quality_support import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_is_a_front_door_not_a_log():
    # details live in docs/ (benchmarks, API, privacy in full); the README says what it is and how to start
    assert len(README) <= 12_000, f"README.md has {len(README)} characters; move details into docs/"
    assert "PRIVACY_PARAGRAPH" not in README


def test_every_relative_link_and_picture_of_the_readme_exists():
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    local = [t for t in targets if "://" not in t]
    assert "docs/img/gini_page.png" in local
    missing = [t for t in local if not (REPO_ROOT / t).exists()]
    assert not missing, f"README links to files that do not exist: {missing}"


def test_the_readme_python_example_runs():
    blocks = re.findall(r"```python\n(.*?)```", README, flags=re.S)
    assert blocks, "the README shows a Python example"
    for block in blocks:
        namespace: dict = {}
        exec(compile(block, "README.md", "exec"), namespace)  # the project's own README
