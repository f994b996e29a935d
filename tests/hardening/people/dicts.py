"""Dict arguments: ``def loss(params, x)`` with ``params = {"W": W, "b": b}`` (JAX style).

People keep a model's weights in a dict (nested per layer, or a list of per-layer dicts) and
differentiate with respect to it; the gradient comes back as a dict of the same structure. A
few percent of programs get such a parameter (:func:`dict_param`, an ``inputs.Param`` whose
``dtype`` is ``"dict"``, its items named by their keys), of one of five kinds:

* ``layer``: ``{"W": W, "b": b}``, a dense layer on an input ``x``;
* ``flat``: ``{"W1": .., "b1": .., "W2": .., "b2": ..}``, two layers under flat keys;
* ``nested``: ``{"l1": {"W": .., "b": ..}, "l2": {"W": ..}}``, a dict per layer (a layer may
  have no bias: a helper reading both is then called with two structures);
* ``layers``: ``{"layers": [{"W": .., "b": ..}, ...]}``, a list of per-layer dicts;
* ``arrays``: ``{"mu": .., "log_sigma": ..}``, named arrays of one shape.

:class:`DictBodies` writes one statement that reads the dict the way people do: constant keys
(``params["l1"]["W"]``), ``.items()``/``.values()``/``for k in params``, ``len``, a loop over
constant names (``for name in ("l1", "l2"): h = dense(params[name], h)``), a loop over the list
of layers, and above all the dict or a part of it passed to the program's own helpers
(``dense(p, x)``, with ``if "b" in p``, a default ``act=True``, keyword arguments, a helper
calling a helper). Some statements are what gradlab refuses on purpose (a key computed at run
time, the dict changed, a dict made of it and returned by a helper): a refusal is a pass, and
they make sure the refusals are exercised and say where. As for lists, the builder runs each
statement on the inputs before keeping it, so a body that does not fit is drawn again.
"""
from __future__ import annotations

from typing import Any, Callable

from hypothesis import strategies as st

from tests.hardening.people.inputs import Param

KINDS = ("layer", "flat", "nested", "layers", "arrays")
DICT_NAMES = {"layer": ("params", "p", "layer"), "flat": ("params", "weights"),
              "nested": ("params", "net"), "layers": ("params", "model"),
              "arrays": ("params", "theta", "state")}
#: The keys of a layer's weight and bias (one pair per program), as people spell them.
LAYER_KEYS = (("W", "b"), ("W", "b"), ("w", "b"), ("weight", "bias"), ("kernel", "bias"))
#: Names of the layers of a ``nested`` dict, and of the arrays of an ``arrays`` one.
LAYER_NAMES = (("l1", "l2"), ("l1", "l2", "l3"), ("hidden", "out"), ("encoder", "decoder"))
ARRAY_KEYS = (("mu", "log_sigma"), ("a", "b", "c"), ("alpha", "beta"), ("w", "v"))
#: Dimensions of a layer's input and outputs (small: finite differences cost one call each).
DIMS = (2, 3, 4)
ITEM_SHAPES = ((), (3,), (4,), (2, 3))


