"""A page's view as a Jupyter notebook: the same parts as its generated script, with text and the page's charts.

The notebook is built from the script's parts (:class:`ui.scriptgen.ViewScript`), one code cell per part: the
imports, the data rebuilt from the public recipe, the page's own view call with the same literal arguments,
and the print of ``result.to_dict()`` (what the script prints). Markdown cells say what the page says about the
view (:data:`VIEWS`). The charts are drawn by the page's own figure builders (``ui.<page>.plots``: numbers in,
plotly figure out, no Streamlit): one code cell calls the view's ``*_figures(result)`` function there, which
returns the page's charts of that view (with the axes the page's "Fixed axes" option gives, where it has one).

Nothing here imports Streamlit; ``nbformat`` is imported when a notebook is built (the app builds one when its
download button is clicked), so the app's start does not load it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ui.scriptgen import ViewScript, call_code

__all__ = ["NotebookText", "VIEWS", "view_notebook", "NOTEBOOK_MIME"]

NOTEBOOK_MIME = "application/x-ipynb+json"


@dataclass(frozen=True)
class NotebookText:
    """What the notebook says about one view function, and where the page's charts of it are built."""

    intro: str  # markdown: what the view shows, in the page's words
    figures: str | None = None  # "ui.<page>.plots:<function>": result -> [(title, figure)], or None (no chart)


_GINI = "dpcore.views.gini"
_PERCENTILES = "dpcore.views.percentiles"
_STRATIFIED = "dpcore.views.stratified"
_RATIO = "dpcore.views.ratio"
_PLANNER = "dpcore.views.planner"

#: The views a page offers as a script and a notebook: (module, function) -> its text and charts.
VIEWS: dict[tuple[str, str], NotebookText] = {
    (_GINI, "gini_view"): NotebookText(
        "The **Gini index** measures income inequality (0: everyone earns the same; close to 1: one person has "
        "everything). Published with differential privacy it carries random noise: the mechanism of Lan & Reiter "
        "(2025) adds heavy-tailed noise scaled to the data's *smooth sensitivity*, which is usually far smaller "
        "than the worst case the Laplace mechanism must cover. The view simulates many releases at your ε, "
        "summarises their errors, draws the smooth-sensitivity curve, the posterior an analyst could form from "
        "one release, and the error against ε.",
        "ui.gini.plots:gini_view_figures",
    ),
    (_PERCENTILES, "cell_view"): NotebookText(
        "Earnings percentiles of one cell as the Census Bureau's **PSEO** releases them: a histogram of the "
        "cell's earnings with two-sided geometric noise on every bin count, read off as percentiles (the first bin "
        "where the running share reaches each level), beside the smooth-sensitivity rivals. The view gives the "
        "true and noisy counts, the released percentiles with their 90% intervals and their accuracy.",
        "ui.percentiles.plots:cell_view_figures",
    ),
    (_PERCENTILES, "exponential_cell_view"): NotebookText(
        "One percentile of one cell released by the **exponential mechanism**: every public candidate is scored "
        "by how far the count below it is from the wanted share, and one is chosen with exponential noise on the "
        "scores; beside it, the same percentile read off the noisy histogram at the same ε."
    ),
    (_PERCENTILES, "many_cells_view"): NotebookText(
        "Every published cell of a real PSEO table released with the page's settings (20 noise draws per cell), "
        "and the relative accuracy of the median by cell and by cell size.",
        "ui.percentiles.plots:many_cells_view_figures",
    ),
    (_PERCENTILES, "figures_view"): NotebookText(
        "The paper's Figures 1-3: the mean relative accuracy of the median over PSEO-like cells, by number of "
        "bins, by cell size, and against the number of bins at one ε.",
        "ui.percentiles.plots:figures_view_figures",
    ),
    (_STRATIFIED, "group_means_view"): NotebookText(
        "The mean of each group released with differential privacy: stratified Laplace (each group's mean its "
        "own noise), CoinPress, or a global method that publishes one number for all. Small groups get "
        "relatively more noise; the view simulates many releases per group and measures the parity error "
        "between groups.",
        "ui.stratified.plots:group_means_view_figures",
    ),
    (_RATIO, "sampling_view"): NotebookText(
        "A relative risk from two noisy counts: many simulated studies, each drawing counts from the population "
        "(sampling) and then adding the privacy noise. The spread with and without privacy says whether the "
        "sample size or the privacy noise limits what you can learn.",
        "ui.ratios.plots:sampling_view_figures",
    ),
    (_RATIO, "intervals_view"): NotebookText(
        "Confidence intervals for the relative risk from noisy counts: the classic Katz interval, the "
        "normal approximation that ignores the noise (Theorem 4.2) and the conservative one that adds the "
        "known noise variance (Theorem 4.5).",
        "ui.ratios.plots:intervals_view_figures",
    ),
    (_RATIO, "coverage_heatmap_view"): NotebookText(
        "How often an interval method covers the true relative risk over many settings (the paper's "
        "Appendix D.2 tables), and how much wider it is than the interval without privacy.",
        "ui.ratios.plots:coverage_heatmap_view_figures",
    ),
    (_RATIO, "accuracy_view"): NotebookText(
        "The probability that each private algorithm lands within the accuracy target of the true ratio, over "
        "its noise only (the paper's Figure 1).",
        "ui.ratios.plots:accuracy_view_figures",
    ),
    (_RATIO, "bias_view"): NotebookText(
        "The bias of the ratio of two noisy counts against the group size (the paper's Figure 2).",
        "ui.ratios.plots:bias_view_figures",
    ),
    (_RATIO, "odds_ratio_view"): NotebookText(
        "An odds ratio from a noisy 2×2 table: Laplace noise on each cell and the log-scale (Woolf) interval "
        "with the noise variance added.",
        "ui.ratios.plots:odds_ratio_view_figures",
    ),
    (_RATIO, "poverty_view"): NotebookText(
        "Who is more likely to be in poverty? Two groups of the ACS 2019 excerpt compared by a relative risk "
        "from noisy counts, with its intervals.",
        "ui.ratios.plots:poverty_view_figures",
    ),
    (_PLANNER, "planner_view"): NotebookText(
        "Choosing ε before a release: for each statistic of the planned release, the smallest ε that meets its "
        "accuracy target on the planning data (accuracy first), the total under sequential composition, and, "
        "for a split of a total ε, the accuracy each statistic gets (budget first).",
        "ui.planner.plots:planner_view_figures",
    ),
}

