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
