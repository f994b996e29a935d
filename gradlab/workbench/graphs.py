"""A picture of the computation: values and operations as a graph, drawn by Graphviz.

Built from the normalized program (one operation per statement), so it shows exactly what the
gradient code differentiates, drawn top to bottom (inputs above, the output below) so that it
fits a notebook's width. A loop is drawn once, as a box labeled with its header, with the
values it carries from one iteration to the next on a dashed edge: a 50-step RNN is a handful of
nodes, not hundreds. Operations show their constants (``** 2``, ``× 0.5``). Given a trace,
values show their shape and norm and, below, their gradient's norm (not in an exercise:
``show_gradients=False``); ``highlight`` marks the value whose gradient the current step
computes. Each value's node has the SVG id ``<id_prefix>v_<name>``, so a page can light up
another one with CSS (:func:`highlight_css`) without drawing again.
"""
from __future__ import annotations

import html
import shutil
from typing import Any

import gast

from ..codegen import ir
from ..codegen.program import normalize_function

_SYMBOLS = {"add": "+", "subtract": "−", "multiply": "×", "divide": "÷", "power": "**",
            "matmul": "@", "negative": "neg", "getitem": "[ ]", "list_getitem": "[ ]",
            "copy": "=", "index_update": "[ ]=", "index_add": "[ ]+="}


class Graph:
    def __init__(self, fn: Any, report: Any = None, highlight: str | None = None,
                 show_gradients: bool = True, id_prefix: str = "") -> None:
        self.fn = fn
        self.unit = normalize_function(fn)
        self.report = report
        self.highlight = highlight
        self.show_gradients = show_gradients
        self.id_prefix = id_prefix
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
        g = graphviz.Digraph(self.unit.ir.name, graph_attr={"rankdir": "TB", "fontsize": "10",
                                                            "fontname": "Helvetica",
                                                            "nodesep": "0.25", "ranksep": "0.3"},
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
        if v is not None and v.dtype == "dict":     # a model's parameters: their count
            label.append(f"{html.escape(v.head)} |·|={v.norm:.3g}")
        elif v is not None:
            label.append(f"{v.shape} |·|={v.norm:.3g}" if v.shape not in ((), (1,))
                         else html.escape(v.preview.strip("[]")))
        d = self.gradients.get(f"d{name}") if self.show_gradients else None
        if d is not None:
            grad = (html.escape(d.preview.strip("[]")) if d.shape in ((), (1,)) else
                    f"|·|={d.norm:.3g}")
            label.append(f"<font color='#c62828'>grad {grad}</font>")
        attrs = {"shape": shape, "id": f"{self.id_prefix}{self._node_id(name)}"}
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
            label = _op_label(op)
        elif op.kind == "user":
            label = f"{getattr(op.callee, '__name__', 'call')}()"
        elif op.kind == "static":
            return
        elif op.kind == "opaque":     # one node per call gradlab cannot read, fed its callable
            label = f"{op.source}()"
        else:
            label = _SYMBOLS.get(op.kind, op.kind)
        inputs = [a for a in op.args if isinstance(a, str)] + [
            a for a in op.kwargs.values() if isinstance(a, str)]
        targets = s.targets[:1] if op.kind == "opaque" else s.targets   # not its backward
        if op.kind == "opaque" and isinstance(op.node, gast.Name):
            inputs.insert(0, op.node.id)
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
        for t in targets:
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

    def html(self, max_height: int = 640) -> str:
        """The SVG scaled down to the page's width (never up), scrolling when taller than
        ``max_height`` pixels."""
        try:
            svg = _fit(self.svg())
        except GraphvizMissing as e:
            return f"<pre class='gradlab-graph'>{html.escape(str(e))}</pre>"
        return (f"<div class='gradlab-graph' style='max-width:100%;overflow:auto;"
                f"max-height:{max_height}px'>{svg}</div>")


def highlight_css(id_prefix: str, name: str | None) -> str:
    """A style rule lighting up value ``name``'s node in a graph drawn with ``id_prefix``."""
    if not name:
        return ""
    node = f"#{id_prefix}v_{_css_ident(name)}"
    return (f"<style>{node} ellipse, {node} polygon {{fill:#fff59d;stroke:#f57f17;"
            f"stroke-width:2.5px}}</style>")


def _css_ident(name: str) -> str:
    return "".join(c if c.isalnum() or c in "_-" else f"\\{ord(c):x} " for c in name)


def _fit(svg: str) -> str:
    """The SVG without the fixed size Graphviz gives it, so that CSS can scale it down to the
    width it has (its viewBox keeps the proportions); natural size is the most it takes."""
    import re
    start = svg.find("<svg")
    if start < 0:
        return svg
    end = svg.find(">", start)
    tag = svg[start:end]
    width = re.search(r'width="([0-9.]+)pt"', tag)
    natural = f"width:{float(width.group(1)) * 4 / 3:.0f}px;" if width else ""
    tag = re.sub(r'\s(width|height)="[^"]*"', "", tag)
    tag += f' style="max-width:100%;height:auto;{natural}"'
    return tag + svg[end:]      # (what came before <svg is the XML prolog and a comment)


def _op_label(op: Any) -> str:
    """An operation's symbol with its constants: ``** 2``, ``× 0.5``, ``sum(axis=0)``,
    ``[0]``."""
    symbol = _SYMBOLS.get(op.prim, op.prim)
    constants = [_atom_text(a) for a in op.args if not isinstance(a, str)]
    keywords = [f"{k}={_atom_text(v)}" for k, v in op.kwargs.items() if not isinstance(v, str)]
    if op.prim in ("getitem", "list_getitem") and constants:
        return f"[{', '.join(constants)}]"
    if op.style == "binop" and len(op.args) == 2 and len(constants) == 1:
        first_is_constant = not isinstance(op.args[0], str)
        return f"{constants[0]} {symbol}" if first_is_constant else f"{symbol} {constants[0]}"
    if keywords:
        return f"{symbol}({', '.join(keywords)})"
    return symbol


def _atom_text(atom: Any) -> str:
    if isinstance(atom, ir.Const):
        return repr(atom.value)
    try:
        import ast

        import gast
        return ast.unparse(gast.gast_to_ast(atom))
    except Exception:  # an atom gradlab cannot print is left out of the label
        return "…"


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


def graph(df_or_fn: Any, *args: Any, highlight: str | None = None,
          show_gradients: bool = True, id_prefix: str = "", report: Any = None) -> Graph:
    """The computation graph of a function (or of the function a gradient was made from),
    annotated with values and gradients when ``args`` are given (or a trace ``report``)."""
    fn = getattr(df_or_fn, "fn", df_or_fn)
    if report is None and args and hasattr(df_or_fn, "mode"):
        from .tracing import trace
        report = trace(df_or_fn)(*args)
    if getattr(report, "fn", None) is not None:
        fn = report.fn     # container arguments: the function of their leaves ran
    return Graph(fn, report, highlight, show_gradients, id_prefix)
