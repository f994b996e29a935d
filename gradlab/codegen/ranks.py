"""What the first call tells about shapes: each array argument's rank, and which of its
dimensions are equal (to each other, to another argument's, or to 1), propagated through the
normalized program. The reverse generator writes textbook adjoints where this is known
(``dW = x.T @ dz`` instead of a helper that branches on ranks at run time; no ``unbroadcast``
where nothing was broadcast) and keeps the generic helpers everywhere else.

A *symbolic shape* is a tuple of dimensions: the literal ``1`` for a dimension of size 1
(broadcasting treats it apart), or a symbol (``"n0"``, ``"n1"``...) naming one size, shared
by every dimension of the arguments that has that size. A :class:`Signature` holds one per
parameter (None where nothing is known: a Python number, a list, a missing argument); the
code instantiated for it is right for every call whose arguments have the same signature,
whatever the sizes are. Everything here is conservative: a value whose shape the rules below
cannot tell for sure is unknown (None), and unknown means the generic code.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import gast

from ..tensor import primitive as kinds
from ..tensor.spec import names_with
from . import ir
from .ir import Assign, Const, OpKind
from .resolve import bindings

Shape = tuple[Any, ...]

#: Elementwise on one argument: the result has its shape.
_SAME_SHAPE = names_with(kinds.SAME_SHAPE) - {"astype"}
#: Elementwise on ``x`` and ``y``: the result has their broadcast shape.
_BINARY = names_with(kinds.BINARY)
#: Reductions whose result's shape follows from ``axis`` and ``keepdims`` alone.
_REDUCTIONS = {"sum", "mean", "prod", "max", "min", "logsumexp", "var", "std"}
#: Matrix products whose adjoints are written out for ranks 1 and 2 (np.dot is np.matmul there).
MATRIX_PRODUCTS = ("matmul", "dot")


@dataclass(frozen=True)
class Signature:
    """What a call tells: each parameter's symbolic shape (None: unknown), and whether the
    arrays' own ``x.T`` and ``a @ b`` may be written (TensorFlow's tensors have no ``.T`` and
    their ``@`` takes no vector: ``gl.transpose(x)``, ``gl.matmul(a, b)`` there)."""

    shapes: tuple[Shape | None, ...]
    params: tuple[str, ...]
    transpose_method: bool = True
    #: ``gl.full_like(x, g)`` takes a 0-d array ``g`` (TensorFlow's, inside tf.function,
    #: takes only numbers)
    fills: bool = True
    #: ``W.T @ g`` for a vector ``g`` is written ``g @ W``, the same product with no
    #: transpose: JAX's XLA copies a transposed operand (1.5x one ``dot_general``,
    #: bench/HISTORY.md) and TensorFlow's ``matvec`` transposes around the product
    row_vectors: bool = False
    #: an operand's transpose is a copy (XLA on CPU does not fold ``x.T`` into a matrix
    #: product: 1.24x one ``dot_general``), so a matrix-matrix product's adjoints stay the
    #: backend's contractions (``gl.matmul_grad_*``) there
    transposes_copy: bool = False

    def describe(self) -> str:
        """``x: 2-d, W: 2-d`` — the line saying which code is shown."""
        parts = [f"{p}: {len(s)}-d" for p, s in zip(self.params, self.shapes) if s is not None]
        return ", ".join(parts)

    def known(self) -> dict[str, Shape]:
        return {p: s for p, s in zip(self.params, self.shapes) if s is not None}


def shape_key(args: Iterable[Any]) -> tuple[Any, ...]:
    """The arguments' shapes, as a key: calls with equal keys have equal signatures."""
    out = []
    for a in args:
        s = getattr(a, "shape", None)
        if s is not None and type(s) is not tuple:
            try:
                s = tuple(s)            # torch.Size, TensorFlow's TensorShape
            except (TypeError, ValueError):
                s = None                # a TensorShape of unknown rank
        out.append(s)
    return tuple(out)


