"""A picture of the computation: values and operations as a graph, drawn by Graphviz.

Built from the normalized program (one operation per statement), so it shows exactly what the
gradient code differentiates. A loop is drawn once, as a box labeled with its header, with the
values it carries from one iteration to the next on a dashed edge: a 50-step RNN is a handful of
nodes, not hundreds. Given a trace, values show their shape and norm and, below, their
gradient's norm; ``highlight`` marks the value whose gradient the current step computes.
"""
from __future__ import annotations

import html
import shutil
from typing import Any

from ..codegen import ir
from ..codegen.program import normalize_function

_SYMBOLS = {"add": "+", "subtract": "−", "multiply": "×", "divide": "÷", "power": "**",
            "matmul": "@", "negative": "neg", "getitem": "[ ]", "list_getitem": "[ ]",
            "copy": "=", "index_update": "[ ]=", "index_add": "[ ]+="}


class Graph:
    def __init__(self, fn: Any, report: Any = None, highlight: str | None = None) -> None:
        self.fn = fn
        self.unit = normalize_function(fn)
        self.report = report
        self.highlight = highlight
        self.values: dict[str, Any] = {}
        self.gradients: dict[str, Any] = {}
        if report is not None:
            for step in report.steps:
                for v in step.values:
                    target = self.gradients if step.section == "backward" else self.values
                    target[v.name] = v

    # --- building ------------------------------------------------------------------------------
    def dot(self) -> Any:
        import graphviz
        g = graphviz.Digraph(self.unit.ir.name, graph_attr={"rankdir": "LR", "fontsize": "10",
                                                            "fontname": "Helvetica"},
                             node_attr={"fontsize": "10", "fontname": "Helvetica"},
                             edge_attr={"arrowsize": "0.6"})
        self._counter = 0
        self._root = g
        self._defined: set[str] = set()
        for p in self.unit.ir.params:
            self._value_node(g, p, shape="invhouse")
        self._block(g, self.unit.ir.body, loop=None)
        result = self.unit.ir.result
        g.node("__output__", "output", shape="house", style="filled", fillcolor="#e8eaf6")
        g.edge(self._node_id(result), "__output__")
        return g

    def _node_id(self, name: str) -> str:
        return f"v_{name}"

    def _value_node(self, g: Any, name: str, shape: str = "ellipse") -> None:
        if name in self._defined:
            return
        self._defined.add(name)
        label = [html.escape(name)]
        v = self.values.get(name)
        if v is not None:
            label.append(f"{v.shape} |{v.norm:.3g}|" if v.shape not in ((), (1,))
                         else html.escape(v.preview.strip("[]")))
        d = self.gradients.get(f"d{name}")
        if d is not None:
            grad = (html.escape(d.preview.strip("[]")) if d.shape in ((), (1,)) else
                    f"|{d.norm:.3g}|")
            label.append(f"<font color='#c62828'>grad {grad}</font>")
        attrs = {"shape": shape}
        if self.highlight in (name, f"d{name}"):
            attrs.update(style="filled,bold", fillcolor="#fff59d", penwidth="2")
        g.node(self._node_id(name), "<" + "<br/>".join(label) + ">", **attrs)

    def _op_node(self, g: Any, label: str, origin: ir.Origin | None) -> str:
        self._counter += 1
        node = f"op_{self._counter}"
        tooltip = origin.text if origin else label
        g.node(node, html.escape(label), shape="box", style="rounded,filled",
               fillcolor="#e3f2fd", tooltip=tooltip)
        return node

    def _block(self, g: Any, stmts: list[ir.Stmt], loop: Any) -> None:
        for s in stmts:
            if isinstance(s, ir.Assign):
                self._assign(g, s)
            elif isinstance(s, ir.Effect) and s.kind == "append":
                op = self._op_node(g, "append", s.origin)
                if isinstance(s.value, str):
                    self._value_node(g, s.value)
                    self._root.edge(self._node_id(s.value), op)
                self._value_node(g, s.target)
                self._root.edge(op, self._node_id(s.target))
            elif isinstance(s, (ir.For, ir.While)):
                self._loop(g, s)
            elif isinstance(s, ir.If):
                header = s.origin.text if s.origin else "if"
                for label, block in (("if", s.body), ("else", s.orelse)):
                    if not block:
                        continue
                    with g.subgraph(name=f"cluster_{self._counter}_{label}") as sub:
                        self._counter += 1
                        sub.attr(label=header if label == "if" else "else", style="dashed",
                                 color="#9e9e9e", fontsize="9")
                        self._block(sub, block, loop)

    def _loop(self, g: Any, s: ir.For | ir.While) -> None:
        self._counter += 1
        header = s.origin.text if s.origin else "loop"
        carried = _carried(s.body)
        with g.subgraph(name=f"cluster_loop_{self._counter}") as sub:
            sub.attr(label=f"{header}  (drawn once)", style="rounded", color="#5c6bc0",
                     fontsize="9")
            self._block(sub, s.body, s)
        for name in sorted(carried):
            if name in self._defined:
                g.edge(self._node_id(name), self._node_id(name), style="dashed",
                       color="#5c6bc0", label="next iteration", fontsize="8")

    def _assign(self, g: Any, s: ir.Assign) -> None:
        op = s.op
        if op.kind == "prim":
            label = _SYMBOLS.get(op.prim, op.prim)
        elif op.kind == "user":
            label = f"{getattr(op.callee, '__name__', 'call')}()"
        elif op.kind == "static":
            return
        else:
            label = _SYMBOLS.get(op.kind, op.kind)
        inputs = [a for a in op.args if isinstance(a, str)] + [
            a for a in op.kwargs.values() if isinstance(a, str)]
        if op.kind == "copy" and len(s.targets) == 1 and inputs:
            for a in inputs:
                self._value_node(g, a)
            self._value_node(g, s.targets[0])
            self._root.edge(self._node_id(inputs[0]), self._node_id(s.targets[0]),
                            style="dotted")
            return
        node = self._op_node(g, label, s.origin)
        for a in inputs:
            self._value_node(g, a)
            self._root.edge(self._node_id(a), node)
        for t in s.targets:
            self._value_node(g, t)
            self._root.edge(node, self._node_id(t))

    # --- output --------------------------------------------------------------------------------
    def svg(self) -> str:
        if shutil.which("dot") is None:
            raise GraphvizMissing()
        return self.dot().pipe(format="svg").decode("utf-8")  # type: ignore[no-any-return]

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        text = self.dot().source
        try:
            return {"image/svg+xml": self.svg(), "text/plain": text}
        except GraphvizMissing as e:
            return {"text/html": f"<pre>{html.escape(str(e))}</pre>", "text/plain": str(e)}

    def html(self) -> str:
        try:
            return f"<div class='gradlab-graph'>{self.svg()}</div>"
        except GraphvizMissing as e:
            return f"<pre class='gradlab-graph'>{html.escape(str(e))}</pre>"


def _carried(body: list[ir.Stmt]) -> set[str]:
    """Values an iteration reads before it assigns them: carried from the previous one."""
    written: set[str] = set()
    carried: set[str] = set()
    for s in ir.walk(body):
        carried |= ir.stmt_reads(s) - written
        written |= ir.stmt_writes(s)
    return carried & ir.writes_in(body)


class GraphvizMissing(RuntimeError):
    def __init__(self) -> None:
        super().__init__("Graphviz's `dot` program is not installed, so the graph cannot be "
                         "drawn. Install it (Debian/Ubuntu: apt-get install graphviz; macOS: "
                         "brew install graphviz; conda: conda install graphviz) and run again.")


def graph(df_or_fn: Any, *args: Any, highlight: str | None = None) -> Graph:
    """The computation graph of a function (or of the function a gradient was made from),
    annotated with values and gradients when ``args`` are given."""
    fn = getattr(df_or_fn, "fn", df_or_fn)
    report = None
    if args and hasattr(df_or_fn, "_transform"):
        from .tracing import trace
        report = trace(df_or_fn)(*args)
    return Graph(fn, report, highlight)
