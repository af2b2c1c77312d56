"""AppTest tests of the Lessons page and of the lesson links, plus the "fixed axes" option."""

from __future__ import annotations

import html
import json
from html.parser import HTMLParser
from urllib.parse import parse_qsl

import pytest
from support import assert_clean, open_page, outside_event_loop, page_text, query_param

from ui.lessons import views as lessons_views

PAGE = "app_pages/lessons.py"
STEPS = [(lesson.key, number, step) for lesson in lessons_views.LESSONS for number, step in enumerate(lesson.steps, 1)]


def test_opens_with_lessons_links_and_before_after():
    at = open_page(PAGE)
    assert_clean(at)
    assert at.title[0].value.startswith("Lessons")
    text = page_text(at)
    assert 3 <= len(lessons_views.LESSONS) <= 4
    for lesson in lessons_views.LESSONS:
        assert lesson.title in "\n".join(s.value for s in at.subheader)
    for _, _, step in STEPS:
        assert step.question in text and step.answer in text
    assert len(at.get("page_link")) == len(STEPS)
    # each step's question and answer are one element (a page load pays per element)
    steps = [m.value for m in at.markdown if m.value.startswith("**Ask:**")]
    assert len(steps) == len(STEPS) and all("**Look for:**" in m for m in steps)
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert len(charts) == 2
    # before/after: identical axes, from public facts only
    axes = [(c["layout"]["xaxis"]["range"], c["layout"]["yaxis"]["range"]) for c in charts]
    assert axes[0] == axes[1] == ([0.0, 1.0], [0.0, 1.0])


def test_answers_can_be_hidden_and_epsilon_moves():
    at = open_page(PAGE, les_answers="0")
    assert_clean(at)
    assert STEPS[0][2].answer not in page_text(at)
    at.select_slider(key="les_eps_b").set_value(1.0).run()
    assert_clean(at)
    at.select_slider(key="les_eps_a").set_value(1.0).run()  # the same ε on both sides is allowed
    assert_clean(at)


def test_bad_address_shows_error():
    at = open_page(PAGE)
    at.text_input(key="les_base").input("localhost").run()
    assert_clean(at, expected_error="must start with http")


@pytest.mark.parametrize("lesson_key,number,step", STEPS, ids=[f"{k}-{n}" for k, n, _ in STEPS])
def test_every_lesson_link_opens_and_keeps_its_settings(lesson_key, number, step):
    """The linked page opens without an exception or error box, and every preset reached a widget that
    accepted it (an unknown key or an invalid option text would be replaced by the page's default)."""
    at = open_page(step.page, **step.params)
    assert_clean(at)
    for key, value in step.params.items():
        assert key in at.session_state, f"{step.page} has no widget {key!r}"
        assert query_param(at, key) == value, (key, query_param(at, key), value)


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.hrefs.append(dict(attrs)["href"])


def test_handouts_contain_every_link_question_and_answer():
    """The teacher's handout has every link, question and answer; the student handout the same links and
    questions and none of the answers (it used to be one handout, answers always in)."""
    base = "https://dp.example.edu"
    expected = [lessons_views.step_url(step, base) for _, _, step in STEPS]
    assert expected[0] == "https://dp.example.edu/percentiles?perc_eps=0.1&perc_fixed_axes=1"
    for answers in (True, False):
        markdown = lessons_views.handout_markdown(base, answers=answers)
        page = lessons_views.handout_html(base, answers=answers)
        parser = _Links()
        parser.feed(page)
        assert parser.hrefs == expected
        assert "<script" not in page and "src=" not in page  # self-contained
        for text in (markdown, page):
            for _, _, step in STEPS:
                assert html.escape(step.question) in text or step.question in text
                assert (html.escape(step.answer) in text or step.answer in text) is answers, step.label
            assert text.count("Look for:") == (len(STEPS) if answers else 0)
        for url in expected:
            assert url in markdown
    assert "teacher's handout" in lessons_views.handout_markdown(base, answers=True)
    assert "student handout" in lessons_views.handout_markdown(base, answers=False)


def test_the_page_offers_both_handouts_and_hides_answers_from_the_student_one():
    at = open_page(PAGE, les_answers="0")
    assert_clean(at)
    labels = [d.proto.label for d in at.get("download_button")]
    assert labels == [
        "Student handout (no answers) · HTML, printable",
        "Student handout (no answers) · Markdown",
        "Teacher's handout (with the answers) · HTML, printable",
        "Teacher's handout (with the answers) · Markdown",
    ]


@pytest.fixture
def class_session(tmp_path, monkeypatch):
    from dpcore import classroom as classroom_lib

    monkeypatch.setenv(classroom_lib.ENV_VAR, f"sqlite:///{tmp_path}/classroom.db")
    store = classroom_lib.open_classroom()
    return store.session(store.create_session("mean"))


