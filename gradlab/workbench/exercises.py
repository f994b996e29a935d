"""Backprop exercises: the student writes the backward pass, gradlab checks it.

The student gets the forward pass as generated code plus, in reverse order, the comments that
quote each forward line — the backward pass's outline without its code. *Check* runs the
student's version and the generated one on random inputs shaped like the examples, with a seed
of 1 first and then random seeds (the output's gradient: an answer that ignores it is right only
for 1, and is told so), and names the first gradient that differs, on which of the student's
lines, by how much, and which local derivative to look at, without showing the answer;
:meth:`Exercise.solution` shows it when asked.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..tensor.convert import to_float64_numpy
from .edit import EditError, recompile
from ..errors import GradlabError
from ..pytrees import has_containers
from ..tensor import convert
from .leafcalls import tree_map
from .tracing import trace

BACKWARD = "# ── backward ──"


@dataclass
class Verdict:
    ok: bool
    message: str
    name: str = ""          # the first gradient that differs
    line: int | None = None  # the student's line that computed it
    difference: float = 0.0


class Exercise:
    def __init__(self, df: Any, *examples: Any, seed: int = 0, backend: str = "numpy") -> None:
        if not examples:
            raise GradlabError("an exercise needs example inputs (their shapes are used to "
                               "draw random inputs for checking)")
        self.df = df
        self.examples = examples
        self.seed = seed
        self.backend = backend
        self.revealed = False
        #: container examples (a params dict): the code is the one for their leaves
        self.containers = has_containers(examples)
        shown = df.source_for(*examples) if self.containers else df.source
        self.starter = starter_code(shown, getattr(df, "seed_name", None))

    def solution(self) -> str:
        """gradlab's backward pass: the code for the examples' shapes (the shapes every
        check draws its inputs with), as a teacher writes it."""
        self.revealed = True
        if getattr(self.df, "_specializes", False) or self.containers:
            return self.df.source_for(*self.examples)  # type: ignore[no-any-return]
        return self.df.source  # type: ignore[no-any-return]

    def inputs(self, trial: int) -> tuple[Any, ...]:
        rng = np.random.default_rng(self.seed + trial)
        out: list[Any] = []
        for example in self.examples:      # (each array of a container drawn the same way)
            out.append(tree_map(lambda leaf: _drawn(leaf, rng, trial, self.backend), example))
        return tuple(out)

    def seed_for(self, trial: int, args: tuple[Any, ...]) -> Any:
        """The output's gradient for a trial: 1 in the first (what a caller passes by
        default), random in the others, so that an answer ignoring the seed is caught."""
        if trial == 0 or getattr(self.df, "seed_name", None) is None:
            return None
        rng = np.random.default_rng(1000 + self.seed + trial)
        shape = np.shape(to_float64_numpy(self.df.fn(*args)))
        seed = rng.uniform(0.5, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)
        return float(seed) if not shape else seed

    def check(self, student_source: str, trials: int = 3) -> Verdict:
        if not isinstance(trials, int) or trials < 1:
            raise GradlabError(f"trials= is how many random inputs the answer is checked on: "
                               f"1 or more, not {trials!r}")
        try:
            student = recompile(student_source, like=self.df)
        except EditError as e:
            return Verdict(False, f"your code does not compile: {e}", line=e.lineno)
        lines = student_source.splitlines()
        for trial in range(trials):
            args = self.inputs(trial)
            try:
                seed = self.seed_for(trial, args)
                given = {} if seed is None else {"seed": seed}
                reference = trace(self.df, keep_values=True)(*args, **given)
            except Exception as e:  # the inputs do not suit the function: say so
                return Verdict(False, f"gradlab could not run the reference on random inputs: "
                                      f"{type(e).__name__}: {e}")
            try:
                theirs = trace(student, keep_values=True)(*args, **given)
            except Exception as e:
                return Verdict(False, f"your backward pass raised {type(e).__name__}: {e}",
                               line=_error_line(e))
            verdict = compare(reference, theirs, lines, self.df)
            if not verdict.ok:
                if seed is not None:   # right with a seed of 1, wrong with this one
                    verdict.message = _ignores_seed(verdict, seed, student, lines)
                return verdict
        return Verdict(True, f"correct: your backward pass matches on {trials} random inputs, "
                             f"with a seed of 1 and with random seeds")


def _drawn(example: Any, rng: Any, trial: int, backend: str) -> Any:
    """A random input like ``example``: numbers of its shape and dtype (near it in the first
    trial), in ``backend``'s arrays; integers, flags, text and None kept."""
    if isinstance(example, (int, bool, str, bytes)) or example is None:
        return example
    if isinstance(example, float):
        return float(rng.normal())
    arr = np.asarray(to_float64_numpy(example))
    noisy = rng.normal(size=arr.shape) * 0.5 + (arr if trial == 0 else 0.0)
    drawn = noisy.astype(arr.dtype) if arr.dtype.kind == "f" else arr
    return convert(drawn, backend) if backend != "numpy" else drawn


def starter_code(source: str, seed: str | None = None) -> str:
    """The generated function with its backward code removed, the comments kept as an outline."""
    head, sep, tail = source.partition(BACKWARD)
    if not sep:
        return source
    main, _, helpers = tail.partition("\ndef ")
    outline, after = [], []       # after: comments below the function (how a container
    returned = ""                 # call gives its gradients back), kept below it
    for line in main.splitlines()[1:]:
        stripped = line.strip()
        if line.startswith("#"):
            after.append(line)
        elif stripped.startswith("#"):
            outline.append(line)
        elif stripped.startswith("return "):
            returned = line
    body = "\n".join(outline)
    hint = "    # your code: one block per comment, each gradient named d<variable>"
    if seed:
        hint += f"\n    # (start from {seed}, the gradient flowing into the output)"
    text = f"{head}{BACKWARD}\n{hint}\n{body}\n{returned}\n" + "".join(
        f"{line}\n" for line in after)
    if helpers:
        text += "\n\ndef " + helpers
    return text


