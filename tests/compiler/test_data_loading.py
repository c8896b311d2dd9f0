"""Data in linear time and memory (issue 15): numpy's C reader for clean CSVs with the
careful ``csv`` reader as the fallback that names the line and cell of every problem; the
0/1 feature matrix built only when an encoding reads it (the dp engines read raw columns).
"""
from __future__ import annotations

import numpy as np
import pytest

import odt
from odt.compiler.data import _read_csv_fast, read_csv
from odt.compiler.errors import OdtDataError


def _write(tmp_path, text: str, name: str = "d.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_the_fast_reader_and_the_careful_reader_read_the_same_table(tmp_path):
    rng = np.random.default_rng(0)
    lines = ["a,b,c,class"] + [f"{rng.normal():.3f}, {rng.integers(0, 2)},x{rng.integers(0, 3)},{rng.integers(0, 2)}"
                              for _ in range(200)]
    p = _write(tmp_path, "\n".join(lines) + "\n")
    fast = _read_csv_fast(p, "d.csv")
    assert fast is not None
    careful = read_csv(_write(tmp_path, '"a",b,c,class\n' + "\n".join(lines[1:]) + "\n", "q.csv"))  # quoted header
    assert list(fast.columns) == list(careful.columns) == ["a", "b", "c", "class"]
    for col in fast.columns:
        assert list(fast.strings(col)) == list(careful.strings(col))
    assert np.array_equal(fast.numbers("a"), careful.numbers("a"))



def test_an_all_numeric_file_is_read_as_numbers_in_one_pass_with_the_same_values(tmp_path):
    rng = np.random.default_rng(1)
    X = np.round(rng.normal(size=(300, 4)) * 100, 3)
    body = "\n".join(",".join(f"{v:g}" for v in row) + f",{i % 2}" for i, row in enumerate(X))
    fast = _read_csv_fast(_write(tmp_path, "a,b,c,d,class\n" + body + "\n"), "d.csv")
    careful = read_csv(_write(tmp_path, '"a",b,c,d,class\n' + body + "\n", "q.csv"))
    assert fast is not None and all(fast.columns[c].dtype == np.float64 for c in fast.columns)
    for col in fast.columns:
        assert np.array_equal(fast.numbers(col), careful.numbers(col))
        assert list(fast.strings(col)) == list(careful.strings(col))



@pytest.mark.parametrize("newline, bom", [("\n", ""), ("\r\n", "\ufeff")])
def test_numbers_are_parsed_straight_from_the_file_with_any_line_ending_and_a_bom(tmp_path, newline, bom):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(50, 3)) * 100
    text = bom + newline.join(["a,b,c,class"] + [",".join(repr(float(v)) for v in row) + f",{i % 2}" for i, row in enumerate(X)])
    p = tmp_path / "d.csv"
    p.write_bytes((text + newline).encode("utf-8"))
    fast = _read_csv_fast(p, "d.csv")
    assert fast is not None and list(fast.columns) == ["a", "b", "c", "class"]
    assert all(np.array_equal(fast.numbers(c), X[:, j]) for j, c in enumerate("abc"))  # bit for bit


def test_a_text_cell_after_many_numbers_reads_the_file_again_as_text(tmp_path):
    rows = [f"{i * 0.5!r},{i % 2}" for i in range(5000)] + ["x,1"]
    p = _write(tmp_path, "a,class\n" + "\n".join(rows) + "\n")
    fast = _read_csv_fast(p, "d.csv")
    assert fast is not None and fast.n_rows == 5001 and fast.columns["a"].dtype.kind == "U"
    assert list(fast.strings("a")[:2]) == ["0.0", "0.5"] and fast.strings("a")[-1] == "x"

@pytest.mark.parametrize("cell", ["nan", "inf", "-Infinity", "1e999"])
def test_a_non_finite_number_is_still_named_by_its_row(tmp_path, cell):
    p = _write(tmp_path, f"a,class\n1,0\n{cell},1\n")
    with pytest.raises(OdtDataError, match=r"column 'a' is numeric but row 2 \(line 3\) holds"):
        odt.compile_file(_write(tmp_path, f'data "{p}" {{ target class }}\nmodel tree(depth <= 1)\n', "p.odt"))

