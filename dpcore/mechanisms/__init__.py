"""One mechanism per released statistic kind: every real draw of dpcore is made here.

Each mechanism is frozen, built from public parameters only, and states its cost (``privacy_cost()``, a
:class:`dpcore.budget.PrivacyCost`), its draw (``rng`` None: the real sampler of :mod:`dpcore.noise.secure`,
OpenDP's or the certified one, on the public output grid and clamped to the statistic's public range; a numpy
Generator or seed: a simulation of the same law), what the privacy map or certificate gives for a draw
(``certified_epsilon``), the published interval its values carry (``interval_kind``, computed by
:mod:`dpcore.published`) and its record (``record()``, the one public text every release record of the kind
carries): the :class:`Mechanism` protocol of :mod:`dpcore.mechanisms.base`. Every release path draws through them
(the command line's engines, the app's Release mode, :func:`dpcore.release.make_release`), so a grid, a clamp or
a sensitivity is written once; only this package and :mod:`dpcore.noise` import :mod:`dpcore.noise.secure`.
Real releases accept registered mechanisms only (:data:`REGISTRY`, :func:`check_registered`). The draws of the
count, cell-size, quantile, mean and relative-risk mechanisms say what drew them in the four fields of
:class:`DrawProvenance` (measurement, privacy map, the map's epsilon, simulated).

=====================  ===================================  =======================================================
kind                   mechanism (module)                   mathematics (module)
=====================  ===================================  =======================================================
count                  :class:`CountMechanism` (counts)     discrete Laplace on counts (Ghosh et al. 2009)
cell_sizes             :class:`CellSizesMechanism`          noisy cell sizes and DP cell selection
                       (counts)                             (:mod:`dpcore.cell_keys`; Rogers et al. 2023)
histogram              :class:`HistogramMechanism`          PSEO noisy histogram (:mod:`dpcore.percentiles`,
                       (quantiles)                          Foote et al. 2019)
exponential_quantile   :class:`ExponentialQuantileMechanism` exponential mechanism on a public candidate grid,
                       (quantiles)                          permute-and-flip form (:mod:`dpcore.percentiles`)
mean                   :class:`MeanMechanism` (mean)        clipped Laplace mean (:mod:`dpcore.stratified`,
                                                            Rosenblatt et al.)
relative_risk          :class:`RelativeRiskMechanism`       LaplaceNoisedCounts (:mod:`dpcore.ratio`,
                       (relative_risk)                      Shoham & Ligett)
gini                   :class:`GiniMechanism` (gini)        smooth sensitivity (:mod:`dpcore.gini`, Lan & Reiter)
gini_interval          :class:`GiniIntervalMechanism`       the Gini with a DP bound on S_beta
                       (gini)                               (:mod:`dpcore.intervals`)
snapshot               :class:`SnapshotMechanism`           a planning snapshot: noisy histograms, sizes and a
                       (snapshot)                           relative risk's counts (:mod:`dpcore.snapshot`)
=====================  ===================================  =======================================================
"""

# every module's public names, listed once in its __all__ (snapshot's: only its mechanism and schemas here)
from . import base, counts, gini, mean, quantiles, relative_risk
from .base import *  # noqa: F403
from .counts import *  # noqa: F403
from .gini import *  # noqa: F403
from .mean import *  # noqa: F403
from .quantiles import *  # noqa: F403
from .relative_risk import *  # noqa: F403
from .snapshot import ConfidentialTables, RiskSchema, SnapshotDraw, SnapshotMechanism, SnapshotSchema

__all__ = [
    *base.__all__,
    *gini.__all__,
    *quantiles.__all__,
    *mean.__all__,
    *relative_risk.__all__,
    "SnapshotMechanism",
    "SnapshotDraw",
    "SnapshotSchema",
    "RiskSchema",
    "ConfidentialTables",
    *counts.__all__,
]
