"""dpcore.data: file validation paths, real-data loaders, synthetic generators hitting their targets."""

from __future__ import annotations

import builtins
import gzip
import io
import itertools
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats

import dpcore.data as data
from dpcore.data import (
    IncomeData,
    ParetoTailMixture,
    clean_income_column,
    guess_income_column,
    load_example,
    load_income_file,
    load_shared,
    lognormal_incomes,
    min_iq_for_gini,
    numeric_columns,
    pareto_mixture_incomes,
    read_table,
    two_point_incomes,
)
from dpcore.data import catalogue as data_catalogue
from dpcore.gini import gini
from dpcore.validation import DPInputError


def _bad(source, match, **kwargs):
    """load_income_file(source) must raise DPInputError (a ValueError) whose message matches."""
    with pytest.raises(DPInputError, match=match) as info:
        load_income_file(source, **kwargs)
    assert isinstance(info.value, ValueError)
    assert len(str(info.value)) < 600  # never echoes a huge cell or file
    return str(info.value)


# ---------------------------------------------------------------------------------------------
# Reading files
# ---------------------------------------------------------------------------------------------

CSV = b"id,income,sex\n1,1000,F\n2,2500.5,M\n3,0,F\n4,40000,M\n"


def test_importing_dpcore_data_imports_neither_pandas_nor_scipy():
    """The sidebar reads the catalogue (dpcore.data) on the landing page's cold start: pandas (~0.6 s) and
    scipy are imported when data are first read or drawn, and dpcore.gini (scipy.stats) when a Gini is."""
    code = (
        "import sys\nimport dpcore.data\n"
        "print(sorted(m for m in ('pandas', 'scipy', 'dpcore.gini') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=data.REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr[-2000:]


def test_csv_bytes_path_and_file_object_agree(tmp_path):
    a = load_income_file(CSV)
    p = tmp_path / "x.csv"
    p.write_bytes(CSV)
    b = load_income_file(p)
    c = load_income_file(io.BytesIO(CSV))
    for d in (a, b, c):
        assert isinstance(d, IncomeData)
        np.testing.assert_array_equal(d.values, [1000, 2500.5, 0, 40000])
        assert d.column == "income" and d.source == "upload" and d.confidential
        assert list(d.frame.columns) == ["id", "income", "sex"]
    assert b.name == "x.csv"


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_other_delimiters(sep):
    text = CSV.decode().replace(",", sep).encode()
    np.testing.assert_array_equal(load_income_file(text).values, [1000, 2500.5, 0, 40000])


def test_parquet_and_gzip():
    frame = pd.DataFrame({"income": [1.0, 2.0, 3.0], "g": ["a", "b", "a"]})
    buf = io.BytesIO()
    frame.to_parquet(buf)
    d = load_income_file(buf.getvalue(), name="x.parquet")
    np.testing.assert_array_equal(d.values, [1, 2, 3])
    assert d.name == "x.parquet"
    np.testing.assert_array_equal(load_income_file(gzip.compress(CSV)).values, [1000, 2500.5, 0, 40000])


def test_parquet_corrupt():
    _bad(b"PAR1" + b"\x00garbage" * 10, "not a readable Parquet file")


def test_empty_file_and_blank_file():
    _bad(b"", "empty")
    _bad(b"  \n\n \r\n", "empty")
    _bad(gzip.compress(b""), "empty")


def test_header_only():
    msg = _bad(b"id,income\n", "header .* but no data rows")
    assert "'income'" in msg


def test_one_column_numeric_works_and_text_fails():
    np.testing.assert_array_equal(load_income_file(b"income\n5\n7\n").values, [5, 7])
    d = load_income_file(b"5\n7\n9\n")  # no header: the first line becomes the column name, with a note
    np.testing.assert_array_equal(d.values, [7, 9])
    assert any("was read as column names" in n for n in d.notes)
    _bad(b"name\nabc\ndef\n", r"only one column, 'name', and it is not numeric \(e\.g\. 'abc'\)")


def test_no_numeric_column():
    _bad(b"a,b\nx,y\nz,w\n", "no numeric column")


def test_binary_and_wrong_encoding():
    _bad(b"\x00\x01\x02\x03" * 100, "not a text file .*NUL")
    _bad(bytes(range(1, 9)) * 200, "does not look like CSV text")
    _bad(b"PK\x03\x04" + b"\x10" * 50, "Excel workbook")
    # UTF-16 text is decoded (tests/test_upload_formats.py)


def test_latin1_fallback_and_utf8_bom():
    d = load_income_file("name;income\nJosé;100\nAndré;200\n".encode("latin-1"))
    assert d.frame["name"].tolist() == ["José", "André"]
    assert any("Latin-1" in n for n in d.notes)
    d = load_income_file("name,income\nJosé,100\nZoë,200\n".encode())
    assert d.frame["name"].tolist() == ["José", "Zoë"] and not any("Latin-1" in n for n in d.notes)
    assert load_income_file(b"\xef\xbb\xbfincome\n1\n2\n").column == "income"  # BOM stripped


def test_size_cap_bytes_path_fileobj_and_gzip_bomb(tmp_path):
    blob = b"income\n" + b"1\n" * 1000
    _bad(blob, r"larger than the 1,024 bytes limit", max_bytes=1024)
    p = tmp_path / "big.csv"
    p.write_bytes(blob)
    _bad(p, r"big\.csv is 2\.0 KB, larger than the 1,024 bytes limit", max_bytes=1024)
    _bad(io.BytesIO(blob), "larger than the", max_bytes=1024)
    bomb = gzip.compress(b"income\n" + b"1\n" * 5_000_000)  # ~10 MB unpacked, a few KB packed
    assert len(bomb) < 100_000
    _bad(bomb, r"decompresses to more than the 1 MB \(1,000,000 bytes\) limit", max_bytes=1_000_000)


def test_row_cap():
    _bad(b"income\n" + b"1\n" * 6, r"more than 5 data rows", max_rows=5)
    assert load_income_file(b"income\n" + b"1\n" * 5, max_rows=5).n == 5


def test_ten_megabytes_in_one_cell():
    """A 10 MB cell makes a row longer than the command line's row limit (4 MiB): the upload is refused before
    pandas parses it, with the same short message whichever column holds the cell."""
    huge = b"y" * 10_000_000
    for csv_bytes in (b"income,comment\n1,a\n" + huge + b",b\n3,c\n", b"income,comment\n1," + huge + b"\n2,b\n3,c\n"):
        msg = _bad(csv_bytes, r"row longer than the 4,194,304 bytes", column="income")
        assert "yyyy" not in msg


def test_malformed_csv_names_the_line():
    _bad(b"a,b\n1,2\n3,4\n5,6,7,8\n", r"not a well-formed CSV.*line 4")


def test_mixed_types_report_example_and_row():
    msg = _bad(b'income\n100\nabc\n300\n"$4,000"\n', r"2 non-numeric values", column="income")
    assert "'abc' (line 3)" in msg and "'$4,000' (line 5)" in msg and "data row 2" in msg


def test_all_nan_column():
    frame, _ = read_table(b"income,x\n,1\nNA,2\n,3\n")
    assert numeric_columns(frame) == ["x"]
    with pytest.raises(DPInputError, match=r"no values: all 3 cells are missing"):
        clean_income_column(frame, "income")


def test_missing_values_dropped_and_counted():
    d = load_income_file(b"income,g\n1,a\n,b\nNA,c\n4,d\nnan,e\n")
    np.testing.assert_array_equal(d.values, [1, 4])
    assert d.frame["g"].tolist() == ["a", "d"]  # rows stay aligned with the values
    assert "dropped 3 of 5 rows with a missing income" in d.notes


def test_negative_policies():
    src = b"income,g\n10,a\n-5,b\n-50,c\n20,d\n"
    msg = _bad(src, r"2 negative values \(smallest -50 on line 4\)")
    assert "drop" in msg and "clip" in msg
    d = load_income_file(src, negative="drop")
    np.testing.assert_array_equal(d.values, [10, 20])
    assert d.frame["g"].tolist() == ["a", "d"]
    assert any(n.startswith("dropped 2 negative") for n in d.notes)
    d = load_income_file(src, negative="clip")
    np.testing.assert_array_equal(d.values, [10, 0, 0, 20])
    assert any(n.startswith("clipped 2 negative") for n in d.notes)
    _bad(src, "negative must be one of refuse, drop, clip", negative="ignore")


def test_too_few_rows_after_cleaning():
    _bad(b"income\n5\n", r"only 1 usable value left .* at least 2 are needed")
    msg = _bad(b"income\n5\n-1\n-2\n", r"only 1 usable value", negative="drop")
    assert "dropped 2 negative values" in msg
    _bad(b"income\n5\n\n\n", r"only 1 usable value")


def test_infinite_values():
    _bad(b"income\n1\ninf\n3\n", r"1 infinite values \(e\.g\. line 3\)")


def test_unknown_column_and_bool_column():
    _bad(CSV, r"column 'wage' is not in the file; its columns are: 'id', 'income', 'sex'", column="wage")
    frame = pd.DataFrame({"flag": [True, False, True]})
    with pytest.raises(DPInputError, match="true/false"):
        clean_income_column(frame, "flag")


def test_numeric_columns_and_guess():
    frame = pd.DataFrame(
        {
            "id": [1, 2, 3, 4],
            "name": ["a", "b", "c", "d"],
            "flag": [True, False, True, False],
            "mixed": ["1", "2", "x", "4"],
            "PINCP": [1.0, 2.0, np.nan, 4.0],
            "empty": [np.nan] * 4,
        }
    )
    assert numeric_columns(frame) == ["id", "mixed", "PINCP"]
    assert guess_income_column(["id", "mixed", "PINCP"]) == "PINCP"
    assert guess_income_column(["id", "total_earnings"]) == "total_earnings"
    assert guess_income_column(["a", "b"]) == "a"
    assert guess_income_column([]) is None
    for bad in (b"\x00\xff\xfe", "income", 5, [1, 2]):
        with pytest.raises(TypeError, match="list of column names"):
            guess_income_column(bad)
    d = load_income_file(b"id,wage_2015\n1,5\n2,6\n")
    assert d.column == "wage_2015" and any("used column 'wage_2015'" in n for n in d.notes)


def test_bad_argument_types():
    with pytest.raises(TypeError):
        load_income_file(12345)
    with pytest.raises(TypeError):
        load_income_file(io.StringIO("income\n1\n2\n"))
    _bad("/no/such/file.csv", "file not found")


def test_upload_never_touches_disk(monkeypatch, tmp_path):
    real_open = builtins.open

    def guarded_open(file, mode="r", *args, **kwargs):
        if any(c in mode for c in "wax+"):
            raise AssertionError(f"dpcore.data tried to write {file!r}")
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded_open)
    monkeypatch.chdir(tmp_path)
    d = load_income_file(CSV)
    assert d.n == 4 and list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------------
