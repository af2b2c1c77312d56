"""Lesson paths for a 50-minute class: preset links, questions, answers, printable handouts.

Each step is a link to a page with URL query parameters that the page's ``qp_*`` widgets read (keys
and option texts exactly as the pages define them; ``tests/test_page_lessons.py`` opens every link and
checks that the page kept each value). Charts where ε moves the spread open with fixed axes.

In a class session (``ui.classroom``) every link carries the class code, and the steps where
students play take the session's statistic, so a lesson never sends a class to a statistic its
teacher's table does not pool. The handout comes in two versions: the students' (questions only) and
the teacher's (with the answers to look for).
"""

from __future__ import annotations

import functools
import html
from dataclasses import dataclass
from urllib.parse import urlencode

import numpy as np
import streamlit as st

from dpcore.classroom import ClassSession
from ui.classroom import CODE_PARAM
from ui.common import show_spec
from ui.gini import plots as plots_gini


@dataclass(frozen=True)
class Step:
    label: str
    page: str  # app_pages/<file>.py
    params: dict
    question: str
    answer: str
    #: students play the game here: in a class session the link takes the session's statistic
    plays_class_statistic: bool = False


@dataclass(frozen=True)
class Lesson:
    key: str
    title: str
    minutes: int
    goal: str
    steps: tuple[Step, ...]


#: app_pages file -> URL path (as in app.py's st.Page url_path; the about page is the default, "")
URL_PATHS = {
    "app_pages/about.py": "",
    "app_pages/gini.py": "gini",
    "app_pages/percentiles.py": "percentiles",
    "app_pages/stratified.py": "stratified",
    "app_pages/ratios.py": "ratios",
    "app_pages/planner.py": "planner",
    "app_pages/attacker.py": "attacker",
    "app_pages/lessons.py": "lessons",
}

