"""``python -m dpcore release PLAN --data SOURCE --out DIR ...`` (see :mod:`dpcore.cli`)."""

from .cli import exit_after_command, main

exit_after_command(main())
