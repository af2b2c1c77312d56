"""The Gini split optimiser's answers for the Gini page's epsilon grid at its default public inputs (shipped).

:func:`dpcore.intervals.optimise_gini_split` searches 18 betas x 9 splits of epsilon and needs the planning model's
S_beta at small betas (seconds for n = 10,000); a first visit of the Gini page at a new epsilon waited for it. Every
input here is public (epsilon, the noise, n, the bounds, the level, gamma, the calibration mode; no data), so the
answers can be computed once and shipped. Key: :func:`dpcore.intervals.shipped_split_key`; value: the split, beta,
eta and the model's widths, exactly as the search returns them (``tests/test_gini_split_search.py`` compares
entries with a fresh search). Written by ``benchmarks/bench_gini_split.py --write-table``; do not edit by hand.
"""
from __future__ import annotations

from typing import Any

SPLITS: dict[tuple, dict[str, Any]] = {
    ('cauchy', 0.05, None, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 0.04, 'epsilon_bound': 0.010000000000000002,
         'beta': 0.0037542712938610414, 'eta': 0.010000000000000009,
         'model_width': 0.1991442496811139, 'model_oracle_width': 0.16040182863849686},
    ('cauchy', 0.075, None, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 0.063, 'epsilon_bound': 0.012,
         'beta': 0.003918901488310316, 'eta': 0.010000000000000009,
         'model_width': 0.12175577927950451, 'model_oracle_width': 0.10764952805092598},
    ('cauchy', 0.1, None, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 0.08800000000000001, 'epsilon_bound': 0.012,
         'beta': 0.003636223069782769, 'eta': 0.010000000000000009,
         'model_width': 0.0857515079120785, 'model_oracle_width': 0.08120316978870949},
    ('cauchy', 0.15, None, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 0.132, 'epsilon_bound': 0.018,
         'beta': 0.003795676679866343, 'eta': 0.010000000000000009,
         'model_width': 0.05440898315976427, 'model_oracle_width': 0.054739287461900925},
    ('cauchy', 0.2, None, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 0.184, 'epsilon_bound': 0.016,
         'beta': 0.0035218867200250362, 'eta': 0.010000000000000009,
         'model_width': 0.03914674866711969, 'model_oracle_width': 0.04153202233536784},
    ('cauchy', 0.25, None, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 0.23, 'epsilon_bound': 0.02,
         'beta': 0.004402358400031293, 'eta': 0.010000000000000009,
         'model_width': 0.03130755235072403, 'model_oracle_width': 0.0336056014746432},
    ('cauchy', 0.3, None, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 0.27599999999999997, 'epsilon_bound': 0.024,
         'beta': 0.0036763265167691172, 'eta': 0.010000000000000009,
         'model_width': 0.02539589335161307, 'model_oracle_width': 0.02831651768444199},
    ('cauchy', 0.4, None, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 0.368, 'epsilon_bound': 0.032,
         'beta': 0.004901768689025494, 'eta': 0.010000000000000009,
         'model_width': 0.019015301675704758, 'model_oracle_width': 0.021695971186421525},
    ('cauchy', 0.5, None, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 0.475, 'epsilon_bound': 0.025,
         'beta': 0.004263931911852468, 'eta': 0.010000000000000009,
         'model_width': 0.014752231290705787, 'model_oracle_width': 0.017713199261833203},
    ('cauchy', 0.75, None, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 0.7125, 'epsilon_bound': 0.037500000000000006,
         'beta': 0.004450911457234443, 'eta': 0.010000000000000009,
         'model_width': 0.009578491200473844, 'model_oracle_width': 0.012371723433284333},
    ('cauchy', 1.0, None, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 0.95, 'epsilon_bound': 0.05,
         'beta': 0.004129858066254803, 'eta': 0.010000000000000009,
         'model_width': 0.007015825450011285, 'model_oracle_width': 0.009661099469025804},
    ('cauchy', 1.5, None, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 1.425, 'epsilon_bound': 0.07500000000000001,
         'beta': 0.004310958280724443, 'eta': 0.010000000000000009,
         'model_width': 0.004453745763305537, 'model_oracle_width': 0.006861542442507472},
    ('cauchy', 2.0, None, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 1.9, 'epsilon_bound': 0.1,
         'beta': 0.004, 'eta': 0.010000000000000009,
         'model_width': 0.003131566319818834, 'model_oracle_width': 0.00536873488296156},
    ('cauchy', 3.0, None, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 2.85, 'epsilon_bound': 0.15000000000000002,
         'beta': 0.006, 'eta': 0.010000000000000009,
         'model_width': 0.001760172409831524, 'model_oracle_width': 0.0036973216576934296},
    ('cauchy', 4.0, None, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 3.8, 'epsilon_bound': 0.2,
         'beta': 0.008, 'eta': 0.010000000000000009,
         'model_width': 0.0010566105390152959, 'model_oracle_width': 0.002717892297744291},
    ('cauchy', 5.0, None, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 4.75, 'epsilon_bound': 0.25,
         'beta': 0.01, 'eta': 0.010000000000000009,
         'model_width': 0.0006480162926674048, 'model_oracle_width': 0.0020538743952905874},
    ('laplace', 0.05, 1e-06, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 0.042, 'epsilon_bound': 0.008,
         'beta': 0.003445038685825925, 'eta': 0.010000000000000009,
         'model_width': 0.1256519180837332, 'model_oracle_width': 10.853036783335657},
    ('laplace', 0.075, 1e-06, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 0.063, 'epsilon_bound': 0.012,
         'beta': 0.0037457642789778057, 'eta': 0.010000000000000009,
         'model_width': 0.05341938203347917, 'model_oracle_width': 1.9554957966748259},
    ('laplace', 0.1, 1e-06, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 0.08800000000000001, 'epsilon_bound': 0.012,
         'beta': 0.00362021415289657, 'eta': 0.010000000000000009,
         'model_width': 0.03064265453701947, 'model_oracle_width': 0.0215035928093357},
    ('laplace', 0.15, 1e-06, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 0.132, 'epsilon_bound': 0.018,
         'beta': 0.003936231227812424, 'eta': 0.010000000000000009,
         'model_width': 0.01712288094887845, 'model_oracle_width': 0.014636775316067668},
    ('laplace', 0.2, 1e-06, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 0.17600000000000002, 'epsilon_bound': 0.024,
         'beta': 0.003804297050931547, 'eta': 0.010000000000000009,
         'model_width': 0.011453065381375508, 'model_oracle_width': 0.01114998490718913},
    ('laplace', 0.25, 1e-06, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 0.23, 'epsilon_bound': 0.02,
         'beta': 0.0034469859653123284, 'eta': 0.010000000000000009,
         'model_width': 0.008342480357490335, 'model_oracle_width': 0.009033985658412269},
    ('laplace', 0.3, 1e-06, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 0.27599999999999997, 'epsilon_bound': 0.024,
         'beta': 0.004136383158374793, 'eta': 0.010000000000000009,
         'model_width': 0.006978554533731126, 'model_oracle_width': 0.007610514014158235},
    ('laplace', 0.4, 1e-06, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 0.368, 'epsilon_bound': 0.032,
         'beta': 0.003997740310513592, 'eta': 0.010000000000000009,
         'model_width': 0.004930459275644886, 'model_oracle_width': 0.00581282708190597},
    ('laplace', 0.5, 1e-06, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 0.475, 'epsilon_bound': 0.025,
         'beta': 0.003622260448859901, 'eta': 0.010000000000000009,
         'model_width': 0.0037569512466539986, 'model_oracle_width': 0.004721775081034334},
    ('laplace', 0.75, 1e-06, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 0.7125, 'epsilon_bound': 0.037500000000000006,
         'beta': 0.003938456149801021, 'eta': 0.010000000000000009,
         'model_width': 0.0024217230880891117, 'model_oracle_width': 0.003247313415987927},
    ('laplace', 1.0, 1e-06, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 0.95, 'epsilon_bound': 0.05,
         'beta': 0.0038064473982231265, 'eta': 0.010000000000000009,
         'model_width': 0.0017770841477030305, 'model_oracle_width': 0.00249870629465024},
    ('laplace', 1.5, 1e-06, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 1.425, 'epsilon_bound': 0.07500000000000001,
         'beta': 0.004138721214578737, 'eta': 0.010000000000000009,
         'model_width': 0.0011694228156749018, 'model_oracle_width': 0.001739564327487092},
    ('laplace', 2.0, 1e-06, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 1.9, 'epsilon_bound': 0.1,
         'beta': 0.004, 'eta': 0.010000000000000009,
         'model_width': 0.0008691718107138252, 'model_oracle_width': 0.0013550239014594532},
    ('laplace', 3.0, 1e-06, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 2.85, 'epsilon_bound': 0.15000000000000002,
         'beta': 0.006, 'eta': 0.010000000000000009,
         'model_width': 0.0005811223401400793, 'model_oracle_width': 0.0009669796078315078},
    ('laplace', 4.0, 1e-06, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 3.8, 'epsilon_bound': 0.2,
         'beta': 0.008, 'eta': 0.010000000000000009,
         'model_width': 0.0004369916594968575, 'model_oracle_width': 0.0007724517321216794},
    ('laplace', 5.0, 1e-06, 10000, 0.0, 1000000.0, 0.95, 'pivot', 2.0, 'tight'):
        {'epsilon_value': 4.75, 'epsilon_bound': 0.25,
         'beta': 0.01, 'eta': 0.010000000000000009,
         'model_width': 0.0003504675518674466, 'model_oracle_width': 0.0006566150563190573},
}
