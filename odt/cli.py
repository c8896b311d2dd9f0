"""``odtc``: the command-line driver (thin: every command is a call into the façade).

Exit codes: 0 ok, 1 user error (syntax, names, types, data, infeasible, unsupported, a
bad command line, a classifier that fails its verification), 2 internal error, 130 SIGINT,
143 SIGTERM (the incumbent is printed and written first). User errors print a rendered
diagnostic, never a Python traceback. ``--time-limit`` counts from the process's start
(``compiler.limits``); every ``-o`` path is checked (``odt.outputs.check_writable``) before
any work is done and refused when it is one of the run's inputs (``refuse_inputs``: the
program, its data file, a model, a CSV), and outputs are written atomically
(``odt.outputs.write_atomic``); a result whose output cannot be written after all is kept
in a temporary file the error names (``write_or_keep``, exit code 1).
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
import traceback
from pathlib import Path

from odt.compiler import limits
from odt.compiler.errors import OdtError
from odt.compiler.ranges import memory_size, positive_seconds
from odt.outputs import (check_writable, flush_quietly, refuse_inputs, refuse_same_outputs, stdout_for_results,
                         write_atomic, write_or_keep)


def _progress_printer(quiet: bool):
    if quiet:
        return None

    def show(p) -> None:
        inc = "-" if p.incumbent is None else f"{float(p.incumbent):g}"
        bnd = "-" if p.bound is None else f"{float(p.bound):g}"
        gap = "-" if p.gap is None else f"{p.gap:.2%}"
        note = f"  {p.note}" if getattr(p, "note", "") else ""
        print(f"[odtc] {p.elapsed:8.2f}s  incumbent {inc}  bound {bnd}  gap {gap}{note}", file=sys.stderr)

    return show


def _overrides(args: argparse.Namespace):
    """The ``-D name=value`` flags as parameter overrides (None when there are none)."""
    from odt.compiler.params import overrides_from_cli

    return overrides_from_cli(args.define) if getattr(args, "define", None) else None


def _refuse_program_inputs(output: str | Path, program: str, prog, option: str = "-o") -> None:
    """``output`` must be neither the program file nor the data file its data block reads
    (the error is placed at the data block)."""
    from odt.compiler import ast
    from odt.compiler.check_data import data_file

    refuse_inputs(output, [("the program file", program)], option)
    tree = prog.checked.program
    blocks = tree.of(ast.DataBlock)
    refuse_inputs(output, [("the data file", data_file(tree, Path(program).parent))], option,
                  span=blocks[0].span if blocks else None)


def _add_define(p: argparse.ArgumentParser) -> None:
    p.add_argument("-D", dest="define", action="append", metavar="NAME=VALUE",
                   help="override a parameter of the program (param NAME = ...); repeatable")


def cmd_check(args: argparse.Namespace) -> int:
    from odt.compiler.support import refused_everywhere
    from odt.program import compile_file

    prog = compile_file(args.program, params=_overrides(args))
    c = prog.checked
    data = c.dataset
    err = refused_everywhere(c)
    if err is not None:
        raise err
    name = prog.backend_name()
    how = "auto chose it" if (prog.checked.solve.backend == "auto") else "the solve directive names it"
    routed = prog.check_backend(name)  # before anything is printed: a refusal here is the whole answer
    print(f"{args.program}: parses and type-checks")
    print(f"  data        {data.n_rows} rows, {len(data.features)} binary features from "
          f"{len(data.binarizer.columns)} columns, target '{data.target}' " + (
              f"with classes {list(data.classes)}" if c.target is None else  # a regression target: its range
              f"(regression: {len(data.classes)} values from {c.target.min():g} to {c.target.max():g})"))
    print(f"  groups      {', '.join(f'{g} ({int(m.sum())} rows)' for g, m in c.groups.items()) or '-'}")
    print(f"  model       {c.model_span.quote()}")
    written = c.objective.span.source is not None and c.objective.span != c.program.span
    print(f"  objective   {c.objective.span.quote() if written else 'minimize errors (default)'}")
    print(f"  constraints {len(c.constraints)}")
    print(f"  backend     {name} ({how}): {routed}")
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    from odt.program import compile_file

    prog = compile_file(args.program, params=_overrides(args))
    undecided: list = []
    with stdout_for_results():
        core = prog.explain(backend=args.backend, time_limit=args.time_limit, undecided=undecided)
    if not core:
        print(f"{args.program}: feasible: the constraints can all hold together")
        return 0
    if len(core) == 1:
        print(f"{args.program}: infeasible: this constraint cannot hold on this data with this model:")
    else:
        print(f"{args.program}: infeasible: these {len(core)} constraints cannot hold together "
              "(without any one of them the rest can):")
    for text, span in core:
        where = f"{span.file}:{span.line}: " if span is not None and span.source is not None else ""
        print(f"  {where}{text}")
    if undecided:
        print(f"  (not proven minimal: the time limit cut short the tests without {', '.join(undecided)})")
    return limits.EXIT_CODES.get(limits.stop_reason() or "", 1)


def cmd_solve(args: argparse.Namespace) -> int:
    from odt.compiler.errors import InfeasibleProgram
    from odt.program import compile_file

    for out, option in ((args.output, "-o"), (args.convergence, "--convergence")):
        if out:
            check_writable(out)
            refuse_inputs(out, [("the program file", args.program)], option)
    if args.output and args.convergence:
        refuse_same_outputs([("-o", args.output), ("--convergence", args.convergence)])
    prog = compile_file(args.program, params=_overrides(args))
    for out, option in ((args.output, "-o"), (args.convergence, "--convergence")):
        if out:  # before solving: the data file is known once the program is read
            _refuse_program_inputs(out, args.program, prog, option)
    if args.explain:
        try:
            return _solve(prog, args)
        except InfeasibleProgram as exc:
            print(exc.render(), file=sys.stderr)
            return cmd_explain(args) or 1
    return _solve(prog, args)


def _solve(prog, args: argparse.Namespace) -> int:
    from odt.compiler.errors import VerificationFailed

    result, failure = None, None
    try:
        with stdout_for_results():
            result = prog.solve(backend=args.backend, time_limit=args.time_limit, threads=args.threads,
                                seed=args.seed, verbose=args.verbose,
                                progress=_progress_printer(args.quiet or args.json),
                                memory_limit=args.memory_limit, scheduler=args.scheduler)
    except limits.Stopped:  # the hard deadline just after the solve returned: its result stands
        if result is None:
            raise
    except VerificationFailed as exc:  # shown (status unverified), never saved, exit 1
        result, failure = exc.result, exc
    with limits.shielded():  # past the deadline or after a signal, the result is still printed and written
        return _report(result, args, failure, prog)


def _text(classifier, prog) -> str:
    """The classifier as text; a regression tree with its training rows per leaf."""
    if not getattr(classifier, "regression", False):
        return classifier.to_text()
    from odt.compiler.evaluate import train_leaves

    return classifier.to_text(train_leaves(prog.checked, classifier))


def _report(result, args: argparse.Namespace, failure=None, prog=None) -> int:
    failed = failure is not None or (result.classifier is not None and not result.verified)
    unsaved = None  # a classifier that could not be written is kept in a temporary file
    if args.output and result.classifier is not None and not failed:
        unsaved = write_or_keep(args.output, json.dumps(result.classifier.to_json(), indent=2) + "\n",
                                "the classifier")
    if getattr(args, "convergence", None) and result.history:
        unsaved = write_or_keep(args.convergence, result.convergence_svg(), "the convergence picture") or unsaved
    if args.json:
        out = result.as_dict()
        if not args.with_classifier:
            out.pop("classifier", None)
        print(json.dumps(out, indent=2))
    else:
        print(result.report)
        if result.classifier is not None:
            print()
            print(_text(result.classifier, prog))
        if args.output and result.classifier is not None and not failed and unsaved is None:
            print(f"\nsaved to {args.output}")
        if args.verbose and result.log:
            print(f"\nsolver log: {result.log}", file=sys.stderr)
    if failed:  # never a success: the classifier breaks the program it was solved for
        from odt.program import verification_failure

        failure = failure or verification_failure(result)
        head, _, checks = failure.message.partition(":\n")
        print(f"odtc: error: {head}" + (f"; not saved to {args.output}" if args.output else "") + ":\n" + checks,
              file=sys.stderr)
        if failure.diagnostics[0].hint:
            print(f"  hint: {failure.diagnostics[0].hint}", file=sys.stderr)
        return 1
    code = limits.EXIT_CODES.get(limits.stop_reason() or "", 0)
    if unsaved is not None:  # after the result: it is printed, and kept; a signal keeps its exit code
        print(unsaved.render(), file=sys.stderr)
        return code or 1
    return code


#: The files ``odtc compile --to T`` writes: the suffix of the main one, then the others'.
COMPILE_SUFFIXES = {"wcnf": ("wcnf",), "cpmpy": ("pkl",), "pyomo": ("lp", "mps")}


def cmd_compile(args: argparse.Namespace) -> int:
    from odt.program import compile_file

    target = args.to or "wcnf"
    if args.output:
        check_writable(args.output)  # a folder or an empty name first: no suffix can be added to those
    files = _compile_outputs(args.output, target) if args.output else []
    for path in files:  # every file it will write, checked before any work
        check_writable(path)
        refuse_inputs(path, [("the program file", args.program)])
    if target == "cpmpy" and not args.output and not (args.stats and args.to is None):
        raise OdtError("--to cpmpy writes a binary file: give it a name with -o")
    prog = compile_file(args.program, params=_overrides(args))
    for path in files:
        _refuse_program_inputs(path, args.program, prog)
    backend = {"wcnf": "maxsat", "cpmpy": "cp", "pyomo": "milp"}[target]
    if args.stats:  # the size of the model that --to writes
        low = prog.lowered_for(backend)
        st = low.model.stats()
        print(f"{low.encoding_name} encoding for --to {target}: variables {st.variables}  clauses {st.clauses}  "
              f"literals {st.literals}  linear rows {st.linear_rows}  objective terms {st.objective_terms}")
        if args.to is None:
            return 0
    art = prog.emit(backend, legacy=True) if args.legacy and target == "wcnf" else prog.emit(backend)
    contents = [art.content, *art.extra.values()]
    assert (art.suffix, *art.extra) == COMPILE_SUFFIXES[target], (art.suffix, *art.extra)
    if not args.output:
        assert isinstance(art.content, str)
        sys.stdout.write(art.content)
        return 0
    return _write_all(dict(zip(files, contents)), f"the --to {target} output")


def _compile_outputs(output: str, target: str) -> list[Path]:
    """The files ``compile -o output --to target`` writes: ``output`` (given its suffix
    when it has none) and, for a target of several files, the same name with their
    suffixes. Two of them that would be one file are refused (``-o m.mps --to pyomo``)."""
    out = Path(output)
    main_suffix, *others = COMPILE_SUFFIXES[target]
    files = [out if out.suffix else out.with_suffix("." + main_suffix)]
    for suffix in others:
        if out.with_suffix("." + suffix) in files:  # -o m.mps with --to pyomo: the LP would be lost
            raise OdtError(f"-o '{out}': --to {target} writes a .{main_suffix} file and a .{suffix} file, and both "
                           f"would be '{out}'", hint=f"name the .{main_suffix} file, or give a name without a suffix")
        files.append(out.with_suffix("." + suffix))
    return files


def _write_all(files: dict[Path, str | bytes], what: str) -> int:
    """Write each file (atomically), saying so on stderr; one that cannot be written is kept
    in a temporary file the error names. 0, or 1 when any was not written."""
    unsaved = []
    for path, content in files.items():
        problem = write_or_keep(path, content, what)
        if problem is None:
            print(f"wrote {path}", file=sys.stderr)
        else:
            unsaved.append(problem)
    for problem in unsaved:
        print(problem.render(), file=sys.stderr)
    return 1 if unsaved else 0


def cmd_support(args: argparse.Namespace) -> int:
    from odt.compiler import support

    sys.stdout.write(support.markdown() if args.markdown else support.text())
    return 0


def cmd_warmup(args: argparse.Namespace) -> int:
    from odt import warmup

    return warmup.run(args.groups, args.force)


def cmd_predict(args: argparse.Namespace) -> int:
    from odt.compiler.classifiers import load_classifier

    if args.output:
        check_writable(args.output)
        refuse_inputs(args.output, [("the model file", args.model), ("the data file", args.data)])
    from odt.compiler.data import read_csv

    tree = load_classifier(args.model)
    table = read_csv(args.data, empty_cells=True)  # an empty cell is judged by the features that read it
    labels = tree.predict(table, unknown=args.unknown)
    for column, rows in tree.seen.or_named_by(tree.features).unknown(table):  # only reached with --unknown majority
        shown = ", ".join(str(int(r) + 1) for r in rows[:10]) + (", ..." if rows.size > 10 else "")
        print(f"odtc: warning: {args.data}: column '{column}': {rows.size} row(s) with a category not seen in "
              f"training (rows {shown}) predicted as the training majority class", file=sys.stderr)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["prediction"])
    for v in labels:
        writer.writerow([v])
    if args.output:
        problem = write_or_keep(args.output, buf.getvalue(), "the predictions")
        if problem is not None:
            print(problem.render(), file=sys.stderr)
            return 1
    else:
        sys.stdout.write(buf.getvalue())
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    from odt.compiler.classifiers import load_classifier
    from odt.compiler.classifiers.render import to_dot, to_svg, to_text

    if args.output:
        check_writable(args.output)
        refuse_inputs(args.output, [("the model file", args.model), ("the data file", args.data)])
    clf = load_classifier(args.model)
    table = None
    if args.data:
        from odt.compiler.data import read_csv

        table = read_csv(args.data, empty_cells=True)
    if args.target and table is None:
        raise OdtError("--target names the label column of --data: give --data too")
    draw = {"text": to_text, "dot": to_dot, "svg": to_svg}[args.format]
    text = draw(clf, table, target=args.target)
    if args.output:
        problem = write_or_keep(args.output, text + ("" if text.endswith("\n") else "\n"), "the drawing")
        if problem is not None:
            print(problem.render(), file=sys.stderr)
            return 1
    else:
        print(text.rstrip("\n"))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from odt.compiler.classifiers import load_classifier
    from odt.compiler.classifiers.export import node_statistics, regression_node_statistics, sklearn_tree

    if args.to == "onnx" and not args.output:
        raise OdtError("--to onnx writes a binary file: give it a name with -o")
    if args.output:
        check_writable(args.output)
        refuse_inputs(args.output, [("the model file", args.model), ("the data file", args.data)])
    if args.target and not args.data:
        raise OdtError("--target names the label column of --data: give --data too")
    clf = load_classifier(args.model)
    regression = getattr(clf, "regression", False)
    if regression and args.to == "onnx":
        raise OdtError("a regression tree has no ONNX export yet (odt writes ONNX tree classifiers)",
                       hint="--to sklearn-json writes it as a scikit-learn DecisionTreeRegressor's arrays")
    weights = rows = targets = None
    if args.data:
        from odt.compiler.data import read_csv

        table = read_csv(args.data, empty_cells=True)
        if regression:  # node means and variances of the target (squared error)
            targets = regression_node_statistics(clf, table, args.target)
        else:
            weights, rows = node_statistics(clf, table, args.target)
    if args.to == "onnx":
        from odt.compiler.classifiers.onnx import to_onnx

        content: str | bytes = to_onnx(clf, weights).SerializeToString()
    else:
        content = json.dumps(sklearn_tree(clf, weights, rows, targets=targets), indent=2) + "\n"
    if not args.output:
        sys.stdout.write(str(content))
        return 0
    return _write_all({Path(args.output): content}, f"the --to {args.to} export")


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors as exit code 1 (a user error); 2 is kept for internal errors."""

    def error(self, message: str):  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def cmd_sweep(args: argparse.Namespace) -> int:
    from odt.sweeps import SweepError, print_progress, summary, sweep

    grid: dict[str, list[float]] = {}
    for item in args.grid:
        name, eq, values = item.partition("=")
        try:
            parsed = [float(v) if any(ch in v for ch in ".eE") else int(v) for v in values.split(",") if v.strip()]
        except ValueError:
            raise SweepError(f"--grid {item}: the values must be numbers separated by commas, e.g. depth=1,2,3") from None
        if not eq or not name.strip() or not parsed:
            raise SweepError(f"--grid {item}: write NAME=V1,V2,..., e.g. --grid depth=1,2,3")
        if name.strip() in grid:
            raise SweepError(f"--grid {name.strip()} is given twice: list its values once")
        grid[name.strip()] = parsed
    for option, path in (("-o", args.output), ("--plot", args.plot)):
        if path:
            check_writable(path)
            refuse_inputs(path, [("the program file", args.program)], option)
    refuse_same_outputs([("-o", args.output), ("--plot", args.plot)])
    if args.task_time_limit is not None and positive_seconds(args.task_time_limit) is not None:
        raise SweepError(str(positive_seconds(args.task_time_limit, "task time limit")))
    scheduler = None if args.scheduler == "none" else args.scheduler
    unsaved: list[OdtError] = []
    with stdout_for_results():
        frame = sweep(args.program, grid, folds=args.folds, scheduler=scheduler, output=args.output, plot=args.plot,
                      seed=args.seed, time_limit=args.task_time_limit, backend=args.backend,
                      progress=None if args.quiet else print_progress, unsaved=unsaved)
    table = summary(frame, [f"param_{n}" for n in grid])
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    best = table.iloc[0]
    setting = " ".join(f"-D {n}={table[f'param_{n}'].iloc[0]}" for n in grid)
    print(f"best: {setting}  (mean test accuracy {best['test_mean']:.4f} over {args.folds} folds, "
          f"mean size {best['size_mean']:.1f})")
    for problem in unsaved:  # after the results, which are printed and kept
        print(problem.render(), file=sys.stderr)
    return 1 if unsaved else 0


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="odtc", description="Compile and solve odt programs (optimal decision trees).")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    c = sub.add_parser("check", help="parse and type-check a program against its data")
    c.add_argument("program")
    _add_define(c)
    c.set_defaults(func=cmd_check)

    s = sub.add_parser("solve", help="solve a program and print (or save) the verified classifier")
    s.add_argument("program")
    _add_define(s)
    s.add_argument("-o", "--output", help="save the classifier as JSON")
    s.add_argument("--time-limit", type=float,
                   help="seconds for the whole run (loading included); the best classifier found is returned")
    s.add_argument("--memory-limit", type=_memory,
                   help="refuse encodings estimated to need more: GiB, or with a unit (500M, 2G); "
                        "default four fifths of the machine's memory")
    s.add_argument("--backend", help="dp | maxsat | cp | milp | auto (default: the program's solve directive, else auto)")
    s.add_argument("--threads", type=int)
    s.add_argument("--seed", type=int)
    s.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    s.add_argument("--with-classifier", action="store_true", help="with --json: include the classifier")
    s.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    s.add_argument("--verbose", action="store_true", help="print the solver log (on stderr)")
    s.add_argument("--explain", action="store_true", help="when infeasible, name a minimal set of conflicting constraints")
    s.add_argument("--scheduler", metavar="ADDRESS", help="a Dask scheduler address: dp's deep search (depth >= 4 "
                                                         "on raw thresholds) runs the root's subproblems on its workers")
    s.add_argument("--convergence", metavar="SVG", help="draw the incumbent and the bound over time into this SVG file")
    s.set_defaults(func=cmd_solve)

    x = sub.add_parser("explain", help="for an infeasible program, a minimal set of constraints that conflict")
    x.add_argument("program")
    _add_define(x)
    x.add_argument("--backend", help="dp | maxsat | cp | milp | auto: the backend of each feasibility test")
    x.add_argument("--time-limit", type=float)
    x.set_defaults(func=cmd_explain)

    k = sub.add_parser("compile", help="write the solver input of a program")
    k.add_argument("program")
    _add_define(k)
    k.add_argument("--to", choices=["wcnf", "cpmpy", "pyomo"])
    k.add_argument("-o", "--output")
    k.add_argument("--stats", action="store_true", help="print the IR size (variables, clauses, literals)")
    k.add_argument("--legacy", action="store_true", help="WCNF: the pre-2022 format with a 'p wcnf' line")
    k.set_defaults(func=cmd_compile)

    t = sub.add_parser("support", help="which construct works on which skeleton and backend (the support table)")
    t.add_argument("--markdown", action="store_true", help="print docs/support.md (the table as Markdown)")
    t.set_defaults(func=cmd_support)

    r = sub.add_parser("predict", help="predict the rows of a CSV with a saved classifier")
    r.add_argument("model")
    r.add_argument("data")
    r.add_argument("-o", "--output", help="write predictions as CSV")
    r.add_argument("--unknown", choices=["error", "majority"], default="error",
                   help="a row with a category not seen in training: an error (default), or the training majority class")
    r.set_defaults(func=cmd_predict)

    w = sub.add_parser("sweep", help="cross-validate a grid of parameter values on Dask (CSV, SVG, best setting)")
    w.add_argument("program")
    w.add_argument("--grid", action="append", required=True, metavar="NAME=V1,V2,...",
                   help="values of one parameter (param NAME = ...); repeat for a grid of every combination")
    w.add_argument("--folds", type=int, default=5, help="k of the stratified k-fold cross-validation (default 5)")
    w.add_argument("--scheduler", default="auto",
                   help="'auto' (default: in this process, and an embedded Dask LocalCluster for the rest once the "
                        "work left pays for its start-up), 'local' (a LocalCluster from the start, one worker "
                        "process per core), a Dask scheduler address (tcp://host:8786), or 'none' (in this process)")
    w.add_argument("-o", "--output", help="CSV of every (setting, fold), written as tasks finish")
    w.add_argument("--plot", help="SVG of mean test accuracy against size, with error bars")
    w.add_argument("--seed", type=int, default=0, help="fixes the folds (default 0)")
    w.add_argument("--task-time-limit", type=float, help="seconds for each solve (the best found is measured)")
    w.add_argument("--backend", help="dp | maxsat | cp | milp | auto")
    w.add_argument("--quiet", action="store_true", help="no progress bar")
    w.set_defaults(func=cmd_sweep)

    e = sub.add_parser("export", help="write a saved classifier as ONNX or as scikit-learn tree arrays (JSON)")
    e.add_argument("model")
    e.add_argument("--to", choices=["onnx", "sklearn-json"], required=True,
                   help="onnx: an ai.onnx.ml TreeEnsemble model (needs the onnx extra); sklearn-json: scikit-learn's "
                        "tree_ arrays (odt.sklearn_tree.load_sklearn_json makes a DecisionTreeClassifier of it, or "
                        "a DecisionTreeRegressor of a regression tree)")
    e.add_argument("--data", help="a CSV of rows with their labels (e.g. the training data): class frequencies and "
                                  "sample counts at every node (a regression tree: the target's mean, variance "
                                  "and sample count)")
    e.add_argument("--target", help="the label column of --data (default: the one the classifier was trained on)")
    e.add_argument("-o", "--output", help="write to this file (required for onnx)")
    e.set_defaults(func=cmd_export)

    u = sub.add_parser("warmup", help="compile the dp engines' numba kernels into numba's cache now (CI, "
                                      "container images; a first solve otherwise starts it in the background)")
    u.add_argument("groups", nargs="*", metavar="GROUP",
                   help="kernel groups: streed, contree, contree-float (default: streed contree)")
    u.add_argument("--force", action="store_true", help="compile again even when they are compiled")
    u.set_defaults(func=cmd_warmup)

    d = sub.add_parser("render", help="print a saved classifier (tree, diagram, BDD) as text, Graphviz DOT or SVG")
    d.add_argument("model")
    d.add_argument("--format", choices=["text", "dot", "svg"], default="text")
    d.add_argument("--data", help="a CSV of rows (e.g. the training data): show how many pass each node and arc, "
                                  "and their count per class")
    d.add_argument("--target", help="the label column of --data (default: the one the classifier was trained on)")
    d.add_argument("-o", "--output", help="write to this file instead of stdout")
    d.set_defaults(func=cmd_render)
    return p


