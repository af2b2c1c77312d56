"""Renderers of the About (landing) page: the attacker's largest belief after an epsilon-DP release.

The landing page is the one a cold server shows first (cold start <= 1.2x a bare one-slider
Streamlit app), so nothing here imports pandas or plotly: the curve is an SVG drawn by
:mod:`ui.svg_charts` and shown with ``st.image``, the table of examples is markdown and the CSV is
plain text. The numbers all come from :func:`dpcore.risk.max_posterior` (odds multiplied by at most
e^epsilon: p e^eps / (1 - p + p e^eps)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import streamlit as st

from dpcore.risk import max_posterior
from ui.chart_text import series_text
from ui.common import show_chart_text
from ui.svg_charts import BLUE, GREY, RED, SvgLine, SvgPoint, line_chart_svg

#: Rows of the table of examples: epsilon -> the largest belief from a 50% and from a 10% prior.
TABLE_EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0, 10.0)


def posterior_curve(epsilon: float) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Priors 0, 0.01, ..., 1 and the largest posterior an epsilon-DP release allows from each."""
    priors = tuple(i / 100 for i in range(101))
    return priors, tuple(float(p) for p in max_posterior(priors, epsilon))


def curve_csv(priors: Sequence[float], posteriors: Sequence[float]) -> bytes:
    """The curve as CSV (columns prior, largest_posterior; fractions, full precision)."""
    rows = "".join(f"{p!r},{q!r}\n" for p, q in zip(priors, posteriors, strict=True))
    return ("prior,largest_posterior\n" + rows).encode("utf-8")


def examples_table() -> str:
    """A markdown table: for each epsilon, e^epsilon and the largest belief from 50% and from 10%."""
    rows = ["| ε | e^ε | from 50%, at most | from 10%, at most |", "| ---: | ---: | ---: | ---: |"]
    for epsilon in TABLE_EPSILONS:
        rows.append(
            f"| {epsilon:g} | {math.exp(epsilon):,.2f} | {100 * max_posterior(0.5, epsilon):.1f}% | "
            f"{100 * max_posterior(0.1, epsilon):.1f}% |"
        )
    return "\n".join(rows)


def posterior_chart_svg(epsilon: float, prior_percent: float, posterior: float) -> str:
    """The chart: the largest belief after the release against the belief before (both in %), the
    diagonal "no release" line, and the page's example (prior_percent, 100 * posterior) marked."""
    priors, posteriors = posterior_curve(epsilon)
    before = tuple(100 * p for p in priors)
    return line_chart_svg(
        [
            SvgLine("no release (belief unchanged)", before, before, color=GREY, dashed=True),
            SvgLine(
                f"largest belief after an ε = {epsilon:g} release",
                before,
                tuple(100 * q for q in posteriors),
                color=BLUE,
                width=3,
            ),
        ],
        points=[SvgPoint("your example", float(prior_percent), 100 * posterior, color=RED)],
        x_range=(0, 100),
        y_range=(0, 100),
        x_label="attacker's belief before (%)",
        y_label="attacker's belief after, at most (%)",
        title=f"Largest belief after an ε = {epsilon:g} release against the belief before",
    )


def render_posterior_chart(epsilon: float, prior_percent: int, posterior: float) -> None:
    """The chart (an SVG image, with a text alternative) and a CSV download of its curve."""
    st.image(
        posterior_chart_svg(epsilon, prior_percent, posterior),
        width="stretch",
        alt=f"Line chart: with ε = {epsilon:g}, an attacker who is {prior_percent}% sure beforehand ends at "
        f"most {100 * posterior:.1f}% sure; the curve shows this for every belief before.",
    )
    # the chart's data for screen readers, at every 10% of belief before (the CSV below has every 1%)
    before = tuple(float(p) for p in range(0, 101, 10))
    after = tuple(100 * float(q) for q in max_posterior([p / 100 for p in before], epsilon))
    show_chart_text(
        series_text(
            [("largest belief after, %", before, after)],
            title=f"Largest belief after an ε = {epsilon:g} release against the belief before",
            x_title="attacker's belief before (%)",
            y_title="attacker's belief after, at most (%)",
        )
    )
    priors, posteriors = posterior_curve(epsilon)
    st.download_button(
        "Download this curve (CSV)",
        lambda: curve_csv(priors, posteriors),
        file_name="about_posterior_curve.csv",
        mime="text/csv",
        key="about_dl_curve",
    )
