"""One parser for text incomes: the command line accepts what the app accepts, with the app's rule.

The audit found the command line refusing a CSV with quoted thousands separators ("87,000.00") that the
app parses. Every engine now reads a text income that fails a plain parse with the app's decision
(dpcore.data.detect_number_format: thousands commas, decimal commas, refusal when ambiguous or mixed), so
the same file gives the same numbers in the app and in every engine.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore import cli, data
from dpcore.engines import EngineSpec, open_engine, parse_source
from dpcore.validation import DPInputError

ENGINES = ["duckdb", "pandas"]
THOUSANDS = ["87,000.00", "1,234.50", "52000", "45,527", "12.5", "1,000,000"]
DECIMAL_COMMA = ["1.234,56", "45,5", "87.000,00", "12", "1.000.000"]


def _write(path, cells, delimiter):
    quote = (lambda t: f'"{t}"') if delimiter == "," else (lambda t: t)
    path.write_text(
        f"income{delimiter}state\n"
        + "".join(f"{quote(t)}{delimiter}{s}\n" for t, s in zip(cells * 3, "ABC" * len(cells), strict=True))
    )
    return path


def _cents(engine, path):
    with open_engine(engine, parse_source(str(path)), EngineSpec("income", ("state",))) as eng:
        return eng.sums(["state"], 0.0, 2e6).set_index("state")[["n", "sum_cents"]]


def _app_values(cells, delimiter):
    """What the app reads from the same cells (its number rule)."""
    fmt = data.detect_number_format(pd.Series(cells), delimiter=delimiter)
    return data.parse_numbers(pd.Series(cells), fmt)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("cells, delimiter", [(THOUSANDS, ","), (DECIMAL_COMMA, ";")], ids=["thousands", "decimal"])
def test_engines_read_the_apps_number_formats_as_the_app_does(tmp_path, engine, cells, delimiter):
    got = _cents(engine, _write(tmp_path / "formatted.csv", cells, delimiter))  # refused before
    plain = [repr(float(v)) for v in _app_values(cells, delimiter)]
    expected = _cents(engine, _write(tmp_path / "plain.csv", plain, ","))
    pd.testing.assert_frame_equal(got, expected)
    assert int(got["n"].sum()) == 3 * len(cells)


@pytest.mark.parametrize("engine", ENGINES)
def test_ambiguous_and_non_numbers_are_refused_with_the_apps_words(tmp_path, engine):
    cells = ["45,527", "12"]
    assert data.detect_number_format(pd.Series(cells), delimiter=";").style == "ambiguous"  # the app refuses too
    with pytest.raises(DPInputError, match="no guess is made"):
        _cents(engine, _write(tmp_path / "ambiguous.csv", cells, ";"))
    # a ';' file whose incomes read plainly: 1.234 may be a thousand there (the app refuses it; read as 1.234 before)
    assert data.detect_number_format(pd.Series(["1.234", "12"]), delimiter=";").style == "ambiguous"
    with pytest.raises(DPInputError, match="no guess is made"):
        _cents(engine, _write(tmp_path / "dots.csv", ["1.234", "12"], ";"))
    with pytest.raises(DPInputError, match="is not numeric: found 'abc'"):
        _cents(engine, _write(tmp_path / "text.csv", ["87,000.00", "abc"], ","))


def test_the_command_line_releases_a_file_with_quoted_thousands(tmp_path, capsys):
    path = _write(tmp_path / "incomes.csv", THOUSANDS, ",")
    plan = tmp_path / "plan.toml"
    plan.write_text(
        'version = 1\ndataset = "formats"\nincome = "income"\ncap_epsilon = 1.0\n\n'
        '[[statistics]]\nkind = "mean"\nepsilon = 0.5\nlower = 0\nupper = 2000000\n'
    )
    code = cli.main(
        [
            "release",
            str(plan),
            "--data",
            str(path),
            "--out",
            str(tmp_path / "out"),
            "--ledger",
            f"sqlite:///{tmp_path / 'ledger.db'}",
            "--init-ledger",
            "--quiet",
        ]
    )
    assert code == 0, capsys.readouterr().err
    table = pd.read_csv(tmp_path / "out" / "01_mean.csv")
    assert np.isfinite(table["mean"]).all()