def _memory(text: str) -> float:
    """``--memory-limit``: GiB, or a number with a unit K, M, G or T (powers of 1024)."""
    try:
        return memory_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _process_age() -> float:
    """Seconds since this process started (Linux /proc; 0 where unknown)."""
    try:
        with open("/proc/self/stat") as fh:
            start_ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as fh:
            uptime = float(fh.read().split()[0])
        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


def main(argv: list[str] | None = None, age: float = 0.0) -> int:
    """Run one command; ``age``: seconds the process ran before (they count against
    ``--time-limit``). SIGINT / SIGTERM stop the solver and keep its incumbent."""
    args = build_parser().parse_args(argv)
    with limits.signals():
        return _run(args, age)


def _run(args: argparse.Namespace, age: float) -> int:
    limit = getattr(args, "time_limit", None)
    problem = None if limit is None else positive_seconds(limit)
    if problem is not None:  # refused before a deadline is armed with it
        print(OdtError(problem, hint="a number of seconds such as 60").render(), file=sys.stderr)
        return 1
    try:
        # the limit is the whole process's: the interpreter's start and imports, loading, solving
        with limits.time_limit(None if limit is None else limit - age):
            return args.func(args)
    except limits.Stopped as stop:  # before a solve could hold an incumbent (e.g. while loading data)
        print(f"odtc: stopped by {'the ' if stop.reason == limits.TIME_LIMIT else 'an '}{stop.reason} "
              "before any classifier was found", file=sys.stderr)
        if os.environ.get("ODT_DEBUG"):
            traceback.print_exc()
        return limits.EXIT_CODES.get(stop.reason, 1)
    except OdtError as exc:
        print(exc.render(), file=sys.stderr)
        return 1
    except BrokenPipeError:  # the reader (e.g. `head`) went away: not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("odtc: interrupted", file=sys.stderr)
        return 130
    except Exception:  # noqa: BLE001 - the one place internal errors are turned into exit 2
        print("odtc: internal error (please report it):", file=sys.stderr)
        if os.environ.get("ODT_DEBUG"):
            traceback.print_exc()
        else:
            etype, value, _ = sys.exc_info()
            print(f"  {getattr(etype, '__name__', 'error')}: {value}  (set ODT_DEBUG=1 for the traceback)", file=sys.stderr)
        return 2


def run() -> None:
    """The ``odtc`` entry point: ``main``, then leave at once. An interrupted or timed-out
    solve may hold millions of Python objects (encodings, models) whose teardown took
    longer than 1 s, outside any time limit; the outputs are written and flushed already."""
    for name in ("stdout", "stderr"):  # None when the process was started with it closed: what goes
        if getattr(sys, name) is None:  # there is discarded (a print to None would go to stdout)
            setattr(sys, name, open(os.devnull, "w"))
    code = main(age=_process_age())
    flush_quietly(sys.stdout)
    flush_quietly(sys.stderr)
    os._exit(code)


if __name__ == "__main__":
    run()
