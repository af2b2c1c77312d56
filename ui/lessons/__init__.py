"""The lessons page (app_pages/lessons.py): the lessons, their links and the handouts (views)."""