# Real data
# ---------------------------------------------------------------------------------------------


def test_bundled_example_engel():
    d = load_example("engel")
    assert d.source == "example" and not d.confidential and d.n == 235
    assert d.values.mean() == pytest.approx(982.473044, abs=1e-5)
    assert np.median(d.values) == pytest.approx(883.984917, abs=1e-5)
    assert d.values.min() == pytest.approx(377.058369, abs=1e-5)
    assert d.values.max() == pytest.approx(4957.813024, abs=1e-5)
    assert set(d.frame.columns) == {"household", "income", "foodexp"}
    assert (data.EXAMPLES_DIR / "README.md").is_file()
    with pytest.raises(DPInputError, match="unknown example"):
        load_example("nope")


#: sha256 of the two bundled survey files: byte-identical copies of ../shared/data (its README).
BUNDLED_SHA256 = {
    "acs2019_nist_excerpt_national.csv.gz": "cc375596686f0068fa8764f572c42c3f26598cd4ee721625916c87e2c5fbf83c",
    "pseo_earnings_co_tx.csv.gz": "8797c98557b52dfb3ed93c11dcfa5101dd93733c61c50c59302f8c74a2b24b64",
}


def _hide_shared(monkeypatch, tmp_path):
    monkeypatch.setattr(data_catalogue, "SHARED_DATA_DIR", tmp_path)
    monkeypatch.setattr(data_catalogue, "shared_data_path", lambda name: None)


