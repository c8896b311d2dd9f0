"""What a solve returns (E2, E4): status, objective, bound, the verified classifier and
the re-evaluation of every constraint, with a human-readable report and a JSON form."""
from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from typing import Union

from odt.compiler.classifiers import Tree
from odt.compiler.classifiers.diagram import Diagram
from odt.compiler.evaluate import ConstraintCheck, Evaluation

Classifier = Union[Tree, Diagram]


@dataclass(frozen=True)
class SolveResult:
    status: str
    classifier: Classifier | None  # a Tree, or a Diagram (diagrams and BDDs)
    objective: float | None  # first level, in the user's sense (maximize shows the maximum)
    objective_levels: tuple[float, ...]
    bound: float | None
    gap: float | None
    backend: str
    seconds: float
    train_errors: float | None
    verified: bool
    constraints: tuple[ConstraintCheck, ...]
    solver_errors: float | None
    log: str = ""
    evaluation: Evaluation | None = field(default=None, repr=False)
    #: (seconds, incumbent, bound) as the progress lines reported them, ending with the result's
    #: own (``convergence``); what ``convergence_svg`` and ``odtc solve --convergence`` draw
    history: tuple[tuple[float, float | None, float | None], ...] = field(default=(), repr=False)

    def convergence_svg(self) -> str:
        """The incumbent and the bound over time, a plain SVG."""
        from odt.convergence import convergence_svg

        return convergence_svg(self.history, f"{self.backend}: incumbent and bound over time ({self.status})")

    @property
    def report(self) -> str:
        """A human-readable summary of the solve and its re-verification."""
        lines = [f"status      {self.status}", f"backend     {self.backend}", f"time        {self.seconds:.2f} s"]
        if self.objective is not None:
            lines.append(f"objective   {_fmt(self.objective)}" + (
                f"  (levels: {', '.join(_fmt(v) for v in self.objective_levels)})" if len(self.objective_levels) > 1 else ""))
        if self.bound is not None:
            lines.append(f"bound       {_fmt(self.bound)}" + (f"  gap {self.gap:.2%}" if self.gap is not None else ""))
        if self.train_errors is not None:
            lines.append(f"errors      {_fmt(self.train_errors)} (recomputed in numpy; solver said {_fmt(self.solver_errors)})")
        for c in self.constraints:
            lines.append(f"constraint  {c.text}: {_fmt(c.value)} {c.op} {_fmt(c.bound)}  {'holds' if c.holds else 'VIOLATED'}")
        lines.append(f"verified    {'yes' if self.verified else 'NO'}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """A short summary for Jupyter: status, objective, bound and gap, time, whether
        the classifier verified, each constraint's value, then the classifier's picture."""
        rows = [("status", self.status), ("backend", self.backend), ("time", f"{self.seconds:.2f} s"),
                ("objective", _fmt(self.objective)), ("bound", _fmt(self.bound)),
                ("gap", "-" if self.gap is None else f"{self.gap:.2%}"),
                ("train errors", _fmt(self.train_errors)), ("verified", "yes" if self.verified else "NO")]
        rows += [(f"constraint {c.text}", f"{_fmt(c.value)} {c.op} {_fmt(c.bound)}: "
                  f"{'holds' if c.holds else 'VIOLATED'}") for c in self.constraints]
        cells = "".join(f"<tr><th style='text-align:left'>{escape(k)}</th><td style='text-align:left'>"
                        f"{escape(str(v))}</td></tr>" for k, v in rows)
        picture = self.classifier._repr_svg_() if self.classifier is not None else "<p>no classifier</p>"
        return f"<div><table>{cells}</table>{picture}</div>"

    def as_dict(self) -> dict:
        return {
            "status": self.status, "objective": self.objective, "objective_levels": list(self.objective_levels),
            "bound": self.bound, "gap": self.gap, "backend": self.backend, "seconds": round(self.seconds, 4),
            "train_errors": self.train_errors, "verified": self.verified,
            "constraints": [c.as_dict() for c in self.constraints],
            "history": [list(p) for p in self.history],
            "classifier": self.classifier.to_json() if self.classifier is not None else None,
        }


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return str(int(x)) if float(x).is_integer() else f"{x:.6g}"