def signature_of(params: list[str], args: tuple[Any, ...], strict_dtypes: bool,
                 transpose_method: bool, transposes_copy: bool = False,
                 row_vectors: bool = False) -> Signature | None:
    """The signature of a call, or None when nothing would be specialised: no array
    argument, arrays of different types, or (``strict_dtypes``: frameworks whose ``@`` refuses
    to mix them) of different dtypes. Only arguments given by position count."""
    arrays = [a for a in args if hasattr(a, "shape") and hasattr(a, "dtype")]
    if not arrays:
        return None
    first = type(arrays[0])
    if any(type(a) is not first for a in arrays):
        return None
    if strict_dtypes and len({str(a.dtype) for a in arrays}) > 1:
        return None
    symbols: dict[Any, str] = {}
    shapes: list[Shape | None] = []
    for a, shape in zip(args, shape_key(args)):
        if shape is None or not hasattr(a, "dtype") or any(
                not isinstance(d, int) for d in shape):
            shapes.append(None)
            continue
        shapes.append(tuple(1 if d == 1 else symbols.setdefault(d, f"n{len(symbols)}")
                            for d in shape))
    if all(s is None for s in shapes):
        return None
    names = tuple(params[:len(shapes)])
    return Signature(tuple(shapes[:len(names)]), names, transpose_method,
                     fills=transpose_method, row_vectors=row_vectors,
                     transposes_copy=transposes_copy)


def broadcast(a: Shape, b: Shape) -> Shape | None:
    """NumPy's broadcast of two symbolic shapes; None where it depends on sizes not known to
    be equal (two different symbols: the call would fail, or they are in fact equal)."""
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        da = a[-i] if i <= len(a) else 1
        db = b[-i] if i <= len(b) else 1
        if da == db or db == 1:
            out.append(da)
        elif da == 1:
            out.append(db)
        else:
            return None
    return tuple(reversed(out))


_UNSEEN = object()      # no assignment of the name seen yet


def infer_shapes(fn: ir.Function, signature: Signature) -> dict[str, Shape]:
    """The symbolic shape of each value of ``fn`` that is sure, for calls of ``signature``.

    Flow-insensitive: a name keeps a shape only if every assignment of it gives that shape
    (a loop's value changing shape from one iteration to the next is unknown). Each name only
    goes from unseen to a shape to unknown, so the passes end."""
    known = signature.known()
    stmts = list(ir.walk(fn.body))
    assigned: set[str] = set()
    for s in stmts:
        assigned |= ir.stmt_writes(s) - ({s.target} if isinstance(s, ir.For) else set())
    # a range loop's counter is an int (unless something else writes it)
    ints = {s.target for s in stmts if isinstance(s, ir.For)} - assigned
    # a name read but never assigned here (a global, a closed-over value) is unknown
    state: dict[str, Any] = {p: known.get(p) for p in fn.params}
    while True:
        changed = True
        while changed:
            changed = False
            for s in stmts:
                writes = ir.stmt_writes(s)
                if isinstance(s, ir.For):
                    writes = writes - {s.target}
                for t in writes:
                    new = _shape_of(s.op, state, ints, assigned) if isinstance(s, Assign) and \
                        len(s.targets) == 1 else None
                    if new is _UNSEEN:
                        continue
                    old = state.get(t, _UNSEEN)
                    merged = new if old is _UNSEEN else (old if old == new else None)
                    if old is _UNSEEN or merged != old:
                        state[t] = merged
                        changed = True
        # names only ever computed from each other and never settled: unknown, and again
        stuck = [t for t in assigned if t not in state]
        if not stuck:
            break
        for t in stuck:
            state[t] = None
    return {k: v for k, v in state.items() if isinstance(v, tuple)}


def scalar_result(fn: ir.Function, signature: Signature | None, numbers: set[str],
                  vectors: set[str]) -> bool:
    """Whether ``fn`` returns a 0-d value on every call of ``signature`` whose parameters in
    ``numbers`` are Python numbers and in ``vectors`` 1-d arrays: then a gradient's caller need
    not look at the value to know that the seed 1.0 has the output's shape (see
    ``Transform.lean_factory``). Sure or False, as :func:`infer_shapes`."""
    known = dict(signature.known()) if signature is not None else {}
    for p in numbers:
        known[p] = ()
    for p in vectors:
        known.setdefault(p, (f"len_{p}",))
    params = tuple(fn.params)
    facts = Signature(tuple(known.get(p) for p in params), params)
    return infer_shapes(fn, facts).get(fn.result) == ()