@pytest.mark.parametrize("text, message", [
    ("a,class\n1,0\n2\n", "line 3: 1 cells, the header has 2"),
    ("a,class\n1,0\n,1\n", r"column .a., row 2 \(line 3\): empty cell"),
    ("a,a\n1,0\n", "column 'a' appears twice"),
    ("a,class\n", "no data rows"),
])
def test_problems_are_still_named_by_line_and_cell(tmp_path, text, message):
    with pytest.raises(OdtDataError, match=message):
        read_csv(_write(tmp_path, text))


def test_a_non_number_in_a_numeric_column_names_its_row(tmp_path):
    p = _write(tmp_path, "a,class\n1,0\n2,1\nthree,0\n4,1\n")
    with pytest.raises(OdtDataError, match=r"column 'a' is numeric but row 3 \(line 4\) holds 'three'"):
        odt.compile_file(_write(tmp_path, f'data "{p}" {{ target class }}\nmodel tree(depth <= 1)\n', "p.odt"))


def test_quoted_cells_with_commas_are_read(tmp_path):
    t = read_csv(_write(tmp_path, 'name,class\n"a, b",0\n"c",1\n'))
    assert list(t.strings("name")) == ["a, b", "c"]


def test_dp_never_builds_the_feature_matrix(tmp_path):
    rng = np.random.default_rng(1)
    x = rng.normal(size=300).round(3)
    data = {"x": x.tolist(), "z": rng.normal(size=300).round(3).tolist(), "class": (x > 0.2).astype(int).tolist()}
    prog = odt.compile("model tree(depth <= 2)\nminimize errors", data=data)
    res = prog.solve(backend="dp")
    assert res.status == "optimal" and res.objective == 0
    assert "X" not in prog.dataset.__dict__  # 300 rows x ~600 thresholds never materialised


def test_the_feature_matrix_is_built_when_an_encoding_reads_it():
    data = {"a": [0, 1, 0, 1], "b": [0, 0, 1, 1], "class": [0, 1, 1, 0]}
    prog = odt.compile("model tree(depth <= 2)\nminimize errors", data=data)
    assert prog.solve(backend="maxsat").objective == 0
    assert prog.dataset.X.shape == (4, 2)
    assert all(np.array_equal(prog.dataset.column(j), prog.dataset.X[:, j]) for j in range(2))


# --------------------------------------------------------------------------- issue 24: cells at file:line:col


def _check(tmp_path, csv_text: str, block: str = "target class") -> str:
    """The rendered error of ``odtc check`` on a program reading ``csv_text``."""
    from odt.cli import main
    import contextlib
    import io

    _write(tmp_path, csv_text)
    (tmp_path / "p.odt").write_text(f'data "d.csv" {{ {block} }}\nmodel tree(depth <= 1)\n')
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["check", str(tmp_path / "p.odt")]) == 1
    return err.getvalue()


@pytest.mark.parametrize("cell, block, message", [
    ("abc", "target class", "column 'b' is numeric but row 2 (line 3) holds 'abc'"),
    ("inf", "target class", "column 'b' is numeric but row 2 (line 3) holds 'inf'"),
    ("abc", "target class numeric b", "column 'b', row 2 (line 3): 'abc' is not a number"),
    ("inf", "target class numeric b", "column 'b', row 2 (line 3): missing or non-finite value 'inf'"),
    ("-inf", "target class binary b", "column 'b', row 2 (line 3): missing or non-finite value '-inf'"),
    ("7", "target class binary b", "column 'b' is declared binary but row 2 (line 3) holds 7"),
])
def test_a_bad_cell_of_a_numeric_column_is_reported_at_its_file_line_and_column(tmp_path, cell, block, message):
    """Issue 24: data errors for abc / inf in a numeric column had no place; they point at
    the cell, with its line of the file and a caret."""
    err = _check(tmp_path, f"a,b,class\n1,0,0\n22, {cell},1\n3,1,0\n4,0,1\n", block)
    assert err.startswith(f"d.csv:3:5: error: {message}\n    22, {cell},1\n        {'^' * len(cell)}\n"), err


def test_an_empty_cell_is_reported_at_its_place_and_says_how_to_declare_it(tmp_path):
    err = _check(tmp_path, "a,b,class\n1,0,0\n2,,1\n")
    assert err.startswith("d.csv:3:3: error: column 'b', row 2 (line 3): empty cell\n    2,,1\n      ^\n"), err
    assert 'declare  missing ""' in err