def dict_param(draw: Callable[[Any], Any], kind: str, name: str, dialect: str
               ) -> tuple[Param, tuple[int, ...] | None]:
    """A dict parameter of ``kind`` and the shape of the input ``x`` its layers take (None for
    ``arrays``). TensorFlow's ``@`` takes matrices only: its ``x`` is a batch of rows."""
    if kind == "arrays":
        keys = draw(st.sampled_from(ARRAY_KEYS))
        shape = draw(st.sampled_from(ITEM_SHAPES))
        return Param(name, (), "dict", items=tuple(Param(k, shape, "float64") for k in keys)), None
    wk, bk = draw(st.sampled_from(LAYER_KEYS))
    depth = {"layer": 1, "flat": 2}.get(kind) or draw(st.sampled_from((2, 2, 3)))
    widths = [draw(st.sampled_from(DIMS)) for _ in range(depth + 1)]
    rows = draw(st.sampled_from((0, 2, 3) if dialect != "tensorflow" else (2, 3)))
    x_shape = (rows, widths[0]) if rows else (widths[0],)

    def layer(k: int, biased: bool = True) -> tuple[Param, ...]:
        a, b = widths[k], widths[k + 1]
        return (Param(wk, (a, b), "float64"),) + ((Param(bk, (b,), "float64"),) if biased else ())

    if kind == "layer":
        return Param(name, (), "dict", items=layer(0)), x_shape
    if kind == "flat":
        items = tuple(Param(f"{p.name}{k + 1}", p.shape, p.dtype)
                      for k in range(2) for p in layer(k))
        return Param(name, (), "dict", items=items), x_shape
    unbiased = depth - 1 if draw(st.integers(0, 2)) == 0 else None   # a last layer without b
    if kind == "nested":
        names = draw(st.sampled_from([n for n in LAYER_NAMES if len(n) == depth] or
                                     [("l1", "l2", "l3")[:depth]]))
        return Param(name, (), "dict", items=tuple(
            Param(n, (), "dict", items=layer(k, k != unbiased)) for k, n in enumerate(names))), \
            x_shape
    dicts = tuple(Param(f"layers[{k}]", (), "dict", items=layer(k, k != unbiased))
                  for k in range(depth))
    return Param(name, (), "dict", items=(Param("layers", (), "list", items=dicts),)), x_shape


def kind_of(value: Any) -> str:
    """Which of :data:`KINDS` a dict argument's value is (read from its structure)."""
    if list(value) == ["layers"] and isinstance(value["layers"], list):
        return "layers"
    if all(isinstance(v, dict) for v in value.values()):
        return "nested"
    keys = list(value)
    if len(keys) == 4 and keys[0].endswith("1") and keys[2].endswith("2"):
        return "flat"
    if len(keys) == 2 and _ndim(value[keys[0]]) == 2 and _ndim(value[keys[1]]) == 1 and \
            keys[1] in ("b", "bias"):
        return "layer"
    return "arrays"


def kind_label(p: Param) -> str:
    """The construct a dict parameter counts as, in the report."""
    kind = kind_of(_shape_tree(p))
    return f"container: dict argument ({kind})"


def _shape_tree(p: Param) -> Any:
    """A stand-in value of ``p``'s structure (arrays as objects with its shape)."""
    if p.is_dict:
        return {item.name: _shape_tree(item) for item in p.items}
    if p.is_container:
        return [_shape_tree(item) for item in p.items]
    return _Shaped(p.shape)


class _Shaped:
    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape


def _ndim(v: Any) -> int:
    try:
        return len(v.shape)
    except (AttributeError, TypeError):
        return 0


def _shape(v: Any) -> tuple[int, ...]:
    try:
        return tuple(int(n) for n in v.shape)
    except (AttributeError, TypeError):
        return ()