def test_shared_absent_cps_none_acs_pseo_bundled(monkeypatch, tmp_path):
    """A fresh machine without ../shared: CPS (never bundled) is None, ACS and PSEO come from the
    bundled copies with the figures of the data README."""
    _hide_shared(monkeypatch, tmp_path)
    assert load_shared("cps") is None and data.load_cps() is None
    assert data.real_data_path("cps_asec2016_ipums_midwest.csv.gz") is None
    assert data.available_shared() == ["acs", "pseo"]
    acs, pseo = data.load_acs(), data.load_pseo()
    assert acs.n == 23006 - 30 and pseo.n == 7679 and acs.source == pseo.source == "shared"
    assert gini(acs.values) == pytest.approx(0.6479, abs=5e-5)
    assert pseo.values.mean() == pytest.approx(42516, abs=1)
    assert any("bundled" in note for note in acs.notes)
    for key in ("acs", "pseo"):
        path = data.real_data_path(data.SHARED_DATASETS[key].file_name)
        assert path == data.example_path(key) and path.parent == data.EXAMPLES_DIR
    with pytest.raises(DPInputError, match="unknown shared dataset"):
        load_shared("xyz")
    with pytest.raises(DPInputError, match="not on this machine"):
        data.build_dataset({"kind": "shared", "name": "cps"})


