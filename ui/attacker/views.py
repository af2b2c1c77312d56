"""Renderers of the "Play the attacker" page; the game itself is dpcore.views.attacker.

Before the player guesses, only public things are drawn: both candidate data sets (the DP attacker
knows them), the noise law and the release. The secret (target in or out) and the optimal attacker's
guess are drawn by :func:`reveal`, which the page calls only once the round has a guess.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from dpcore.views import attacker as attacker_lib
from ui.attacker import plots as plots_attacker
from ui.common import show_figure

MECHANISM_LABELS = {
    "count": "a count (Laplace noise)",
    "count_geometric": "a count (discrete Laplace noise)",
    "mean": "a mean (Laplace noise)",
    "percentile": "a percentile (PSEO noisy histogram)",
    "gini": "the Gini index (smooth sensitivity)",
}
STATISTIC_NAMES = {
    "count": "number earning ≥ {threshold}",
    "count_geometric": "number earning ≥ {threshold}",
    "mean": "mean income (clipped to [{lower}, {upper}])",
    "percentile": "median income",
    "gini": "Gini index",
}
HISTORY_KEY = "atk_history"  # ui.classroom.HISTORY_KEY: the rounds played, kept in the link by ui.classroom
IN_LABEL, OUT_LABEL = "A · the target is in", "B · the target is not in"


def money(value: float) -> str:
    return f"${value:,.0f}"


def fmt_statistic(mechanism: str, value: float, *, released: bool = False) -> str:
    if mechanism in ("count", "count_geometric"):
        return f"{value:,.2f}" if released and mechanism == "count" else f"{value:,.0f}"
    if mechanism == "gini":
        return f"{value:.4f}"
    return money(value)


def statistic_name(setup: attacker_lib.GameSetup) -> str:
    return STATISTIC_NAMES[setup.mechanism].format(
        threshold=money(setup.count_threshold), lower=money(setup.lower), upper=money(setup.upper)
    )


def intro() -> None:
    st.markdown(
        "You are the attacker. There are two possible data sets that differ in **one person**: "
        "**A** has the *target* (a top earner) and **B** has a *stand-in* in the target's place; everyone "
        "else is the same. You know both data sets — the worst case differential privacy protects against. "
        "The app tosses a coin to pick A or B, publishes one DP release of a statistic, and you guess which "
        "data set was used. Differential privacy promises that **no one** — not you, not the best possible "
        "computer attacker — is right more often than **e^ε / (1 + e^ε)** of the time."
    )


def candidates(view: attacker_lib.AttackerView) -> None:
    """The two candidate data sets and their true statistics (public in the game), the noise law."""
    setup = view.setup
    name = statistic_name(setup)
    st.subheader("What you know")
    st.caption(f"The game uses its own small public synthetic group of n = {setup.n} people (not the sidebar data).")
    left, right = st.columns(2)
    left.markdown(
        f"**{IN_LABEL}**  \n{setup.n - 1} shared people + the target earning "
        f"**{money(setup.target_income)}**  \n{name}: **{fmt_statistic(setup.mechanism, setup.statistic_in)}**"
    )
    right.markdown(
        f"**{OUT_LABEL}**  \nthe same {setup.n - 1} people + a stand-in earning "
        f"**{money(setup.stand_in_income)}**  \n{name}: **{fmt_statistic(setup.mechanism, setup.statistic_out)}**"
    )
    if setup.mechanism == "percentile":
        st.caption(
            f"The release is the PSEO histogram (each of the 21 bins + noise with ε/2) and the median read off "
            f"it. Only two bins differ: the target's bin has {setup.bin_counts_in[0]} people in A and "
            f"{setup.bin_counts_out[0]} in B; the stand-in's bin {setup.bin_counts_in[1]} in A and "
            f"{setup.bin_counts_out[1]} in B."
        )
    elif setup.mechanism == "gini":
        st.caption(
            f"Noise: heavy-tailed (density ∝ 1/(1+|z|^{setup.gamma:g})) with scale "
            f"{setup.noise_scale_in:.4f} for A and {setup.noise_scale_out:.4f} for B (the scale depends on the "
            "data through the smooth sensitivity)."
        )
    else:
        kind = "discrete Laplace" if setup.mechanism == "count_geometric" else "Laplace"
        st.caption(f"Noise: {kind} with scale {setup.noise_scale_in:,.4g} (sensitivity / ε), the same for A and B.")


def class_note(code: str, class_statistic: str, pooled: bool) -> None:
    """What a student in a class session should know: pooled or practice, and whose rounds these are."""
    if pooled:
        st.info(
            f"Class session **{code}**: your guesses count towards the class's pooled rate. Your rounds are "
            "your own (another student's round 1 is a different round), so answers cannot be passed around."
        )
    else:
        st.warning(
            f"Practice: class session **{code}** plays {class_statistic}; guesses at this statistic are not "
            "sent to the class. Pick that statistic above to count again."
        )


def release(view: attacker_lib.AttackerView, *, class_round: tuple[int, str] | None = None) -> None:
    """The published number (and, for the percentile, the two informative noisy bin counts).

    ``class_round`` = (round number, class code) for a student in a class session, whose round seed is
    derived from the class code and the student's session (so it is not the round number)."""
    setup, game_round = view.setup, view.round
    st.subheader("The release")
    text = f"Published {statistic_name(setup)}: **{fmt_statistic(setup.mechanism, game_round.release, released=True)}**"
    if game_round.release_bins is not None:
        text += (
            f"  \nNoisy count of the target's bin: **{game_round.release_bins[0]:.0f}**; of the stand-in's bin: "
            f"**{game_round.release_bins[1]:.0f}**"
        )
    st.markdown(text)
    if class_round is None:
        st.caption(
            f"Round {game_round.round_seed} (the round number is its seed: the same number replays the same "
            "coin and noise). This is a simulation with numpy noise, not a real release."
        )
    else:
        st.caption(
            f"Your round {class_round[0]} in class session {class_round[1]} (its seed comes from the class "
            "code, your browser session and the round number). This is a simulation with numpy noise, not a "
            "real release."
        )
    if setup.mechanism != "percentile":
        with st.expander("Hint: how likely is this release under A and under B?"):
            show_figure(plots_attacker.densities_figure(setup, game_round.release), key="atk_densities")
            st.caption(
                "The optimal attacker picks the data set whose curve is higher at the published value. "
                "DP keeps the two curves within a factor e^ε of each other everywhere."
            )


