"""Landing page: "What do you want to do?" cards that open the right page with a preset,
then differential privacy in plain language and what each page of the app is for.

Thin page: two sliders (epsilon, the attacker's prior) -> dpcore.risk.max_posterior -> ui.about.views (an SVG
chart and a markdown table). No data are used and nothing random is drawn here.

This is the page a cold server shows first (cold start <= 1.2x a bare one-slider app), so it
imports nothing heavy: no pandas and no plotly (plotly.js alone cost the browser ~1 s on a first
load). app.py draws it before the sidebar, and on a plain visit the sidebar does not build the
default data (ui.sidebar.render_sidebar(defer_default=True)): tests/test_sidebar.py checks that a
first visit imports no pandas, scipy or dpcore.data.

What a cold start costs here (benchmarks/bench_cold_start_ratio.py): the title, introduction and cards
are sent before the modules that import numpy (ui.common, dpcore.risk; ~0.1 s of CPU on a cold
server), so the browser draws the top of the page while the server imports them; section headings
are markdown inside their section's text (an ``st.header`` element cost the browser several times a
paragraph); the example's three numbers are one line of text, not three ``st.metric`` elements; no
italics (they load a second font file).
"""

from __future__ import annotations

import math

import streamlit as st

from ui import landing

NEIGHBOURS = (
    "two datasets are neighbours when they differ in one record whose value is replaced "
    "by any other allowed value; the number of records n is the same, so n is public"
)
PUBLIC = (
    "the method and epsilon; bounds such as the lowest and highest income allowed, histogram "
    "bin edges and group labels, chosen without looking at the data (or released with DP and "
    "counted against the budget); the number of records n"
)

st.title("What differential privacy does to an income statistic")
st.write(
    "This app is for people who publish, teach or use income statistics: the Gini index, earnings "
    "percentiles, group averages and ratios. It shows what happens to those numbers when they are "
    "published with **differential privacy** (DP), the method the US Census Bureau and others now use "
    "to protect the people in their data. Everything here runs on the server that shows you this page (your "
    "own computer when you start the app yourself); nothing is sent anywhere else."
)
landing.render_cards()
st.divider()
st.caption("Below: what differential privacy is, in plain language (for reading, not needed to use the pages).")

# imported after the top of the page is on its way to the browser (see the module docstring)
from dpcore.risk import max_posterior  # noqa: E402
from ui.about import views as about_views  # noqa: E402
from ui.common import guard, privacy_note, qp_slider  # noqa: E402

st.markdown(
    "## The idea\n\n"
    "A statistic is published with DP when a little random noise is added on purpose, so that the "
    "published number would look almost the same **whether or not any one person's record were "
    "changed**. Then nobody, whatever else they know, can learn much about one person from it. "
    "The price is accuracy: the published number is a bit off, and these pages show by how much."
)

st.markdown(
    "## Epsilon: how much one person can move the result\n\n"
    "The privacy parameter **epsilon** (ε) is a limit: changing one person's record may make any "
    "published result at most **e^ε times** more (or less) likely. Small ε means strong privacy "
    "and more noise; large ε means weak privacy and less noise. Typical values run from about 0.1 "
    "to about 10."
)

eps = qp_slider(
    "Epsilon (ε)",
    "about_eps",
    0.05,
    10.0,
    1.0,
    0.05,
    help="Try 0.1 (strong privacy), 1 (common in research) and 5 or more (weak privacy).",
)
prior = qp_slider(
    "Attacker's belief before the release (%)",
    "about_prior",
    1,
    99,
    50,
    1,
    help="How sure an attacker already is about a fact about one person, e.g. 'Ana earns more than $100,000'.",
)

with guard("the attacker example"):
    ratio = math.exp(eps)
    post = max_posterior(prior / 100.0, eps)
    st.markdown(
        f"**e^ε (largest change in odds): {ratio:,.2f}×** · **Attacker's belief before: {prior:d}%** · "
        f"**At most, after seeing the release: {100 * post:.1f}%**\n\n"
        f"**Example.** An attacker thinks there is a {prior}% chance that Ana earns more than $100,000 "
        f"(odds {prior}:{100 - prior}). With ε = {eps:g}, seeing the published statistic can multiply "
        f"those odds by at most e^ε = {ratio:,.2f}, so the attacker can end up at most "
        f"**{100 * post:.1f}%** sure. This holds whatever else the attacker knows, even everybody "
        "else's income."
    )

    about_views.render_posterior_chart(eps, prior, post)
    st.markdown(about_views.examples_table())