def test_lesson_links_keep_the_class_session_and_its_statistic(class_session):
    """Every lesson link carries the class code (it was dropped: students left the class at the first
    lesson link), and the steps where students play take the session's statistic (a lesson used
    count_geometric while the class played count, so the teacher's table split)."""
    at = open_page(PAGE, atk_class=class_session.code)
    assert_clean(at)
    assert f"Class session **{class_session.code}**" in page_text(at)
    for link, (_, _, step) in zip(at.get("page_link"), STEPS, strict=True):
        query = dict(parse_qsl(link.proto.query_string))
        assert query["atk_class"] == class_session.code, step.label
        assert "atk_round" not in query, step.label  # a student's rounds are their own: never sent back to 1
        if step.plays_class_statistic:
            assert query["atk_mech"] == "mean", step.label
        else:
            expected = {k: v for k, v in step.params.items() if k != "atk_round"}
            assert {k: v for k, v in query.items() if k != "atk_class"} == expected, step.label
    assert sum(step.plays_class_statistic for _, _, step in STEPS) == 3
    handout = lessons_views.handout_markdown("http://x", answers=False, class_session=class_session)
    assert handout.count(f"atk_class={class_session.code}") == 2 * len(STEPS)  # each link and its address


def test_in_a_class_session_the_answers_start_hidden(class_session):
    """Students of a class open the Lessons page too: there the answers are off until switched on."""
    at = open_page(PAGE, atk_class=class_session.code)
    assert STEPS[0][2].answer not in page_text(at)
    at.toggle(key="les_answers").set_value(True).run()
    assert_clean(at)
    assert STEPS[0][2].answer in page_text(at)


def test_a_lesson_link_opens_the_attacker_game_inside_the_class(class_session):
    step = next(step for _, _, step in STEPS if step.plays_class_statistic)
    at = open_page(step.page, **lessons_views.step_params(step, class_session))
    assert_clean(at)
    assert f"Class session **{class_session.code}**" in page_text(at)  # joined: the guesses are pooled
    assert at.selectbox(key="atk_mech").value == "mean"


def test_a_bad_class_code_on_the_lessons_page_is_one_error_and_no_class_links(class_session):
    at = open_page(PAGE, atk_class="ZZZZZZ")
    assert_clean(at, expected_error="no class session has the code ZZZZZZ")
    assert len(at.error) == 1
    assert all("atk_class" not in link.proto.query_string for link in at.get("page_link"))


def _spec(at, index=0):
    return json.loads(at.get("plotly_chart")[index].proto.spec)


@pytest.mark.parametrize(
    "page,toggle,eps_key,low,high,extra,axis",
    [
        ("app_pages/gini.py", "gini_fixed_axes", "gini_eps", "0.1", "4.0", {"gini_n": "2000"}, "xaxis"),
        ("app_pages/percentiles.py", "perc_fixed_axes", "perc_eps", "0.1", "3.0", {}, "yaxis"),
        ("app_pages/stratified.py", "strat_fixed_axes", "strat_eps", "0.1", "5.0", {}, "xaxis"),  # horizontal bars
    ],
)
def test_fixed_axes_do_not_depend_on_the_draws(page, toggle, eps_key, low, high, extra, axis):
    """With fixed axes the chart's axis range is set and the same at two ε and two seeds; without, it
    follows the draws (a set range that moves, or plotly's autorange)."""
    fixed = [
        _spec(open_page(page, **{toggle: "1", eps_key: eps, "seed": s, **extra}))["layout"][axis].get("range")
        for eps, s in ((low, "1"), (high, "2"))
    ]
    assert fixed[0] is not None and fixed[0] == fixed[1]
    free = [
        _spec(open_page(page, **{toggle: "0", eps_key: eps, **extra}))["layout"][axis].get("range")
        for eps in (low, high)
    ]
    assert free[0] is None or free[0] != free[1]


def test_group_means_compare_methods_at_equal_privacy():
    """The group-means page runs CoinPress at the rho whose (eps, delta) conversion equals the
    Laplace methods' eps (not at rho = eps^2/2, which is (5.76, 1e-6)-DP at eps = 1)."""
    from dpcore import coinpress
    from dpcore.views import stratified as strat_experiments

    for eps in (0.05, 0.5, 1.0, 5.0):
        rho = strat_experiments.coinpress_rho(eps, "epsilon_delta")
        assert coinpress.zcdp_to_dp(rho, strat_experiments.DELTA) <= eps
        assert coinpress.zcdp_to_dp(rho * (1 + 1e-9), strat_experiments.DELTA) > eps  # the largest such rho
    assert strat_experiments.coinpress_rho(1.0) == 0.5  # the paper's convention stays available
    at = open_page("app_pages/stratified.py", strat_eps="1.0")
    assert_clean(at)
    assert "Equal privacy: every method is (ε = 1, δ = 1e-06)-DP" in page_text(at)


