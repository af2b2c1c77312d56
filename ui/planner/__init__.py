"""The planner page (app_pages/planner.py): Plan mode's controls and renderers (views), figures (plots),
Release mode (release_panel) and the page's one list of views (sections)."""
