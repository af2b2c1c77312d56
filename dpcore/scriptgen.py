"""Moved to :mod:`ui.scriptgen` (script generation is app code, not part of the DP library).

This module only re-exports it, so ``from dpcore import scriptgen`` keeps working while the
remaining pages move to ``ui.scriptgen.view_script``; it will be removed afterwards.
"""
from __future__ import annotations

from ui.scriptgen import (DEFAULT_DATASET_KEY, build_script, call_code, dataset_code, literal,  # noqa: F401
                          planner_script, view_script)

__all__ = ["dataset_code", "build_script", "planner_script", "literal", "call_code", "view_script",
           "DEFAULT_DATASET_KEY"]