def test_blank_lines_keep_rows_and_file_lines_apart(tmp_path):
    """numpy's reader skipped blank lines and then named row 2 as line 3 (it is line 5)."""
    err = _check(tmp_path, "a,b,class\n1,0,0\n\n\n2,x,1\n3,1,0\n")
    assert err.startswith("d.csv:5:3: error: column 'b' is numeric but row 2 (line 5) holds 'x'"), err


@pytest.mark.parametrize("value", [10**30, 2**53 + 1, -(2**60)])
def test_an_integer_beyond_2_to_53_is_refused_at_its_cell_not_merged(tmp_path, value):
    """Issue 24: a column of 10**30 + i was read as one value (it vanished)."""
    rows = "".join(f"{i % 3},{value + i if value > 0 else value - i},{i % 2}\n" for i in range(6))
    err = _check(tmp_path, "a,big,class\n" + rows)
    first = f"{value if value > 0 else value}"
    assert err.startswith(f"d.csv:2:3: error: column 'big', row 1 (line 2): the integer {first} is larger than "
                          f"2^53 = 9007199254740992"), err
    assert "categorical big" in err
    (tmp_path / "p.odt").write_text('data "d.csv" { target class categorical big }\nmodel tree(depth <= 1)\n')
    assert len(odt.compile_file(tmp_path / "p.odt").dataset.features) == 2 + 6  # two cuts of a, six categories of big


@pytest.mark.parametrize("column", [
    [10**30 + i for i in range(6)],  # Python integers
    np.array([2**60 + i for i in range(6)], dtype=np.int64),
    np.array([2**63 + i for i in range(6)], dtype=np.uint64),
])
def test_integers_beyond_2_to_53_from_python_are_refused_with_column_and_row(column):
    with pytest.raises(OdtDataError, match=r"<data>: column 'big', row 1: the integer \d+ is larger than 2\^53"):
        odt.compile("model tree(depth <= 1)\n", data={"big": column, "class": [0, 1, 0, 1, 0, 1]})


def test_integers_within_2_to_53_and_large_floats_are_numbers():
    prog = odt.compile("model tree(depth <= 1)\n", data={"a": [2**53 - i for i in range(4)],
                                                           "b": [1e30 * (i + 1) for i in range(4)], "class": [0, 1, 0, 1]})
    assert len(prog.dataset.features) == 6


def test_a_classifier_still_routes_a_large_integer_it_is_given(tmp_path):
    """Only training refuses it: compared with thresholds within 2^53, it goes to the right side."""
    clf = odt.compile("model tree(depth <= 1)\n", data={"a": [1, 2, 3, 4], "class": [0, 0, 1, 1]}).solve().classifier
    assert clf.predict({"a": [10**30, 1]}).tolist() == [1, 0]


def test_integer_labels_keep_their_exact_value():
    prog = odt.compile("model tree(depth <= 1)\n", data={"a": [0, 1, 0, 1], "class": [10**30, 10**30 + 1] * 2})
    assert prog.dataset.classes == (10**30, 10**30 + 1)


def test_a_column_mostly_of_texts_with_a_number_among_them_is_categorical(tmp_path):
    """ggplot2's mpg drive column holds 'f', 'r' and '4': a category code that looks like a
    number does not make the column numeric (it was refused at the first 'f')."""
    p = _write(tmp_path, "drv,class\nf,0\n4,1\nr,1\nf,0\n4,1\n")
    prog = odt.compile_file(_write(tmp_path, f'data "{p}" {{ target class }}\nmodel tree(depth <= 1)\n', "p.odt"))
    assert {f.category for f in prog.dataset.binarizer.features if f.column == "drv"} == {"4", "f", "r"}


@pytest.mark.parametrize("cells", [["1", "2", "x", "3"], ["1", "?", "NA", "x"], ["1", "", "", "x"]])
def test_a_column_mostly_of_numbers_and_missing_marks_is_numeric_and_names_its_text(tmp_path, cells):
    rows = "".join(f"{c},{i % 2}\n" for i, c in enumerate(cells))
    p = _write(tmp_path, "a,class\n" + rows)
    with pytest.raises(OdtDataError, match=r"column 'a'"):
        odt.compile_file(_write(tmp_path, f'data "{p}" {{ target class }}\nmodel tree(depth <= 1)\n', "p.odt"))