def test_bundled_files_are_the_shared_files_and_never_cps():
    import hashlib

    names = {p.name for p in data.EXAMPLES_DIR.iterdir()}
    assert not any("cps" in name.lower() or "ipums" in name.lower() for name in names)
    for name, digest in BUNDLED_SHA256.items():
        assert hashlib.sha256((data.EXAMPLES_DIR / name).read_bytes()).hexdigest() == digest
        shared = data.SHARED_DATA_DIR / name
        if shared.is_file():
            assert shared.read_bytes() == (data.EXAMPLES_DIR / name).read_bytes()
    readme = (data.EXAMPLES_DIR / "README.md").read_text()
    for name in BUNDLED_SHA256:
        assert name in readme
    assert "public domain" in readme.lower()


def test_bundled_files_are_package_data_when_packaged():
    """The examples are read relative to the dpcore package; a packaging config must ship them."""
    pyproject = data.REPO_ROOT / "pyproject.toml"
    if not pyproject.is_file():
        return  # not packaged yet: the files are read from the source tree (dpcore/examples)
    text = pyproject.read_text(encoding="utf-8")
    assert "examples" in text and ("package-data" in text or "package_data" in text or "include" in text), (
        "pyproject.toml must list dpcore/examples/* (the bundled ACS, PSEO and Engel files) as package data"
    )


def test_load_example_acs_pseo_and_columns():
    acs = load_example("acs")
    assert acs.source == "example" and acs.n == 22976 and acs.column == "PINCP"
    assert acs.frame["PUMA"].iloc[0].count("-") == 1
    clipped = load_example("acs", negative="clip")
    assert clipped.n == 23006 and (clipped.values >= 0).all()
    small = load_example("acs", columns=["SEX", "RAC1P"])
    assert list(small.frame.columns) == ["PINCP", "SEX", "RAC1P"]
    np.testing.assert_array_equal(small.values, acs.values)
    pseo = load_example("pseo", columns=["institution_state"])
    assert pseo.n == 7679 and list(pseo.frame.columns) == ["y1_p50_earnings", "institution_state"]
    assert load_example().n == 235 and list(load_example("engel", columns=["foodexp"]).frame.columns) == [
        "income",
        "foodexp",
    ]
    with pytest.raises(DPInputError, match="no column"):
        load_example("engel", columns=["nope"])
    with pytest.raises(DPInputError):
        load_example("acs", columns=["nope"])


def test_pseo_cells_load_from_the_bundled_copy(monkeypatch, tmp_path):
    from dpcore.views import percentiles as percentile_experiments

    _hide_shared(monkeypatch, tmp_path)
    cells = percentile_experiments.load_pseo_cells(data.real_data_path("pseo_earnings_co_tx.csv.gz"), agg_level=None)
    assert len(cells) > 7000 and (cells["p25"] <= cells["p50"]).all()


# ---------------------------------------------------------------------------------------------
# Dataset recipes
# ---------------------------------------------------------------------------------------------


def test_build_dataset_matches_the_generators():
    ds = data.build_dataset()
    np.testing.assert_array_equal(ds.values, lognormal_incomes(10_000, sigma=0.9, rng=2026))
    assert ds.source == "synthetic" and ds.name == "Synthetic log-normal (n=10,000, sigma=0.9)"
    par = data.build_dataset({"kind": "pareto", "n": 500, "gini": 0.3, "seed": 7})
    np.testing.assert_array_equal(par.values, pareto_mixture_incomes(500, gini=0.3, rng=7))
    look = data.build_dataset({"kind": "lookalike", "n": 500, "gini": 0.3, "median": 41_000.0, "seed": 7})
    np.testing.assert_array_equal(look.values, pareto_mixture_incomes(500, gini=0.3, median=41_000.0, rng=7))
    two = data.build_dataset({"kind": "two_point", "n": 100, "gini": 0.45, "seed": 3})
    ref = two_point_incomes(100, 0.45, None, mean=30_000.0, rng=3)
    np.testing.assert_array_equal(two.values, ref.values)
    assert two.bounds == (ref.lower, ref.upper)
    assert data.build_dataset({"kind": "example", "name": "engel"}).n == 235
    assert data.build_dataset({"kind": "shared", "name": "acs", "columns": ["SEX"]}).frame.shape[1] == 2


