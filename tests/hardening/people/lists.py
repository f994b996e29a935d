"""List (and tuple) arguments: ``def loss(params, x)`` with ``params = [W1, b1, W2, b2]``.

People very often pass a model's weights as one Python list and differentiate with respect to
it. A few percent of programs get such a parameter (:func:`list_param`, an ``inputs.Param``
whose ``dtype`` is ``"list"`` or ``"tuple"``), of one of four kinds:

* ``arrays``: ``ws = [w1, w2, w3]``, arrays of one shape (stacked, looped over, summed);
* ``layer``: ``params = [W, b]``, a dense layer on an input ``x``;
* ``mlp``: ``params = [W1, b1, W2, b2]``, two layers;
* ``pairs``: ``layers = [(W1, b1), (W2, b2)]``, looped over with ``for W, b in layers``.

:func:`list_statement` writes one statement that reads the list the way people do: unpacking
(``W, b = params``), indexing (``params[0] @ x + params[1]``), a for loop, ``enumerate``,
``zip``, a generator expression, ``len``, ``np.stack``, helpers that take the list (a model
and a penalty). The builder runs it on the inputs before keeping it, as any other statement,
so a body that does not fit the shapes is drawn again, never written.
"""
from __future__ import annotations

from typing import Any, Callable

from hypothesis import strategies as st

from tests.hardening.people.inputs import Param

KINDS = ("arrays", "layer", "mlp", "pairs")
LIST_NAMES = {"arrays": ("ws", "params", "weights", "xs"), "layer": ("params", "theta"),
              "mlp": ("params", "weights"), "pairs": ("layers", "params")}
#: Dimensions of a layer's input and outputs (small: finite differences cost one call each).
DIMS = (2, 3, 4)
#: Shapes of the items of an ``arrays`` list (one shape for all: they may be stacked).
ITEM_SHAPES = ((), (3,), (4,), (2, 3), (3, 3))


def list_param(draw: Callable[[Any], Any], kind: str, name: str, dialect: str,
               float32: bool) -> tuple[Param, tuple[int, ...] | None]:
    """A list parameter of ``kind`` and the shape of the input ``x`` its layers take (None for
    ``arrays``). TensorFlow's ``@`` takes matrices only: its ``x`` is a batch of rows."""
    dtype = "float32" if float32 else "float64"

    def item(k: int, shape: tuple[int, ...], label: str = "") -> Param:
        return Param(label or f"{name}[{k}]", shape, dtype)

    if kind == "arrays":
        count = draw(st.integers(2, 3))
        shape = draw(st.sampled_from(ITEM_SHAPES))
        container = "tuple" if draw(st.integers(0, 3)) == 0 else "list"
        return Param(name, (), container, items=tuple(item(k, shape) for k in range(count))), None
    n, m, o = (draw(st.sampled_from(DIMS)) for _ in range(3))
    rows = draw(st.sampled_from((0, 2, 3))) if dialect != "tensorflow" else draw(
        st.sampled_from((2, 3)))
    x_shape = (rows, n) if rows else (n,)
    if kind == "layer":
        return Param(name, (), "list", items=(item(0, (n, m)), item(1, (m,)))), x_shape
    if kind == "mlp":
        return Param(name, (), "list", items=(item(0, (n, m)), item(1, (m,)), item(2, (m, o)),
                                              item(3, (o,)))), x_shape
    widths = [n, m, o] + ([draw(st.sampled_from(DIMS))] if draw(st.integers(0, 3)) == 0 else [])
    pairs = tuple(Param(f"{name}[{k}]", (), "tuple",
                        items=(item(0, (a, b), f"{name}[{k}][0]"),
                               item(1, (b,), f"{name}[{k}][1]")))
                  for k, (a, b) in enumerate(zip(widths, widths[1:])))
    return Param(name, (), "list", items=pairs), x_shape


def kind_label(p: Param) -> str:
    """The construct a list parameter counts as, in the report."""
    if p.is_pairs:
        return "container: list of pairs argument"
    return f"container: {p.dtype} argument"


def kind_of(value: Any) -> str:
    """Which of :data:`KINDS` a list argument's value is (read from its items' shapes)."""
    if all(isinstance(item, tuple) for item in value):
        return "pairs"
    shapes = [_shape(item) for item in value]
    if len(shapes) in (2, 4) and all(len(s) == 2 for s in shapes[0::2]) and all(
            len(s) == 1 for s in shapes[1::2]):
        return "layer" if len(shapes) == 2 else "mlp"
    return "arrays"


def _shape(v: Any) -> tuple[int, ...]:
    try:
        return tuple(int(n) for n in v.shape)
    except (AttributeError, TypeError):
        return ()