_RUN_NOTE = (
    "Run it from the repository folder (the charts use the app's figure builders in `ui/`), e.g. "
    "`jupyter lab` started there, with the packages of `requirements.txt`. Simulated releases use the seed "
    "written below, so the numbers match the page exactly; a real release never uses a fixed seed."
)


def _figures_code(figures: str) -> str:
    module, function = figures.split(":")
    return (
        "from plotly.io import show\n"
        + call_code(module, function, arg_names=("result",), target="figures")
        + "for title, figure in figures:\n"
        + "    print(title)\n"
        + "    show(figure)\n"
    )


def _data_text(data: str) -> str:
    """The data section's text, from the data cell (its first line is a comment that says what it builds)."""
    if "values = None" in data:
        return "This view builds its own data from its settings (below): it does not use the sidebar's income data."
    described = data.splitlines()[0].lstrip("# ").strip() if data.startswith("#") else ""
    text = "The planning data chosen in the sidebar, rebuilt from its public recipe" + (
        f": {described}." if described else "."
    )
    if "not embedded" in data:
        text += (
            " Your confidential file is not embedded: put it next to this notebook (or edit the path in the recipe)."
        )
    return text


def view_notebook(script: ViewScript) -> bytes:
    """The notebook (nbformat 4, JSON bytes) of one view: the cells of ``script`` with text and charts."""
    import nbformat
    from nbformat import v4

    text = VIEWS.get((script.module, script.function))
    generated = next((line for line in script.docstring.splitlines() if line.startswith("Generated ")), "")
    generated = generated.split(". Run")[0]
    cells = [
        v4.new_markdown_cell(
            f"# {script.title}\n\n"
            + (f"{text.intro}\n\n" if text else "")
            + "This notebook makes the page's own call to `dpcore`, with the page's settings written as literal "
            f"arguments, and prints the same numbers as the page. {_RUN_NOTE}"
            + (f"\n\n*{generated}.*" if generated else "")
        ),
        v4.new_code_cell(script.imports.rstrip("\n")),
        v4.new_markdown_cell("## The data\n\n" + _data_text(script.data)),
        v4.new_code_cell(script.data.rstrip("\n")),
        v4.new_markdown_cell(
            "## The view\n\nThe same call the page makes, with the same arguments: the result holds the view's "
            "numbers and the parameters that produced them."
        ),
        v4.new_code_cell(script.call.rstrip("\n")),
        v4.new_markdown_cell(
            "## Its numbers\n\nThe numbers the page shows, at full precision (the script prints the same JSON)."
        ),
        v4.new_code_cell(script.output.rstrip("\n")),
    ]
    if text is not None and text.figures is not None:
        cells += [
            v4.new_markdown_cell(
                "## The page's charts\n\nDrawn from the result above by the page's own figure builders "
                f"(`{text.figures.split(':')[0]}`, plotly)."
            ),
            v4.new_code_cell(_figures_code(text.figures).rstrip("\n")),
        ]
    notebook = v4.new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
    )
    nbformat.validate(notebook)
    return nbformat.writes(notebook).encode("utf-8")
