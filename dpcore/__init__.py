"""dpcore: differential privacy mechanisms for income statistics, without any UI.

The layers, bottom to top: a module imports its own layer and the layers below it, never above (the import-linter
contract "dpcore's eight layers" in pyproject.toml; every module is in one layer; no import cycles). Finer
contracts there keep an order inside a layer where it carries a rule (the noise package, the ledger, the
mechanisms' one module per kind, the methods' independence, planning that never reaches the ledger), and keep
dpcore free of the UI (no Streamlit, plotly or ``ui`` module is ever loaded by it). Two layers are folders: ``noise/`` and ``views/``.

1. foundation: ``errors``, ``rng`` (seeded and OS-CSPRNG generators), ``validation`` (argument checks), ``lru``,
   ``defaults``, ``lazy`` (modules imported on first use), ``kinds`` (the one registry of statistic kinds of plan
   files, the planner and the app); ``budget`` (privacy costs and their composition),
   ``data.io`` and ``data.catalogue`` (file loading, bundled examples), ``record_fingerprint``.
2. noise, the package ``noise``: ``noise.samplers`` (samplers and the Laplace / Gaussian calibrations) and
   ``noise.certificates`` (the generalized Cauchy's certified privacy loss and calibration), whose public names
   ``noise`` re-exports, and ``noise.guarantees`` (what the real samplers are calibrated and certified by, without
   drawing); above them ``noise.smooth`` (light-tailed smooth-sensitivity noises) and ``noise.secure`` (the
   samplers of real releases: OpenDP and certified, imported only by ``mechanisms``). A second contract keeps
   this order inside the package.
3. methods, one module per paper: ``gini`` (Lan & Reiter), ``percentiles`` (Foote et al.), ``stratified`` and
   ``coinpress`` (Rosenblatt et al.), ``ratio`` (Shoham & Ligett), ``bounds``, ``posterior``, ``risk``; and
   ``data.synthetic`` and ``data.recipes`` (generators, ``build_dataset``), whose two-point generator uses the Gini.
4. ``intervals`` (every released value's interval, with ``gini_split_table``, the Gini split optimiser's shipped
   answers), ``consistency`` (tables that add up: least squares over a hierarchy of margins, non-negative integer
   counts, their percentiles' intervals), ``published`` (a release table's intervals and honest digits), the
   package ``mechanisms`` (one mechanism object per released statistic kind, a module per kind: every real draw is
   made there).
5. planning and accounting: ``planner`` (smallest epsilon for a target), ``snapshot`` (the DP snapshot of a
   confidential source and the synthetic planning data drawn from it), ``cell_keys``, ``plan`` (release plan
   files), ``ledger`` (the durable budget ledger), ``pipeline`` (the one release transaction: check, charge, draw,
   record), ``release`` (releases of planned statistics and their records), ``release_card``, ``memo``.
6. ``engines`` (DuckDB / Spark / pandas aggregation and ``engines.execute``, the command line's release).
7. views: the package ``views`` (``views.<page>``: one view function per page view, the papers' experiments),
   ``classroom``.
8. ``cli``, ``ledger_cli``, ``plan_command`` (``dpcore plan``: a snapshot through the engines and the ledger,
   solved by the planner's views) and ``__main__`` (the ``dpcore`` command line).
See README.md and docs/api.md for the public API.
"""

from .validation import DPInputError

__version__ = "0.1.0"
__all__ = ["DPInputError", "__version__"]