class DictBodies:
    """The statements people write with the dict argument ``P`` (builder ``ctx``)."""

    def __init__(self, ctx: Any, name: str) -> None:
        self.ctx, self.P = ctx, name
        self.value = ctx.env[name].value
        self.kind = kind_of(self.value)
        N = ctx.names
        self.S, self.T = N["sum"], N["tanh"]
        # (the layers' paths and values, in order, and the weight/bias keys: see layers())
        self.path_layers = self.layers()
        self.wk, self.bk = self.layer_keys()

    # --- structure -------------------------------------------------------------------------------
    def layers(self) -> list[tuple[str, dict[str, Any]]]:
        """Each layer's dict as an expression (``params["l1"]``) with its value."""
        P, v = self.P, self.value
        if self.kind == "layer":
            return [(P, v)]
        if self.kind == "nested":
            return [(f'{P}["{k}"]', d) for k, d in v.items()]
        if self.kind == "layers":
            return [(f'{P}["layers"][{k}]', d) for k, d in enumerate(v["layers"])]
        return []

    def layer_keys(self) -> tuple[str, str]:
        if self.kind == "flat":
            keys = list(self.value)
            return keys[0][:-1], keys[1][:-1]
        if self.path_layers:
            keys = list(self.path_layers[0][1])
            return keys[0], keys[1] if len(keys) > 1 else "b"
        return "W", "b"

    def leaf_paths(self) -> list[str]:
        """Each array of the dict as a subscript expression (``params["l1"]["W"]``)."""
        def walk(path: str, v: Any) -> list[str]:
            if isinstance(v, dict):
                return [p for k, u in v.items() for p in walk(f'{path}["{k}"]', u)]
            if isinstance(v, list):
                return [p for k, u in enumerate(v) for p in walk(f"{path}[{k}]", u)]
            return [path]
        return walk(self.P, self.value)

    def scalar(self) -> str:
        """A scalar of every leaf (the builder's fallback return): ``S(P["W"] ** 2) + ...``."""
        return " + ".join(f"{self.S}({leaf} ** 2)" for leaf in self.leaf_paths())

    def layer_input(self) -> str:
        """An array the first layer takes (``x``: its last dimension is W's first)."""
        first = self.value[f"{self.wk}1"] if self.kind == "flat" else \
            self.path_layers[0][1][self.wk]
        n = _shape(first)[0]
        ctx = self.ctx
        fits = [k for k, var in ctx.env.items() if not callable(var.value) and
                len(_shape(var.value)) in ((2,) if ctx.dialect == "tensorflow" else (1, 2))
                and _shape(var.value)[-1] == n and hasattr(var.value, "dtype")
                and "float" in str(var.value.dtype)]
        if not fits:
            from tests.hardening.people.builder import Rejected
            raise Rejected("no input for the dict's layers")
        params = [k for k in fits if k in ctx.param_names]
        return params[0] if params and not ctx.chance(4) else ctx.choice(fits)

    # --- the program's helpers -------------------------------------------------------------------
    def style(self) -> dict[str, bool]:
        """How this program's ``dense`` helper is written (once per program): with a test for
        the bias (``if "b" in p``: needed when a layer has none) and/or a default ``act=True``."""
        if getattr(self.ctx, "dict_style", None) is None:
            unbiased = any(self.bk not in d for _, d in self.path_layers)
            self.ctx.dict_style = {"b_test": unbiased or self.ctx.chance(3),
                                   "act": self.ctx.chance(2)}
        return self.ctx.dict_style   # type: ignore[no-any-return]

    def dense(self) -> str:
        """Write ``dense(p, x[, act=True])`` (once) and return its name."""
        s, T, W, b = self.style(), self.T, self.wk, self.bk
        lines = [f"def dense(p, x{', act=True' if s['act'] else ''}):",
                 f'    h = x @ p["{W}"]']
        if s["b_test"]:
            lines += [f'    if "{b}" in p:', f'        h = h + p["{b}"]']
        else:
            lines[-1] = f'    h = x @ p["{W}"] + p["{b}"]'
        if s["act"]:
            lines += ["    if act:", f"        h = {T}(h)", "    return h"]
        else:
            lines += [f"    return {T}(h)"]
        self.ctx.list_helper("dense", "\n".join(lines) + "\n")
        return "dense"

    def call(self, layer: str, x: str, last: bool, keywords: bool = False) -> tuple[str, set[str]]:
        """A call of ``dense`` on one layer (the last one linear when it takes ``act``)."""
        made = set()
        act = ""
        if last and self.style()["act"]:
            act = ", act=False"
            made.add("dict argument: helper's default argument overridden")
        if keywords:
            made.add("dict argument: keyword arguments")
            if self.ctx.chance(2):
                return f"dense(x={x}, p={layer}{act})", made
            return f"dense(p={layer}, x={x}{act})", made
        return f"dense({layer}, {x}{act})", made

    def structures(self) -> set[str]:
        """Constructs of a helper given layers of two structures (one without the bias)."""
        biased = {self.bk in d for _, d in self.path_layers}
        return {"dict argument: helper given two structures"} if len(biased) > 1 else set()

    # --- the statements ------------------------------------------------------------------------
    def draw(self) -> tuple[str, tuple[str, ...]] | None:
        generic = ["items_loop", "items_loop", "length", "penalty_helper", "runtime_key",
                   "mutated", "comprehension", "returned_by_helper", "get"]
        own = {"layer": ["direct", "direct", "unpack", "dense_calls", "dense_calls",
                         "dense_calls", "keys_loop", "values_sum"],
               "flat": ["direct", "direct", "flat_helper", "flat_helper", "keys_loop",
                        "values_sum", "fstring_keys"],
               "nested": ["direct", "dense_calls", "dense_calls", "named_loop", "named_loop",
                          "model_helper", "model_helper", "alias", "in_test"],
               "layers": ["direct", "dense_calls", "for_layers", "for_layers", "for_layers",
                          "enumerated_layers", "model_helper", "model_helper", "alias",
                          "hidden_then_output"],
               "arrays": ["direct", "direct", "keys_loop", "values_sum", "arrays_helper",
                          "arrays_helper"]}[self.kind]
        pick = self.ctx.choice(own + own + generic)
        return getattr(self, pick)()

    def direct(self) -> tuple[str, tuple[str, ...]]:
        """Constant keys, as written (``params["l1"]["W"]``)."""
        v, T, W, b = self.ctx.fresh(), self.T, self.wk, self.bk
        P = self.P
        if self.kind == "arrays":
            k = list(self.value)
            text = self.ctx.choice([f'{P}["{k[0]}"] * {self.ctx.names["exp"]}({P}["{k[1]}"])',
                                    f'{P}["{k[0]}"] - 2.0 * {P}["{k[-1]}"]'])
            return f"{v} = {text}", ("dict argument: indexed",)
        x = self.layer_input()
        if self.kind == "flat":
            h = self.ctx.fresh("h")
            return (f'{h} = {T}({x} @ {P}["{W}1"] + {P}["{b}1"])\n'
                    f'{v} = {h} @ {P}["{W}2"] + {P}["{b}2"]', ("dict argument: indexed",))
        lines, h = [], x
        for k, (path, d) in enumerate(self.path_layers):
            out = self.ctx.fresh("h") if k < len(self.path_layers) - 1 else v
            bias = f' + {path}["{b}"]' if b in d else ""
            lines.append(f'{out} = {T}({h} @ {path}["{W}"]{bias})')
            h = out
        label = "dict argument: indexed" if self.kind == "layer" else \
            "dict argument: nested keys"
        return "\n".join(lines), (label,)

    def unpack(self) -> tuple[str, tuple[str, ...]]:
        v, W, b = self.ctx.fresh(), self.ctx.fresh("W"), self.ctx.fresh("b")
        x = self.layer_input()
        return (f'{W}, {b} = {self.P}["{self.wk}"], {self.P}["{self.bk}"]\n'
                f"{v} = {self.T}({x} @ {W} + {b})", ("dict argument: indexed",))

    def dense_calls(self) -> tuple[str, tuple[str, ...]]:
        """The layers one after the other through the program's ``dense`` helper."""
        self.dense()
        x = self.layer_input()
        made = {"dict argument: passed to a helper"} | self.structures()
        if self.style()["b_test"]:
            made.add("dict argument: 'in' test in a helper")
        lines, h = [], x
        keywords = self.ctx.chance(3)
        for k, (path, _) in enumerate(self.path_layers):
            last = k == len(self.path_layers) - 1
            out = self.ctx.fresh("h")
            text, more = self.call(path, h, last and len(self.path_layers) > 1,
                                   keywords and k > 0)
            made |= more
            lines.append(f"{out} = {text}")
            h = out
        return "\n".join(lines), tuple(sorted(made))

    def named_loop(self) -> tuple[str, tuple[str, ...]]:
        """``for name in ("l1", "l2"): h = dense(params[name], h)``."""
        self.dense()
        x, h, n = self.layer_input(), self.ctx.fresh("h"), self.ctx.fresh("name")
        names = ", ".join(f'"{k}"' for k in self.value) + ("," if len(self.value) == 1 else "")
        made = {"dict argument: loop over constant keys", "dict argument: passed to a helper"}
        if self.ctx.chance(3):
            body = f'{h} = {self.T}({h} @ {self.P}[{n}]["{self.wk}"])'
        else:
            body = f"{h} = dense({self.P}[{n}], {h})"
            made |= self.structures()
        return f"{h} = {x}\nfor {n} in ({names}):\n    {body}", tuple(sorted(made))

    def for_layers(self) -> tuple[str, tuple[str, ...]]:
        """``for layer in params["layers"]: h = dense(layer, h)``."""
        x, h, L = self.layer_input(), self.ctx.fresh("h"), self.ctx.fresh("layer")
        made = {"dict argument: loop over a list of dicts"}
        if self.ctx.chance(2) or any(self.bk not in d for _, d in self.path_layers):
            self.dense()
            body = f"{h} = dense({L}, {h})"
            made |= {"dict argument: passed to a helper"} | self.structures()
        else:
            body = f'{h} = {self.T}({h} @ {L}["{self.wk}"] + {L}["{self.bk}"])'
        return (f'{h} = {x}\nfor {L} in {self.P}["layers"]:\n    {body}', tuple(sorted(made)))

    def enumerated_layers(self) -> tuple[str, tuple[str, ...]]:
        self.dense()
        x, h, i, L = (self.layer_input(), self.ctx.fresh("h"), self.ctx.fresh("i"),
                      self.ctx.fresh("layer"))
        return (f'{h} = {x}\nfor {i}, {L} in enumerate({self.P}["layers"]):\n'
                f"    {h} = dense({L}, {h}) * (1.0 + 0.5 * {i})",
                ("dict argument: enumerate a list of dicts", "dict argument: passed to a helper"))

    def hidden_then_output(self) -> tuple[str, tuple[str, ...]]:
        """Hidden layers with an activation, the last read directly (``layers[:-1]``)."""
        x, h, L, v = (self.layer_input(), self.ctx.fresh("h"), self.ctx.fresh("layer"),
                      self.ctx.fresh())
        self.dense()
        last = self.value["layers"][-1]
        bias = f' + {self.P}["layers"][-1]["{self.bk}"]' if self.bk in last else ""
        return (f'{h} = {x}\nfor {L} in {self.P}["layers"][:-1]:\n    {h} = dense({L}, {h})\n'
                f'{v} = {h} @ {self.P}["layers"][-1]["{self.wk}"]{bias}',
                ("dict argument: sliced list of dicts", "dict argument: passed to a helper"))

    def model_helper(self) -> tuple[str, tuple[str, ...]]:
        """A model helper taking the whole dict, calling ``dense`` (a helper calling a helper)."""
        self.dense()
        x, v = self.layer_input(), self.ctx.fresh()
        if self.kind == "nested":
            names = list(self.value)
            lines = ["def forward(params, x):", "    h = x"]
            for k in names:
                lines.append(f'    h = dense(params["{k}"], h)')
            lines.append("    return h")
        else:
            lines = ["def forward(params, x):", "    h = x",
                     '    for layer in params["layers"]:', "        h = dense(layer, h)",
                     "    return h"]
        self.ctx.list_helper("forward", "\n".join(lines) + "\n")
        call = self.ctx.choice([f"forward({self.P}, {x})", f"forward(x={x}, params={self.P})"])
        made = {"dict argument: helper calling a helper", "dict argument: passed to a helper"}
        if "x=" in call:
            made.add("dict argument: keyword arguments")
        return f"{v} = {call}", tuple(sorted(made | self.structures()))

    def alias(self) -> tuple[str, tuple[str, ...]]:
        """A name bound to a part (``l1 = params["l1"]``, ``layers = params["layers"]``)."""
        x, v, a = self.layer_input(), self.ctx.fresh(), self.ctx.fresh("part")
        path, d = self.path_layers[0]
        bias = f' + {a}["{self.bk}"]' if self.bk in d else ""
        if self.kind == "layers":
            return (f'{a} = {self.P}["layers"]\n'
                    f'{v} = {self.T}({x} @ {a}[0]["{self.wk}"]' +
                    (f' + {a}[0]["{self.bk}"]' if self.bk in d else "") + ")",
                    ("dict argument: part bound to a name",))
        return (f"{a} = {path}\n{v} = {self.T}({x} @ {a}[\"{self.wk}\"]{bias})",
                ("dict argument: part bound to a name",))

    def in_test(self) -> tuple[str, tuple[str, ...]]:
        """``if "b" in params["l2"]`` in f's own body."""
        path, _ = self.path_layers[-1]
        x, v = self.layer_input(), self.ctx.fresh()
        first = self.path_layers[0][0]
        return (f'{v} = {x} @ {first}["{self.wk}"]\nif "{self.bk}" in {first}:\n'
                f'    {v} = {v} + {first}["{self.bk}"]\n'
                f'{v} = {v} * len({path})', ("dict argument: 'in' test", "dict argument: len"))

    def flat_helper(self) -> tuple[str, tuple[str, ...]]:
        x, v, W, b, T = self.layer_input(), self.ctx.fresh(), self.wk, self.bk, self.T
        self.ctx.list_helper("predict", f'def predict(params, x):\n'
                                        f'    h = {T}(x @ params["{W}1"] + params["{b}1"])\n'
                                        f'    return h @ params["{W}2"] + params["{b}2"]\n')
        return f"{v} = predict({self.P}, {x})", ("dict argument: passed to a helper",)

    def fstring_keys(self) -> tuple[str, tuple[str, ...]]:
        """``params[f"W{i}"]``: keys made at run time (gradlab may refuse)."""
        x, h, i = self.layer_input(), self.ctx.fresh("h"), self.ctx.fresh("i")
        return (f'{h} = {x}\nfor {i} in (1, 2):\n'
                f'    {h} = {self.T}({h} @ {self.P}[f"{self.wk}{{{i}}}"] + '
                f'{self.P}[f"{self.bk}{{{i}}}"])', ("dict argument: f-string keys",))

    def arrays_helper(self) -> tuple[str, tuple[str, ...]]:
        k = list(self.value)
        v = self.ctx.fresh()
        self.ctx.list_helper("combine", f'def combine(p, scale=1.0):\n'
                                        f'    out = p["{k[0]}"] * scale\n'
                                        f'    for key in p:\n'
                                        f'        out = out + 0.5 * p[key] ** 2\n'
                                        f'    return out\n')
        call = self.ctx.choice([f"combine({self.P})", f"combine({self.P}, scale=2.0)",
                                f"combine(p={self.P})"])
        return f"{v} = {call}", ("dict argument: passed to a helper",)

    # --- generic ------------------------------------------------------------------------------
    def items_loop(self) -> tuple[str, tuple[str, ...]]:
        v, k, w = self.ctx.fresh(), self.ctx.fresh("k"), self.ctx.fresh("w")
        S = self.S
        if self.kind in ("nested",):
            return (f"{v} = 0.0\nfor {k}, {w} in {self.P}.items():\n"
                    f'    {v} = {v} + {S}({w}["{self.wk}"] ** 2)', ("dict argument: .items()",))
        if self.kind == "layers":
            return (f'{v} = 0.0\nfor {w} in {self.P}["layers"]:\n'
                    f"    for {k}, u in {w}.items():\n        {v} = {v} + {S}(u ** 2)",
                    ("dict argument: .items()", "dict argument: loop over a list of dicts"))
        return (f"{v} = 0.0\nfor {k}, {w} in {self.P}.items():\n    {v} = {v} + {S}({w} ** 2)",
                ("dict argument: .items()",))

    def keys_loop(self) -> tuple[str, tuple[str, ...]]:
        v, k = self.ctx.fresh(), self.ctx.fresh("k")
        return (f"{v} = 0.0\nfor {k} in {self.P}:\n    {v} = {v} + {self.S}({self.P}[{k}] * "
                f"{self.P}[{k}])", ("dict argument: for k in dict",))

    def values_sum(self) -> tuple[str, tuple[str, ...]]:
        v, w = self.ctx.fresh(), self.ctx.fresh("w")
        return (f"{v} = sum({self.S}({w} ** 2) for {w} in {self.P}.values())",
                ("dict argument: .values() generator",))

    def length(self) -> tuple[str, tuple[str, ...]]:
        v = self.ctx.fresh()
        leaf = self.leaf_paths()[0]
        return f"{v} = {self.S}({leaf}) / len({self.P})", ("dict argument: len",)

    def penalty_helper(self) -> tuple[str, tuple[str, ...]]:
        """``0.01 * l2_penalty(params)``: a helper walking the whole dict."""
        v, S = self.ctx.fresh(), self.S
        if self.kind == "nested":
            src = (f"def l2_penalty(params):\n    total = 0.0\n    for layer in params.values():\n"
                   f"        for w in layer.values():\n            total = total + {S}(w ** 2)\n"
                   f"    return total\n")
        elif self.kind == "layers":
            src = (f"def l2_penalty(params):\n"
                   f'    return sum({S}(layer["{self.wk}"] ** 2) for layer in params["layers"])\n')
        else:
            src = (f"def l2_penalty(params):\n    total = 0.0\n    for k, w in params.items():\n"
                   f"        total = total + {S}(w ** 2)\n    return total\n")
        self.ctx.list_helper("l2_penalty", src)
        return f"{v} = 0.01 * l2_penalty({self.P})", ("dict argument: passed to a helper",)

    # --- what gradlab refuses (or may) ---------------------------------------------------------
    def runtime_key(self) -> tuple[str, tuple[str, ...]]:
        """``k = "W"; params[k]``: a key held in a variable."""
        key = self.ctx.fresh("key")
        v = self.ctx.fresh()
        first = list(self.value)[0]
        leaf = self.leaf_paths()[0]
        rest = leaf[len(f'{self.P}["{first}"]'):]
        return (f'{key} = "{first}"\n{v} = {self.S}({self.P}[{key}]{rest} ** 2)',
                ("dict argument: key held in a variable",))

    def mutated(self) -> tuple[str, tuple[str, ...]]:
        """``params["W"] = params["W"] * 0.5``: the argument changed in place."""
        leaf = self.leaf_paths()[0]
        v = self.ctx.fresh()
        return (f"{leaf} = {leaf} * 0.5\n{v} = {self.S}({leaf} ** 2)",
                ("dict argument: changed in place",))

    def comprehension(self) -> tuple[str, tuple[str, ...]]:
        """A dict made of it (``{k: 2.0 * w for k, w in params.items()}``)."""
        d, v, k, w = self.ctx.fresh("q"), self.ctx.fresh(), self.ctx.fresh("k"), \
            self.ctx.fresh("w")
        leaf = self.leaf_paths()[0]
        inner = leaf[len(self.P):]
        return (f"{d} = {{{k}: {w} for {k}, {w} in {self.P}.items()}}\n"
                f"{v} = {self.S}({d}{inner} ** 2)", ("dict argument: dict comprehension",))

    def returned_by_helper(self) -> tuple[str, tuple[str, ...]]:
        """A helper that returns a new dict made of the argument's entries."""
        self.ctx.list_helper("scale_tree", "def scale_tree(p, c):\n"
                                           "    return {k: c * w for k, w in p.items()}\n")
        if self.kind in ("nested", "layers"):
            target = self.path_layers[0][0]
        else:
            target = self.P
        d, v = self.ctx.fresh("q"), self.ctx.fresh()
        inner_key = list(self.ctx.value_of(target))[0]
        return (f"{d} = scale_tree({target}, 0.5)\n{v} = {self.S}({d}[\"{inner_key}\"] ** 2)",
                ("dict argument: dict returned by a helper",))

    def get(self) -> tuple[str, tuple[str, ...]]:
        """``params.get("b", 0.0)``."""
        v = self.ctx.fresh()
        if self.path_layers:
            path = self.path_layers[-1][0]
            return (f'{v} = {self.S}({path}.get("{self.bk}", 0.0) ** 2)',
                    ("dict argument: .get",))
        first = list(self.value)[0]
        return f'{v} = {self.S}({self.P}.get("{first}") ** 2)', ("dict argument: .get",)