LESSONS: tuple[Lesson, ...] = (
    Lesson(
        "noise",
        "1 · Noise versus ε",
        12,
        "See that ε is a dial: small ε, large noise; large ε, small noise — on charts whose axes stay put.",
        (
            Step(
                "PSEO histogram at ε = 0.1 (fixed axes)",
                "app_pages/percentiles.py",
                {"perc_eps": "0.1", "perc_fixed_axes": "1"},
                "How far are the blue (released) bars from the grey (true) ones? Can a count be negative?",
                "Far: each bin gets noise of about ±20 people at ε = 0.1 (ε/2 per bin), so small bins can go "
                "negative. The released numbers are still useful for the big bins.",
            ),
            Step(
                "The same histogram at ε = 3",
                "app_pages/percentiles.py",
                {"perc_eps": "3.0", "perc_fixed_axes": "1"},
                "What changed, and what did not? (The axes did not move.)",
                "The blue bars now sit almost on the grey ones: 30 times more ε, 30 times less noise. The "
                "privacy protection is 30 times weaker in the exponent.",
            ),
            Step(
                "Gini releases at ε = 0.1 (fixed axes)",
                "app_pages/gini.py",
                {"gini_eps": "0.1", "gini_fixed_axes": "1"},
                "Where could the published Gini land? Would you trust one release?",
                "Anywhere over a wide band: the smooth-sensitivity noise is heavy-tailed. The Laplace panel (right) "
                "is worse still: it must cover every possible data set.",
            ),
            Step(
                "Gini releases at ε = 4",
                "app_pages/gini.py",
                {"gini_eps": "4.0", "gini_fixed_axes": "1"},
                "Compare with the previous chart: same axes, what happened to the spread?",
                "It shrank to a spike near the true Gini: the error falls roughly like 1/ε.",
            ),
        ),
    ),
    Lesson(
        "groups",
        "2 · Small groups",
        12,
        "Noise is the same size for everyone, so it swamps small groups: privacy costs small groups most.",
        (
            Step(
                "Group means, real ACS incomes, ε = 1 (fixed axes)",
                "app_pages/stratified.py",
                {"strat_eps": "1.0", "strat_fixed_axes": "1"},
                "Which groups have the longest bars? Why?",
                "The smallest groups: a mean's sensitivity is (range)/n_g, so its noise grows as the group "
                "shrinks. Large groups are barely affected.",
            ),
            Step(
                "The same at ε = 0.2",
                "app_pages/stratified.py",
                {"strat_eps": "0.2", "strat_fixed_axes": "1"},
                "Which groups are still usable at ε = 0.2?",
                "Only the big ones: five times less ε makes every bar five times longer.",
            ),
            Step(
                "A PSEO cell of 30 graduates",
                "app_pages/percentiles.py",
                {"perc_eps": "1.0", "perc_n": "30", "perc_fixed_axes": "1"},
                "Would you publish these percentiles for a programme with 30 graduates?",
                "Hardly: with 30 people, ±4 people of noise per bin moves the percentiles by whole bins. "
                "PSEO suppresses cells below 30 for this reason.",
            ),
            Step(
                "A PSEO cell of 2,000 graduates",
                "app_pages/percentiles.py",
                {"perc_eps": "1.0", "perc_n": "2000", "perc_fixed_axes": "1"},
                "Same ε, same noise per bin. What is different?",
                "The noise is the same number of people, but now a tiny share of each bin: the percentiles are "
                "accurate. Privacy is cheap for large groups.",
            ),
        ),
    ),
    Lesson(
        "attacker",
        "3 · What an attacker learns",
        15,
        "Play the attacker: even knowing everyone else, you cannot beat e^ε/(1+e^ε) — and neither can a computer.",
        (
            Step(
                "Play: a count, ε = 1 (10 rounds each)",
                "app_pages/attacker.py",
                {"atk_mech": "count_geometric", "atk_eps": "1.0", "atk_round": "1"},
                "Play ten rounds. What fraction did you get right? Who in the class did best?",
                "Most students land near 60–80 %; a few get lucky. The bound is 73 %: with 10 rounds the "
                "interval is wide, so above-bound scores are luck (pool the class to see it).",
                plays_class_statistic=True,
            ),
            Step(
                "The computer plays at ε = 1",
                "app_pages/attacker.py",
                {"atk_mech": "count_geometric", "atk_eps": "1.0", "atk_round": "1"},
                "Press 'let the computer play 1,000 rounds'. Does the best possible attacker beat the bound?",
                "No: it reaches the bound (73 %) within its Monte Carlo error and never exceeds it. That is "
                "what ε-DP promises, for any attacker.",
                plays_class_statistic=True,
            ),
            Step(
                "Play at ε = 0.1",
                "app_pages/attacker.py",
                {"atk_mech": "count_geometric", "atk_eps": "0.1", "atk_round": "100"},
                "Play ten rounds. How is it different?",
                "It is a coin toss: at most 52.5 % right. Small ε makes the two worlds nearly indistinguishable.",
                plays_class_statistic=True,
            ),
            Step(
                "The Gini of 50 incomes at ε = 1",
                "app_pages/attacker.py",
                {"atk_mech": "gini", "atk_eps": "1.0", "atk_round": "200"},
                "The bound is the same 73 %. Does the optimal attacker reach it here?",
                "No (about 55 %): the bound is a worst case; this mechanism and pair of data sets leak less than "
                "the budget allows. ε is a ceiling, not the typical leakage.",
            ),
        ),
    ),
    Lesson(
        "choose",
        "4 · Choosing ε",
        11,
        "ε is a policy choice between accuracy and protection; plan it before looking at the data.",
        (
            Step(
                "What ε means for one person",
                "app_pages/about.py",
                {"about_eps": "1.0"},
                "If an attacker was 50 % sure someone is in the data, how sure can they be after one ε = 1 release?",
                "At most 73 % (e^ε times the odds). At ε = 5 it would be 99 %: little protection.",
            ),
            Step(
                "The same at ε = 5",
                "app_pages/about.py",
                {"about_eps": "5.0"},
                "Would you accept ε = 5 for your own income?",
                "Most people would not: the bound is 99 %.",
            ),
            Step(
                "The planner: a total budget of ε = 1",
                "app_pages/planner.py",
                {"planner_total": "1.0"},
                "How accurate can the statistics be if all of them together get ε = 1?",
                "The planner splits ε across the statistics; each one gets less, so each is noisier. Adding a "
                "statistic costs accuracy in all the others.",
            ),
            Step(
                "The planner: ε = 4",
                "app_pages/planner.py",
                {"planner_total": "4.0"},
                "What do you gain, and what do you give up?",
                "Each statistic is about 4 times more accurate; the privacy bound of lesson 3 rises from 73 % to "
                "98 %. There is no free lunch: choose ε with the data subjects in mind, before seeing the data.",
            ),
        ),
    ),
)


