"""Generate a stand-alone Python script that reproduces a page's view with dpcore.

A page computes a view with **one call** to a view function in ``dpcore.views`` (settings +
data -> a frozen result with ``.to_dict()``). Its script is that same call with the same literal
keyword arguments, preceded by the code that rebuilds the page's data and followed by printing
``result.to_dict()`` as JSON. No page logic is written twice: :func:`view_script` only knows a
module name, a function name, literal keyword arguments and the data recipe.

Parts of a script: a header (which view, when, which dpcore version), the **data** (the sidebar's
dataset rebuilt from its public recipe: generator, parameters and data seed, or the loader of a
bundled / shared file; an uploaded file is read from a path the user fills in, because the
confidential file is never embedded), and the **view** call. It runs as is with
``python script.py`` from the repository root (or with dpcore installed).

Scripts are built from Python literals (``repr`` of plain dicts, lists, numbers and strings, see
:func:`literal`), never from free text a user typed, and checked with ``compile`` before they are
returned. This module does not import streamlit (it is tested without a page).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from dpcore import __version__
from dpcore.validation import DPInputError

__all__ = [
    "literal",
    "call_code",
    "dataset_code",
    "view_script",
    "view_script_parts",
    "ViewScript",
    "DEFAULT_DATASET_KEY",
]

#: The sidebar's default data: log-normal, n = 10,000, sigma 0.9, data seed 2026.
DEFAULT_DATASET_KEY = ("lognormal", 10_000, 0.9, 2026)
#: The library every generated script imports.
LIBRARY = "dpcore"
_DATA_MODULE = f"{LIBRARY}.data"


def literal(obj: Any) -> str:
    """A Python literal for plain data (dict/list/tuple/str/int/float/bool/None); refuses anything else."""
    if obj is None or isinstance(obj, (bool, str)):
        return repr(obj)
    if isinstance(obj, int):
        return repr(int(obj))
    if isinstance(obj, float) or type(obj).__name__.startswith(("float", "int")):
        v = float(obj)
        if not math.isfinite(v):
            return f"float({str(v)!r})"
        if type(obj).__name__.startswith("int"):
            return repr(int(obj))
        return repr(v)
    if isinstance(obj, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in obj.items()) + "}"
    if isinstance(obj, (list, tuple)):
        inner = ", ".join(literal(v) for v in obj)
        return f"[{inner}]" if isinstance(obj, list) else (f"({inner},)" if len(obj) == 1 else f"({inner})")
    raise DPInputError(f"cannot write a {type(obj).__name__} into a script")


def _identifier(name: str, what: str) -> str:
    parts = str(name).split(".")
    if not parts or not all(p.isidentifier() for p in parts):
        raise DPInputError(f"{what} {name!r} is not a Python name")
    return str(name)


def call_code(
    module: str,
    function: str,
    args: Sequence[Any] = (),
    kwargs: Mapping[str, Any] | None = None,
    *,
    target: str,
    arg_names: Sequence[str] = (),
) -> str:
    """``from <module> import <function>`` and ``<target> = <function>(<names>, <literal args>, k=<literal>)``.

    ``arg_names`` are variable names passed first (e.g. ``values``); every other argument is a literal.
    """
    module = _identifier(module, "module")
    function = _identifier(function, "function")
    target = _identifier(target, "variable")
    pieces = [_identifier(a, "argument") for a in arg_names] + [literal(a) for a in args]
    pieces += [f"{_identifier(k, 'keyword')}={literal(v)}" for k, v in (kwargs or {}).items()]
    if sum(len(p) for p in pieces) > 80:
        inner = "".join(f"\n    {p}," for p in pieces) + "\n"
    else:
        inner = ", ".join(pieces)
    return f"from {module} import {function}\n{target} = {function}({inner})\n"


def dataset_code(key: Sequence[Any] | None) -> str:
    """Code that defines ``values`` (incomes, numpy array) and ``frame`` (pandas DataFrame or None)
    from the sidebar's dataset recipe ``key`` (None -> the default dataset; ("none",) -> both None,
    for a view that does not use the income data). The data are rebuilt by
    :func:`dpcore.data.build_dataset` from the recipe written as a literal
    (:func:`dpcore.data.recipe_from_key`); an uploaded file is read from its file name, never embedded."""
    from dpcore.data import describe_recipe, recipe_from_key

    if key and tuple(key)[0] == "none":
        return "# this view does not use the sidebar's income data\nvalues = None\nframe = None\n"
    recipe = recipe_from_key(None if not key else tuple(key))
    lines = f"# {' '.join(describe_recipe(recipe).split())}\n"  # one comment line whatever a file name holds
    if recipe["kind"] == "file":
        lines += (
            "# Your confidential file is not embedded: put it next to this script (or edit the path in the recipe).\n"
        )
    return (
        lines
        + call_code(_DATA_MODULE, "build_dataset", (recipe,), target="dataset")
        + "values, frame = dataset.values, dataset.frame\n"
    )


def _docstring(title: str, stamp: str) -> str:
    return (
        f'"""Reproduces the view "{title}" of the DP income explorer.\n\n'
        f"Generated {stamp} with {LIBRARY} {__version__}. Run from the repository root:\n"
        "    python this_script.py\n"
        "It prints the numbers shown on the page as JSON. Simulated releases use the seed below, so\n"
        'the numbers match the page exactly; a real release never uses a fixed seed.\n"""\n'
    )


