"""The Gini and group-means renderers' fast paths show what the slow ones showed: the Gini error
summary read from the view equals the one built from ``view.error_table()``, the data digest that keys the
Gini page's caches follows the records, and the group-means tables sent as prepared Arrow tables are the
bytes st.dataframe makes of the DataFrames."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from streamlit import dataframe_util

from dpcore.data import lognormal_incomes
from dpcore.views import gini as gini_experiments
from dpcore.views import stratified as strat_experiments
from ui.gini import views as gini_views
from ui.stratified import views as stratified_views


def _summary_from_table(table: pd.DataFrame) -> str:
    """The error summary as the page built it before (from the DataFrame, row by row)."""
    columns = list(table.columns)
    rows = [
        [str(row[columns[0]])] + [gini_views.fmt(float(v), 4) if v < 1 else f"{v:.3g}" for v in row[columns[1:]]]
        for _, row in table.iterrows()
    ]
    header = [c.replace("|", "\\|") for c in columns]
    lines = ["| " + " | ".join(header) + " |", "| --- |" + " ---: |" * (len(columns) - 1)]
    return "\n".join(lines + ["| " + " | ".join(cells) + " |" for cells in rows])


@pytest.mark.parametrize(
    "gamma, epsilon, noise", [(2.0, 1.0, "cauchy"), (4.0, 0.3, "cauchy"), (2.0, 2.0, "laplace"), (2.0, 0.05, "cauchy")]
)
def test_gini_error_summary_equals_the_table_one(gamma, epsilon, noise):
    values = lognormal_incomes(2000, sigma=0.9, rng=4)
    view = gini_experiments.gini_view(
        values, epsilon=epsilon, gamma=gamma, lower=0.0, upper=2e6, method="fast", seed=3, noise=noise
    )
    table = view.error_table()
    assert tuple(table["mechanism"]) == gini_views.ERROR_TABLE_MECHANISMS
    expected = _summary_from_table(table)
    assert gini_views._error_summary_markdown(view) == expected
    assert ("RMSE" in expected) == (view.rmse is not None)


def test_data_digest_follows_the_records():
    values = lognormal_incomes(500, sigma=0.9, rng=1)
    first = gini_views.data_digest(values)
    assert gini_views.data_digest(values) == first  # remembered
    assert gini_views.data_digest(values.copy()) == first  # same records, another array: same key
    changed = values.copy()
    changed[17] += 1.0
    assert gini_views.data_digest(changed) != first
    assert gini_views.data_digest(values[:-1]) != first
    assert gini_views.data_digest(values.astype(np.float32)) != first


def test_group_means_tables_are_the_bytes_st_dataframe_makes():
    data = strat_experiments.grouped_data(dict(source="synthetic", n=3000, k=5, alpha=1.0, preset=None, seed=11))
    view = strat_experiments.group_means_view(
        data, epsilon=0.5, clip=3.0, prior=[-3.0, 3.0], method="Stratified Laplace", seed=4
    )
    ready = stratified_views._prepare_group_means(view, value_label="value", fixed_axes=False)
    table = pd.DataFrame(view.group_rows())
    pd.testing.assert_frame_equal(ready["table"], table)
    for shown, frame in (
        (ready["table_shown"], stratified_views.group_table_shown(table)),
        (ready["summary_shown"], ready["summary"]),
    ):
        assert dataframe_util.convert_arrow_table_to_arrow_bytes(
            shown
        ) == dataframe_util.convert_pandas_df_to_arrow_bytes(frame)
    again = stratified_views._prepared_group_means(view, value_label="value", memo_key=("k",), fixed_axes=False)
    assert stratified_views._prepared_group_means(view, value_label="value", memo_key=("k",), fixed_axes=False) is again
    assert (
        stratified_views._prepared_group_means(view, value_label="value", memo_key=("k",), fixed_axes=True) is not again
    )


def test_overall_errors_boxes_are_the_per_method_percentiles():
    """The box plot's statistics (one np.percentile call per method, methods in order of appearance) equal the
    pandas groupby(sort=False) + one np.percentile per level they replaced."""
    from ui.stratified import plots as plots_stratified

    rng = np.random.default_rng(2)
    methods = np.array(["b", "a", "c", "a", "b"] * 60, dtype=object)  # interleaved rows, not sorted
    frame = pd.DataFrame({"method": methods, "error": rng.standard_cauchy(methods.size)})
    boxes = plots_stratified.overall_errors_spec(frame)["data"]
    assert [box["name"] for box in boxes] == ["b", "a", "c"]
    for box, (method, sub) in zip(boxes, frame.groupby("method", sort=False), strict=True):
        e = sub["error"].to_numpy()
        assert box["name"] == method
        assert [box["lowerfence"][0], box["q1"][0], box["median"][0], box["q3"][0], box["upperfence"][0]] == [
            float(np.percentile(e, p)) for p in (5, 25, 50, 75, 95)
        ]
        assert box["mean"][0] == float(e.mean())


def test_settings_key_tells_settings_apart():
    base = {"epsilon": 1.0, "gamma": 2.0, "upper": None, "prior": "uniform", "n": 10_000, "noise": "cauchy"}
    key = gini_views.settings_key(base)
    assert gini_views.settings_key(dict(reversed(list(base.items())))) == key  # order does not matter
    for change in (
        {"epsilon": 0.30000000000000004},
        {"epsilon": 1},
        {"upper": 0.0},
        {"prior": ("beta", 6.0, 7.0)},
        {"n": 9_999},
        {"noise": "laplace"},
        {"extra": None},
    ):
        assert gini_views.settings_key({**base, **change}) != key, change
    with pytest.raises(TypeError):
        gini_views.settings_key({"values": np.zeros(3)})
