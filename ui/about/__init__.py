"""The About page (app_pages/about.py): the posterior chart and the examples table (views)."""
