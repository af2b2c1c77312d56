"""The Gini page (app_pages/gini.py): renderers (views), figures (plots), the noise choice of its
section 4b (noise_choice) and the page's one list of sections (sections)."""