def test_build_dataset_file_recipe(tmp_path):
    path = tmp_path / "incomes.csv"
    path.write_text("income,region\n100,a\n-5,b\n300,a\n")
    ds = data.build_dataset({"kind": "file", "path": str(path), "column": "income", "negative": "drop"})
    assert ds.confidential and ds.n == 2 and ds.source == "upload"
    with pytest.raises(DPInputError, match="negative"):
        data.build_dataset({"kind": "file", "path": str(path)})


def test_recipe_from_sidebar_keys_round_trip():
    keys = [
        ("lognormal", 10_000, 0.9, 2026),
        ("pareto", 500, 0.3, 2.5, 7),
        ("lookalike", 500, 0.3, 41_000.0, 7),
        ("two_point", 100, 0.45, None, 3),
        ("example", "engel"),
        ("shared", "acs", "drop"),
    ]
    for key in keys:
        recipe = data.recipe_from_key(key)
        assert recipe["kind"] == key[0] and data.check_recipe(recipe)["kind"] == key[0]
        assert isinstance(data.describe_recipe(recipe), str)
        assert eval(repr(recipe)) == recipe  # plain data: a script can hold it as a literal
    assert data.recipe_from_key(None) == data.DEFAULT_RECIPE
    assert data.recipe_from_key(("lognormal", 10_000, 0.9, 2026)) == data.DEFAULT_RECIPE
    upload = data.recipe_from_key(("upload", "ab" * 32, "mine.csv", "income", "clip"))
    assert upload == {"kind": "file", "path": "mine.csv", "column": "income", "negative": "clip"}
    with pytest.raises(DPInputError, match="no recipe"):
        data.recipe_from_key(("none",))


@pytest.mark.parametrize(
    "recipe, match",
    [
        ({"kind": "gauss", "n": 3}, "unknown dataset kind"),
        ({"kind": "lognormal", "n": 10}, "needs sigma, seed"),
        ({"kind": "lognormal", "n": 10, "sigma": 0.5, "seed": 1, "sd": 2}, "no parameter"),
        ({"kind": "lognormal", "n": 0, "sigma": 0.5, "seed": 1}, "n"),
        ({"kind": "lognormal", "n": 10, "sigma": -1.0, "seed": 1}, "sigma"),
        ({"kind": "example", "name": "nope"}, "unknown example"),
        ({"kind": "example", "name": "acs", "columns": "SEX"}, "list of column names"),
        ({"kind": "two_point", "n": 10, "gini": 0.99, "seed": 1}, "gini"),
    ],
)
def test_build_dataset_bad_recipes(recipe, match):
    with pytest.raises(DPInputError, match=match):
        data.build_dataset(recipe)


def test_build_dataset_refuses_non_dict():
    with pytest.raises(TypeError, match="recipe is a dict"):
        data.build_dataset(("lognormal", 10, 0.9, 1))


def test_cps_matches_readme(cps_path):
    d = data.load_cps()
    # README: 8,194 non-missing INCTOT incl. 21 negatives; Gini 0.5361 on the non-negative ones
    assert d.n == 8194 - 21 and d.source == "shared" and not d.confidential
    assert gini(d.values, definition="eq1") == pytest.approx(0.5361, abs=5e-5)
    assert {"STATEFIP", "AGE", "EDUC", "ASECWT"} <= set(d.frame.columns)
    np.testing.assert_array_equal(d.frame["INCTOT"].to_numpy(), d.values)
    clipped = data.load_cps(negative="clip")
    assert clipped.n == 8194 and (clipped.values >= 0).all()


def test_acs_matches_readme(acs_path):
    d = data.load_acs()
    assert d.n == 23006 - 30
    assert gini(d.values, definition="eq1") == pytest.approx(0.6479, abs=5e-5)
    assert {"SEX", "RAC1P", "AGEP", "POVPIP", "PWGTP"} <= set(d.frame.columns)
    assert d.frame["PUMA"].iloc[0].count("-") == 1  # kept as text "ST-PUMA"


def test_pseo_matches_readme(pseo_path):
    d = data.load_pseo()
    assert d.n == 7679
    assert d.values.mean() == pytest.approx(42516, abs=1)
    assert gini(d.values, definition="eq1") == pytest.approx(0.2164, abs=5e-5)
    assert (d.frame["status_y1_earnings"] == 1).all()


