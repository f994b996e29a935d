"""The catalogue of primitives every backend provides, with one canonical signature each.

This is the contract between the generated gradient code, the differentiation rules and the four
backends: ``gl.sum(x, axis=None, keepdims=False)`` means the same thing whether ``gl`` is the NumPy,
PyTorch, TensorFlow or JAX namespace. Signatures follow NumPy's names (``axis``, ``keepdims``);
``keepdims`` and other flags are passed by keyword. The conformance tests walk this table.

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
  (``np.linalg.vector_norm``), for every ``ord`` and for matrices too.
* ``dot`` is ``np.dot`` (N-d: the last axis of x against the second-to-last of y).
* ``argsort`` is stable; ``topk`` works on the last axis, values in descending order.
* ``pad`` has the modes 'constant', 'edge', 'reflect', 'symmetric' and 'wrap'.
"""
from __future__ import annotations

#: name -> canonical signature, grouped by kind. The signature strings are documentation and are
#: checked against the backends' adapters by the conformance tests.
UNARY = """abs sign sqrt square exp expm1 log log1p log2 log10 sin cos tan arcsin arccos arctan
sinh cosh tanh arcsinh arccosh arctanh sigmoid softplus relu erf floor ceil round negative
reciprocal isnan isinf isfinite logical_not""".split()

BINARY = """add subtract multiply divide power maximum minimum arctan2 equal not_equal less
less_equal greater greater_equal logical_and logical_or floor_divide mod matmul dot outer""".split()

REDUCTIONS = "sum mean prod max min all any logsumexp".split()

SIGNATURES: dict[str, str] = {
    **{name: "(x)" for name in UNARY},
    **{name: "(x, y)" for name in BINARY},
    **{name: "(x, axis=None, *, keepdims=False)" for name in REDUCTIONS},
    "logsumexp_shift": "(x, axis=None, *, keepdims=False)",   # max, 0 where not finite
    "var": "(x, axis=None, *, keepdims=False, ddof=0)",
    "std": "(x, axis=None, *, keepdims=False, ddof=0)",
    "argmax": "(x, axis=None, *, keepdims=False)",
    "argmin": "(x, axis=None, *, keepdims=False)",
    "norm": "(x, ord=None, axis=None, *, keepdims=False)",
    "cumsum": "(x, axis=None)",
    "where": "(condition, x, y)",
    "clip": "(x, a_min, a_max)",
    # shapes and indexing
    "reshape": "(x, shape)",
    "transpose": "(x, axes=None)",
    "swapaxes": "(x, axis1, axis2)",
    "moveaxis": "(x, source, destination)",
    "expand_dims": "(x, axis)",
    "squeeze": "(x, axis=None)",
    "concatenate": "(xs, axis=0)",
    "stack": "(xs, axis=0)",
    "unstack": "(x, axis=0)",
    "split": "(x, indices_or_sections, axis=0)",
    "broadcast_to": "(x, shape)",
    "sum_to": "(x, shape)",
    "unbroadcast": "(x, like)",
    "tile": "(x, reps)",
    "flip": "(x, axis=None)",
    "pad": "(x, pad_width, mode='constant', constant_values=0)",
    "flatten": "(x, start=0, end=-1)",
    "take": "(x, indices, axis=None)",
    "take_along_axis": "(x, indices, axis)",
    "getitem": "(x, index)",
    "index_update": "(x, index, values)",
    "index_add": "(x, index, values)",
    "sort": "(x, axis=-1)",
    "argsort": "(x, axis=-1)",
    "topk": "(x, k, sorted=True)",
    "meshgrid": "(*xs, indexing='xy')",
    # linear algebra
    "inv": "(x)",
    "det": "(x)",
    "slogdet": "(x)",
    "solve": "(a, b)",
    "einsum": "(subscripts, *operands)",
    # creation (on the namespace's device)
    "zeros": "(shape, dtype=None)",
    "ones": "(shape, dtype=None)",
    "full": "(shape, fill_value, dtype=None)",
    "zeros_like": "(x, dtype=None)",
    "ones_like": "(x, dtype=None)",
    "full_like": "(x, fill_value, dtype=None)",
    "arange": "(start, stop=None, step=1, dtype=None)",
    "linspace": "(start, stop, num=50, dtype=None)",
    "eye": "(n, m=None, dtype=None)",
    "array": "(values, dtype=None)",
    "one_hot": "(indices, num_classes, dtype=None)",
    "uniform": "(shape, low=0.0, high=1.0, *, seed=0, dtype=None)",
    "normal": "(shape, mean=0.0, std=1.0, *, seed=0, dtype=None)",
    # neural-network helpers
    "softmax": "(x, axis=-1)",
    "log_softmax": "(x, axis=-1)",
    "crossentropy": "(logits, labels)",
    "kl_div_with_logits": "(logits_p, logits_q, axis=-1)",
    # inspection and conversion
    "shape": "(x)",
    "size": "(x)",
    "ndim": "(x)",
    "dtype": "(x)",
    "astype": "(x, dtype)",
    "to_numpy": "(x)",
    "item": "(x)",
    "stop_gradient": "(x)",
}

#: Primitives whose result carries no gradient: integer-valued, boolean, or inspection.
NONDIFFERENTIABLE = frozenset("""sign floor ceil round isnan isinf isfinite logical_not equal
not_equal less less_equal greater greater_equal logical_and logical_or floor_divide all any argmax
argmin argsort shape size ndim dtype zeros ones full zeros_like ones_like full_like arange
linspace eye one_hot uniform normal stop_gradient to_numpy""".split())