def guess_buttons(on_guess: Callable[[bool], None]) -> None:
    left, right = st.columns(2)
    left.button("Guess A: the target is in", key="atk_guess_in", on_click=on_guess, args=(True,), type="primary")
    right.button("Guess B: the target is not in", key="atk_guess_out", on_click=on_guess, args=(False,), type="primary")


def reveal(view: attacker_lib.AttackerView, guess: bool, on_next: Callable[[], None]) -> None:
    """After the guess: the secret, whether the player was right, and what the optimal attacker did."""
    secret = view.confidential_secret
    truth = IN_LABEL if secret else OUT_LABEL
    (st.success if guess == secret else st.warning)(
        f"The answer was **{truth}**. You were **{'right' if guess == secret else 'wrong'}**."
    )
    llr = float(
        attacker_lib.log_likelihood_ratio(
            view.setup, [view.round.release_bins] if view.round.release_bins else [view.round.release]
        )[0]
    )
    optimal = view.round.optimal_guess
    st.caption(
        f"The optimal attacker compares how likely this release is under A and under B (log ratio "
        f"{llr:+.3f}; DP keeps it within ±ε = ±{view.setup.epsilon:g}) and guessed "
        f"**{'A' if optimal else 'B'}** ({'right' if optimal == secret else 'wrong'})."
    )
    st.button("Next round", key="atk_next", on_click=on_next, type="primary")


