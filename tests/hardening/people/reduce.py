"""Shrink a failing program to the statements its failure needs (for the catalogue).

Hypothesis shrinks the draws; this shrinks the *text*: statements of ``f`` are dropped one at a
time (and module-level helpers, a decorator, default arguments), keeping each removal after
which the program still runs and the same failure (mode, backend, status, kind; for a crash,
the same message) remains.
"""
from __future__ import annotations

import ast
from typing import Any

from tests.hardening.people.inputs import Param
from tests.hardening.people.oracle import Check, Checker
from tests.hardening.people.program import PeopleProgram


def _params(described: list[str], positive: list[bool] | None = None) -> tuple[Param, ...]:
    out = []
    for text in described:
        name, _, kind = text.partition(": ")
        if kind in ("float", "int"):
            out.append(Param(name, (), "py" + kind))
            continue
        dtype, _, shape = kind.partition("[")
        dims = tuple(int(n) for n in shape.rstrip("]").split(",") if n.strip())
        out.append(Param(name, dims, dtype))
    return tuple(out)


def program_of(row: dict[str, Any], source: str | None = None) -> PeopleProgram:
    """A JSON row of run.py as a program (inputs: the row's seed; ``positive`` flags are not
    kept in the row, so inputs may differ from the original run's for positive params)."""
    specs = row.get("param_specs")
    params = tuple(Param.from_spec(spec) for spec in specs) if specs else \
        _params(row["params"])
    return PeopleProgram(source or row["source"], row["dialect"], params,
                         ast.literal_eval(row["wrt"]), row["seed"], frozenset(),
                         row.get("output", "scalar"))


def same_failure(check: Check, target: dict[str, Any]) -> bool:
    from tests.hardening.people.report import signature
    return check.status == target["status"] and signature(
        {"mode": check.mode, "status": check.status, "kind": check.kind,
         "detail": check.detail}) == signature(target)


def fails_the_same(program: PeopleProgram, target: dict[str, Any]) -> bool:
    checker = Checker([target["backend"]], (target["mode"],))
    verdict = checker.run(program)
    return not verdict.invalid and any(same_failure(c, target) for c in verdict.checks)


def reduce_source(row: dict[str, Any], target: dict[str, Any], rounds: int = 3) -> str:
    """The shortest source found that fails as ``target`` (a check dict of the row)."""
    source = row["source"]
    for _ in range(rounds):
        changed = False
        for candidate in _candidates(source):
            try:
                if fails_the_same(program_of(row, candidate), target):
                    source, changed = candidate, True
                    break
            except Exception:
                continue
        if not changed:
            break
        while True:   # keep removing greedily from the smaller source
            for candidate in _candidates(source):
                try:
                    ok = fails_the_same(program_of(row, candidate), target)
                except Exception:
                    ok = False
                if ok:
                    source = candidate
                    break
            else:
                break
    return source


def _candidates(source: str) -> list[str]:
    """Sources with one piece less: a statement of f, a module-level definition, f's
    decorator, a default argument."""
    tree = ast.parse(source)
    out = []
    f = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "f"), None)
    if f is None:
        return []
    for k in range(len(f.body) - 1):
        new = ast.parse(source)
        g = next(n for n in new.body if isinstance(n, ast.FunctionDef) and n.name == "f")
        del g.body[k]
        out.append(ast.unparse(new))
    for k, node in enumerate(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.Assign)) and getattr(node, "name", "") != "f":
            new = ast.parse(source)
            del new.body[k]
            out.append(ast.unparse(new))
    if f.decorator_list:
        new = ast.parse(source)
        g = next(n for n in new.body if isinstance(n, ast.FunctionDef) and n.name == "f")
        g.decorator_list = []
        out.append(ast.unparse(new))
    return out


def body_of(source: str) -> str:
    """The part of a reduced source worth showing: what follows the imports."""
    tree = ast.parse(source)
    keep = [n for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom))]
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    used = ast.unparse(ast.Module(body=keep, type_ignores=[]))
    needed = [ast.unparse(n) for n in imports
              if any((a.asname or a.name).split(".")[0] in used for a in n.names)]
    return "\n".join(needed) + "\n\n" + used