#: The script's imports (the notebook's first code cell): dpcore from the installed package, else from the
#: folder the script runs in (the repository root).
IMPORTS = (
    "import json\n"
    "import os\n"
    "import sys\n\n"
    "import numpy as np\n\n"
    "try:\n"
    f"    import {LIBRARY}\n"
    "except ImportError:  # not installed: run from the repository root\n"
    "    sys.path.insert(0, os.getcwd())\n"
    f"    import {LIBRARY}\n"
)
DATA_HEADING = "# ---- data: the planning data chosen on the page / in the sidebar ----\n"
VIEW_HEADING = "# ---- the view: the same call the page makes ----\n"
OUTPUT = "print(json.dumps(result.to_dict(), indent=2, default=float))\n"


@dataclass(frozen=True)
class ViewScript:
    """One view's reproduction in parts: the script is their concatenation (:attr:`text`), the notebook
    (``ui.notebook``) one cell per part, so both run the same code."""

    title: str
    module: str
    function: str
    docstring: str  # what the script is, when and with which dpcore it was generated
    data: str  # rebuilds ``values`` and ``frame`` from the public recipe (:func:`dataset_code`)
    call: str  # ``result = <function>(...)``: the page's own view call with literal arguments
    imports: str = IMPORTS
    output: str = OUTPUT  # prints ``result.to_dict()`` as JSON

    @property
    def text(self) -> str:
        return (
            self.docstring
            + self.imports
            + "\n"
            + DATA_HEADING
            + self.data
            + "\n"
            + VIEW_HEADING
            + self.call
            + "\n"
            + self.output
        )


@functools.lru_cache(maxsize=256)
def _check_compiles(title: str, body: str) -> None:
    """``compile`` the script once per distinct content: a page builds the same script on every rerun (the
    docstring's time stamp is the only part that changes, and it is a fixed template)."""
    compile(_docstring(title, "") + body, "<generated script>", "exec")


def view_script_parts(
    module: str,
    function: str,
    kwargs: Mapping[str, Any],
    dataset_recipe: Sequence[Any] | None,
    *,
    title: str,
    data_arg: str | None = "values",
) -> ViewScript:
    """The parts of one view's script (:func:`view_script`), checked to compile as a whole."""
    if not isinstance(kwargs, Mapping):
        raise DPInputError("the view's settings must be a dict of literals")
    names = () if data_arg is None else (data_arg,)
    parts = ViewScript(
        title=title,
        module=_identifier(module, "module"),
        function=_identifier(function, "function"),
        docstring=_docstring(title, datetime.now(timezone.utc).isoformat(timespec="seconds")),
        data=dataset_code(dataset_recipe),
        call=call_code(module, function, (), dict(kwargs), target="result", arg_names=names),
    )
    _check_compiles(title, parts.text[len(parts.docstring) :])
    return parts


def view_script(
    module: str,
    function: str,
    kwargs: Mapping[str, Any],
    dataset_recipe: Sequence[Any] | None,
    *,
    title: str,
    data_arg: str | None = "values",
) -> str:
    """The script of one view: rebuild the data from ``dataset_recipe``, call
    ``<module>.<function>(values, **kwargs)`` (``data_arg=None``: no data argument) and print
    ``result.to_dict()`` as JSON. ``kwargs`` must be plain literals (numbers, strings, lists, dicts)."""
    return view_script_parts(module, function, kwargs, dataset_recipe, title=title, data_arg=data_arg).text
