"""The attacker game (app_pages/attacker.py): renderers (views) and figures (plots); class mode is ui.classroom."""