# ---------------------------------------------------------------------------------------------
# The Gini of the generators' checks
# ---------------------------------------------------------------------------------------------


def test_gini_matches_pairwise_definition(rng):
    """The generators' targets are checked with dpcore.gini.gini, the package's one Gini: eq. (1) and eq. (2)."""
    for n in (2, 3, 7, 50):
        x = rng.exponential(size=n)
        pair = np.abs(x[:, None] - x[None, :]).sum()
        assert gini(x, definition="eq1") == pytest.approx(pair / (2 * n * n * x.mean()), rel=1e-12)
        assert gini(x, definition="eq2") == pytest.approx(pair / (2 * n * (n - 1) * x.mean()), rel=1e-12)
        assert gini(x) == gini(x, definition="eq1")
    for bad, match in (
        ([1.0], "at least 2"),
        ([0.0, 0.0], "are zero"),
        ([1.0, -1.0], "non-negative"),
        ([1.0, np.nan], "finite"),
    ):
        with pytest.raises(DPInputError, match=match):
            gini(bad)


# ---------------------------------------------------------------------------------------------
# Synthetic generators
# ---------------------------------------------------------------------------------------------


def _mc_gini(draw, reps: int, n: int) -> tuple[float, float]:
    """Mean and standard error of the sample Gini over ``reps`` independent samples of size n."""
    g = np.array([gini(draw(n, r)) for r in range(reps)])
    return float(g.mean()), float(g.std(ddof=1) / math.sqrt(reps))


def test_lognormal_gini_formula():
    sigma = 0.9
    target = 2 * stats.norm.cdf(sigma / math.sqrt(2)) - 1
    mean, se = _mc_gini(lambda n, r: lognormal_incomes(n, sigma=sigma, rng=100 + r), 8, 100_000)
    assert abs(mean - target) < 4 * se + 1e-4  # 1e-4: O(1/n) bias bound of the ratio estimator
    with pytest.raises(DPInputError):
        lognormal_incomes(10, sigma=0)


@pytest.mark.parametrize("target", [0.25, 0.35, 0.45, 0.6, 0.75])
def test_pareto_mixture_calibration_hits_target_gini(target):
    m = ParetoTailMixture.calibrated(target)
    assert abs(m.gini - target) < 1e-9
    # independent check 1: G = 1 - (1/mean) int_0^inf (1 - F(x))^2 dx, via the CDF, not the quantiles
    xm = m.threshold
    sf2 = lambda x: (1.0 - float(m.cdf(x))) ** 2
    body, _ = integrate.quad(sf2, 0, xm, limit=400, epsabs=1e-9 * xm)
    tail = xm * m.tail_share**2 / (2 * m.tail_index - 1)  # closed form of the Pareto part
    mean, _ = integrate.quad(lambda u: float(m.ppf(u)), 0, 1, limit=400)
    assert m.mean == pytest.approx(mean, rel=1e-6)
    assert 1 - (body + tail) / m.mean == pytest.approx(target, abs=1e-6)
    # independent check 2: Monte Carlo sample Gini, tolerance from its standard error
    mc, se = _mc_gini(lambda n, r: m.rvs(n, rng=1000 + r), 8, 100_000)
    assert 4 * se < 0.005  # the test can see a miss of the required 0.005
    assert abs(mc - target) < 4 * se + 2e-4  # 2e-4: O(1/n) ratio-estimator bias bound


def test_pareto_mixture_sampler_matches_its_distribution():
    m = ParetoTailMixture.calibrated(0.45, mu=math.log(30_000))
    x = m.rvs(50_000, rng=7)
    assert stats.kstest(x, m.cdf).pvalue > 0.01
    wrong = ParetoTailMixture(m.sigma * 1.05, m.tail_share, m.tail_index, m.mu)
    assert stats.kstest(x, wrong.cdf).pvalue < 1e-6  # the test has power against a 5% error
    # the top tail share is Pareto with the right index: P(X > t) = p (x_m / t)^a
    t = 3 * m.threshold
    p_hat = (x > t).mean()
    p = m.tail_share * 3.0**-m.tail_index
    assert abs(p_hat - p) < 4 * math.sqrt(p * (1 - p) / x.size)
    u = np.linspace(0.001, 0.999, 101)
    np.testing.assert_allclose(m.cdf(m.ppf(u)), u, atol=1e-12)