class ListBodies:
    """The statements people write with the list argument ``L`` (builder ``ctx``)."""

    def __init__(self, ctx: Any, name: str) -> None:
        self.ctx, self.L = ctx, name
        self.value = ctx.env[name].value
        self.kind = kind_of(self.value)
        N = ctx.names
        self.S, self.T, self.M, self.stack_fn = N["sum"], N["tanh"], N["mean"], N["stack"]

    # --- names -------------------------------------------------------------------------------
    def names(self, *stems: str) -> list[str]:
        """``stems`` as written (``W, b``), or all with one fresh suffix when any is taken."""
        if not any(s in self.ctx.env for s in stems) and len(set(stems)) == len(stems):
            return list(stems)
        self.ctx.counter += 1
        return [f"{s}_{self.ctx.counter}" for s in stems]

    def layer_input(self) -> str:
        """An array the first layer takes (``x``: its last dimension is W's first)."""
        first = self.value[0][0] if self.kind == "pairs" else self.value[0]
        n = _shape(first)[0]
        fits = [k for k, var in self.ctx.env.items() if not callable(var.value) and
                len(_shape(var.value)) in ((2,) if self.ctx.dialect == "tensorflow" else (1, 2))
                and _shape(var.value)[-1] == n and hasattr(var.value, "dtype")
                and "float" in str(var.value.dtype)]
        if not fits:     # (builder imports this module: its Rejected is imported here)
            from tests.hardening.people.builder import Rejected
            raise Rejected("no input for the list's layers")
        params = [k for k in fits if k in self.ctx.param_names]
        return params[0] if params and not self.ctx.chance(4) else self.ctx.choice(fits)

    # --- the statements ------------------------------------------------------------------------
    def draw(self) -> tuple[str, tuple[str, ...]] | None:
        generic = ["loop", "genexpr", "length", "enumerated", "range_loop", "zipped", "with_operand",
                   "penalty_helper"]
        own = {"arrays": ["indexed", "unpack", "stacked", "stacked", "helpers", "starred"],
               "layer": ["unpack", "unpack", "indexed", "indexed", "helpers", "helpers"],
               "mlp": ["unpack", "unpack", "indexed", "pair_loop", "helpers", "helpers"],
               "pairs": ["for_pairs", "for_pairs", "for_pairs", "enumerate_pairs",
                         "index_pairs", "unpack_pairs", "helpers", "helpers",
                         "penalty_genexpr", "hidden_then_output", "indexed_pair"]}[self.kind]
        pick = self.ctx.choice(own + ([] if self.kind == "pairs" else generic))
        return getattr(self, pick)()

    def flat_items(self) -> list[str]:
        """Each array of the list as an index expression (``layers[1][0]``)."""
        if self.kind == "pairs":
            return [f"{self.L}[{k}][{j}]" for k, pair in enumerate(self.value)
                    for j in range(len(pair))]
        return [f"{self.L}[{k}]" for k in range(len(self.value))]

    def scalar(self) -> str:
        """A scalar of every item (the builder's fallback return): ``S(L[0] ** 2) + ...``."""
        return " + ".join(f"{self.S}({item} ** 2)" for item in self.flat_items())

    def loop(self) -> tuple[str, tuple[str, ...]]:
        v, w = self.ctx.fresh(), self.ctx.fresh("w")
        return (f"{v} = 0.0\nfor {w} in {self.L}:\n    {v} = {v} + {self.S}({w} ** 2)",
                ("list argument: for loop",))

    def genexpr(self) -> tuple[str, tuple[str, ...]]:
        v, w = self.ctx.fresh(), self.ctx.fresh("w")
        if self.ctx.chance(3):
            return (f"{v} = sum([{self.S}({w} * {w}) for {w} in {self.L}])",
                    ("list argument: list comprehension",))
        return (f"{v} = sum({self.S}({w} ** 2) for {w} in {self.L})",
                ("list argument: generator expression",))

    def length(self) -> tuple[str, tuple[str, ...]]:
        v = self.ctx.fresh()
        if self.kind == "arrays":
            return (f"{v} = ({self.L}[0] + {self.L}[-1]) / len({self.L})",
                    ("list argument: len",))
        return f"{v} = {self.S}({self.L}[0]) / len({self.L})", ("list argument: len",)

    def enumerated(self) -> tuple[str, tuple[str, ...]]:
        v, i, w = self.ctx.fresh(), self.ctx.fresh("i"), self.ctx.fresh("w")
        return (f"{v} = 0.0\nfor {i}, {w} in enumerate({self.L}):\n"
                f"    {v} = {v} + ({i} + 1.0) * {self.S}({w})", ("list argument: enumerate",))

    def range_loop(self) -> tuple[str, tuple[str, ...]]:
        v, i = self.ctx.fresh(), self.ctx.fresh("i")
        return (f"{v} = 0.0\nfor {i} in range(len({self.L})):\n"
                f"    {v} = {v} + {self.S}({self.L}[{i}] * {self.L}[{i}])",
                ("list argument: indexed in a loop",))

    def zipped(self) -> tuple[str, tuple[str, ...]]:
        v, w, c = self.ctx.fresh(), self.ctx.fresh("w"), self.ctx.fresh("c")
        return (f"{v} = 0.0\nfor {w}, {c} in zip({self.L}, [1.0, 0.5, 0.25, 0.125]):\n"
                f"    {v} = {v} + {c} * {self.S}({w})", ("list argument: zip",))

    def with_operand(self) -> tuple[str, tuple[str, ...]]:
        """An item (reduced) times another value of the program."""
        v = self.ctx.fresh()
        other = self.ctx.operand()
        return (f"{v} = {self.S}({self.L}[-1] ** 2) * {other}",
                ("list argument: item with another value",))

    def indexed(self) -> tuple[str, tuple[str, ...]]:
        v = self.ctx.fresh()
        if self.kind == "arrays":
            return f"{v} = {self.L}[0] * {self.L}[1] - {self.L}[-1]", ("list argument: indexed",)
        x, L, T = self.layer_input(), self.L, self.T
        if self.kind == "layer":
            text = self.ctx.choice([f"{T}({x} @ {L}[0] + {L}[1])", f"{x} @ {L}[0] + {L}[1]"])
            return f"{v} = {text}", ("list argument: indexed",)
        h = self.ctx.fresh("h")
        return (f"{h} = {T}({x} @ {L}[0] + {L}[1])\n{v} = {h} @ {L}[2] + {L}[3]",
                ("list argument: indexed",))

    def unpack(self) -> tuple[str, tuple[str, ...]] | None:
        v = self.ctx.fresh()
        if self.kind == "arrays":
            names = self.names(*("w1", "w2", "w3")[:len(self.value)])
            rest = f" + {names[2]}" if len(names) == 3 else ""
            return (f"{', '.join(names)} = {self.L}\n{v} = {names[0]} * {names[1]}{rest}",
                    ("list argument: unpacked",))
        x, T = self.layer_input(), self.T
        if self.kind == "layer":
            W, b = self.names("W", "b")
            return f"{W}, {b} = {self.L}\n{v} = {T}({x} @ {W} + {b})", ("list argument: unpacked",)
        W1, b1, W2, b2 = self.names("W1", "b1", "W2", "b2")
        h = self.ctx.fresh("h")
        return (f"{W1}, {b1}, {W2}, {b2} = {self.L}\n{h} = {T}({x} @ {W1} + {b1})\n"
                f"{v} = {h} @ {W2} + {b2}", ("list argument: unpacked",))

    def starred(self) -> tuple[str, tuple[str, ...]]:
        first, rest = self.names("first", "rest")
        v = self.ctx.fresh()
        return (f"{first}, *{rest} = {self.L}\n{v} = {first} * len({rest}) + sum({rest})",
                ("list argument: starred unpacking",))

    def stacked(self) -> tuple[str, tuple[str, ...]]:
        v = self.ctx.fresh()
        stack, L = self.stack_fn, self.L
        text = self.ctx.choice([f"{stack}({L})", f"{self.M}({stack}({L}), 0)",
                                f"{stack}({L}) * 2.0"])
        return f"{v} = {text}", ("list argument: stack",)

    def pair_loop(self) -> tuple[str, tuple[str, ...]]:
        """``for i in range(0, len(params), 2)``: layers of a flat list, two items at a time."""
        x, h, i = self.layer_input(), self.ctx.fresh("h"), self.ctx.fresh("i")
        return (f"{h} = {x}\nfor {i} in range(0, len({self.L}), 2):\n"
                f"    {h} = {self.T}({h} @ {self.L}[{i}] + {self.L}[{i} + 1])",
                ("list argument: indexed in a loop",))

    # --- lists of pairs ------------------------------------------------------------------------
    def for_pairs(self) -> tuple[str, tuple[str, ...]]:
        x, h = self.layer_input(), self.ctx.fresh("h")
        W, b = self.names("W", "b")
        return (f"{h} = {x}\nfor {W}, {b} in {self.L}:\n    {h} = {self.T}({h} @ {W} + {b})",
                ("list argument: loop over pairs",))

    def enumerate_pairs(self) -> tuple[str, tuple[str, ...]]:
        x, h, i = self.layer_input(), self.ctx.fresh("h"), self.ctx.fresh("i")
        W, b = self.names("W", "b")
        return (f"{h} = {x}\nfor {i}, ({W}, {b}) in enumerate({self.L}):\n"
                f"    {h} = {self.T}({h} @ {W} + {b}) * (1.0 + 0.5 * {i})",
                ("list argument: enumerate",))

    def index_pairs(self) -> tuple[str, tuple[str, ...]]:
        x, h, i = self.layer_input(), self.ctx.fresh("h"), self.ctx.fresh("i")
        W, b = self.names("W", "b")
        return (f"{h} = {x}\nfor {i} in range(len({self.L})):\n    {W}, {b} = {self.L}[{i}]\n"
                f"    {h} = {self.T}({h} @ {W} + {b})", ("list argument: indexed in a loop",))

    def unpack_pairs(self) -> tuple[str, tuple[str, ...]]:
        x, h = self.layer_input(), self.ctx.fresh("h")
        stems = [s for k in range(1, len(self.value) + 1) for s in (f"W{k}", f"b{k}")]
        names = self.names(*stems)
        pairs = ", ".join(f"({names[2 * k]}, {names[2 * k + 1]})" for k in range(len(self.value)))
        lines = [f"{pairs} = {self.L}", f"{h} = {x}"]
        for k in range(len(self.value)):
            lines.append(f"{h} = {self.T}({h} @ {names[2 * k]} + {names[2 * k + 1]})")
        return "\n".join(lines), ("list argument: unpacked",)

    def indexed_pair(self) -> tuple[str, tuple[str, ...]]:
        x, v = self.layer_input(), self.ctx.fresh()
        return (f"{v} = {self.T}({x} @ {self.L}[0][0] + {self.L}[0][1])",
                ("list argument: indexed",))

    def hidden_then_output(self) -> tuple[str, tuple[str, ...]]:
        """Hidden layers with an activation, the last one linear (``layers[:-1]``)."""
        x, h = self.layer_input(), self.ctx.fresh("h")
        W, b = self.names("W", "b")
        v = self.ctx.fresh()
        return (f"{h} = {x}\nfor {W}, {b} in {self.L}[:-1]:\n    {h} = {self.T}({h} @ {W} + {b})\n"
                f"{v} = {h} @ {self.L}[-1][0] + {self.L}[-1][1]", ("list argument: sliced",))

    def penalty_genexpr(self) -> tuple[str, tuple[str, ...]]:
        v, W, b = self.ctx.fresh(), self.ctx.fresh("W"), self.ctx.fresh("b")
        return (f"{v} = sum({self.S}({W} ** 2) for {W}, {b} in {self.L})",
                ("list argument: generator expression",))

    # --- helpers that take the list ------------------------------------------------------------
    def penalty_helper(self) -> tuple[str, tuple[str, ...]]:
        v = self.ctx.fresh()
        self.write_penalty()
        return f"{v} = 0.01 * weight_penalty({self.L})", ("list argument: passed to helpers",)

    def write_penalty(self) -> None:
        S = self.S
        if self.kind == "pairs":
            src = (f"def weight_penalty(layers):\n    total = 0.0\n    for W, b in layers:\n"
                   f"        total = total + {S}(W ** 2) + {S}(b ** 2)\n    return total\n")
        elif self.ctx.chance(2):
            src = f"def weight_penalty(ws):\n    return sum({S}(w ** 2) for w in ws)\n"
        else:
            src = (f"def weight_penalty(ws):\n    total = 0.0\n    for w in ws:\n"
                   f"        total = total + {S}(w ** 2)\n    return total\n")
        self.ctx.list_helper("weight_penalty", src)

    def helpers(self) -> tuple[str, tuple[str, ...]]:
        """The list passed to a model and to a penalty (``loss(params, x) + penalty(params)``)."""
        T, v = self.T, self.ctx.fresh()
        self.write_penalty()
        if self.kind == "arrays":
            self.ctx.list_helper("average", "def average(ws):\n    total = ws[0]\n"
                                            "    for w in ws[1:]:\n        total = total + w\n"
                                            "    return total / len(ws)\n")
            return (f"{v} = average({self.L}) + 0.1 * weight_penalty({self.L})",
                    ("list argument: passed to helpers",))
        x = self.layer_input()
        if self.kind == "layer":
            src = f"def predict(params, x):\n    W, b = params\n    return {T}(x @ W + b)\n"
        elif self.kind == "mlp":
            src = (f"def predict(params, x):\n    W1, b1, W2, b2 = params\n"
                   f"    h = {T}(x @ W1 + b1)\n    return h @ W2 + b2\n")
        else:
            src = (f"def predict(layers, x):\n    h = x\n    for W, b in layers:\n"
                   f"        h = {T}(h @ W + b)\n    return h\n")
        self.ctx.list_helper("predict", src)
        return (f"{v} = predict({self.L}, {x}) + 0.01 * weight_penalty({self.L})",
                ("list argument: passed to helpers",))
