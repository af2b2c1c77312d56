"""The relative-risk page (app_pages/ratios.py): renderers (views), figures (plots) and the page's one
list of views (sections)."""
