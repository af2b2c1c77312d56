"""Income data, one module per concern; every public name is importable from ``dpcore.data``.

All data reach the pages as :class:`IncomeData`:

* :mod:`dpcore.data.io`: **uploaded files** (CSV, Parquet or Excel .xlsx as bytes, a path or a binary
  file object) parsed in memory within size limits (:func:`read_table`), their number formats
  (:func:`detect_number_format`), the income column validated (:func:`clean_income_column`,
  :func:`load_income_file`); every problem raises :class:`DPInputError` naming what to do.
* :mod:`dpcore.data.catalogue`: **real data**, the bundled public-domain examples (:func:`load_example`)
  and the real survey files of ``../shared/data`` (:data:`SHARED_DATASETS`, :func:`load_shared`; the ACS and
  PSEO files fall back to the bundled copies), the ACS frame and poverty counts of the ratio page.
* :mod:`dpcore.data.synthetic`: **synthetic generators** (all take ``rng``): :func:`lognormal_incomes`,
  :func:`pareto_mixture_incomes` and :func:`two_point_incomes` (Proposition 5.1 of Lan & Reiter).
* :mod:`dpcore.data.recipes`: **recipes**, :func:`build_dataset` turns a plain-dict recipe into an
  :class:`IncomeData`; the sidebar and the generated scripts both call it.

The sample Gini is :func:`dpcore.gini.gini` (the package has one). Importing this package imports neither
pandas nor scipy (:mod:`dpcore.lazy`): the app's sidebar reads the catalogue on a cold start.
A module-level setting (a limit, a directory) is read from the module that defines it: patch it there.

Privacy assumptions: none of these functions releases anything. An uploaded file is marked
``confidential=True`` because *planning on confidential data is itself not private* (docs/CONVENTIONS.md).
The neighbouring relation the methods use is "replace one record, n public", so a record
must be one unit of privacy (one person or one household), which holds for every dataset offered here
except the PSEO table, whose rows are published cell statistics, not persons.
"""

# every module's public names, listed once in its __all__
from . import catalogue, io, recipes, synthetic
from .catalogue import *  # noqa: F403
from .io import *  # noqa: F403
from .recipes import *  # noqa: F403
from .synthetic import *  # noqa: F403

__all__ = [*io.__all__, *catalogue.__all__, *synthetic.__all__, *recipes.__all__]
