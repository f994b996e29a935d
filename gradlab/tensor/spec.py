"""The table of primitives: one record per primitive (see :mod:`gradlab.tensor.primitive`).

This is the contract between the generated gradient code, the differentiation rules and the
backends: ``gl.sum(x, axis=None, keepdims=False)`` means the same thing whether ``gl`` is the
NumPy, PyTorch, TensorFlow or JAX namespace. Signatures follow NumPy's names (``axis``,
``keepdims``); flags are passed by keyword. Each record also says how NumPy, ``math``, SciPy,
PyTorch, TensorFlow and JAX spell the primitive and how their arguments map onto it; the
resolver reads those spellings, the analyses read the kinds, the rule checker reads which
primitives are differentiable. ``tests/tensor/test_spec.py`` checks the table against itself,
the rules and the backends.

What the signatures alone do not say (``tests/tensor/test_conformance.py`` checks each point on
every backend, eagerly and inside ``jax.jit``/``tf.function``):

* Results equal NumPy's in value, shape and dtype: float32 stays float32, a Python scalar operand
  does not promote, integer results (``argmax``, ``argsort``, ``topk``'s indices) are int64.
* Creation functions called with ``dtype=None`` give NumPy's dtypes on every backend: float64
  for floats (not the float32 PyTorch and TensorFlow default to: generated code builds constants
  next to the user's float64 values), int64 for ints, bool for bools; JAX without x64 has only
  float32. ``uniform``/``normal`` repeat themselves for one seed within a framework; the streams
  differ between frameworks.
* ``getitem``, ``index_update`` and ``index_add`` index as NumPy does: ints, slices (negative
  steps too), None, Ellipsis, integer arrays and lists (negative entries too) and boolean masks,
  with NumPy's placement of the indexed axes. ``index_add`` accumulates repeated positions, as
  ``np.add.at`` does. (TensorFlow: None cannot be combined with array indices.)
* Reductions with ``axis=()`` reduce nothing. ``norm`` is a vector norm over ``axis``
  (``np.linalg.vector_norm``), for every ``ord`` (inf and -inf too) and for matrices too;
  ``linalg_norm`` is ``np.linalg.norm``, a matrix norm over two axes, or without an axis of a
  2-d array (unless ``vector_without_axis``, TensorFlow's reading): 'fro', 1, -1, inf, -inf,
  of which gradlab computes and differentiates 'fro', 1, inf and -inf and refuses the others.
* ``matrix_transpose`` (``x.mT``) of a 0-d value is the value itself, as torch's ``mT`` is.
* ``dot`` is ``np.dot`` (N-d: the last axis of x against the second-to-last of y).
* ``argsort`` is stable; ``topk`` works on the last axis, values in descending order.
* ``pad`` has the modes 'constant', 'edge', 'reflect', 'symmetric' and 'wrap'.
"""
from __future__ import annotations

from typing import Any

from .primitive import (BINARY, BROADCASTING, CODEGEN, CREATION, EXPANDED, GRADIENT_CODE,
                        HELPER, INSPECTION,
                        REDUCTION, SAME_SHAPE, TENSOR_ONLY, UNARY, VIEW, Primitive, S,
                        parse_signature, prim)

# Reasons no gradient flows, by nature (shown in refusals and checked: every record without
# a reason has rules for both modes).
BOOLEAN = "its result is a boolean"
INTEGER = "its result is an integer (an index or a count)"
STEPS = "it is piecewise constant: its derivative is zero wherever it is defined"
SHAPE_ONLY = "it depends only on its argument's shape and dtype, not on its values"
CONSTANT = "it makes an array from shapes and constants"
RANDOM = "it draws random numbers from a seed"
STOPPED = "it stops the gradient on purpose"
SHIFT = "it is a shift that cancels exactly (logsumexp's maximum, see codegen/expand.py)"
BOOKKEEPING = "it is bookkeeping of the gradient code, applied to axes or to gradients"
KEPT = "it is a NumPy function gradlab keeps as written, on values no gradient flows through"
#: Reasons that hold only while the arguments are constants: a value that carries a gradient
#: passed to such a primitive is refused, not silently treated as a constant.
FROM_CONSTANTS = frozenset({CONSTANT, RANDOM})

#: Reduction signature, and the positional order of TensorFlow's and torch's reductions.
_RED = "(x, axis=None, *, keepdims=False)"
_RED_ORDER = ("x", "axis", "keepdims")
#: torch's var/std: unbiased unless told otherwise (``correction`` or ``unbiased``).
_TORCH_VAR = dict(defaults={"ddof": 1}, rename={"correction": "ddof"},
                  literals={"unbiased": ("ddof", {True: 1, False: 0})},
                  positional=("x", "axis", "unbiased", "keepdims"))