def _shape_of(op: ir.Op, state: dict[str, Any], ints: set[str], assigned: set[str]) -> Any:
    """The result's shape (None: unknown; _UNSEEN: an operand not assigned yet)."""
    def of(a: Any) -> Any:
        if isinstance(a, Const):
            v = a.value
            return () if isinstance(v, (int, float)) and not isinstance(v, bool) else None
        if isinstance(a, str):
            return state.get(a, _UNSEEN if a in assigned else None)
        return None

    if op.kind is OpKind.COPY:
        return of(op.args[0])
    if op.kind is not OpKind.PRIM:
        return None
    args = bindings(op)
    prim = op.prim
    operands = [of(args[p]) for p in ("x", "y") if p in args]
    if any(o is _UNSEEN for o in operands):
        return _UNSEEN
    if prim in _REDUCTIONS and operands == [None] and set(args) <= {"x", "axis"} and (
            args.get("axis") is None):
        return ()           # a full reduction: 0-d, whatever its operand's shape (W1's np.sum)
    if any(o is None for o in operands):
        return None
    if prim in _SAME_SHAPE and set(args) == {"x"}:
        return operands[0]
    if prim in _BINARY and set(args) == {"x", "y"}:
        return broadcast(operands[0], operands[1])
    if prim in _REDUCTIONS:
        return _reduced(operands[0], args)
    if prim in MATRIX_PRODUCTS:
        return matmul_shape(operands[0], operands[1])
    if prim == "outer" and len(operands[0]) == 1 == len(operands[1]):
        return (operands[0][0], operands[1][0])
    if prim == "transpose" and args.get("axes") is None:
        return tuple(reversed(operands[0]))
    if prim == "getitem" and operands[0]:
        index = args.get("index")
        if isinstance(index, gast.Name):
            index = index.id
        try:
            literal = _literal(index)
        except _Unknown:
            literal = None
        if type(literal) is int or (isinstance(index, str) and index in ints):
            return operands[0][1:]
    return None


def matmul_shape(x: Shape, y: Shape) -> Shape | None:
    """``x @ y`` for ranks 1 and 2 whose inner dimensions are the same symbol."""
    if len(x) not in (1, 2) or len(y) not in (1, 2) or x[-1] != y[0]:
        return None
    return x[:-1] + y[1:]


class _Unknown(Exception):
    pass


def _literal(a: Any) -> Any:
    """The value of a literal argument (``axis=1``, ``keepdims=True``, ``axis=(0, -1)``);
    anything else raises _Unknown."""
    if a is None:
        return None
    if isinstance(a, Const):
        return a.value
    if isinstance(a, gast.Constant):
        return a.value
    if isinstance(a, gast.UnaryOp) and isinstance(a.op, gast.USub) and isinstance(
            a.operand, gast.Constant) and type(a.operand.value) is int:
        return -a.operand.value
    if isinstance(a, gast.Tuple):
        return tuple(_literal(e) for e in a.elts)
    raise _Unknown


def _reduced(x: Shape, args: dict[str, Any]) -> Shape | None:
    try:
        axis, keepdims = _literal(args.get("axis")), _literal(args.get("keepdims"))
        if "ddof" in args:
            _literal(args.get("ddof"))
    except _Unknown:
        return None
    if axis is None:
        return tuple(1 for _ in x) if keepdims else ()
    axes = axis if isinstance(axis, tuple) else (axis,)
    if not all(type(a) is int and -len(x) <= a < len(x) for a in axes):
        return None
    axes = tuple(a % len(x) for a in axes)
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(x))
    return tuple(d for i, d in enumerate(x) if i not in axes)


def sum_axes(have: Shape, target: Shape) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """How a gradient of shape ``have`` sums back to an operand of shape ``target`` that was
    broadcast to it: the leading axes to sum away, then the axes (of what is left) to sum
    keeping them (where ``target`` has a 1). None where ``target`` does not broadcast to
    ``have`` by those two steps alone."""
    if len(target) > len(have):
        return None
    lead = tuple(range(len(have) - len(target)))
    rest = have[len(lead):]
    keep = []
    for i, (h, t) in enumerate(zip(rest, target)):
        if h == t:
            continue
        if t == 1:
            keep.append(i)
        else:
            return None
    return lead, tuple(keep)
