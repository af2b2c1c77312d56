"""``python -m dpcore release PLAN --data SOURCE --out DIR ...`` (see :mod:`dpcore.cli`)."""

from .cli import main

raise SystemExit(main())
