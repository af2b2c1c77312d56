"""The group-means page (app_pages/stratified.py): renderers (views), figures (plots) and the page's
one list of views (sections)."""
