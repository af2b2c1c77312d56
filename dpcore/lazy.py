"""A module imported on its first attribute access, for heavy libraries that many uses never need.

The app's landing page reads the real-data catalogue (:mod:`dpcore.data.catalogue`) to list the data
sources in its sidebar, and importing ``dpcore.data`` imports every part of the package. pandas and
scipy.special are slow to import on a cold server (docs/benchmarks.md, "Timings behind choices in the code"), and a plain visit needs neither: the parts of the
package name them through :class:`LazyModule`, so they are imported when data are first read or drawn.
The methods name ``scipy.special`` the same way: a command-line release of counts or means never calls it,
and its start-up is shorter by the import.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__all__ = ["LazyModule", "special"]


class LazyModule:
    """Stands for the module ``name`` and imports it on the first attribute access.

    The import goes through the import system (``importlib.import_module``), never through
    ``sys.modules``: another session's thread may be half-way through importing the module, and the
    import system waits for it to finish instead of handing out a partially initialised module.
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        module = self._module
        if module is None:
            module = importlib.import_module(self._name)
            self._module = module
        return getattr(module, attr)


#: scipy.special for the methods that need it (a command-line release of counts or means never calls it)
special = LazyModule("scipy.special")