#: torch's take and index_select, as functions and as methods (the receiver is ``input``)
_TORCH_TAKE = S("take", rename={"index": "indices"})
_INDEX_SELECT = S("index_select", positional=("input", "dim", "index"), rename={"index": "indices"})


def _unary(name: str, *, nondiff: str = "", np: Any = None, math: Any = None,
           torch: Any = None, tf: Any = None, method: Any = None, linear: tuple[int, ...] = (),
           **more: Any) -> Primitive:
    """An elementwise function of one array; by default spelled with its own name in NumPy,
    torch, ``tf.math`` and as a method."""
    torch = torch if torch is not None else name
    method = method if method is not None else name
    more.setdefault("torch_method", _torch_methods(torch, f"{method} {more.get('attr', '')}"))
    return prim(name, "(x)", UNARY, SAME_SHAPE, nondiff=nondiff, linear=linear,
                np=np if np is not None else name,
                math=math, torch=torch,
                tf=tf if tf is not None else f"math.{name} {name}",
                method=method, **more)


def _torch_methods(torch: Any, method: Any) -> str:
    """A torch function of one tensor is its method too (``x.neg()``, ``x.mul(y)``): the
    names torch spells it with that the shared methods (or attributes: ``x.imag``) do not
    already have."""
    if not isinstance(torch, str):
        return ""
    shared = method.split() if isinstance(method, str) else []
    return " ".join(n for n in torch.split() if n not in shared and "." not in n)


def _binary(name: str, *, nondiff: str = "", np: Any = None, torch: Any = None,
            tf: Any = None, linear: tuple[int, ...] = (), **more: Any) -> Primitive:
    """An elementwise function of ``x`` and ``y`` that broadcasts them."""
    torch = torch if torch is not None else name
    more.setdefault("torch_method", _torch_methods(torch, more.get("method")))
    return prim(name, "(x, y)", BINARY, BROADCASTING, nondiff=nondiff, linear=linear,
                np=np if np is not None else name, torch=torch,
                tf=tf if tf is not None else f"math.{name} {name}", **more)


def _reduction(name: str, *, nondiff: str = "", np: Any = None, torch: Any = None,
               tf: Any = None, method: Any = None, signature: str = _RED, **more: Any
               ) -> Primitive:
    return prim(name, signature, REDUCTION, nondiff=nondiff,
                np=np if np is not None else name,
                torch=torch if torch is not None else S(name, positional=_RED_ORDER),
                tf=tf if tf is not None else S(f"math.reduce_{name} reduce_{name}",
                                                positional=_RED_ORDER),
                method=method if method is not None else name, **more)


