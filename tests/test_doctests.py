"""The examples in the public functions' docstrings run and print what they say (doctest)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "dpcore.gini.statistic",
    "dpcore.gini.release",
    "dpcore.intervals.rounding",
    "dpcore.noise.guarantees",
    "dpcore.stratified",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name}: no examples found"
    assert result.failed == 0