def step_params(step: Step, class_session: ClassSession | None = None) -> dict:
    """The step's query parameters; in a class session plus the class code, and the session's statistic
    where students play (the teacher's table pools one statistic)."""
    params = dict(step.params)
    if class_session is not None:
        if step.plays_class_statistic and class_session.mechanism:
            params["atk_mech"] = class_session.mechanism
        params[CODE_PARAM] = class_session.code
        params.pop("atk_round", None)  # a student's rounds are their own: the link does not send them back to 1
    return params


def step_url(step: Step, base_url: str = "", class_session: ClassSession | None = None) -> str:
    path = URL_PATHS[step.page]
    query = urlencode(step_params(step, class_session))
    return f"{base_url.rstrip('/')}/{path}" + (f"?{query}" if query else "")


def _handout_title(answers: bool) -> str:
    return (
        "Differential privacy in one class: teacher's handout (with the answers)"
        if answers
        else "Differential privacy in one class: student handout"
    )


def _handout_intro(base_url: str, class_session: ClassSession | None) -> str:
    text = f"Open the links in a browser (app at {base_url}). Each link opens a page with the settings preset."
    if class_session is not None:
        text += f" The links join class session {class_session.code}."
    return text


def handout_markdown(base_url: str, *, answers: bool = True, class_session: ClassSession | None = None) -> str:
    """The handout as Markdown: every lesson, its links (absolute, from ``base_url``) and questions, and
    with ``answers`` (the teacher's copy) the answer to look for under each question."""
    lines = [f"# {_handout_title(answers)}", "", _handout_intro(base_url, class_session), ""]
    for lesson in LESSONS:
        lines += [f"## {lesson.title} ({lesson.minutes} min)", "", lesson.goal, ""]
        for number, step in enumerate(lesson.steps, 1):
            url = step_url(step, base_url, class_session)
            lines += [  # the address written out too: a printed link is only its label
                f"{number}. **[{step.label}]({url})**",
                f"   - Open: <{url}>",
                f"   - Ask: {step.question}",
            ]
            if answers:
                lines.append(f"   - Look for: {step.answer}")
            lines.append("")
    return "\n".join(lines)


def handout_html(base_url: str, *, answers: bool = True, class_session: ClassSession | None = None) -> str:
    """The same handout as one self-contained HTML file (no scripts, no external resources; prints well)."""
    title = _handout_title(answers)
    parts = [
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
        "<style>body{font-family:sans-serif;max-width:48em;margin:2em auto;line-height:1.4}"
        "li{margin-bottom:.6em}.ask{margin:.2em 0}.answer{color:#335}.url{font-size:.85em;word-break:break-all}"
        "@media print{a{color:black}h2{page-break-before:auto}}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p>{html.escape(_handout_intro(base_url, class_session))}</p>",
    ]
    for lesson in LESSONS:
        parts.append(
            f"<h2>{html.escape(lesson.title)} ({lesson.minutes} min)</h2><p>{html.escape(lesson.goal)}</p><ol>"
        )
        for step in lesson.steps:
            url = html.escape(step_url(step, base_url, class_session), quote=True)
            answer = f"<p class='answer'><b>Look for:</b> {html.escape(step.answer)}</p>" if answers else ""
            parts.append(  # the address written out under the link: on paper a link is only its label
                f"<li><a href=\"{url}\">{html.escape(step.label)}</a><br><span class='url'>{url}</span>"
                f"<p class='ask'><b>Ask:</b> {html.escape(step.question)}</p>{answer}</li>"
            )
        parts.append("</ol>")
    parts.append("</body></html>")
    return "".join(parts)


def lesson(item: Lesson, *, show_answers: bool, class_session: ClassSession | None = None) -> None:
    """One lesson: goal, then each step's link, question and (optionally) the answer to look for."""
    st.subheader(f"{item.title} · {item.minutes} min")
    st.markdown(item.goal)
    for number, step in enumerate(item.steps, 1):
        st.page_link(
            step.page,
            label=f"{number}. {step.label}",
            icon=":material/arrow_forward:",
            query_params=step_params(step, class_session),
        )
        # question and answer in one element (a page load pays per element; sixteen steps)
        st.markdown(f"**Ask:** {step.question}" + (f"\n\n:small[**Look for:** {step.answer}]" if show_answers else ""))


