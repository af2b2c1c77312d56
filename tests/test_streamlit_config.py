"""The students' view has no developer controls (no Deploy button, no Rerun / Clear cache: in a class any
student could clear the server's caches): ``client.toolbarMode`` in .streamlit/config.toml, which every way
of serving the app reads (``run.sh app`` and ``run.sh serve`` start streamlit in the repository, the image
copies .streamlit), and nothing overrides it. The browser check is in tests/test_browser_sidebar_state.py."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]


def test_toolbar_is_for_viewers_everywhere_the_app_is_served():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["client"]["toolbarMode"] in ("viewer", "minimal")
    assert "COPY .streamlit ./.streamlit" in (ROOT / "deploy" / "Dockerfile").read_text(encoding="utf-8")
    assert 'cwd=str(ROOT)' in (ROOT / "deploy" / "serve.py").read_text(encoding="utf-8")
    for path in [ROOT / "run.sh", *sorted((ROOT / "deploy").iterdir())]:
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            assert not re.search(r"toolbar[._-]?mode", text, re.IGNORECASE), f"{path.name} overrides the toolbar mode"
