"""Helpers shared by tests (importable as ``support.*``: pytest puts tests/ on sys.path)."""