def test_pareto_mixture_incomes_median_and_errors():
    x = pareto_mixture_incomes(40_000, gini=0.4, median=30_000, rng=3)
    # sample-median standard error: sqrt(1/4n) / f(median), f = body density at the median
    m = ParetoTailMixture.calibrated(0.4, mu=math.log(30_000))
    f = stats.lognorm(s=m.sigma, scale=30_000).pdf(30_000)
    assert abs(np.median(x) - 30_000) < 4 * math.sqrt(0.25 / x.size) / f
    with pytest.raises(DPInputError, match=r"Gini between 0\.0\d\d and 0\.8\d\d"):
        ParetoTailMixture.calibrated(0.99)
    with pytest.raises(DPInputError, match="tail_index must be > 1"):
        ParetoTailMixture(1.0, 0.1, 1.0)
    with pytest.raises(DPInputError, match="tail_share"):
        ParetoTailMixture(1.0, 1.5, 2.0)
    with pytest.raises(DPInputError):
        pareto_mixture_incomes(0)


# --- two-point data of Lan & Reiter Prop. 5.1 ---------------------------------------------------


@pytest.mark.parametrize("g", [0.2, 0.5, 0.7])
def test_two_point_at_minimum_iq_matches_eq31(g):
    n = 100_000  # the paper's n; alpha n is an integer for these g
    t = two_point_incomes(n, g, definition="eq1")
    assert t.gini == pytest.approx(g, abs=1e-12)
    assert t.iq == pytest.approx(4 * g if g <= 0.5 else 1 / (1 - g), rel=1e-12)  # eq. (31)
    assert np.unique(t.values).size == 2 and t.values.mean() == pytest.approx(1.0)
    assert t.lower == pytest.approx(t.values.min(), abs=1e-12)  # data sit on the bounds
    assert t.upper == pytest.approx(t.values.max(), abs=1e-12)
    assert t.lower >= 0
    # eq. (62): g = alpha (1 - alpha)(U - L) with the mean 1
    alpha = t.n_low / n
    assert alpha * (1 - alpha) * (t.high_value - t.low_value) == pytest.approx(g, abs=1e-12)


def test_two_point_eq2_and_paper_statement_for_n_100000():
    t = two_point_incomes(100_000, 0.5, definition="eq2")
    assert gini(t.values, definition="eq2") == pytest.approx(0.5, abs=1e-12)
    assert t.iq == pytest.approx(min_iq_for_gini(0.5, 100_000, definition="eq2"), rel=1e-12)
    assert t.iq == pytest.approx(2.0, abs=3e-5)  # "inf{IQ(X): g(X) = 0.5} = 2 when n = 100000"


@pytest.mark.parametrize("g,iq", [(0.5, 10.0), (0.2, 0.81), (0.7, 100.0), (0.3, 2.0)])
def test_two_point_with_larger_iq(g, iq):
    for n in (11, 1000):
        t = two_point_incomes(n, g, iq, mean=25_000.0, rng=5)
        assert t.gini == pytest.approx(g, abs=1e-12)
        assert gini(t.values) == pytest.approx(g, abs=1e-12)
        assert (t.upper - t.lower) / t.values.mean() == pytest.approx(iq, rel=1e-9)
        assert t.lower >= 0 and t.lower <= t.values.min() and t.values.max() <= t.upper * (1 + 1e-12)
        assert t.values.mean() == pytest.approx(25_000.0, rel=1e-9)
    a = two_point_incomes(11, 0.3, 2.0, rng=1).values
    b = two_point_incomes(11, 0.3, 2.0, rng=2).values
    np.testing.assert_array_equal(np.sort(a), np.sort(b))  # rng only shuffles


def test_two_point_bad_input():
    with pytest.raises(DPInputError, match="below the minimum"):
        two_point_incomes(1000, 0.5, 1.5)
    with pytest.raises(DPInputError, match=r"needs iq >= "):
        two_point_incomes(7, 0.7, min_iq_for_gini(0.7, 7) * 1.0001)  # alpha n not an integer
    for kwargs in (
        {"n": 1, "gini": 0.5},
        {"n": 10, "gini": 0.0},
        {"n": 10, "gini": 1.0},
        {"n": 10, "gini": float("nan")},
        {"n": 10, "gini": 0.5, "iq": -1.0},
        {"n": 10, "gini": 0.5, "definition": "eq3"},
    ):
        with pytest.raises(DPInputError):
            two_point_incomes(**kwargs)
    with pytest.raises(DPInputError, match="needs n"):
        min_iq_for_gini(0.5, definition="eq2")
    assert min_iq_for_gini(0.5) == 2.0 and min_iq_for_gini(0.75) == pytest.approx(4.0)