def _final_adjoints(report: Any) -> tuple[dict[str, Any], dict[str, int], list[str]]:
    values: dict[str, Any] = {}
    lines: dict[str, int] = {}
    order: list[str] = []
    for step in report.backward():
        for v in step.values:
            if v.name not in values:
                order.append(v.name)
            values[v.name] = v
            lines[v.name] = step.line
    return values, lines, order


def _ignores_seed(verdict: Verdict, seed: Any, student: Any, lines: list[str]) -> str:
    """The message for an answer right with the seed 1 (the first trial passed) and wrong with
    another: it does not start from the seed."""
    shown = f"{seed:.3g}" if isinstance(seed, float) else f"an array of shape {np.shape(seed)}"
    name = getattr(student, "seed_name", None) or "seed"
    where = ""
    if verdict.name:
        line = verdict.line
        text = lines[line - 1].strip() if line and line <= len(lines) else ""
        where = f" ({verdict.name} first differs, on your line {line}: {text})"
    return (f"your gradients are right when the seed is 1 but not when it is {shown}{where}: "
            f"the backward pass must start from the seed `{name}` (the gradient flowing into "
            f"the output) and carry it through every step")


def consumers(source: str, name: str, variable: str) -> list[tuple[str, str]]:
    """The forward statements of generated code ``source`` (function ``name``) that read
    ``variable``: ``(what they assign, the line)``. A variable's gradient gathers one local
    derivative from each of them."""
    tree = ast.parse(source)
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
    if fn is None:
        return []
    lines = source.splitlines()
    marker = next((i + 1 for i, line in enumerate(lines) if BACKWARD in line), len(lines) + 1)
    found = []
    for node in ast.walk(fn):
        if not isinstance(node, ast.Assign) or node.lineno >= marker:
            continue
        if any(isinstance(n, ast.Name) and n.id == variable and isinstance(n.ctx, ast.Load)
               for n in ast.walk(node.value)):
            targets = ", ".join(ast.unparse(t) for t in node.targets)
            found.append((targets, lines[node.lineno - 1].strip()))
    return found


def local_derivative_hint(df: Any, gradient: str) -> str:
    """Which local derivative(s) a wrong gradient ``d<v>`` is made of, named, not computed:
    ``check ∂h/∂xW (from h = gl.tanh(xW))``."""
    if not gradient.startswith("d") or len(gradient) < 2:
        return ""
    variable = gradient[1:]
    uses = consumers(df.source, df.name, variable)
    if not uses:
        return ""
    parts = [f"∂{target}/∂{variable} (from `{line}`)" for target, line in uses[:3]]
    flows = "through it" if len(uses) == 1 else f"through the {len(uses)} lines that use it"
    return (f"; {gradient} gathers the gradient flowing back {flows}: check the local "
            f"derivative {' and '.join(parts)}")


def compare(reference: Any, theirs: Any, student_lines: list[str], df: Any) -> Verdict:
    """The first gradient (in the order the backward pass computes them) that differs."""
    ref_values, _, order = _final_adjoints(reference)
    their_values, their_lines, _ = _final_adjoints(theirs)
    returned = _returned_names(reference.source, df.name)
    for name in order:
        mine = their_values.get(name)
        if mine is None:
            if name in returned:
                return Verdict(False, f"your code never computes {name}", name=name)
            continue
        expected = ref_values[name]
        a = np.asarray(to_float64_numpy(expected.raw), dtype=np.float64)
        b = np.asarray(to_float64_numpy(mine.raw), dtype=np.float64)
        if a.shape != b.shape:
            line = their_lines.get(name)
            return Verdict(False, f"{name} has shape {b.shape} on your line {line}; it should "
                                  f"have shape {a.shape}", name, line)
        difference = float(np.max(np.abs(a - b))) if a.size else 0.0
        if not np.allclose(a, b, rtol=1e-6, atol=1e-9):
            line = their_lines.get(name)
            text = student_lines[line - 1].strip() if line and line <= len(student_lines) else ""
            return Verdict(False, f"{name} first differs on your line {line} ({text}) by up to "
                                  f"{difference:.3g}{local_derivative_hint(df, name)}",
                           name, line, difference)
    got = theirs.result if isinstance(theirs.result, tuple) else (theirs.result,)
    want = reference.result if isinstance(reference.result, tuple) else (reference.result,)
    for g, w in zip(got, want):
        a = np.asarray(to_float64_numpy(w), dtype=np.float64)
        b = np.asarray(to_float64_numpy(g), dtype=np.float64)
        if a.shape != b.shape or not np.allclose(a, b, rtol=1e-6, atol=1e-9):
            return Verdict(False, "every gradient you computed matches, but what you return "
                                  "does not")
    return Verdict(True, "correct")


def _returned_names(source: str, name: str) -> set[str]:
    tree = ast.parse(source)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    ret = fn.body[-1]
    return {n.id for n in ast.walk(ret) if isinstance(n, ast.Name)}


def _error_line(e: BaseException) -> int | None:
    import traceback
    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename.startswith(
        "<gradlab")]
    return frames[-1].lineno if frames else None


def exercise(f: Any, *examples: Any, wrt: Any = 0, backend: str = "numpy") -> Exercise:
    """An exercise: write the backward pass of ``f`` (examples give the inputs' shapes)."""
    from ..api import grad
    return Exercise(grad(f, wrt), *examples, backend=backend)
