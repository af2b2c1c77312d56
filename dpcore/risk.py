"""What epsilon means for a person: attacker posterior bounds, and epsilons used in real deployments.

Posterior bound. Let an attacker hold a prior belief p that a target person is in the data (or has
a sensitive attribute, or that the data set is D rather than its neighbour D'). After seeing the
output of an epsilon-DP mechanism, Bayes' rule and the DP inequality
Pr[M(D) = o] <= e^eps Pr[M(D') = o] give the largest possible posterior

    p_post <= p e^eps / (1 - p + p e^eps)          (and >= p e^-eps / (1 - p + p e^-eps))

(Kasiviswanathan & Smith 2014, "On the 'semantics' of differential privacy"; Wood et al. 2018,
"Differential privacy: a primer for a non-technical audience", Sec. 4). The bound is about the two
hypotheses of a neighbouring pair; it holds whatever else the attacker knows. For (epsilon, delta)
the bound holds except with probability about delta, which we do not show.

Deployments. :data:`DEPLOYMENTS` lists privacy parameters published for real releases, each with
its privacy unit and source. Values are what the organisations (or the papers describing them)
published; they are not comparable one to one (different units, local vs central DP, per day vs
total), which the page explains. The page shows them as an editable table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .validation import DPInputError, as_finite_array, check_epsilon, check_probability

__all__ = [
    "max_posterior",
    "min_posterior",
    "posterior_curve",
    "epsilon_for_posterior",
    "DEPLOYMENTS",
    "Deployment",
    "deployments_table",
]


def _priors(prior) -> np.ndarray:
    p = as_finite_array(prior, "prior")
    if np.any((p < 0) | (p > 1)):
        raise DPInputError("a prior probability must be between 0 and 1")
    return p


def max_posterior(prior, epsilon: float):
    """Largest posterior p e^eps / (1 - p + p e^eps) reachable from prior p under epsilon-DP (vectorised in p)."""
    eps = check_epsilon(epsilon)
    scalar = np.ndim(prior) == 0
    p = _priors(prior)
    # written as 1 / (1 + (1-p)/p * e^-eps) for stability at large eps
    with np.errstate(divide="ignore"):
        out = np.where(p == 0, 0.0, p / (p + (1 - p) * math.exp(-eps)))
    return float(out[0]) if scalar else out


def min_posterior(prior, epsilon: float):
    """Smallest posterior p e^-eps / (1 - p + p e^-eps) (the attacker can also be pushed down)."""
    eps = check_epsilon(epsilon)
    scalar = np.ndim(prior) == 0
    p = _priors(prior)
    out = np.where(p == 1, 1.0, p * math.exp(-eps) / (1 - p + p * math.exp(-eps)))
    return float(out[0]) if scalar else out


def epsilon_for_posterior(prior: float, posterior: float) -> float:
    """The epsilon at which the largest posterior from ``prior`` equals ``posterior`` (inverse of max_posterior):
    eps = ln( post (1 - p) / (p (1 - post)) ). Useful for "no attacker should get above 50% from 1%"."""
    p = check_probability(prior, "prior")
    q = check_probability(posterior, "posterior")
    if q <= p:
        raise DPInputError("the posterior must be larger than the prior")
    return math.log(q * (1 - p) / (p * (1 - q)))


@dataclass(frozen=True)
class PosteriorCurve:
    epsilon: float
    prior: np.ndarray
    upper: np.ndarray
    lower: np.ndarray


def posterior_curve(epsilon: float, priors=None) -> PosteriorCurve:
    """Upper and lower posterior bounds over a grid of priors (default: 201 points in [0, 1])."""
    eps = check_epsilon(epsilon)
    p = np.linspace(0.0, 1.0, 201) if priors is None else _priors(priors)
    return PosteriorCurve(eps, p, max_posterior(p, eps), min_posterior(p, eps))


@dataclass(frozen=True)
class Deployment:
    organisation: str
    release: str
    epsilon: float | None
    delta: float | None
    rho: float | None
    unit: str
    model: str  # "central" | "local"
    source: str


DEPLOYMENTS: tuple[Deployment, ...] = (
    Deployment(
        "US Census Bureau",
        "2020 Census redistricting data (P.L. 94-171), TopDown Algorithm, persons",
        17.14,
        1e-10,
        2.56,
        "person, whole release",
        "central",
        "Abowd et al. 2022, 'The 2020 Census Disclosure Avoidance System TopDown Algorithm', Harvard Data "
        "Science Review (Special Issue 2); Census Bureau privacy-loss budget allocation of June 2021 "
        "(rho = 2.63 in total: 2.56 persons + 0.07 housing units)",
    ),
    Deployment(
        "US Census Bureau",
        "OnTheMap (LEHD residence-workplace flows)",
        8.6,
        1e-5,
        None,
        "worker",
        "central",
        "Machanavajjhala et al. 2008, 'Privacy: theory meets practice on the map', ICDE 2008",
    ),
    Deployment(
        "US Census Bureau",
        "Post-Secondary Employment Outcomes (PSEO) earnings percentiles",
        None,
        0.0,
        None,
        "graduate, per cell (parallel over cells)",
        "central",
        "Foote, Machanavajjhala & McKinney 2019, 'Releasing earnings distributions using differential "
        "privacy', J. Privacy and Confidentiality (shared/papers): geometric histogram mechanism; the paper "
        "evaluates epsilon from 0.1 to 3 and does not state the production value; enter it when known",
    ),
    Deployment(
        "Apple",
        "QuickType suggestions (iOS/macOS)",
        16.0,
        0.0,
        None,
        "user-day",
        "local",
        "Apple Differential Privacy Team 2017, 'Learning with privacy at scale'; Desfontaines, 'A list of "
        "real-world uses of differential privacy'",
    ),
    Deployment(
        "Apple",
        "Emoji suggestions",
        4.0,
        0.0,
        None,
        "user-day",
        "local",
        "Apple Differential Privacy Team 2017; OpenDP deployments registry",
    ),
    Deployment(
        "Apple",
        "Health Type Usage",
        2.0,
        0.0,
        None,
        "user-day",
        "local",
        "Apple Differential Privacy Team 2017; Desfontaines' list",
    ),
    Deployment(
        "Google",
        "COVID-19 Community Mobility Reports",
        2.64,
        None,
        None,
        "user-day",
        "central",
        "Aktay et al. 2020, 'Google COVID-19 Community Mobility Reports: anonymization process "
        "description', arXiv:2004.04145",
    ),
    Deployment(
        "LinkedIn",
        "Audience Engagements API",
        34.9,
        7e-9,
        None,
        "member-month",
        "central",
        "Rogers et al. 2020, 'LinkedIn's Audience Engagements API: a privacy preserving data analytics "
        "system at scale', arXiv:2002.05839; OpenDP deployments registry",
    ),
    Deployment(
        "Microsoft",
        "Assistive AI (Office text suggestions)",
        4.0,
        1e-7,
        None,
        "user",
        "central",
        "Microsoft 2020 announcement quoted in the OpenDP deployments registry",
    ),
    Deployment(
        "Microsoft",
        "Windows app-usage telemetry",
        1.672,
        0.0,
        None,
        "device, per 6-hour round",
        "local",
        "Ding, Kulkarni & Yekhanin 2017, 'Collecting telemetry data privately', NeurIPS 2017",
    ),
    Deployment(
        "Israel Ministry of Health",
        "National Registry of Live Births 2014 (synthetic data)",
        9.98,
        None,
        None,
        "birth",
        "central",
        "Hod & Canetti 2024 (OpenDP deployments registry)",
    ),
)


def deployments_table() -> list[dict]:
    """:data:`DEPLOYMENTS` as a list of dicts (one per row) for a DataFrame / editable table."""
    return [
        {
            "organisation": d.organisation,
            "release": d.release,
            "epsilon": d.epsilon,
            "delta": d.delta,
            "rho (zCDP)": d.rho,
            "privacy unit": d.unit,
            "model": d.model,
            "source": d.source,
        }
        for d in DEPLOYMENTS
    ]