def test_prop51_lower_bound_brute_force_and_proof_typo():
    """Every non-negative dataset on a grid has (max - min)/mean >= eq. (31) of its Gini, and the
    two-point data attain it. Also documents the typo in the proof of A.4: with mean 1 the paper
    writes g = sum|x_i - x_j| / n^2, but eq. (62) needs the eq.-(1) denominator 2 n^2."""
    grid = np.arange(0, 7, dtype=float)
    attained = 0
    for n in (2, 3, 4):
        for combo in itertools.combinations_with_replacement(grid, n):
            x = np.array(combo)
            if x.sum() == 0:
                continue
            iq = (x.max() - x.min()) / x.mean()
            for definition in ("eq1", "eq2"):
                g = gini(x, definition=definition)
                if g <= 0 or g >= 1:
                    continue
                bound = min_iq_for_gini(g, n, definition=definition)
                assert iq >= bound - 1e-12, (combo, definition)
                attained += math.isclose(iq, bound, rel_tol=1e-12)
    assert attained > 0
    x = two_point_incomes(4, 0.25, definition="eq1").values  # alpha = 1/2, a = 0.5, b = 1.5
    literal = np.abs(x[:, None] - x[None, :]).sum() / x.size**2
    assert literal == pytest.approx(2 * 0.25)  # the proof's formula would double the Gini
    rng = np.random.default_rng(0)  # random continuous data of many shapes
    for _ in range(2000):
        n = int(rng.integers(2, 12))
        x = rng.pareto(rng.uniform(0.5, 3), size=n) * rng.integers(0, 2, size=n)
        if x.sum() == 0:
            continue
        g = gini(x, definition="eq1")
        if g < 1:
            assert (x.max() - x.min()) / x.mean() >= min_iq_for_gini(g, definition="eq1") - 1e-12


def test_fuzz_never_a_traceback():
    """Random bytes and mangled CSVs either load (finite values, n >= 2) or raise DPInputError."""
    rng = np.random.default_rng(2026)
    pieces = [
        b"income",
        b",",
        b";",
        b"\n",
        b"\r\n",
        b"-",
        b"1",
        b"2.5",
        b"1e308",
        b"1e999",
        b"NA",
        b'"',
        b"abc",
        b"\x00",
        b"\xff",
        b"\xc3\xa9",
        b" ",
        b"\t",
        b"nan",
        b"-inf",
        b"PAR1",
        b"\x1f\x8b",
    ]
    loaded = refused = 0
    for _ in range(300):
        r = rng.random()
        if r < 0.25:
            blob = rng.integers(0, 256, size=int(rng.integers(0, 300)), dtype=np.uint8).tobytes()
        elif r < 0.6:  # a plausible file with a few damaged cells
            cells = [b"12.5", b"300", b"-7", b"", b"NA", b"0", b"1e5"] + [b"x1", b"1,5", b"inf", b'"'] * (r < 0.45)
            rows = [pieces[0] + b",g"] + [
                cells[int(i)] + b",a" for i in rng.integers(0, len(cells), size=int(rng.integers(0, 12)))
            ]
            blob = b"\n".join(rows)
        else:
            blob = b"".join(pieces[i] for i in rng.integers(0, len(pieces), size=int(rng.integers(0, 60))))
        for negative in ("refuse", "clip"):
            try:
                d = load_income_file(blob, negative=negative)
            except DPInputError as exc:
                assert str(exc)
                refused += 1
            else:
                assert d.n >= 2 and np.isfinite(d.values).all()
                assert negative != "clip" or (d.values >= 0).all()
                loaded += 1
    assert refused > 0 and loaded > 0


def test_constant_income_upload_is_said_to_be_equal_incomes_not_zero():
    # a file where everyone earns the same: its Gini is 0 because the incomes are equal, not because they
    # are 0 (the answer sentence said "every income is 0" for 40,000 x 3)
    from dpcore.views import answers

    loaded = load_income_file(b"income\n40000\n40000\n40000\n")
    with pytest.raises(DPInputError, match=r"the Gini of these data is 0 \(every income is equal\)") as info:
        answers.gini_answer(loaded.values, epsilon=1.0)
    assert "is 0)" not in str(info.value)