TABLE: list[Primitive] = [
    # --- elementwise functions of one array -------------------------------------------------
    _unary("abs", np="abs absolute", math="fabs", builtin="abs",
           torch="abs absolute"),
    _unary("sqrt", math="sqrt"),
    _unary("square", math=None),
    _unary("exp", math="exp"),
    _unary("expm1", math="expm1", tf="math.expm1"),
    _unary("log", math="log", tf="math.log"),
    _unary("log1p", math="log1p", tf="math.log1p"),
    _unary("log2", math="log2", tf=""),
    _unary("log10", math="log10", tf=""),
    _unary("sin", math="sin"),
    _unary("cos", math="cos"),
    _unary("tan", math="tan"),
    _unary("arcsin", np="arcsin asin", math="asin", torch="arcsin asin",
           tf="math.asin asin", method="arcsin asin"),
    _unary("arccos", np="arccos acos", math="acos", torch="arccos acos",
           tf="math.acos acos", method="arccos acos"),
    _unary("arctan", np="arctan atan", math="atan", torch="arctan atan",
           tf="math.atan atan", method="arctan atan"),
    _unary("sinh", math="sinh"),
    _unary("cosh", math="cosh"),
    _unary("tanh", math="tanh"),
    _unary("arcsinh", np="arcsinh asinh", math="asinh", torch="arcsinh asinh",
           tf="math.asinh asinh", method=""),
    _unary("arccosh", np="arccosh acosh", math="acosh", torch="arccosh acosh",
           tf="math.acosh acosh", method=""),
    _unary("arctanh", np="arctanh atanh", math="atanh", torch="arctanh atanh",
           tf="math.atanh atanh", method=""),
    _unary("sigmoid", np="", torch=["sigmoid", S("nn.functional.sigmoid special.expit")],
           tf="math.sigmoid sigmoid nn.sigmoid", scipy="special.expit",
           jax="nn.sigmoid"),
    _unary("softplus", np="", torch=S("nn.functional.softplus"),
           tf="math.softplus nn.softplus", jax="nn.softplus", method=""),
    _unary("relu", np="", torch=["relu", S("nn.functional.relu")], tf="nn.relu",
           jax="nn.relu"),
    _unary("erf", np="", math="erf", torch="erf special.erf", tf="math.erf",
           scipy="special.erf", method=""),
    _unary("negative", torch="neg negative", method="", linear=(0,)),
    _unary("reciprocal", tf="math.reciprocal", method=""),
    _unary("rsqrt", np="", torch="rsqrt", tf="math.rsqrt", jax="lax.rsqrt", method="",
           torch_method="rsqrt"),
    _unary("sign", nondiff=STEPS),
    # (math.floor and math.ceil give Python ints, indices: kept as written, see STATIC_CALLS)
    _unary("floor", nondiff=STEPS),
    _unary("ceil", nondiff=STEPS, tf="math.ceil"),
    prim("round", "(x, decimals=0)", UNARY, SAME_SHAPE, nondiff=STEPS, np="round around",
         torch="round", tf="math.round round", method="round"),
    _unary("isnan", nondiff=BOOLEAN, tf="math.is_nan", method=""),
    _unary("isinf", nondiff=BOOLEAN, tf="math.is_inf", method=""),
    _unary("isfinite", nondiff=BOOLEAN, tf="math.is_finite", method=""),
    _unary("logical_not", nondiff=BOOLEAN, method=""),

    # --- elementwise functions of two arrays ------------------------------------------------
    _binary("add"),
    _binary("subtract", torch="sub subtract"),
    _binary("multiply", torch="mul multiply", tf="math.multiply multiply", linear=(0, 1)),
    _binary("divide", np="divide true_divide", torch="div divide true_divide",
            tf="math.divide divide math.truediv truediv"),
    _binary("power", np="power pow", math="pow", builtin="pow", torch="pow",
            tf="math.pow pow", method="pow"),
    _binary("maximum", builtin=S("max", arity=2)),
    _binary("minimum", builtin=S("min", arity=2)),
    _binary("arctan2", np="arctan2 atan2", math="atan2", torch="arctan2 atan2",
            tf="math.atan2 atan2"),
    _binary("hypot", math="hypot", tf=""),
    _binary("logaddexp", tf=""),
    _binary("squared_difference", np="", torch="",
            tf="math.squared_difference"),
    _binary("mod", np="mod remainder", torch="remainder", tf="math.floormod"),
    _binary("floor_divide", nondiff=STEPS, torch="floor_divide", tf="math.floordiv"),
    _binary("equal", nondiff=BOOLEAN, torch="eq"),
    _binary("not_equal", nondiff=BOOLEAN, torch="ne"),
    _binary("less", nondiff=BOOLEAN, torch="lt less"),
    _binary("less_equal", nondiff=BOOLEAN, torch="le less_equal"),
    _binary("greater", nondiff=BOOLEAN, torch="gt greater"),
    _binary("greater_equal", nondiff=BOOLEAN, torch="ge greater_equal"),
    _binary("logical_and", nondiff=BOOLEAN),
    _binary("logical_or", nondiff=BOOLEAN),
    prim("matmul", "(x, y)", linear=(0, 1), np="matmul",
         torch=["matmul mm bmm mv", S("linalg.matmul")],
         tf=S("matmul linalg.matmul", transforms={
             "transpose_a": ("x", "swapaxes", (-1, -2)),
             "transpose_b": ("y", "swapaxes", (-1, -2)),
             "adjoint_a": ("x", "swapaxes", (-1, -2)),
             "adjoint_b": ("y", "swapaxes", (-1, -2))}),
         method="matmul"),
    prim("dot", "(x, y)", linear=(0, 1), np="dot", torch="dot", method="dot"),
    prim("outer", "(x, y)", linear=(0, 1), np="outer", torch="outer ger",
         torch_method="outer ger"),

    # --- reductions -------------------------------------------------------------------------
    _reduction("sum", linear=(0,)),
    _reduction("mean", linear=(0,)),
    _reduction("prod"),
    prim("prod_others", "(x, axis=None)", HELPER),
    prim("prod_others_jvp", "(x, x_dot, axis=None)", HELPER, TENSOR_ONLY, arrays=("x", "x_dot")),
    _reduction("max", np="max amax",
               torch=[S("max", positional=_RED_ORDER, with_indices="argmax"),
                      S("amax", positional=_RED_ORDER)],
               method=["max", S("amax")],
               torch_method=S("max", positional=_RED_ORDER, with_indices="argmax")),
    _reduction("min", np="min amin",
               torch=[S("min", positional=_RED_ORDER, with_indices="argmin"),
                      S("amin", positional=_RED_ORDER)],
               method=["min", S("amin")],
               torch_method=S("min", positional=_RED_ORDER, with_indices="argmin")),
    _reduction("all", nondiff=BOOLEAN),
    _reduction("any", nondiff=BOOLEAN),
    _reduction("logsumexp", np="", torch=S("logsumexp", positional=_RED_ORDER),
               scipy="special.logsumexp", jax="nn.logsumexp"),
    _reduction("logsumexp_shift", nondiff=SHIFT, np="", torch="", tf="", method=""),
    _reduction("var", signature="(x, axis=None, *, keepdims=False, ddof=0)",
               torch=S("var", **_TORCH_VAR), tf=S("math.reduce_variance",
                                                  positional=_RED_ORDER),
               torch_method=S("var", **_TORCH_VAR)),
    _reduction("std", signature="(x, axis=None, *, keepdims=False, ddof=0)",
               torch=S("std", **_TORCH_VAR), tf=S("math.reduce_std",
                                                  positional=_RED_ORDER),
               torch_method=S("std", **_TORCH_VAR)),
    # TensorFlow's argmax/argmin/cumsum work along axis 0 unless told (NumPy's: every entry)
    _reduction("argmax", nondiff=INTEGER, tf=S("math.argmax argmax", defaults={"axis": 0})),
    _reduction("argmin", nondiff=INTEGER, tf=S("math.argmin argmin", defaults={"axis": 0})),
    prim("norm", "(x, ord=None, axis=None, *, keepdims=False)", REDUCTION,
         np=S("linalg.vector_norm", defaults={"ord": 2}),
         torch=[S("norm", rename={"p": "ord"}), S("linalg.vector_norm", defaults={"ord": 2})],
         method=S("norm", rename={"p": "ord"})),
    # np.linalg.norm: a matrix norm over two axes, or without an axis of a 2-d array;
    # tf.norm: over two axes only (vector_without_axis)
    prim("linalg_norm", "(x, ord=None, axis=None, *, keepdims=False, vector_without_axis=False)",
         REDUCTION, np=["linalg.norm", S("linalg.matrix_norm", defaults={
             "ord": "fro", "axis": (-2, -1)})],
         torch=["linalg.norm", S("linalg.matrix_norm", defaults={"ord": "fro", "axis": (-2, -1)})],
         tf=S("norm linalg.norm", rename={"tensor": "x"}, defaults={"vector_without_axis": True},
              literals={"ord": ("ord", {"euclidean": None, "fro": None})})),
    # (running products: what prod's gradient helpers compute products of the others with)
    prim("cumprod", "(x, axis=None)", TENSOR_ONLY),
    prim("cumsum", "(x, axis=None)", np="cumsum", torch="cumsum",
         tf=S("math.cumsum cumsum", defaults={"axis": 0}),
         method="cumsum", linear=(0,)),

    # --- choosing and clipping --------------------------------------------------------------
    prim("where", "(condition, x, y)", BROADCASTING, no_gradient=("condition",), np="where",
         torch="where", tf="where"),
    prim("clip", "(x, a_min, a_max)", BROADCASTING,
         np=S("clip", rename={"min": "a_min", "max": "a_max"},   # NumPy 2.1, JAX: one bound
              defaults={"a_min": None, "a_max": None}),
         # torch's clamp and NumPy's method take one bound alone (x.clamp(min=0.0))
         torch=S("clamp clip", rename={"min": "a_min", "max": "a_max"},
                 defaults={"a_min": None, "a_max": None}),
         tf=S("clip_by_value", rename={"t": "x", "clip_value_min": "a_min",
                                       "clip_value_max": "a_max"}),
         method=S("clip clamp", rename={"min": "a_min", "max": "a_max"},
                  defaults={"a_min": None, "a_max": None}),
         torch_method=[S("clamp_min", rename={"min": "a_min"}, defaults={"a_max": None}),
                       S("clamp_max", rename={"max": "a_max"}, positional=("x", "a_max"),
                         defaults={"a_min": None})]),

    # --- shapes -----------------------------------------------------------------------------
    prim("reshape", "(x, shape)", VIEW, linear=(0,), np="reshape", torch="reshape",
         tf="reshape", method=S("reshape", varargs="shape"),
         torch_method=S("view", varargs="shape")),
    prim("flatten", "(x, start=0, end=-1)", VIEW, linear=(0,), np="ravel",
         torch=S("flatten", rename={"start_dim": "start", "end_dim": "end"}),
         method=["flatten", "ravel"]),
    prim("expand_dims", "(x, axis)", VIEW, linear=(0,), np="expand_dims",
         torch="unsqueeze", tf="expand_dims", torch_method="unsqueeze"),
    prim("squeeze", "(x, axis=None)", VIEW, linear=(0,), np="squeeze", torch="squeeze",
         tf="squeeze", method="squeeze"),
    prim("transpose", "(x, axes=None)", VIEW, linear=(0,), np="transpose",
         torch=[S("permute", rename={"dims": "axes"}), S("t")], tf="transpose",
         method=S("transpose", varargs="axes"),
         torch_method=[S("permute", rename={"dims": "axes"}, varargs="axes"), S("t")],
         attr="T"),
    prim("swapaxes", "(x, axis1, axis2)", VIEW, linear=(0,), np="swapaxes",
         torch=["swapaxes", S("transpose", rename={"dim0": "axis1", "dim1": "axis2"})],
         method="swapaxes",
         torch_method=S("transpose", rename={"dim0": "axis1", "dim1": "axis2"})),
    # x.mT: the last two axes swapped; of a 0-d value the value itself (torch's mT), of a vector
    # refused (NumPy, torch and JAX raise)
    prim("matrix_transpose", "(x)", VIEW, linear=(0,),
         np="matrix_transpose linalg.matrix_transpose", tf="linalg.matrix_transpose", attr="mT"),
    prim("moveaxis", "(x, source, destination)", VIEW, linear=(0,), np="moveaxis",
         torch="moveaxis"),
    prim("atleast_1d", "(x)", VIEW, np="atleast_1d"),
    prim("atleast_2d", "(x)", VIEW, np="atleast_2d"),
    prim("atleast_3d", "(x)", VIEW, np="atleast_3d"),
    prim("concatenate", "(xs, axis=0)", np="concatenate concat", torch="cat concat",
         tf="concat"),
    prim("stack", "(xs, axis=0)", np="stack", torch="stack", tf="stack"),
    prim("unstack", "(x, axis=0)", linear=(0,), torch="unbind", tf="unstack"),
    prim("split", "(x, indices_or_sections, axis=0)", linear=(0,), np="split",
         torch=["tensor_split", S("chunk", rename={"chunks": "indices_or_sections"})]),
    prim("broadcast_to", "(x, shape)", linear=(0,), np="broadcast_to", torch="broadcast_to",
         tf="broadcast_to"),
    prim("tile", "(x, reps)", linear=(0,), np="tile", torch=S("tile", rename={"dims": "reps"}),
         tf=S("tile", rename={"multiples": "reps"}),
         torch_method=[S("repeat", varargs="reps"),
                       S("tile", rename={"dims": "reps"}, varargs="reps")]),
    # NumPy's repeat: each entry ``repeats`` times in a row (torch's x.repeat is tile above)
    prim("repeat", "(x, repeats, axis=None)", linear=(0,), np="repeat",
         torch=S("repeat_interleave"), tf="repeat", method="repeat",
         torch_method=S("repeat_interleave")),
    prim("flip", "(x, axis=None)", linear=(0,), np="flip",
         torch=S("flip", rename={"dims": "axis"})),
    prim("pad", "(x, pad_width, mode='constant', constant_values=0)", TENSOR_ONLY),
    # torch.take reads the flattened input, as np.take without an axis; index_select takes
    # one axis (tf.gather too, whose axis defaults to 0)
    prim("take", "(x, indices, axis=None)", linear=(0,), np="take", method=_TORCH_TAKE,
         torch=[_TORCH_TAKE, _INDEX_SELECT], torch_method=_INDEX_SELECT,
         tf=S("gather", positional=("params", "indices"), defaults={"axis": 0})),
    prim("take_along_axis", "(x, indices, axis)", linear=(0,),
         np=S("take_along_axis", rename={"arr": "x"}), torch="take_along_dim",
         torch_method="take_along_dim"),
    prim("getitem", "(x, index)", VIEW),
    prim("index_update", "(x, index, values)"),
    prim("index_add", "(x, index, values)"),
    prim("sort", "(x, axis=-1)", TENSOR_ONLY),
    prim("argsort", "(x, axis=-1)", nondiff=INTEGER, np="argsort"),
    prim("topk", "(x, k, sorted=True)", TENSOR_ONLY),
    prim("meshgrid", "(*xs, indexing='xy')", TENSOR_ONLY),

    # --- linear algebra ---------------------------------------------------------------------
    prim("inv", "(x)", np="linalg.inv", torch="linalg.inv inverse", tf="linalg.inv"),
    prim("det", "(x)", np="linalg.det", torch="linalg.det det", tf="linalg.det"),
    prim("slogdet", "(x)", TENSOR_ONLY),
    prim("solve", "(a, b)", np="linalg.solve", torch=S("linalg.solve",
                                                       rename={"A": "a", "B": "b"})),
    # the operands as one list, as concatenate's (np.einsum's own *operands are collected)
    prim("einsum", "(subscripts, xs)", np=S("einsum", varargs="xs", drop=("optimize",)),
         torch=S("einsum", varargs="xs"), tf=S("einsum linalg.einsum", varargs="xs")),

    # --- creation (on the namespace's device) -----------------------------------------------
    # (torch.zeros(3, 4): torch takes the sizes one by one too)
    prim("zeros", "(shape, dtype=None)", CREATION, nondiff=CONSTANT, np="zeros",
         torch=S("zeros", varargs="shape"), tf="zeros"),
    prim("ones", "(shape, dtype=None)", CREATION, nondiff=CONSTANT, np="ones",
         torch=S("ones", varargs="shape"), tf="ones"),
    prim("full", "(shape, fill_value, dtype=None)", CREATION, np="full", torch="full",
         tf=S("fill", rename={"dims": "shape", "value": "fill_value"})),
    prim("zeros_like", "(x, dtype=None)", nondiff=SHAPE_ONLY, np="zeros_like",
         torch="zeros_like", tf="zeros_like"),
    prim("ones_like", "(x, dtype=None)", nondiff=SHAPE_ONLY, np="ones_like",
         torch="ones_like", tf="ones_like"),
    prim("full_like", "(x, fill_value, dtype=None)", no_gradient=("x",), np="full_like",
         torch="full_like"),
    prim("arange", "(start, stop=None, step=1, dtype=None)", CREATION, nondiff=CONSTANT,
         np="arange", torch="arange", tf="range"),
    prim("linspace", "(start, stop, num=50, dtype=None)", CREATION, nondiff=CONSTANT,
         np="linspace", torch="linspace"),
    prim("eye", "(n, m=None, dtype=None)", CREATION, nondiff=CONSTANT, np="eye", torch="eye",
         tf="eye"),
    # np.array of an array is a copy, of a list a stack (codegen/normalize.py): only literal
    # values are left to make an array from, but the rules cover a value all the same
    prim("array", "(values, dtype=None)", CREATION,
         np=["array", S("asarray asanyarray", conversion="same")],
         torch=[S("tensor", rename={"data": "values"}, conversion="detached"),
                S("as_tensor", rename={"data": "values"}, conversion="lists_detached")],
         tf=[S("constant", rename={"value": "values"}),
             S("convert_to_tensor", rename={"value": "values"}, conversion="same")]),
    prim("one_hot", "(indices, num_classes, dtype=None)", CREATION,
         nondiff="its values are 0 and 1, placed by integer indices",
         torch=S("nn.functional.one_hot"), tf=S("one_hot", rename={"depth": "num_classes"}),
         jax="nn.one_hot"),
    prim("uniform", "(shape, low=0.0, high=1.0, *, seed=0, dtype=None)", CREATION,
         TENSOR_ONLY, nondiff=RANDOM),
    prim("normal", "(shape, mean=0.0, std=1.0, *, seed=0, dtype=None)", CREATION,
         TENSOR_ONLY, nondiff=RANDOM),

    # --- neural-network helpers -------------------------------------------------------------
    prim("softmax", "(x, axis=-1)", torch=["softmax", S("nn.functional.softmax")],
         tf="math.softmax nn.softmax", scipy=S("special.softmax",
                                                       defaults={"axis": None}),
         jax="nn.softmax", method="softmax"),
    prim("log_softmax", "(x, axis=-1)", torch=["log_softmax", S("nn.functional.log_softmax")],
         tf="math.log_softmax nn.log_softmax", jax="nn.log_softmax",
         method="log_softmax"),
    prim("crossentropy", "(logits, labels)", TENSOR_ONLY),
    prim("kl_div_with_logits", "(logits_p, logits_q, axis=-1)", TENSOR_ONLY),

    # --- inspection and conversion ----------------------------------------------------------
    prim("shape", "(x)", INSPECTION, nondiff=SHAPE_ONLY, np="shape", tf="shape", attr="shape",
         torch_method="size"),
    prim("size", "(x)", INSPECTION, nondiff=SHAPE_ONLY, np="size", tf="size", attr="size",
         torch_method="numel"),
    prim("ndim", "(x)", INSPECTION, nondiff=SHAPE_ONLY, np="ndim", tf="rank", attr="ndim",
         torch_method="dim"),
    prim("dtype", "(x)", INSPECTION, nondiff=SHAPE_ONLY, attr="dtype"),
    prim("astype", "(x, dtype)", SAME_SHAPE, linear=(0,), method="astype",
         tf="cast dtypes.cast",
         torch_method=[S("double", defaults={"dtype": "float64"}),
                       S("float", defaults={"dtype": "float32"}),
                       "to", "type"]),
    prim("to_numpy", "(x)", INSPECTION, TENSOR_ONLY, nondiff=STOPPED),
    prim("item", "(x)", INSPECTION, TENSOR_ONLY, nondiff=STOPPED),
    # Python's round(v) and round(v, n), on every backend (see backends.common.builtin_round)
    prim("builtin_round", "(x, ndigits=None)", SAME_SHAPE, CODEGEN, nondiff=STEPS,
         builtin="round"),
    prim("copy", "(x)", SAME_SHAPE, CODEGEN, np="copy", builtin="float",
         torch="clone", tf="identity", method=["copy", "clone", "item"],
         torch_method="contiguous"),
    # parts of complex values (of a real one: itself, zeros, itself, 0 or pi); a gradient
    # through a complex value comes back complex and is refused (api.conform_gradients)
    _unary("real", torch="real", tf="math.real", method="", attr="real", linear=(0,)),
    _unary("imag", torch="imag", tf="math.imag", method="", attr="imag", linear=(0,)),
    _unary("conj", np="conj conjugate", torch="conj", tf="math.conj",
           method="conj conjugate", linear=(0,)),
    _unary("angle", torch="angle", tf="math.angle"),
    # a NumPy call gradlab keeps as written, on the backend's values (codegen/primal.py)
    prim("numpy_call", "(fn, *args, **kwargs)", CODEGEN, nondiff=KEPT),
    # a torch function gradlab keeps as written, on numbers made torch's tensors (primal.py)
    prim("torch_call", "(fn, *args, **kwargs)", CODEGEN, nondiff=KEPT),
    prim("stop_gradient", "(x)", SAME_SHAPE, nondiff=STOPPED,
         gradlab="stop_gradient api.stop_gradient",
         torch="detach", tf="stop_gradient", jax="lax.stop_gradient", method="detach"),

    # --- lists (values the generated code handles as Python lists) --------------------------
    prim("sum_list", "(xs)", CODEGEN, builtin="sum"),
    # builtin max(xs) / min(xs) of one list or array: the code reads the item the builtin
    # picks, xs[index_of_max(xs)] (codegen/normalize.py), and differentiates that subscript
    prim("max_list", "(xs)", EXPANDED, CODEGEN),
    prim("min_list", "(xs)", EXPANDED, CODEGEN),
    # which item the builtin max / min picks: the first of the largest (smallest), by Python's
    # own comparisons, so a NaN item or a tie picks what the builtin picks
    prim("index_of_max", "(xs)", INSPECTION, nondiff=INTEGER),
    prim("index_of_min", "(xs)", INSPECTION, nondiff=INTEGER),
    prim("list_getitem", "(x, index)", CODEGEN),
    prim("divmod", "(x, y)", EXPANDED, CODEGEN, builtin="divmod"),

    # --- helpers that only gradient code calls ----------------------------------------------
    prim("sum_to", "(x, shape)", TENSOR_ONLY, linear=(0,)),
    prim("unbroadcast", "(x, like)", GRADIENT_CODE, linear=(0,)),
    prim("unbroadcast_to", "(x, shape)", GRADIENT_CODE, linear=(0,)),
    prim("broadcast_like", "(g, x)", HELPER),
    prim("matmul_grad_x", "(dz, x, y)", HELPER, linear=(0, 2)),
    prim("matmul_grad_y", "(dz, x, y)", HELPER, linear=(0, 1)),
    prim("inverse_axes", "(axes)", HELPER, nondiff=BOOKKEEPING),
    prim("linalg_norm_weights", "(x, ord, axis=None, *, vector_without_axis=False)", HELPER,
         nondiff=STEPS),
    prim("untile", "(g, x, reps)", HELPER, linear=(0,)),
    prim("unbroadcast_each", "(g, xs)", HELPER, linear=(0,)),
    prim("unrepeat", "(g, x, repeats, axis=None)", HELPER, linear=(0,)),
    prim("untake", "(g, x, indices, axis=None)", HELPER, linear=(0,)),
    prim("index_written", "(g, index)", HELPER, linear=(0,)),
    prim("untake_along_axis", "(g, x, indices, axis)", HELPER, linear=(0,)),
    prim("unconcatenate", "(g, xs, axis=0)", HELPER, linear=(0,)),
    prim("zeros_like_list", "(xs)", HELPER, nondiff=BOOKKEEPING),
    prim("add_lists", "(a, b)", HELPER),
    prim("as_list", "(g)", HELPER, linear=(0,)),
    prim("einsum_adjoint", "(g, subscripts, xs)", HELPER, linear=(0,)),
    prim("einsum_tangent", "(subscripts, xs, xs_dot)", HELPER, TENSOR_ONLY,
         arrays=("xs", "xs_dot")),
    prim("einsum_adjoint_tangent", "(g, g_dot, subscripts, xs, xs_dot)", HELPER, TENSOR_ONLY,
         arrays=("g", "g_dot", "xs", "xs_dot")),
    prim("or_one", "(x)", HELPER),
    prim("adjugate", "(x)", HELPER),
    # (dy carries hvp's tangent: forward mode goes through it, see rules/forward.py)
    prim("imag_adjoint", "(dy, x)", HELPER, linear=(0,), arrays=("dy", "x")),
    prim("angle_adjoint", "(dy, x)", HELPER, linear=(0,), arrays=("dy", "x")),
]

