"""The Gini page (app_pages/gini.py): renderers (views), figures (plots), the choice of noise distribution
(noise_choice) and the page's one list of sections (sections)."""
