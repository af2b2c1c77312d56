"""House rule: comments and docstrings say why (the paper, the proof, the measured reason), never which
ticket asked for the change; that history belongs in commit messages and CHANGELOG.md. A ticket number
in the code goes stale and sends the reader to a tracker instead of to the reason."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHECKED_DIRS = ("dpcore", "ui", "app_pages", "tests", "benchmarks", "deploy")
CHECKED_FILES = ("app.py", "run.sh")
# the word, an optional space and '#', then digits; a journal's "Special Issue 2" in a citation is the
# paper (the why), not a ticket
TICKET = re.compile(r"(?i)(?<!special )\bissue ?#?\d+")


def _tracked_files() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "-z", "--", *CHECKED_DIRS, *CHECKED_FILES], cwd=ROOT, capture_output=True, check=True
    ).stdout
    return [ROOT / name for name in out.decode("utf-8").split("\0") if name]


def test_no_ticket_numbers_in_code_comments_or_tests():
    files = _tracked_files()
    assert files, "git ls-files found no files (not run from a git work tree?)"
    hits = []
    for path in files:
        if not path.is_file():  # deleted in the work tree, not yet committed
            continue
        data = path.read_bytes()
        if b"\0" in data[:8192]:  # binary
            continue
        text = data.decode("utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            if TICKET.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}")
    assert not hits, "ticket numbers in the code (say why instead; history goes to CHANGELOG.md):\n" + "\n".join(hits)