#: The table by name.
PRIMITIVES: dict[str, Primitive] = {p.name: p for p in TABLE}

#: Calls that are kept as written, never routed through the tensor layer, because their
#: result carries no gradient whatever their arguments: each with its reason. Any other call
#: that a value carrying a gradient reaches is refused unless the table has it.
STATIC_CALLS: dict[str, str] = {
    **{f"builtins.{n}": INTEGER for n in ("len", "int", "round", "id", "hash", "ord")},
    **{f"builtins.{n}": BOOLEAN for n in ("bool", "isinstance", "callable", "hasattr", "any",
                                          "all")},
    **{f"builtins.{n}": "its result is text" for n in ("str", "repr", "format", "chr")},
    "builtins.print": "it prints its arguments and returns None",
    "builtins.type": "its result is a type",
    **{f"builtins.{n}": "it makes the indices or items a loop runs over"
       for n in ("range", "enumerate", "zip", "reversed")},
    **{f"math.{n}": INTEGER for n in ("floor", "ceil", "trunc", "factorial", "comb", "perm",
                                      "gcd", "lcm", "isqrt")},
    **{f"math.{n}": BOOLEAN for n in ("isnan", "isinf", "isfinite", "isclose")},
}


# --- views derived from the table (read these, never write a name set by hand) ------------------
def names_with(kind: str) -> frozenset[str]:
    return frozenset(p.name for p in TABLE if kind in p.kinds)


#: name -> canonical signature text of the tensor layer's primitives (the conformance tests
#: walk it; every backend defines each).
SIGNATURES: dict[str, str] = {p.name: p.signature for p in TABLE
                              if not p.kinds & {HELPER, CODEGEN}}
#: The gradient-code helpers' signatures.
HELPER_SIGNATURES: dict[str, str] = {p.name: p.signature for p in TABLE if HELPER in p.kinds}
#: Primitives through which no gradient flows by nature, with the reason.
NONDIFFERENTIABLE: dict[str, str] = {p.name: p.nondifferentiable for p in TABLE
                                     if p.nondifferentiable}
UNARY_NAMES = [p.name for p in TABLE if UNARY in p.kinds]
BINARY_NAMES = [p.name for p in TABLE if BINARY in p.kinds]
REDUCTION_NAMES = [p.name for p in TABLE if REDUCTION in p.kinds]


def signature(name: str) -> Any:
    """The canonical signature of a primitive, as an :class:`inspect.Signature`."""
    return parse_signature(PRIMITIVES[name].signature)
