"""The group-means page's views and the experiments of Rosenblatt, Stoyanovich & Musco (AAAI 2024).

Paper digest: ``../shared/papers/stratification_spec.md``. Mechanisms (the clipped Laplace mean,
the stratified estimator, parity error, the Prop. 9 / Thm. 10 bounds, CoinPress) live in
:mod:`dpcore.stratified` and :mod:`dpcore.coinpress`; this package holds what is built on them, one concern
per module (this ``__init__`` imports their public names: ``dpcore.views.stratified.<name>`` is their public
path):

* :mod:`~dpcore.views.stratified.paper`: the paper's data: group-size presets (Table 3), the New York RACE
  example, the Gaussian mixture of Appendix B with Dirichlet(alpha) group sizes (:func:`gaussian_mixture`);
* :mod:`~dpcore.views.stratified.simulations`: vectorised Monte Carlo of many releases of every method on one
  dataset (:func:`simulate_laplace_releases`, :func:`simulate_methods`) and the sweeps behind Figures 2, 3,
  6 and 7 (:func:`synthetic_sweep`, :func:`grouping_sweep`, :func:`real_epsilon_sweep`);
* :mod:`~dpcore.views.stratified.synthesizer`: the light stratified synthesizer (an illustration of the
  paper's Section 6, not MST/GEM/AIM);
* :mod:`~dpcore.views.stratified.data`: the page's data: :func:`grouped_data` (a recipe of literals: the
  synthetic mixture, the ACS excerpt or the sidebar's columns) and the ACS excerpt's variables and codes;
* :mod:`~dpcore.views.stratified.page`: **one function per page view** (settings + data -> a frozen result
  with ``.to_dict()``): :func:`group_means_view`, :func:`trend_view`, :func:`bounds_view`,
  :func:`accounting_view`, :func:`synthesizer_view`. The page renders these results and its generated script
  is the same call plus ``print(result.to_dict())``.

Neighbouring relation (every view): replace one person's value, keeping their group; n, the group
labels and sizes, clip range / bound R, the CoinPress prior interval and sigma, and the combination
weights are public. Laplace methods are epsilon-DP; CoinPress methods are rho-zCDP with
rho = epsilon^2 / 2 (the zCDP level epsilon-DP also satisfies). These are planning simulations:
they use the confidential true means and must not be run on a confidential file that will not be
released anyway.
"""

from __future__ import annotations

from .data import (
    ACS_CODE_NAMES,
    ACS_GROUPINGS,
    ACS_VARIABLES,
    SYNTH_COLUMNS,
    SYNTH_EPSILONS,
    SYNTH_SIZES,
    GroupedData,
    acs_groups,
    acs_labels,
    acs_synthesizer_table,
    column_groups,
    grouped_data,
    synthetic_groups,
)
from .page import (
    DELTA,
    N_SIMS,
    PRIVACY_MATCHES,
    SWEEPS,
    AccountingView,
    BoundsView,
    GroupMeansView,
    SynthesizerView,
    TrendView,
    accounting_view,
    bounds_view,
    group_means_view,
    parity_draws,
    summarise,
    synthesizer_view,
    trend_view,
)
from .page import coinpress_rho as coinpress_rho
from .page import group_means_answer_at_epsilon as group_means_answer_at_epsilon
from .page import group_means_answer_statistic as group_means_answer_statistic
from .paper import (
    NY_RACE_COUNTS,
    NY_SEX_RACE_COUNTS,
    PRESETS,
    MixtureSample,
    NYExample,
    bound_curves,
    dirichlet_group_sizes,
    fit_symmetric_dirichlet,
    gaussian_mixture,
    ny_race_example,
    preset_counts,
    sizes_from_proportions,
)
from .simulations import (
    GLOBAL_METHODS,
    METHODS,
    LaplaceSimulation,
    MethodsSimulation,
    grouping_sweep,
    mixture_sigma,
    real_epsilon_sweep,
    simulate_laplace_releases,
    simulate_methods,
    synthetic_sweep,
)
from .synthesizer import ChainSynthesis, stratified_synthesize, synthesize_chain, synthesizer_sweep, synthetic_parity

__all__ = [
    # the paper's data and experiments
    "bound_curves",
    "fit_symmetric_dirichlet",
    "NYExample",
    "ny_race_example",
    "NY_RACE_COUNTS",
    "NY_SEX_RACE_COUNTS",
    "PRESETS",
    "preset_counts",
    "sizes_from_proportions",
    "dirichlet_group_sizes",
    "MixtureSample",
    "gaussian_mixture",
    "LaplaceSimulation",
    "simulate_laplace_releases",
    "ChainSynthesis",
    "synthesize_chain",
    "stratified_synthesize",
    "synthetic_parity",
    "synthesizer_sweep",
    "METHODS",
    "GLOBAL_METHODS",
    "MethodsSimulation",
    "simulate_methods",
    "mixture_sigma",
    "synthetic_sweep",
    "grouping_sweep",
    "real_epsilon_sweep",
    # page views
    "ACS_VARIABLES",
    "ACS_GROUPINGS",
    "ACS_CODE_NAMES",
    "SWEEPS",
    "N_SIMS",
    "DELTA",
    "GroupedData",
    "grouped_data",
    "synthetic_groups",
    "acs_groups",
    "column_groups",
    "parity_draws",
    "GroupMeansView",
    "group_means_view",
    "PRIVACY_MATCHES",
    "TrendView",
    "trend_view",
    "summarise",
    "BoundsView",
    "bounds_view",
    "AccountingView",
    "accounting_view",
    "SynthesizerView",
    "synthesizer_view",
    "acs_synthesizer_table",
    "acs_labels",
    "SYNTH_COLUMNS",
    "SYNTH_SIZES",
    "SYNTH_EPSILONS",
]
