"""Writes the committed fuzz corpus of tests/fixtures/fuzz (run from the repository root:
``python tests/fuzz/make_corpus.py``). Deterministic: the same files every run.

* ``programs/*.odt``: malformed programs — every line of a valid base program broken in
  ways that are wrong by construction (stray characters, a closing bracket removed, the
  last token cut), name typos, type errors, numbers out of range, data-block mistakes,
  duplicate items, constant objectives, solver options. ``solve_*.odt`` are programs
  that check but cannot be solved (infeasible on the data): the test solves those.
* ``csv/*.csv``: bad data files, each read by ``csv/cases.json``'s data block.
* ``models/*``: files that are not odt models, or break its schema (issue 24: an index
  that is ``true`` or ``1.0``, a node both leaf and split, ``seen`` out of range), given
  to ``odtc predict`` and ``render``.
* ``unseen/*``: valid models and ``unseen/rows.csv``, a row of which holds a category no
  training row had: ``odtc predict`` refuses it, naming column and row — also for a model
  saved without the record of its training categories (``seen``), with either
  ``--unknown``.
* ``accepted/*.odt`` (and their CSVs): hostile but valid inputs that once crashed (issue
  24: formulas nested a thousand deep, a class per row, empty cells marked missing):
  ``odtc solve`` must answer them, exit 0, within a 5 s time limit.

Every file of the first three must make ``odtc`` exit 1 with a positioned
(``file:line:col``) or column/row message, never 2 (an internal error):
tests/fuzz/test_corpus.py.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "fuzz"

BASE = """data "../data.csv" {
    target class
    weight w
    id rid
    categorical job
    numeric age by quantiles(4)
}
group old = age >= 50
group clerks = job == "clerk" and not (smoker == 1)
cost prices = { age: 2, *: 1 }
model tree(depth <= 2, leaves <= 4)
minimize errors + 0.5 * nodes
subject to {
    errors(old) <= 3
    rate(1, clerks) >= 0.1
    every leaf: samples >= 1
    every path: cost <= 5 with cost prices
    uses age or uses job
    same_leaf(r1, r2)
    threshold age in [20, 70]
}
solve maxsat(time_limit = 10s, solver = "g3")
"""

HEAD = 'data "../data.csv" { target class weight w id rid }\n'
MODEL = "model tree(depth <= 2)\n"

# one wrong thing each; the name says what
NAMED: dict[str, str] = {
    # names
    "name_quantity": HEAD + MODEL + "minimize erors\n",
    "name_quantity_call": HEAD + MODEL + "minimize erors(old)\n",
    "name_group_arg": HEAD + MODEL + "minimize errors(olds)\n",
    "name_class": HEAD + "group old = age >= 50\n" + MODEL + "subject to { rate(7, old) >= 0.1 }\n",
    "name_class_text": HEAD + "group old = age >= 50\n" + MODEL + 'subject to { predicted("yes", old) >= 1 }\n',
    "name_column_group": HEAD + "group old = agee >= 50\n" + MODEL,
    "name_column_alone": HEAD + "group old = smokr\n" + MODEL,
    "name_column_features": HEAD + "model tree(depth <= 2) { features agee, job }\n",
    "name_column_threshold": HEAD + MODEL + "subject to { threshold agee in [1, 2] }\n",
    "name_feature_uses": HEAD + MODEL + "subject to { uses ag }\n",
    "name_feature_before": HEAD + MODEL + "subject to { every path: ag before job }\n",
    "name_feature_exclusion": HEAD + MODEL + "subject to { every path: not (ag and jb) }\n",
    "name_feature_cost": HEAD + MODEL + "subject to { every path: cost <= 3 with cost { agee: 1 } }\n",
    "name_cost_table": HEAD + MODEL + "subject to { every path: cost <= 3 with cost pricez }\n",
    "name_backend": HEAD + MODEL + "solve maxsta\n",
    "name_option": HEAD + MODEL + "solve maxsat(time_limt = 10s)\n",
    "name_strategy": HEAD + MODEL + "solve maxsat strategy incremetal\n",
    "name_param": HEAD + "model tree(depht <= 2)\n",
    "name_param_diagram": HEAD + "model diagram(width = [1, 2])\n",
    "name_param_bdd": HEAD + "model bdd(depth = 2, bais = \"C\")\n",
    "name_encoding": HEAD + MODEL + 'solve cp(encoding = "flows")\n',
    "name_solver": HEAD + MODEL + 'solve maxsat(solver = "nosuchsat")\n',
    "name_row_id": HEAD + MODEL + "subject to { same_leaf(r1, r999) }\n",
    "name_target": 'data "../data.csv" { target klass }\n' + MODEL,
    "name_weight": 'data "../data.csv" { target class weight ww }\n' + MODEL,
    "name_id": 'data "../data.csv" { target class id rowid }\n' + MODEL,
    "name_declared": 'data "../data.csv" { target class categorical jobb }\n' + MODEL,
    "name_dropped": 'data "../data.csv" { target class drop smokr }\n' + MODEL,
    "name_many": HEAD + "model tree(depth <= 2, leafs <= 3)\nminimize erors\nsolve maxsta\n",
    "name_no_data_and_typo": MODEL + "minimize erors\n",
    "name_group_twice": HEAD + "group a = age >= 50\ngroup a = age >= 20\n" + MODEL,
    "name_cost_twice": HEAD + "cost p = { age: 1 }\ncost p = { age: 2 }\n" + MODEL,
    # types
    "type_product": HEAD + MODEL + "minimize errors * nodes\n",
    "type_division": HEAD + MODEL + "minimize errors / nodes\n",
    "type_division_zero": HEAD + MODEL + "minimize errors / 0\n",
    "type_not_equal": HEAD + MODEL + "subject to { errors != 3 }\n",
    "type_strict_fraction": HEAD + MODEL + "subject to { accuracy < 0.5 }\n",
    "type_samples_outside": HEAD + MODEL + "subject to { samples >= 3 }\n",
    "type_cost_outside": HEAD + MODEL + "subject to { cost <= 3 }\n",
    "type_cost_no_table": HEAD + MODEL + "subject to { every path: cost <= 3 }\n",
    "type_errors_per_node": HEAD + MODEL + "subject to { every node: errors <= 3 }\n",
    "type_accuracy_per_leaf": HEAD + MODEL + "subject to { every leaf: accuracy >= 0.5 }\n",
    "type_group_errors_per_leaf": HEAD + "group old = age >= 50\n" + MODEL + "subject to { every leaf: errors(old) <= 3 }\n",
    "type_before_on_node": HEAD + MODEL + "subject to { every node: age before job }\n",
    "type_text_less": HEAD + 'group g = job < "clerk"\n' + MODEL,
    "type_number_text": HEAD + "group g = job >= 3\n" + MODEL,
    "type_two_constants": HEAD + "group g = 3 == 4\n" + MODEL,
    "type_alone_not_binary": HEAD + "group g = age\n" + MODEL,
    "type_group_quantity": HEAD + "group old = age >= 50\n" + MODEL + "minimize old\n",
    "type_arity": HEAD + MODEL + "minimize errors(1, 2, 3)\n",
    "type_arity_rate": HEAD + MODEL + "subject to { rate() >= 1 }\n",
    "type_text_in_sum": HEAD + MODEL + 'minimize errors + "a"\n',
    "type_bare_call": HEAD + MODEL + "subject to { errors(old) }\n",
    "type_same_leaf_arity": HEAD + MODEL + "subject to { same_leaf(r1) }\n",
    "type_same_leaf_no_ids": 'data "../data.csv" { target class }\n' + MODEL + "subject to { same_leaf(r1, r2) }\n",
    "type_threshold_empty": HEAD + MODEL + "subject to { threshold age in [70, 20] }\n",
    "type_always_false": HEAD + MODEL + "subject to { 3 <= 2 }\n",
    "type_two_models": HEAD + MODEL + MODEL,
    "type_two_objectives": HEAD + MODEL + "minimize errors\nminimize nodes\n",
    "type_two_solves": HEAD + MODEL + "solve maxsat\nsolve cp\n",
    "type_two_data": HEAD + HEAD + MODEL,
    "type_no_model": HEAD + "minimize errors\n",
    "type_param_twice": HEAD + "model tree(depth <= 2, depth <= 3)\n",
    "type_depth_equal": HEAD + "model tree(depth == 2)\n",
    "type_depth_ge": HEAD + "model tree(depth >= 2)\n",
    "type_depth_deep": HEAD + "model tree(depth <= 13)\n",
    "type_depth_negative": HEAD + "model tree(depth < 0)\n",
    "type_depth_range_empty": HEAD + "model tree(depth in 5..2)\n",
    "type_no_depth": HEAD + "model tree()\n",
    "type_leaves_zero": HEAD + "model tree(depth <= 2, leaves <= 0)\n",
    "type_leaves_ge": HEAD + "model tree(depth <= 2, leaves >= 3)\n",
    "type_nodes_list": HEAD + "model tree(depth <= 2, nodes = [1, 2])\n",
    "type_widths_root": HEAD + "model diagram(widths = [2, 2])\n",
    "type_widths_zero": HEAD + "model diagram(widths = [1, 0])\n",
    "type_widths_wide": HEAD + "model diagram(widths = [1, 3])\n",
    "type_widths_long": HEAD + "model diagram(widths = [1, 2, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4])\n",
    "type_widths_missing": HEAD + "model diagram()\n",
    "type_widths_int": HEAD + "model diagram(widths = 3)\n",
    "type_bdd_depth_zero": HEAD + "model bdd(depth = 0)\n",
    "type_bdd_no_depth": HEAD + "model bdd()\n",
    "type_bdd_deep": HEAD + "model bdd(depth = 20)\n",
    "type_bdd_bias": HEAD + 'model bdd(depth = 2, bias = "X")\n',
    "type_bdd_range": HEAD + "model bdd(depth in 0..3)\n",
    "type_preselect_tree": HEAD + MODEL + "solve maxsat(preselect = 3)\n",
    "type_preselect_zero": HEAD + "model bdd(depth = 2)\nsolve maxsat(preselect = 0)\n",
    "type_threads_fraction": HEAD + MODEL + "solve cp(threads = 2.5)\n",
    "type_threads_negative": HEAD + MODEL + "solve cp(threads = -1)\n",
    "type_threads_huge": HEAD + MODEL + "solve cp(threads = 100000)\n",
    "type_seed_huge": HEAD + MODEL + "solve cp(seed = 99999999999)\n",
    "type_time_zero": HEAD + MODEL + "solve maxsat(time_limit = 0s)\n",
    "type_time_negative": HEAD + MODEL + "solve maxsat(time_limit = -5)\n",
    "type_time_text": HEAD + MODEL + 'solve maxsat(time_limit = "soon")\n',
    "type_option_twice": HEAD + MODEL + "solve maxsat(time_limit = 5s, time_limit = 6s)\n",
    "type_verbose": HEAD + MODEL + "solve maxsat(verbose = 7)\n",
    "type_solver_number": HEAD + MODEL + "solve maxsat(solver = 3)\n",
    "type_tp_many_classes": 'data "../data.csv" { target job }\n' + MODEL + "minimize fp\n",
    # constant objectives
    "const_min5": HEAD + MODEL + "minimize 5\n",
    "const_max0": HEAD + MODEL + "maximize 0\n",
    "const_product": HEAD + MODEL + "minimize 2 * 3\n",
    "const_then": HEAD + MODEL + "minimize errors then 3\n",
    "const_cancels": HEAD + MODEL + "minimize errors - errors\n",
    "const_size": HEAD + "group old = age >= 50\n" + MODEL + "minimize size(old)\n",
    # numbers out of range
    "range_objective": HEAD + MODEL + "minimize 1e308 * errors\n",
    "range_digits": HEAD + MODEL + "minimize " + "9" * 400 + " * errors\n",
    "range_bound": HEAD + MODEL + "subject to { errors <= 1e308 }\n",
    "range_bound_digits": HEAD + MODEL + "subject to { errors <= " + "7" * 400 + " }\n",
    "range_tiny": HEAD + MODEL + "minimize 1e-300 * errors\n",
    "range_division_tiny": HEAD + MODEL + "subject to { errors / 0.0000000000000000001 <= 5 }\n",
    "range_threshold": HEAD + MODEL + "subject to { threshold age in [0, 1e400] }\n",
    "range_explicit": 'data "../data.csv" { target class numeric age by [1, 1e400] }\n' + MODEL,
    "range_cost": HEAD + MODEL + "subject to { every path: cost <= 3 with cost { age: 1e300 } }\n",
    "range_group": HEAD + "group g = age >= 1e999\n" + MODEL,
    "range_depth": HEAD + "model tree(depth <= " + "9" * 30 + ")\n",
    "range_widths": HEAD + "model diagram(widths = [1, " + "9" * 30 + "])\n",
    "range_quantiles": 'data "../data.csv" { target class numeric age by quantiles(' + "9" * 30 + ") }\n" + MODEL,
    "range_threads": HEAD + MODEL + "solve cp(threads = " + "9" * 30 + ")\n",
    "range_time": HEAD + MODEL + "solve maxsat(time_limit = " + "9" * 400 + "s)\n",
    "range_leaves": HEAD + "model tree(depth <= 2, leaves <= " + "9" * 40 + ")\n",
    "range_depth_range": HEAD + "model tree(depth in 1.." + "9" * 40 + ")\n",
    # data block
    "data_drop_target": 'data "../data.csv" { target class drop class }\n' + MODEL,
    "data_categorical_target": 'data "../data.csv" { target class categorical class }\n' + MODEL,
    "data_binary_target": 'data "../data.csv" { target class binary class }\n' + MODEL,
    "data_numeric_target": 'data "../data.csv" { target class numeric class }\n' + MODEL,
    "data_drop_implicit_target": 'data "../data.csv" { drop class }\n' + MODEL,
    "data_categorical_implicit_target": 'data "../data.csv" { categorical class }\n' + MODEL,
    "data_target_twice": 'data "../data.csv" { target class target job }\n' + MODEL,
    "data_weight_declared": 'data "../data.csv" { target class weight w numeric w }\n' + MODEL,
    "data_id_dropped": 'data "../data.csv" { target class id rid drop rid }\n' + MODEL,
    "data_binary_categorical": 'data "../data.csv" { target class binary smoker categorical smoker }\n' + MODEL,
    "data_numeric_twice": 'data "../data.csv" { target class numeric age numeric age by quantiles(3) }\n' + MODEL,
    "data_drop_twice": 'data "../data.csv" { target class drop job, job }\n' + MODEL,
    "data_categorical_drop": 'data "../data.csv" { target class categorical job drop job }\n' + MODEL,
    "data_quantiles_zero": 'data "../data.csv" { target class numeric age by quantiles(0) }\n' + MODEL,
    "data_quantiles_one": 'data "../data.csv" { target class numeric age by quantiles(1) }\n' + MODEL,
    "data_binary_text": 'data "../data.csv" { target class binary job }\n' + MODEL,
    "data_binary_numeric": 'data "../data.csv" { target class binary age }\n' + MODEL,
    "data_numeric_text": 'data "../data.csv" { target class numeric job }\n' + MODEL,
    "data_weight_text": 'data "../data.csv" { target class weight job }\n' + MODEL,
    "data_id_repeats": 'data "../data.csv" { target class id job }\n' + MODEL,
    "data_missing_file": 'data "../nosuch.csv" { target class }\n' + MODEL,
    "data_folder": 'data "../" { target class }\n' + MODEL,
    "data_no_path": "data { target class }\n" + MODEL,
    "data_no_block": MODEL + "minimize errors\n",
    "data_group_empty": HEAD + "group g = age > 1000\n" + MODEL,
    "data_group_class_empty": HEAD + "group g = class == 5\n" + MODEL,
    "data_features_constant": HEAD + "model tree(depth <= 2) { features rid }\n",
    # empty and unreadable programs
    "empty_file": "",
    "empty_comment": "# only a comment\n# and another\n",
    "empty_blank": "\n\n   \n\t\n",
    # long and deep inputs, broken at the end
    "deep_not_unclosed": HEAD + "group g = " + "not (" * 200 + "smoker == 1" + ")" * 199 + "\n" + MODEL,
    "deep_parens_unclosed": HEAD + MODEL + "minimize " + "(" * 300 + "errors" + ")" * 299 + "\n",
    "deep_terms_typo": HEAD + MODEL + "minimize " + " + ".join(["errors"] * 500) + " + erors\n",
    "deep_not_typo": HEAD + "group g = " + "not (" * 200 + "smokr == 1" + ")" * 200 + "\n" + MODEL,
    "deep_uses_typo": HEAD + MODEL + "subject to { " + "not " * 200 + "uses agee }\n",
    "deep_and_typo": HEAD + "group g = " + " and ".join(["smoker == 1"] * 400) + " and smokr == 1\n" + MODEL,
    "deep_products": HEAD + MODEL + "minimize " + " * ".join(["2"] * 300) + " * errors\n",
    "deep_abs": HEAD + MODEL + "subject to { " + "abs(" * 40 + "errors - 3" + ")" * 40 + " <= 5 }\n",
    # syntax, hand-picked
    "syntax_model_no_parens": HEAD + "model tree\n",
    "syntax_subject_no_to": HEAD + MODEL + "subject { errors <= 3 }\n",
    "syntax_minimize_nothing": HEAD + MODEL + "minimize\n",
    "syntax_group_no_equals": HEAD + "group a b\n" + MODEL,
    "syntax_unclosed_block": HEAD + MODEL + "subject to { errors <= 3\n",
    "syntax_unclosed_paren": HEAD + "model tree(depth <= 3\n",
    "syntax_bad_char": HEAD + MODEL + "minimize errors @ 2\n",
    "syntax_leading_minus": HEAD + MODEL + "subject to { -errors <= 3 }\n",
    "syntax_two_broken": HEAD + "model tree(depth <= 2\nminimize errors +\nsolve maxsat(\n",
    "syntax_keyword_typo": HEAD + "modle tree(depth <= 2)\n",
    "syntax_unterminated_string": 'data "../data.csv { target class }\n' + MODEL,
    "syntax_backquote": HEAD + "group g = `age >= 3\n" + MODEL,
    "syntax_duration_unit": HEAD + MODEL + "solve maxsat(time_limit = 10 days)\n",
    "syntax_comparison_chain_bad": HEAD + MODEL + "subject to { errors <= <= 3 }\n",
    "syntax_membership_empty": HEAD + "group g = job in {}\n" + MODEL,
    "syntax_cost_empty": HEAD + "cost p = {}\n" + MODEL,
    "syntax_nul_byte": HEAD + MODEL + "minimize errors\x00\n",
    "syntax_unicode_operator": HEAD + MODEL + "subject to { errors \u2264 3 }\n",
}

# programs that check but have no solution on this data: solved by the test
SOLVE: dict[str, str] = {
    "samples": HEAD + MODEL + "subject to { every leaf: samples >= 1000 }\n",
    "samples_dp": HEAD + MODEL + "subject to { every leaf: samples >= 1000 }\nsolve dp\n",
    "samples_cp": HEAD + MODEL + "subject to { every leaf: samples >= 1000 }\nsolve cp\n",
    "samples_milp": HEAD + MODEL + "subject to { every leaf: samples >= 1000 }\nsolve milp\n",
    "samples_equal": HEAD + MODEL + "subject to { every leaf: samples == 500 }\n",
    "errors_negative": HEAD + MODEL + "subject to { errors <= -1 }\n",
    "errors_above_total": HEAD + MODEL + "subject to { errors >= 1000 }\n",
    "group_errors_above": HEAD + "group old = age >= 50\n" + MODEL + "subject to { errors(old) >= 500 }\n",
    "accuracy_above_one": HEAD + MODEL + "subject to { accuracy >= 2 }\n",
    "leaves_zero": HEAD + MODEL + "subject to { leaves <= 0 }\n",
    "nodes_negative": HEAD + MODEL + "subject to { nodes <= -1 }\n",
}

# hostile but valid: solved with exit 0 within a 5 s limit (issue 24)
ONE = "model tree(depth <= 1)\n"
ACCEPTED: dict[str, str] = {
    "uses_not_1000_dp": HEAD + ONE + "subject to { " + "not (" * 1000 + "uses age" + ")" * 1000 + " }\nsolve dp\n",
    "uses_alternating_dp": HEAD + ONE + "subject to { " + "not (uses job or " * 600 + "uses age" + ")" * 600
                           + " }\nsolve dp\n",
    "uses_alternating_maxsat": HEAD + ONE + "subject to { " + "not (uses job or " * 600 + "uses age" + ")" * 600
                               + " }\nsolve maxsat\n",
    "group_not_3000": HEAD + "group g = " + "not (" * 3000 + "smoker == 1" + ")" * 3000 + "\n" + ONE
                      + "subject to { errors(g) <= 100 }\nsolve dp\n",
    "missing_empty_learn": 'data "empty_cells.csv" { target class missing "" (learn) }\n' + MODEL,
    "missing_empty_drop": 'data "empty_cells.csv" { target class missing "" (drop) }\n' + MODEL,
    "many_classes_dp": 'data "many_classes.csv" { target class }\n' + MODEL,
    "many_classes_streed": 'data "many_classes_binary.csv" { target class }\n' + MODEL
                           + "subject to { leaves <= 3 }\n",
}


def accepted_csvs() -> dict[str, bytes]:
    """The data of ``ACCEPTED``: deterministic, a class per row in the two many_classes files."""
    import random

    rnd = random.Random(24)
    many = ["a,b,class"] + [f"{rnd.random():.6f},{rnd.random():.6f},c{i}" for i in range(2000)]
    binary = ["f0,f1,f2,f3,f4,f5,class"] + [",".join(str(rnd.randint(0, 1)) for _ in range(6)) + f",c{i}"
                                             for i in range(3000)]
    empty = ["a,job,class", "1,x,0", "2,,1", ",y,0", "4,x,1", "5,y,1", ",,0", "7,x,1", "8,y,0"]
    return {"many_classes": _rows(*many), "many_classes_binary": _rows(*binary), "empty_cells": _rows(*empty)}


STRAY = ["@", "$", ";", "&", "|", "?", "!", "%", "^", "~", "\\"]


def _tokens(line: str) -> list[int]:
    """Offsets where a token of ``line`` starts (rough, enough to cut between tokens)."""
    out, prev = [], " "
    for i, ch in enumerate(line):
        if not ch.isspace() and (prev.isspace() or not (ch.isalnum() or ch in "_.") or not (prev.isalnum() or prev in "_.")):
            out.append(i)
        prev = ch
    return out


def mutated_programs() -> dict[str, str]:
    """Each line of BASE broken three ways: a stray character, a closing bracket removed,
    its last token cut. Kept only when the result differs from BASE."""
    lines = BASE.splitlines(keepends=True)
    out: dict[str, str] = {}
    k = 0
    for i, line in enumerate(lines):
        body = line.rstrip("\n")
        if not body.strip():
            continue
        starts = _tokens(body)
        for j, pos in enumerate(starts):  # a stray character before a token (cycling the set)
            ch = STRAY[k % len(STRAY)]
            k += 1
            out[f"stray_l{i + 1:02d}_t{j:02d}"] = "".join(lines[:i]) + body[:pos] + ch + body[pos:] + "\n" + "".join(lines[i + 1:])
        for closer in ")]}":
            pos = body.rfind(closer)
            if pos >= 0:
                out[f"unclosed_l{i + 1:02d}_{'paren' if closer == ')' else 'bracket' if closer == ']' else 'brace'}"] = \
                    "".join(lines[:i]) + body[:pos] + body[pos + 1:] + "\n" + "".join(lines[i + 1:])
        if len(starts) > 1 and i + 1 != 14:  # line 14 cut reads on into line 15: a valid chained comparison
            out[f"cut_l{i + 1:02d}"] = "".join(lines[:i]) + body[:starts[-1]] + "\n" + "".join(lines[i + 1:])
    return out


MODELS: dict[str, bytes] = {
    "list": b"[]",
    "null": b"null",
    "number": b"42",
    "string": b'"a tree"',
    "empty_object": b"{}",
    "empty_file": b"",
    "truncated": b'{"schema": "odt.classifier/1", "type": "tree", "classes": [0, 1',
    "not_json": b"model: tree\n",
    "binary": bytes(range(256)) * 4,
    "nul_bytes": b"\x00" * 64,
    "other_schema": json.dumps({"schema": "sklearn/1", "type": "tree"}).encode(),
    "future_version": json.dumps({"schema": "odt.classifier/2", "type": "tree", "classes": [0, 1],
                                  "features": [], "root": {"class": 0}}).encode(),
    "no_schema": json.dumps({"type": "tree", "classes": [0, 1], "features": [], "root": {"class": 0}}).encode(),
    "bad_type": json.dumps({"schema": "odt.classifier/1", "type": "forest"}).encode(),
    "missing_features": json.dumps({"schema": "odt.classifier/1", "type": "tree", "classes": [0, 1],
                                    "root": {"class": 0}}).encode(),
    "missing_root": json.dumps({"schema": "odt.classifier/1", "type": "tree", "classes": [0, 1],
                                "features": []}).encode(),
    "features_not_list": json.dumps({"schema": "odt.classifier/1", "type": "tree", "classes": [0, 1],
                                     "features": {"a": 1}, "root": {"class": 0}}).encode(),
    "root_list": json.dumps({"schema": "odt.classifier/1", "type": "tree", "classes": [0, 1],
                             "features": [], "root": []}).encode(),
    "leaf_out_of_range": json.dumps({"schema": "odt.classifier/1", "type": "tree", "classes": [0, 1],
                                     "features": [], "root": {"class": 5}}).encode(),
    "feature_out_of_range": json.dumps({
        "schema": "odt.classifier/1", "type": "tree", "classes": [0, 1], "features": [],
        "root": {"feature": 3, "if_true": {"class": 0}, "if_false": {"class": 1}}}).encode(),
    "feature_bad_kind": json.dumps({
        "schema": "odt.classifier/1", "type": "tree", "classes": [0, 1],
        "features": [{"column": "age", "kind": "spline", "threshold": 3, "category": None}],
        "root": {"feature": 0, "if_true": {"class": 0}, "if_false": {"class": 1}}}).encode(),
    "feature_no_threshold": json.dumps({
        "schema": "odt.classifier/1", "type": "tree", "classes": [0, 1],
        "features": [{"column": "age", "kind": "threshold", "threshold": None, "category": None}],
        "root": {"feature": 0, "if_true": {"class": 0}, "if_false": {"class": 1}}}).encode(),
    "feature_missing_column": json.dumps({
        "schema": "odt.classifier/1", "type": "tree", "classes": [0, 1],
        "features": [{"kind": "binary"}],
        "root": {"feature": 0, "if_true": {"class": 0}, "if_false": {"class": 1}}}).encode(),
    "node_missing_branch": json.dumps({
        "schema": "odt.classifier/1", "type": "tree", "classes": [0, 1],
        "features": [{"column": "smoker", "kind": "binary", "threshold": None, "category": None}],
        "root": {"feature": 0, "if_true": {"class": 0}}}).encode(),
    "feature_index_text": json.dumps({
        "schema": "odt.classifier/1", "type": "tree", "classes": [0, 1],
        "features": [{"column": "smoker", "kind": "binary", "threshold": None, "category": None}],
        "root": {"feature": "zero", "if_true": {"class": 0}, "if_false": {"class": 1}}}).encode(),
    "no_classes": json.dumps({"schema": "odt.classifier/1", "type": "tree", "classes": [],
                              "features": [], "root": {"class": 0}}).encode(),
    "diagram_no_nodes": json.dumps({"schema": "odt.classifier/1", "type": "diagram", "classes": [0, 1],
                                    "features": [], "root": {"class": 0}}).encode(),
    "diagram_cycle": json.dumps({
        "schema": "odt.classifier/1", "type": "diagram", "classes": [0, 1],
        "features": [{"column": "smoker", "kind": "binary", "threshold": None, "category": None}],
        "root": {"node": 0},
        "nodes": [{"feature": 0, "layer": 0, "if_true": {"node": 0}, "if_false": {"class": 1}}]}).encode(),
    "diagram_dangling": json.dumps({
        "schema": "odt.classifier/1", "type": "diagram", "classes": [0, 1],
        "features": [{"column": "smoker", "kind": "binary", "threshold": None, "category": None}],
        "root": {"node": 0},
        "nodes": [{"feature": 0, "layer": 0, "if_true": {"node": 7}, "if_false": {"class": 1}}]}).encode(),
    "diagram_class_out_of_range": json.dumps({
        "schema": "odt.classifier/1", "type": "diagram", "classes": [0, 1],
        "features": [{"column": "smoker", "kind": "binary", "threshold": None, "category": None}],
        "root": {"node": 0},
        "nodes": [{"feature": 0, "layer": 0, "if_true": {"class": 9}, "if_false": {"class": 1}}]}).encode(),
    "deep_json": b"[" * 20000 + b"]" * 20000,
}


_BINARY = {"column": "smoker", "kind": "binary", "threshold": None, "category": None}
_CLERK = {"column": "job", "kind": "category", "threshold": None, "category": "clerk"}
_SEEN = {"categories": {"job": ["clerk", "driver", "nurse", "teacher"]}, "majority": 0}


def _tree(root: object, **more: object) -> bytes:
    return json.dumps({"schema": "odt.classifier/1", "type": "tree", "classes": [0, 1],
                       "features": [_BINARY, _CLERK], "input_columns": ["job", "smoker"], "root": root,
                       **more}).encode()


def _diagram(nodes: list, root: object = None, **more: object) -> bytes:
    return json.dumps({"schema": "odt.classifier/1", "type": "diagram", "kind": "diagram", "classes": [0, 1],
                       "features": [_BINARY, _CLERK], "input_columns": ["job", "smoker"],
                       "root": {"node": 0} if root is None else root, "nodes": nodes, **more}).encode()


_SPLIT = {"feature": 1, "if_true": {"class": 1}, "if_false": {"class": 0}}
_NODES = [{"feature": 0, "layer": 0, "if_true": {"node": 1}, "if_false": {"class": 0}},
          {"feature": 1, "layer": 1, "if_true": {"class": 1}, "if_false": {"class": 0}}]

# issue 24: accepted before, or failing later with a Python exception, or silently wrong
SCHEMA_MODELS: dict[str, bytes] = {
    "seen_majority_out_of_range": _tree(_SPLIT, seen={**_SEEN, "majority": 5}),
    "seen_majority_negative": _tree(_SPLIT, seen={**_SEEN, "majority": -1}),
    "seen_majority_true": _tree(_SPLIT, seen={**_SEEN, "majority": True}),
    "seen_not_object": _tree(_SPLIT, seen="job"),
    "seen_without_tested_category": _tree(_SPLIT, seen={"categories": {"job": ["nurse"]}, "majority": 0}),
    "seen_misspelt": _tree(_SPLIT, sen=_SEEN),
    "feature_index_true": _tree({"feature": True, "if_true": {"class": 1}, "if_false": {"class": 0}}, seen=_SEEN),
    "feature_index_float": _tree({"feature": 1.0, "if_true": {"class": 1}, "if_false": {"class": 0}}, seen=_SEEN),
    "feature_index_negative": _tree({"feature": -1, "if_true": {"class": 1}, "if_false": {"class": 0}}, seen=_SEEN),
    "node_class_and_feature": _tree({"class": 1, **_SPLIT}, seen=_SEEN),
    "leaf_class_label": _tree({"feature": 1, "if_true": {"class": "1"}, "if_false": {"class": 0}}, seen=_SEEN),
    "leaf_class_false": _tree({"feature": 1, "if_true": {"class": False}, "if_false": {"class": 0}}, seen=_SEEN),
    "threshold_text": json.dumps({
        "schema": "odt.classifier/1", "type": "tree", "classes": [0, 1],
        "features": [{"column": "age", "kind": "threshold", "threshold": "30", "category": None}],
        "root": {"feature": 0, "if_true": {"class": 0}, "if_false": {"class": 1}}}).encode(),
    "binary_with_threshold": json.dumps({
        "schema": "odt.classifier/1", "type": "tree", "classes": [0, 1],
        "features": [{**_BINARY, "threshold": 0.5}],
        "root": {"feature": 0, "if_true": {"class": 0}, "if_false": {"class": 1}}}).encode(),
    "classes_repeat": json.dumps({"schema": "odt.classifier/1", "type": "tree", "classes": [1, 1],
                                  "features": [], "root": {"class": 0}}).encode(),
    "diagram_arc_class_negative": _diagram([_NODES[0], {**_NODES[1], "if_true": {"class": -1}}], seen=_SEEN),
    "diagram_root_class_negative": _diagram(_NODES, root={"class": -1}, seen=_SEEN),
    "diagram_arc_node_negative": _diagram([{**_NODES[0], "if_true": {"node": -2}}, _NODES[1]], seen=_SEEN),
    "diagram_arc_both": _diagram([{**_NODES[0], "if_true": {"node": 1, "class": 0}}, _NODES[1]], seen=_SEEN),
    "diagram_layer_negative": _diagram([{**_NODES[0], "layer": -1}, _NODES[1]], seen=_SEEN),
    "diagram_layer_not_below": _diagram([_NODES[0], {**_NODES[1], "layer": 0}], seen=_SEEN),
    "diagram_feature_true": _diagram([{**_NODES[0], "feature": True}, _NODES[1]], seen=_SEEN),
    "diagram_root_integer": _diagram(_NODES, root=0, seen=_SEEN),
    "bdd_two_features_in_a_layer": json.dumps({
        "schema": "odt.classifier/1", "type": "diagram", "kind": "bdd", "classes": [0, 1],
        "features": [_BINARY, _CLERK], "root": {"node": 0}, "seen": _SEEN,
        "nodes": [{"feature": 0, "layer": 0, "if_true": {"node": 1}, "if_false": {"node": 2}},
                  {"feature": 1, "layer": 1, "if_true": {"class": 1}, "if_false": {"class": 0}},
                  {"feature": 0, "layer": 1, "if_true": {"class": 0}, "if_false": {"class": 1}}]}).encode(),
}

# valid models; each refuses the row of unseen/rows.csv whose job is 'pilot'
UNSEEN_MODELS: dict[str, bytes] = {
    "tree": _tree(_SPLIT, seen=_SEEN),
    "tree_without_seen": _tree(_SPLIT),
    "diagram_without_seen": _diagram(_NODES),
}
UNSEEN_ROWS = "age,job,smoker\n30,clerk,1\n41,clerk,0\n52,pilot,1\n"


def _deep_tree(depth: int) -> bytes:
    text = json.dumps({"schema": "odt.classifier/1", "type": "tree", "classes": [0, 1],
                       "features": [{"column": "smoker", "kind": "binary", "threshold": None, "category": None}],
                       "root": {"class": 0}})
    # json.dumps itself recurses: splice the nested root in as text
    inner = '{"class": 0}'
    for _ in range(depth):
        inner = '{"feature": 0, "if_true": ' + inner + ', "if_false": {"class": 1}}'
    return text.replace('"root": {"class": 0}', '"root": ' + inner).encode()


GOOD = ["age,job,smoker,w,rid,class", "18,clerk,1,1,r1,1", "25,nurse,0,2,r2,1", "32,driver,0,3,r3,0",
        "39,teacher,1,1,r4,0", "46,clerk,0,2,r5,0"]


def _rows(*rows: str) -> bytes:
    return ("\n".join(rows) + "\n").encode()


def bad_csvs() -> dict[str, tuple[bytes, str]]:
    """name -> (file content, data block items)."""
    spec = "target class"
    out: dict[str, tuple[bytes, str]] = {
        "empty": (b"", spec),
        "blank_lines": (b"\n\n\n", spec),
        "header_only": (_rows(GOOD[0]), spec),
        "only_target": (_rows("class", "0", "1", "1", "0"), spec),
        "only_target_weight": (_rows("w,class", "1,0", "2,1", "1,1"), spec + " weight w"),
        "single_class": (_rows(GOOD[0], *[r[:-1] + "1" for r in GOOD[1:]]), spec),
        "empty_header_name": (_rows("age,,class", "1,2,0", "3,4,1"), spec),
        "duplicate_header": (_rows("age,age,class", "1,2,0", "3,4,1"), spec),
        "unclosed_quote": (_rows(GOOD[0], '18,"clerk,1,1,r1,1', *GOOD[2:]), spec),
        "binary_bytes": (bytes(range(256)) * 8, spec),
        "nul_bytes": (b"age,class\n1\x00,0\n2,1\n", spec),
        "tab_separated": (_rows(*[r.replace(",", "\t") for r in GOOD]), spec),
        "semicolons": (_rows(*[r.replace(",", ";") for r in GOOD]), spec),
        "target_missing": (_rows(*GOOD), "target label"),
        "weight_missing": (_rows(*GOOD), spec + " weight weight"),
        "id_missing": (_rows(*GOOD), spec + " id key"),
        "weights_zero": (_rows(*[r if i == 0 else ",".join(r.split(",")[:3] + ["0"] + r.split(",")[4:])
                                 for i, r in enumerate(GOOD)]), spec + " weight w"),
        "weight_huge": (_rows(GOOD[0], "18,clerk,1,1e300,r1,1", *GOOD[2:]), spec + " weight w"),
        "weight_inf": (_rows(GOOD[0], "18,clerk,1,inf,r1,1", *GOOD[2:]), spec + " weight w"),
        "id_repeats": (_rows(GOOD[0], "18,clerk,1,1,r1,1", "25,nurse,0,2,r1,1", *GOOD[3:]), spec + " id rid"),
        "declared_binary_two": (_rows(GOOD[0], "18,clerk,2,1,r1,1", *GOOD[2:]), spec + " binary smoker"),
        "declared_numeric_text": (_rows(*GOOD), spec + " numeric job"),
        "declared_column_missing": (_rows(*GOOD), spec + " categorical jobs"),
    }
    width = len(GOOD[0].split(","))
    for r in range(1, len(GOOD)):  # one broken row at each position
        cells = GOOD[r].split(",")
        out[f"ragged_more_row{r}"] = (_rows(*GOOD[:r], GOOD[r] + ",9", *GOOD[r + 1:]), spec)
        out[f"ragged_fewer_row{r}"] = (_rows(*GOOD[:r], ",".join(cells[:-2] + cells[-1:]), *GOOD[r + 1:]), spec)
        for c in range(width):
            empty = cells[:c] + [""] + cells[c + 1:]
            out[f"empty_cell_row{r}_col{c}"] = (_rows(*GOOD[:r], ",".join(empty), *GOOD[r + 1:]), spec)
        out[f"age_bigint_row{r}"] = (_rows(*GOOD[:r], ",".join([str(10**30 + r)] + cells[1:]), *GOOD[r + 1:]),
                                     spec)  # beyond 2^53: float64 would merge it (issue 24)
        for bad in ("abc", "nan", "inf", "1e400", "NA"):
            changed = [bad] + cells[1:]
            out[f"age_{bad.lower()}_row{r}"] = (_rows(*GOOD[:r], ",".join(changed), *GOOD[r + 1:]),
                                               spec + " numeric age")
        raw = _rows(*GOOD).split(b"\n")
        raw[r] = raw[r][:3] + b"\xff\xfe" + raw[r][3:]
        out[f"not_utf8_row{r}"] = (b"\n".join(raw), spec)
    return out


def main() -> None:
    if ROOT.exists():
        for sub in ("programs", "csv", "models", "unseen", "accepted"):
            shutil.rmtree(ROOT / sub, ignore_errors=True)
    (ROOT / "programs").mkdir(parents=True, exist_ok=True)
    (ROOT / "csv").mkdir(exist_ok=True)
    (ROOT / "models").mkdir(exist_ok=True)
    (ROOT / "unseen").mkdir(exist_ok=True)
    (ROOT / "accepted").mkdir(exist_ok=True)
    programs = {**NAMED, **mutated_programs()}
    for name, text in programs.items():
        (ROOT / "programs" / f"{name}.odt").write_text(text)
    (ROOT / "programs" / "unreadable_not_utf8.odt").write_bytes(HEAD.encode() + MODEL.encode() + b"minimize \xff\xfe\n")
    (ROOT / "programs" / "unreadable_latin1.odt").write_bytes(HEAD.encode() + b"# caf\xe9\n" + MODEL.encode())
    for name, text in SOLVE.items():
        (ROOT / "programs" / f"solve_{name}.odt").write_text(text)
    cases = {}
    for name, (content, items) in bad_csvs().items():
        (ROOT / "csv" / f"{name}.csv").write_bytes(content)
        cases[f"{name}.csv"] = items
    (ROOT / "csv" / "cases.json").write_text(json.dumps(cases, indent=1, sort_keys=True) + "\n")
    models = {**MODELS, **SCHEMA_MODELS, "deep_tree": _deep_tree(5000)}
    for name, content in models.items():
        (ROOT / "models" / f"{name}.json").write_bytes(content)
    for name, content in UNSEEN_MODELS.items():
        (ROOT / "unseen" / f"{name}.json").write_bytes(content)
    (ROOT / "unseen" / "rows.csv").write_text(UNSEEN_ROWS)
    for name, text in ACCEPTED.items():
        (ROOT / "accepted" / f"{name}.odt").write_text(text)
    for name, content in accepted_csvs().items():
        (ROOT / "accepted" / f"{name}.csv").write_bytes(content)
    print(f"{len(programs) + 2 + len(SOLVE)} programs, {len(cases)} CSV files, {len(models)} model files, "
          f"{len(UNSEEN_MODELS)} models for unseen categories, {len(ACCEPTED)} accepted programs")


if __name__ == "__main__":
    main()