def handout_downloads(base_url: str, class_session: ClassSession | None = None) -> None:
    """Two versions, each as printable HTML and as Markdown, built when a button is clicked."""
    students, teacher = st.columns(2)
    for column, answers, who, name in (
        (students, False, "student", "Student handout (no answers)"),
        (teacher, True, "teacher", "Teacher's handout (with the answers)"),
    ):
        column.download_button(
            f"{name} · HTML, printable",
            functools.partial(handout_html, base_url, answers=answers, class_session=class_session),
            file_name=f"dp_lessons_{who}.html",
            mime="text/html",
            key=f"les_dl_{who}_html",
        )
        column.download_button(
            f"{name} · Markdown",
            functools.partial(handout_markdown, base_url, answers=answers, class_session=class_session),
            file_name=f"dp_lessons_{who}.md",
            mime="text/markdown",
            key=f"les_dl_{who}_md",
        )


def _share_off_chart(values, value_range: tuple[float, float]) -> float:
    values = np.asarray(values, dtype=float)
    inside = (values >= value_range[0]) & (values <= value_range[1])
    return 1.0 - float(inside.sum()) / max(values.size, 1)


def _panel_title(name: str, off_chart: float) -> str:
    return f"<b>{name}</b><br>released Gini" + ("" if off_chart < 0.0005 else f"<br>{off_chart:.1%} off-chart")


def releases_spec(view) -> dict:
    """The Gini page's release histogram (``plots_gini.releases_figure``) of one Gini view on the fixed
    public axes (Gini 0–1, share 0–100 %), as its plain spec (``to_dict()``), for :func:`before_after`.

    Each chart gets half of the page here (two ε side by side), about 450 px at a 1280 px window, where
    the Gini page's two-line panel titles ran into each other: the titles are cut to the panel's name,
    the axis and the share off-chart (the red "impossible values" note has nothing to mark on the fixed
    0–1 axis), and the right panel's share ticks, equal to the left's on fixed axes, are left out."""
    from ui.gini.views import FIXED_GINI_RANGE, FIXED_SHARE_RANGE

    figure = plots_gini.releases_figure(
        view.true_gini,
        view.simulated_releases,
        view.simulated_laplace_releases,
        smooth_range=FIXED_GINI_RANGE,
        laplace_range=FIXED_GINI_RANGE,
        share_range=FIXED_SHARE_RANGE,
    )
    spec = figure if isinstance(figure, dict) else figure.to_dict()  # a plain spec already, or a go.Figure
    layout = spec["layout"]
    layout["xaxis"]["title"] = dict(
        text=_panel_title("Smooth sensitivity", _share_off_chart(view.simulated_releases, FIXED_GINI_RANGE))
    )
    layout["xaxis2"]["title"] = dict(
        text=_panel_title("Laplace (baseline)", _share_off_chart(view.simulated_laplace_releases, FIXED_GINI_RANGE))
    )
    layout["yaxis"]["title"] = dict(text="share of releases")
    layout["yaxis2"]["showticklabels"] = False
    layout["xaxis"]["domain"], layout["xaxis2"]["domain"] = [0.0, 0.47], [0.53, 1.0]
    return spec


def before_after(panels: tuple, epsilons: tuple[float, float]) -> None:
    """The Gini release histogram at two ε, side by side, on the same fixed axes: ``panels`` holds
    (view, :func:`releases_spec` of the view) per ε."""
    columns = st.columns(2)
    for index, (column, (view, spec), eps) in enumerate(zip(columns, panels, epsilons, strict=True)):
        med = view.abs_error_quantiles[0]
        column.markdown(f"**ε = {eps:g}**: half of the releases within ±{med:.3g} of the true Gini")
        show_spec(spec, container=column, key=f"les_before_after_{index}")
    st.caption(
        "Both charts use the same axes (Gini 0–1, share 0–100 %), chosen from public facts only, so the "
        "change you see is the change in noise."
    )
