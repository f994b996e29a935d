"""The package's seams, read from its source (no module is imported, so this takes a fraction
of a second): no private name crosses a module, no import cycle (imports inside functions
count: they run too, only later), and each layer imports only the layers under it."""
from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "gradlab"

#: What each layer may import from gradlab, by the module's prefix. A module belongs to the
#: longest prefix that matches it; the others (``gradlab`` itself, the facade; ``api`` and the
#: modules beside it; the layers on top) are held by the rule on TOP below.
ALLOWED = {
    "gradlab.errors": set(),
    "gradlab.tensor": {"gradlab.errors", "gradlab.tensor"},
    "gradlab.codegen": {"gradlab.errors", "gradlab.tensor", "gradlab.extend", "gradlab.codegen"},
}
#: The modules of the top layers (the workbench, the notebook extension, the command line, the
#: demo script): the engine (everything else) imports none of them.
TOP = ("gradlab.workbench", "gradlab.kernel_ext", "gradlab.cli", "gradlab.demo")


@lru_cache(maxsize=1)
def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _under_type_checking(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


@lru_cache(maxsize=1)
def imports() -> list[tuple[str, int, str, str]]:
    """Every import of a gradlab name that runs, wherever it is written: (importing module,
    line, imported module, name or "" for the module itself). Imports under ``if
    TYPE_CHECKING`` are left out: they never run."""
    known = modules()
    out = []
    for module, path in known.items():
        tree = ast.parse(path.read_text(), str(path))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        for node in ast.walk(tree):
            if _under_type_checking(node, parents):
                continue
            if isinstance(node, ast.Import):
                out += [(module, node.lineno, a.name, "") for a in node.names
                        if a.name.split(".")[0] == "gradlab"]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = ".".join(package[:len(package) - node.level + 1] +
                                    ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                if base.split(".")[0] != "gradlab":
                    continue
                for a in node.names:
                    if f"{base}.{a.name}" in known:     # from . import reverse: a module
                        out.append((module, node.lineno, f"{base}.{a.name}", ""))
                    else:
                        out.append((module, node.lineno, base, a.name))
    return out


def test_the_scan_sees_the_package() -> None:
    assert {"gradlab", "gradlab.api", "gradlab.codegen.program", "gradlab.tensor.spec"} <= set(
        modules())
    edges = {(a, b) for a, _, b, _ in imports()}
    assert ("gradlab.codegen.program", "gradlab.codegen.normalize") in edges


def test_no_private_name_crosses_a_module() -> None:
    crossing = [f"{m}:{line} imports {name} from {source}"
                for m, line, source, name in imports()
                if name.startswith("_") and not name.startswith("__") and source != m]
    assert not crossing, "make these public where they are defined, or move them:\n" + \
        "\n".join(crossing)


def test_no_import_cycle() -> None:
    known = modules()
    graph: dict[str, set[str]] = {m: set() for m in known}
    for m, _, target, _ in imports():
        if target in known and target != m:
            graph[m].add(target)
    # iterative depth-first search; a back edge closes a cycle
    state: dict[str, int] = {}          # 1: on the current path, 2: done
    for start in sorted(graph):
        if start in state:
            continue
        path, stack = [start], [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                cycle = path[path.index(nxt):] + [nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph[nxt])))


def _layer(module: str) -> str | None:
    matches = [p for p in ALLOWED if module == p or module.startswith(p + ".")]
    return max(matches, key=len) if matches else None


def test_each_layer_imports_only_the_layers_under_it() -> None:
    wrong = []
    for m, line, target, _ in imports():
        layer = _layer(m)
        if layer is not None and not any(target == p or target.startswith(p + ".")
                                         for p in ALLOWED[layer]):
            wrong.append(f"{m}:{line} imports {target} ({layer} may import "
                         f"{', '.join(sorted(ALLOWED[layer])) or 'no gradlab module'})")
        if m != "gradlab" and not m.startswith(TOP) and target.startswith(TOP):
            wrong.append(f"{m}:{line} imports {target}: the engine never imports the "
                         f"workbench, the notebook extension or the command line")
    assert not wrong, "\n".join(sorted(set(wrong)))
