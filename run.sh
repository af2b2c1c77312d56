#!/usr/bin/env bash
# One entry point for a new user on a fresh machine (only Python 3.10+ needed):
#   bash run.sh app    installs the runtime packages into ./.venv and starts the app
#   bash run.sh test   installs runtime + test packages into ./.venv and runs the whole pytest suite
#   bash run.sh serve  [--port 8501] [--workers N] [--address localhost]: N app processes behind nginx
#                      (sticky sessions, WebSocket upgrade) for a class; see docs/serving.md
#   bash run.sh release PLAN.toml --data SOURCE --out DIR [...]: python -m dpcore release (docs/release_cli.md)
#   bash run.sh check PLAN.toml: python -m dpcore check (validates a plan, prints its privacy cost; reads no data)
#   bash run.sh ledger init|verify|show|backup [...]: python -m dpcore ledger (the durable budget ledger)
# Extra arguments are passed on (to `streamlit run app.py` or to `pytest`).
set -euo pipefail
caller_dir=$PWD  # release, check, ledger: paths on the command line are relative to where it was called
cd "$(dirname "$0")"
mode=${1:-}
case "$mode" in app|test|serve|release|check|ledger) shift ;;
  *) echo "usage: bash run.sh app|test|serve|release|check|ledger [args...]" >&2; exit 2 ;; esac
PY=${PYTHON:-python3}
VENV=${VENV:-.venv}
if [ ! -x "$VENV/bin/python" ]; then
  if ! "$PY" -m venv "$VENV"; then
    echo "Could not create a virtual environment with '$PY -m venv'." >&2
    echo "On Debian/Ubuntu install it with: apt-get install python3-venv" >&2
    exit 1
  fi
fi
req=requirements.txt
[ "$mode" = test ] && req=requirements-dev.txt
stamp_mode=$mode; [ "$mode" != test ] && stamp_mode=app  # serve and the dpcore commands need what the app needs
stamp="$VENV/.installed-$stamp_mode-$(cat requirements.txt requirements-dev.txt | sha1sum | cut -c1-12)"
if [ ! -f "$stamp" ]; then
  "$VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$req"
  touch "$stamp"
fi
if [ "$mode" = app ]; then
  exec "$VENV/bin/python" deploy/run_app.py "$@"  # streamlit run app.py, the pages' imports made meanwhile
elif [ "$mode" = release ] || [ "$mode" = check ] || [ "$mode" = ledger ]; then
  repo=$PWD; venv_python="$(cd "$VENV" && pwd)/bin/python"
  cd "$caller_dir" && PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}" exec "$venv_python" -m dpcore "$mode" "$@"
elif [ "$mode" = serve ]; then
  exec "$VENV/bin/python" deploy/serve.py --python "$VENV/bin/python" "$@"
else
  # one worker per core plus one (3 on the 2-core machine: the browser, server and subprocess tests leave
  # a core idle while they wait, and a third worker fills it: 3 min 18 s against 3 min 58 s with two,
  # measured 2026-11-23 11:30 UTC; four were slower, 3 min 54 s), whole files per worker so module fixtures
  # and warm caches are not duplicated, handed out longest file first (the order of SLOW_FILES_FIRST in
  # tests/conftest.py, not xdist's most-tests-first), the browser files in two groups of files (BROWSER_GROUPS
  # there: two app servers, not one per worker); -n 0 after it for a serial run (e.g. --pdb)
  workers=$(( $(nproc 2>/dev/null || echo 1) + 1 ))
  exec "$VENV/bin/python" -m pytest -n "$workers" --dist loadfile --no-loadscope-reorder "$@"
fi
