"""View functions and paper experiments: settings + data -> a frozen result with ``.to_dict()``.

One function per page view. The page renders the result; the page's generated script is the same
call followed by ``print(result.to_dict())``; tests call the function directly. Mechanisms stay in
``dpcore/<method>.py``; this package holds what is built on top of them (views, sweeps, figures).

Submodules (import the one you need, e.g. ``from dpcore.views import gini as gini_experiments``):

* ``gini`` - Gini page views and the experiments of Lan & Reiter (2025), Section 5.
* ``percentiles`` - percentile page views, sweeps and the PSEO experiments.
* ``stratified`` - group-means page views and the stratified-estimator experiments.
* ``ratio`` - ratio / relative-risk page views and experiments.
* ``planner`` - the planner page's views.

Submodules are not imported here, so importing one view module stays cheap.
"""
