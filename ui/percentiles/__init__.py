"""The earnings-percentiles page (app_pages/percentiles.py): renderers (views), figures (plots) and
the page's one list of views and sections (sections)."""
