"""Every Python entry point checks its arguments (issue 24, item 6): a value it cannot take
is an ``OdtInputError`` (an ``OdtError`` that is also a ``ValueError``; of the wrong type,
``OdtInputTypeError``, also a ``TypeError``) that says what it takes, never a raw Python
exception from deep inside, and never accepted silently."""
from __future__ import annotations

import math

import numpy as np
import pytest

import odt
from odt.compiler.errors import OdtError, OdtInputError, OdtInputTypeError

DATA = {"a": [0, 1, 0, 1, 1, 0], "class": [0, 1, 0, 1, 1, 1]}
PROGRAM = "model tree(depth <= 1)\n"
PARAM = "param d = 1\nmodel tree(depth <= d)\n"


@pytest.mark.parametrize("call, kind, message", [
    (lambda: odt.compile(None), OdtInputTypeError, r"the program must be text \(a str\), not None"),
    (lambda: odt.compile(123), OdtInputTypeError, r"the program must be text \(a str\), not an int \(123\)"),
    (lambda: odt.compile(PROGRAM, target="class"), OdtInputError, "target= gives the labels of data= .* no data= is given"),
    (lambda: odt.compile(PARAM, data=DATA, params=[1, 2]), OdtInputTypeError,
     r"params must map parameter names to values, not a list \(\[1, 2\]\)"),
    (lambda: odt.compile(PARAM, data=DATA, params="d=2"), OdtInputTypeError, "params must map parameter names"),
    (lambda: odt.compile(PROGRAM, data=DATA, filename=None), OdtInputTypeError, "filename must be a str"),
    (lambda: odt.compile(PROGRAM, base_dir=5), OdtInputTypeError, "base_dir must be a folder"),
    (lambda: odt.compile(PROGRAM, data=5), OdtInputTypeError, "data must be a pandas DataFrame, a dict of columns or"),
    (lambda: odt.compile(PROGRAM, data="data.csv"), OdtInputTypeError, r"not a str \('data.csv'\)"),
    (lambda: odt.compile(PROGRAM, data={1: [0, 1], "1": [1, 0], "class": [0, 1]}), OdtInputError,
     r"column '1' appears twice \(columns 1 and 2\)"),
    (lambda: odt.compile(PROGRAM, data=DATA, target=[0, 1, 0, 1, 1, 1]), OdtInputError,
     "target= gives the labels, but the data already has a column 'class'"),
    (lambda: odt.compile_file(None), OdtInputTypeError, "compile_file takes the path of a program file, not None"),
    (lambda: odt.load_classifier({}), OdtInputTypeError, "load_classifier takes the path of a model file, not a dict"),
])
def test_compile_and_load_check_their_arguments(call, kind, message):
    with pytest.raises(kind, match=message) as info:
        call()
    assert isinstance(info.value, (OdtError, ValueError))
    assert isinstance(info.value, TypeError) == (kind is OdtInputTypeError)


def test_duplicate_dataframe_columns_are_refused_not_merged():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame([[0, 1, 0], [1, 0, 1], [0, 1, 1], [1, 1, 0]], columns=["a", "a", "class"])
    with pytest.raises(OdtInputError, match=r"<data>: column 'a' appears twice \(columns 1 and 2\)"):
        odt.compile(PROGRAM, data=df)


def test_program_text_may_be_utf8_bytes():
    assert odt.compile(PROGRAM.encode(), data=DATA).solve().status == "optimal"


@pytest.fixture(scope="module")
def program() -> odt.Program:
    return odt.compile(PROGRAM, data=DATA)


@pytest.mark.parametrize("options, kind, message", [
    ({"memory_limit": 0}, OdtInputError, "memory_limit must be a positive number of bytes, not 0"),
    ({"memory_limit": -5}, OdtInputError, "memory_limit must be a positive number of bytes, not -5"),
    ({"memory_limit": math.nan}, OdtInputError, "memory_limit must be a positive number of bytes, not nan"),
    ({"memory_limit": "4"}, OdtInputError, "not a memory size: '4' .a number and a unit"),
    ({"memory_limit": "lots"}, OdtInputError, "not a memory size: 'lots'"),
    ({"memory_limit": [1]}, OdtInputTypeError, "memory_limit must be a number of bytes or a size"),
    ({"progress": 5}, OdtInputTypeError, r"progress must be a function of one Progress \(or None\), not 5"),
    ({"backend": 5}, OdtInputTypeError, "backend must be a backend's name"),
    ({"warm_start": "no"}, OdtInputTypeError, "warm_start must be True or False, not 'no'"),
    ({"verbose": 1}, OdtInputTypeError, "verbose must be True or False, not 1"),
    ({"threads": "2"}, OdtInputTypeError, "threads must be an integer in 0..1024, not '2'"),
    ({"time_limit": "2"}, OdtInputTypeError, "the time limit must be a positive finite number of seconds, not '2'"),
])
def test_solve_checks_its_options_before_any_work(program, options, kind, message):
    with pytest.raises(kind, match=message):
        program.solve(**options)


@pytest.mark.parametrize("size", ["1K", "4G", "500MiB", 2**32, 1e9])
def test_a_memory_limit_is_bytes_or_a_size_with_a_unit_as_on_the_command_line(program, size):
    res = program.solve(memory_limit=size)
    assert res.status == "optimal"


def test_a_memory_limit_of_a_kilobyte_refuses_an_encoding_as_the_command_line_does(program):
    with pytest.raises(OdtError, match="over the memory budget of 0.0 GiB"):
        program.solve(backend="maxsat", memory_limit="1K")


def test_numpy_booleans_and_integers_are_taken(program):
    assert program.solve(warm_start=np.bool_(False), threads=np.int64(1), seed=np.int32(3)).status == "optimal"