def score(history: list[dict[str, Any]], mechanism: str, epsilon: float) -> None:
    """Your success rate and the optimal attacker's on the same rounds, against the bound."""
    mine = [h for h in history if h["mechanism"] == mechanism and h["epsilon"] == epsilon]
    st.subheader(f"Your score at these settings (ε = {epsilon:g})")
    bound = attacker_lib.attacker_bound(epsilon)
    if not mine:
        st.caption(f"No guesses yet at these settings. The bound: at most {_percent(bound)} right in the long run.")
        return
    you = attacker_lib.success_summary(sum(h["correct"] for h in mine), len(mine), epsilon=epsilon, who="you")
    best = attacker_lib.success_summary(
        sum(h["optimal_correct"] for h in mine), len(mine), epsilon=epsilon, who="optimal attacker"
    )
    cols = st.columns(3)
    cols[0].metric("You", _percent(you.rate), help=f"{you.successes} right out of {you.rounds}")
    cols[1].metric("Optimal attacker, same rounds", _percent(best.rate), help=f"{best.successes} of {best.rounds}")
    cols[2].metric("DP bound e^ε/(1+e^ε)", _percent(bound))
    rounds = f"{you.rounds} round" if you.rounds == 1 else f"{you.rounds} rounds"
    st.caption(
        f"After {rounds} your rate is {_percent(you.rate)}, 95% interval {_percent(you.interval[0])} to "
        f"{_percent(you.interval[1])} (Clopper–Pearson): with few rounds luck can put anyone above the bound; "
        "the interval says how far chance alone could move the rate."
    )


def simulation(summary: attacker_lib.SuccessSummary) -> None:
    low, high = summary.interval
    st.markdown(
        f"The optimal attacker played **{summary.rounds:,} rounds** and was right **{summary.rate:.1%}** of the "
        f"time (95% interval {low:.1%} to {high:.1%}; Monte Carlo standard error {summary.standard_error:.2%}). "
        f"Its exact success probability here is **{summary.exact_success:.1%}**; the DP bound is "
        f"**{summary.bound:.1%}**."
    )
    table = pd.DataFrame(
        {
            "who": ["optimal attacker (simulated)", "optimal attacker (exact)", "DP bound"],
            "success rate": [summary.rate, summary.exact_success, summary.bound],
        }
    )
    st.dataframe(
        table, hide_index=True, column_config={"success rate": st.column_config.NumberColumn(format="percent")}
    )
    if summary.exact_success is not None and summary.bound - summary.exact_success > 0.02:
        st.caption(
            "Below the bound: this mechanism's noise does not use the whole privacy budget against this "
            "pair of data sets (the bound is a worst case over all mechanisms and pairs; the discrete Laplace "
            "count reaches it exactly)."
        )


def pooled_table(rows: list[Any]) -> None:
    """The class's pooled guesses per ε, under one line a projector shows from the back of the room."""
    if not rows:
        st.caption("No guesses in this session yet.")
        return
    guesses, right = sum(row.guesses for row in rows), sum(row.correct for row in rows)
    st.markdown(
        f"**{guesses:,} {'guess' if guesses == 1 else 'guesses'}** from the class so far, "
        f"**{right:,}** right ({_percent(right / guesses)})."
    )
    data = []
    for row in rows:
        summary = attacker_lib.success_summary(row.correct, row.guesses, epsilon=row.epsilon)
        data.append(
            {
                "statistic": MECHANISM_LABELS.get(row.mechanism, row.mechanism),
                "ε": row.epsilon,
                "guesses": row.guesses,
                "right": row.correct,
                **{
                    name: _percent(value)
                    for name, value in (
                        ("class rate", summary.rate),
                        ("95% low", summary.interval[0]),
                        ("95% high", summary.interval[1]),
                        ("bound", summary.bound),
                    )
                },
            }
        )
    table = pd.DataFrame(data)
    if len({row.mechanism for row in rows}) == 1:  # a session pools one statistic: named above the table
        table = table.drop(columns="statistic")
    st.dataframe(table, hide_index=True)


def _percent(share: float) -> str:
    """A rate as the projected table shows every rate: one decimal (61.1%, 82.7%, 100.0%), read from the back."""
    return f"{100 * share:.1f}%"