st.markdown(
    "## Neighbouring datasets: what exactly is protected\n\n"
    "DP compares two **neighbouring** datasets. In this app they are the real data and a copy in "
    "which **one person's record is replaced** by any other allowed value, for instance Ana's income "
    "of $48,000 replaced by $2,000,000. Both have the same number of records n, so **n itself is "
    "not protected** (it is public). The promise is about one record: if a person appears in "
    "several records (say, one per year), the protection is weaker for them. Some pages use a "
    "different relation and say so."
)

st.markdown(
    "## What is public\n\n"
    "- **The method and ε.** DP does not rely on secrecy of how the noise is made.\n"
    "- **Bounds**, such as the lowest and highest income allowed (L and U), and **histogram bin "
    "edges**. They must be chosen without looking at the data (from the law, a survey design or "
    "earlier public releases), or be estimated with DP and charged to the budget. The pages say which.\n"
    "- **Group labels** (which groups exist, e.g. sex or state) and the number of records n.\n"
    "- **The random seed in the sidebar is for teaching only.** It makes a picture reproducible. A real "
    "release draws its noise from the operating system's secure random source and never publishes it."
)

st.markdown(
    "## Sensitivity, and smooth sensitivity in one paragraph\n\n"
    "How much noise is needed depends on how much one record can move the statistic: its "
    "**sensitivity**. For a count it is 1, so noise of typical size 1/ε is enough. For the Gini index "
    "one very rich person can move the result a lot in a tiny dataset but hardly at all in a large "
    "one. **Smooth sensitivity** measures how sensitive **this** dataset and its near neighbours are, "
    "smoothed so the amount of noise itself does not give a person away, and uses heavy-tailed noise "
    "scaled to it. The Gini and percentile pages compare it with simpler worst-case methods."
)

st.markdown(
    "## Planning is not release\n\n"
    "Every page lets you simulate many releases to see the typical error. Doing that on the "
    "confidential data itself is **not private**: the simulations reveal things about the real records. "
    "Plan on synthetic data or a public look-alike (sidebar), then make the one real release with the "
    "chosen ε and count it against the privacy budget. When you upload a file, the sidebar reminds you."
)

st.markdown(
    "## What each page is for\n\n"
    "- **Gini index**: the inequality index with smooth-sensitivity noise (Lan & Reiter): how far the "
    "published Gini lands from the true one, and a credible interval for it.\n"
    "- **Earnings percentiles (PSEO)**: the Census Bureau's graduate-earnings method: a noisy histogram "
    "over fixed public bins, turned into the 25th, 50th and 75th percentiles.\n"
    "- **Group means and parity**: average income per group (e.g. by sex or race) with clipped Laplace "
    "noise, and whether the noise treats small groups unfairly.\n"
    "- **Relative risk and ratios**: ratios of two noisy counts (e.g. poverty rates of two groups), their "
    "bias and confidence intervals.\n"
    "- **Choose epsilon (planner)**: start from the accuracy you need and find the ε, or split a total "
    "budget over several statistics.\n"
    "- **Play the attacker**: a game: guess from one noisy release which of two data sets, differing in one "
    "person, was used, and see that no strategy beats the bound e^ε/(1+e^ε); a class can play together.\n"
    "- **Lessons (teaching)**: ready lesson paths for a class (links with presets, questions and answers), a "
    "printable handout and a before/after view of the same release at two ε.\n"
    "- **About** (this page)."
)

st.markdown(
    "## The data\n\n"
    "The sidebar chooses the income data set **in use** (each page says at its top which data it uses): "
    "the Gini, planner and lessons pages always use it; the percentiles and group-means pages use it when "
    "you pick \"Sidebar dataset\" there (by default they show a PSEO cell and the ACS excerpt, because those "
    "methods need cells or group columns); the ratios page works with counts. The sidebar offers "
    "**synthetic** incomes (log-normal; Pareto-tailed with a "
    "Gini you pick; the extreme two-point data of the Gini paper), a small **real example** shipped with "
    "the app (235 Belgian household incomes from 1857, public domain), **real public survey files** shipped "
    "with the app (an ACS 2019 excerpt of American incomes and the Census PSEO graduate-earnings table), the "
    "CPS extract when it is installed next to the app, or **your own CSV, Excel (.xlsx) or Parquet file**, read in "
    "memory only and never saved."
)

privacy_note(NEIGHBOURS, PUBLIC)