def test_before_after_charts_are_the_gini_views_at_each_epsilon():
    """Each side is computed on its own (one ε move recomputes one side) and still shows the
    Gini page's release histogram of gini_view at that ε on the sidebar data, number for number."""
    import plotly.io as pio

    from dpcore.views import gini as gini_experiments
    from ui.common import readable_axes
    from ui.sidebar import default_dataset

    at = open_page(PAGE)
    before = _spec(at, 1)
    at.select_slider(key="les_eps_a").set_value(2.0).run()
    assert_clean(at)
    assert _spec(at, 1) == before  # the "after" side did not change
    values = default_dataset().values
    for index, eps in ((0, 2.0), (1, 4.0)):
        view = gini_experiments.gini_view(
            values, epsilon=eps, seed=int(at.session_state["seed"]), **_lessons_defaults()
        )
        shown = readable_axes(lessons_views.releases_spec(view))  # as ui.common draws every chart
        expected = json.loads(pio.to_json(shown, validate=False))
        assert _spec(at, index) == expected, index


def _lessons_defaults() -> dict:
    from dpcore import defaults

    return {
        "gamma": defaults.GINI_GAMMA,
        "lower": defaults.INCOME_LOWER,
        "upper": defaults.INCOME_UPPER,
        "upper_epsilon": 0.0,
        "calibration": defaults.GINI_CALIBRATION,
        "method": "exact",
        "prior": "uniform",
    }


def test_epsilon_sliders_of_percentiles_group_means_and_lessons_rerun_their_fragment():
    """On a real `run.sh app` server with the benchmarks' browser-like client: the ε slider that
    benchmarks/bench_load.py and st_load.py move (the first main-area slider naming ε) sits in an
    st.fragment on each of these pages, and moving it reruns that fragment without an exception while
    the address bar follows the new value. No timing assertions."""
    import asyncio
    import random
    import sys
    from pathlib import Path
    from urllib.parse import parse_qs

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from bench_load import Session, pick_slider, start_server

    expected = {
        "percentiles": ("Privacy budget ε (per cell)", "perc_eps"),
        "stratified": ("Privacy budget ε", "strat_eps"),
        "lessons": ("ε before", "les_eps_a"),
    }

    async def scenario(base: str, page: str) -> None:
        session = Session(base, base.replace("http", "ws", 1) + "/_stcore/stream", page)
        await session.open()
        try:
            _, sliders, exceptions = await session.rerun()
            assert exceptions == 0, page
            slider = pick_slider(sliders)
            assert slider is not None and slider.label == expected[page][0], (page, slider)
            assert slider.fragment_id, f"{page}: the ε slider is not in an st.fragment"
            for _ in range(2):
                session.move(slider)
                state = session.states[slider.widget_id]
                moved = state.string_array_value.data[0] if slider.options else state.double_array_value.data[0]
                _, sliders, exceptions = await session.rerun(slider.fragment_id)
                assert exceptions == 0, page
                assert any(s.widget_id == slider.widget_id for s in sliders), page  # the fragment was redrawn
                shown = parse_qs(session.query_string)[expected[page][1]][0]
                assert float(shown) == pytest.approx(float(moved)), (page, shown, moved)
        finally:
            await session.close()

    random.seed(13)
    with start_server("app") as server:
        for page in expected:
            outside_event_loop(asyncio.run, scenario(server.url, page))  # Playwright may hold this thread's loop


def test_printed_handouts_show_every_links_address():
    """On paper a link is only its label: both handouts write each step's address out as text (the printed
    student handout had the labels and no way to open them)."""
    base = "https://dp.example.edu"
    for answers in (True, False):
        page = lessons_views.handout_html(base, answers=answers)
        visible = _VisibleText()
        visible.feed(page)
        markdown = lessons_views.handout_markdown(base, answers=answers)
        for _, _, step in STEPS:
            url = lessons_views.step_url(step, base)
            assert url in visible.text, step.label
            assert f"<{url}>" in markdown, step.label  # an autolink: printed as the address itself


class _VisibleText(HTMLParser):
    """The text a printed page shows (no attributes, no style)."""

    def __init__(self):
        super().__init__()
        self.text, self._in_style = "", False

    def handle_starttag(self, tag, attrs):
        self._in_style = tag == "style"

    def handle_endtag(self, tag):
        self._in_style = False

    def handle_data(self, data):
        if not self._in_style:
            self.text += data
