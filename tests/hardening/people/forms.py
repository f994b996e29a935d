"""How people call each primitive, in each framework's own words.

gradlab's table says what ``torch.var`` *is*; this module says how people *write* it:
``torch.var(x)``, ``torch.var(x, dim=0, keepdim=True)``, ``torch.var(x, unbiased=False)``,
``x.var(1)``. Every primitive belongs to a *family* (reductions, shape changes, element-wise
functions...) and each family renders a call from the spelling's callee text and an operand,
in one of three argument dialects: NumPy's (NumPy, JAX, autograd), PyTorch's and TensorFlow's.
The text may be invalid for the operand at hand (a matrix norm of a vector, ``torch.t`` of a
3-d tensor): the builder runs every candidate and keeps only what the framework accepts, so a
form here needs to be *plausible*, not always applicable.

Calls outside the table (``np.hypot``, ``F.gelu``, ``tf.math.xlogy``...) are in
:data:`OFF_TABLE`: gradlab must refuse them or differentiate them right.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

# A family renders one call: (ctx, callee text, operand) -> source text, or None when it does
# not apply. ``ctx`` is the builder's Draw (see builder.py): choice, chance, integer, axis,
# partner, const, index helpers and the dialect's names.
Family = Callable[[Any, str, Any], Optional[str]]

UNARY = """abs sign sqrt square exp expm1 log log1p log2 log10 sin cos tan arcsin arccos arctan
sinh cosh tanh arcsinh arccosh arctanh floor ceil round negative reciprocal isnan isinf isfinite
logical_not sigmoid relu softplus erf copy stop_gradient""".split()
BINARY = """add subtract multiply divide power maximum minimum arctan2 equal not_equal less
less_equal greater greater_equal logical_and logical_or floor_divide mod""".split()
REDUCE = "sum mean prod max min all any logsumexp".split()

#: Where each primitive's operand must lie (the builder reshapes an operand into the domain:
#: ``x ** 2 + 0.5`` for a logarithm, as people write ``np.log(1 + x ** 2)``).
DOMAIN = {"log": "pos", "log2": "pos", "log10": "pos", "sqrt": "pos", "reciprocal": "nonzero",
          "arcsin": "unit", "arccos": "unit", "arctanh": "unit", "arccosh": "ge1",
          "log1p": "gtm1", "inv": "square", "det": "square", "slogdet": "square",
          "solve": "square"}


def _np(c: Any) -> bool:
    return c.args_dialect == "numpy"


def _torch(c: Any) -> bool:
    return c.args_dialect == "torch"


# --- element-wise -----------------------------------------------------------------------------
def unary(c: Any, F: str, x: Any) -> str:
    if F.endswith("round") and c.chance(3):
        if _np(c):
            return f"{F}({x}, {c.choice(['1', '2', 'decimals=1'])})"
        if _torch(c) and F.startswith("torch"):
            return f"{F}({x}, decimals=1)"
    return f"{F}({x})"


def unary_method(c: Any, M: str, x: Any) -> str:
    if M == "round" and c.chance(3):
        return f"{x}.round({c.choice(['1', 'decimals=2'])})"
    return f"{x}.{M}()"


def binary(c: Any, F: str, x: Any) -> str:
    prim = c.prim
    if prim == "power":
        y = c.choice(["2", "3", "2.0", "0.5", "-1", c.partner(x, "pos")])
        return f"{F}({c.in_domain(x, 'pos') if y in ('0.5', '-1') else x}, {y})"
    if prim in ("divide", "floor_divide", "mod"):
        y = c.partner(x, "nonzero")
        return f"{F}({x}, {y})" if c.chance(4) else f"{F}({c.const()}, {c.in_domain(x, 'nonzero')})"
    y = c.partner(x)
    if c.chance(4):
        x, y = y, x
    if _torch(c) and prim in ("add", "subtract") and c.chance(6):
        return f"{F}({x}, {y}, alpha=2)"
    return f"{F}({x}, {y})"


def binary_method(c: Any, M: str, x: Any) -> str:
    if c.prim == "power":
        return f"{x}.{M}({c.choice(['2', '3', '0.5'])})" if c.prim == "power" else ""
    return f"{x}.{M}({c.partner(x)})"


def matmul(c: Any, F: str, x: Any) -> str | None:
    y = c.matmul_partner(x)
    if y is None:
        return None
    args = f"{x}, {y}"
    if c.args_dialect == "tensorflow" and F.endswith("matmul") and c.chance(3):
        args = c.choice([f"{y}, {x}, transpose_a=True", f"{x}, {y}, transpose_b=True",
                         f"{x}, {x}, transpose_a=True", f"{x}, {x}, transpose_b=True"])
    return f"{F}({args})"


def matmul_method(c: Any, M: str, x: Any) -> str | None:
    y = c.matmul_partner(x)
    return None if y is None else f"{x}.{M}({y})"


def outer(c: Any, F: str, x: Any) -> str:
    return f"{F}({x}, {c.partner(x, 'any')})"


# --- reductions -------------------------------------------------------------------------------
def _switch(name: str) -> bool:
    from tests.hardening.people import switches
    return bool(getattr(switches, name))


def _axis(c: Any, x: Any) -> int | None:
    """An axis of ``x`` for a reduction (None for a 0-d value)."""
    return c.axis(x)


def reduce(c: Any, F: str, x: Any) -> str:
    ax, kd = _axis(c, x), c.choice(["True", "False"])
    if ax is None:
        return f"{F}({x})"
    if c.prim == "logsumexp" and _torch(c):                  # dim is required
        return c.choice([f"{F}({x}, {ax})", f"{F}({x}, dim={ax})",
                         f"{F}({x}, dim={ax}, keepdim={kd})"])
    if _np(c):
        forms = [f"{F}({x})", f"{F}({x}, axis={ax})", f"{F}({x}, {ax})",
                 f"{F}({x}, axis={ax}, keepdims={kd})", f"{F}({x}, keepdims=True)",
                 f"{F}({x}, axis={c.axes(x)})", f"{F}({x}, {ax}, keepdims=True)"]
    elif _torch(c) and c.prim in ("max", "min") and not _switch("TORCH_MAX_MIN_WITH_DIM"):
        forms = [f"{F}({x})"]
    elif _torch(c):
        forms = [f"{F}({x})", f"{F}({x}, dim={ax})", f"{F}({x}, {ax})",
                 f"{F}({x}, {ax}, keepdim={kd})", f"{F}({x}, dim={ax}, keepdim=True)",
                 f"{F}({x}, {ax}, True)"]
        if c.prim in ("max", "min"):
            forms += [f"{F}({x}, {ax})[0]", f"{F}({x}, dim={ax}).values",
                      f"{F}({x}, {ax}, keepdim=True).values", f"{F}({x}, {c.partner(x)})"]
        elif c.prim in ("sum", "mean"):
            forms += [f"{F}({x}, dim={c.axes(x)})", f"{F}({x}, {c.axes(x)})"]
    else:
        forms = [f"{F}({x})", f"{F}({x}, {ax})", f"{F}({x}, axis={ax})",
                 f"{F}({x}, {ax}, {kd})", f"{F}({x}, axis={ax}, keepdims=True)",
                 f"{F}({x}, axis={c.axes(x, as_list=True)})", f"{F}({x}, keepdims=True)"]
    return c.choice(forms)


def reduce_method(c: Any, M: str, x: Any) -> str:
    ax, kd = _axis(c, x), c.choice(["True", "False"])
    if ax is None:
        return f"{x}.{M}()"
    if _torch(c):
        if c.prim == "logsumexp":
            return f"{x}.{M}({ax})"
        if c.prim in ("max", "min") and not _switch("TORCH_MAX_MIN_WITH_DIM"):
            return f"{x}.{M}()"
        forms = [f"{x}.{M}()", f"{x}.{M}({ax})", f"{x}.{M}(dim={ax})",
                 f"{x}.{M}({ax}, keepdim={kd})", f"{x}.{M}(dim={ax}, keepdim=True)"]
        if c.prim in ("max", "min"):
            forms += [f"{x}.{M}({ax})[0]", f"{x}.{M}(dim={ax}).values", f"{x}.{M}({ax}).indices"]
        return c.choice(forms)
    return c.choice([f"{x}.{M}()", f"{x}.{M}({ax})", f"{x}.{M}(axis={ax})",
                     f"{x}.{M}(axis={ax}, keepdims={kd})", f"{x}.{M}(axis={c.axes(x)})",
                     f"{x}.{M}(keepdims=True)"])


def argreduce(c: Any, F: str, x: Any) -> str:
    ax = c.axis(x)
    if ax is None or c.chance(3):
        call = f"{F}({x})"
        if c.ndim(x) == 1:
            return c.choice([call, f"{x}[{call}]"])
        return call
    key = "dim" if _torch(c) else "axis"
    return c.choice([f"{F}({x}, {key}={ax})", f"{F}({x}, {ax})"])


def argreduce_method(c: Any, M: str, x: Any) -> str:
    ax = c.axis(x)
    call = f"{x}.{M}()" if ax is None or c.chance(2) else f"{x}.{M}({ax})"
    return f"{x}[{call}]" if c.ndim(x) == 1 and c.chance(2) else call


def stat(c: Any, F: str, x: Any) -> str:
    """var and std, with each framework's own default (NumPy biased, torch unbiased)."""
    ax, kd = _axis(c, x), c.choice(["True", "False"])
    if _np(c):
        forms = [f"{F}({x})", f"{F}({x}, ddof=1)", f"{F}({x}, ddof=0)"]
        if ax is not None:
            forms += [f"{F}({x}, axis={ax})", f"{F}({x}, {ax})", f"{F}({x}, axis={ax}, ddof=1)",
                      f"{F}({x}, axis={ax}, keepdims={kd})", f"{F}({x}, axis={c.axes(x)})"]
    elif _torch(c):
        forms = [f"{F}({x})", f"{F}({x}, unbiased=False)", f"{F}({x}, correction=0)"]
        if ax is not None:
            forms += [f"{F}({x}, dim={ax})", f"{F}({x}, {ax})", f"{F}({x}, {ax}, unbiased=False)",
                      f"{F}({x}, dim={ax}, keepdim={kd})", f"{F}({x}, dim={ax}, correction=0)"]
    else:
        forms = [f"{F}({x})"]
        if ax is not None:
            forms += [f"{F}({x}, {ax})", f"{F}({x}, axis={ax})", f"{F}({x}, {ax}, True)"]
    return c.choice(forms)


def stat_method(c: Any, M: str, x: Any) -> str | None:
    ax = _axis(c, x)
    if _torch(c) and not _switch("TORCH_VAR_STD_METHODS"):
        return None
    if _torch(c):
        forms = [f"{x}.{M}()", f"{x}.{M}(unbiased=False)", f"{x}.{M}(correction=0)"]
        if ax is not None:
            forms += [f"{x}.{M}({ax})", f"{x}.{M}(dim={ax}, keepdim=True)"]
        return c.choice(forms)
    forms = [f"{x}.{M}()", f"{x}.{M}(ddof=1)"]
    if ax is not None:
        forms += [f"{x}.{M}({ax})", f"{x}.{M}(axis={ax}, ddof=1)"]
    return c.choice(forms)


def norm(c: Any, F: str, x: Any) -> str:
    ax = _axis(c, x)
    matrix = c.ndim(x) == 2
    if not _switch("NORM_ORDS"):
        key = "dim" if _torch(c) else "axis"
        return c.choice([f"{F}({x})"] + ([f"{F}({x}, {key}={ax})"] if ax is not None else []))
    if _np(c):
        inf = f"{c.mod}.inf"
        forms = [f"{F}({x})", f"{F}({x}, 2)", f"{F}({x}, 1)", f"{F}({x}, ord=1)",
                 f"{F}({x}, {inf})", f"{F}({x}, keepdims=True)"]
        if matrix:
            forms += [f"{F}({x}, 'fro')", f"{F}({x}, 2)", f"{F}({x}, 'nuc')", f"{F}({x}, -{inf})",
                      f"{F}({x}, axis={ax})", f"{F}({x}, ord=1, axis={ax})",
                      f"{F}({x}, axis={ax}, keepdims=True)"]
        return c.choice(forms)
    if _torch(c):
        if F.endswith("vector_norm"):
            forms = [f"{F}({x})", f"{F}({x}, ord=1)", f"{F}({x}, 3)"]
            if ax is not None:
                forms += [f"{F}({x}, dim={ax})", f"{F}({x}, ord=1, dim={ax}, keepdim=True)"]
            return c.choice(forms)
        if F.endswith("linalg.norm"):
            forms = [f"{F}({x})", f"{F}({x}, ord=1)" if not matrix else f"{F}({x}, ord='fro')"]
            if matrix:
                forms += [f"{F}({x}, 2)", f"{F}({x}, ord='nuc')", f"{F}({x}, dim={ax})"]
            return c.choice(forms)
        forms = [f"{F}({x})", f"{F}({x}, p=1)", f"{F}({x}, 1)"]
        if ax is not None:
            forms += [f"{F}({x}, dim={ax})", f"{F}({x}, 2, {ax})", f"{F}({x}, p=1, dim={ax})",
                      f"{F}({x}, dim={ax}, keepdim=True)"]
        return c.choice(forms)
    forms = [f"{F}({x})", f"{F}({x}, ord=1)", f"{F}({x}, ord='euclidean')", f"{F}({x}, 1)"]
    if ax is not None:
        forms += [f"{F}({x}, axis={ax})", f"{F}({x}, ord=1, axis={ax})",
                  f"{F}({x}, axis={ax}, keepdims=True)"]
    if matrix:
        forms += [f"{F}({x}, ord='fro', axis=[0, 1])", f"{F}({x}, ord=2, axis=[0, 1])"]
    return c.choice(forms)


def norm_method(c: Any, M: str, x: Any) -> str:
    ax = _axis(c, x)
    if not _switch("NORM_ORDS"):
        return f"{x}.{M}()" if ax is None or c.chance(2) else f"{x}.{M}(dim={ax})"
    forms = [f"{x}.{M}()", f"{x}.{M}(p=1)", f"{x}.{M}(1)"]
    if ax is not None:
        forms += [f"{x}.{M}(dim={ax})", f"{x}.{M}(2, {ax})"]
    return c.choice(forms)


def cumsum(c: Any, F: str, x: Any) -> str:
    ax = c.axis(x)
    if ax is None:
        return f"{F}({x})"
    if _torch(c):
        return c.choice([f"{F}({x}, dim={ax})", f"{F}({x}, {ax})"])
    if c.args_dialect == "tensorflow":
        return c.choice([f"{F}({x})", f"{F}({x}, axis={ax})", f"{F}({x}, {ax})",
                         f"{F}({x}, axis={ax}, exclusive=True)", f"{F}({x}, reverse=True)"])
    return c.choice([f"{F}({x})", f"{F}({x}, axis={ax})", f"{F}({x}, {ax})"])


def cumsum_method(c: Any, M: str, x: Any) -> str:
    ax = c.axis(x)
    if _torch(c):
        return f"{x}.{M}({0 if ax is None else ax})"
    return f"{x}.{M}()" if ax is None or c.chance(2) else f"{x}.{M}(axis={ax})"


# --- shapes -----------------------------------------------------------------------------------
def reshape(c: Any, F: str, x: Any) -> str:
    shape = c.reshape_target(x)
    if c.args_dialect == "tensorflow":
        return f"{F}({x}, {list(shape)})"
    return c.choice([f"{F}({x}, {shape})", f"{F}({x}, (-1,))", f"{F}({x}, -1)"])


def reshape_method(c: Any, M: str, x: Any) -> str:
    shape = c.reshape_target(x)
    args = ", ".join(str(s) for s in shape)
    return c.choice([f"{x}.{M}({args})", f"{x}.{M}({shape})", f"{x}.{M}(-1)"])


def transpose(c: Any, F: str, x: Any) -> str:
    n = c.ndim(x)
    perm = c.permutation(n)
    if c.prim == "swapaxes" or (F.endswith("transpose") and _torch(c)):
        a, b = (0, 1) if n < 2 or c.chance(2) else (n - 2, n - 1)
        if n == 3 and c.chance(3):
            a, b = 0, 2
        return c.choice([f"{F}({x}, {a}, {b})", f"{F}({x}, {b}, {a})"])
    if c.prim == "moveaxis":
        return f"{F}({x}, 0, -1)" if c.chance(2) else f"{F}({x}, -1, 0)"
    if F.endswith(".t"):
        return f"{F}({x})"
    if _torch(c):                      # torch.permute
        return c.choice([f"{F}({x}, {perm})", f"{F}({x}, dims={perm})"])
    if c.args_dialect == "tensorflow":
        return c.choice([f"{F}({x})", f"{F}({x}, perm={list(perm)})", f"{F}({x}, {list(perm)})"])
    return c.choice([f"{F}({x})", f"{F}({x}, {perm})", f"{F}({x}, axes={perm})"])


def transpose_method(c: Any, M: str, x: Any) -> str:
    n = c.ndim(x)
    perm = c.permutation(n)
    if M in ("t",):
        return f"{x}.t()"
    if M == "permute":
        return c.choice([f"{x}.permute({', '.join(map(str, perm))})", f"{x}.permute({perm})"])
    if M == "swapaxes" or (M == "transpose" and _torch(c)):
        return f"{x}.{M}(0, 1)" if n < 3 or c.chance(2) else f"{x}.{M}(1, 2)"
    return c.choice([f"{x}.{M}()", f"{x}.{M}({', '.join(map(str, perm))})", f"{x}.{M}({perm})"])


def expand_dims(c: Any, F: str, x: Any) -> str:
    ax = c.choice([0, -1, 1]) if c.ndim(x) >= 1 else 0
    if _torch(c):
        return c.choice([f"{F}({x}, {ax})", f"{F}({x}, dim={ax})"])
    return c.choice([f"{F}({x}, {ax})", f"{F}({x}, axis={ax})"])


def expand_dims_method(c: Any, M: str, x: Any) -> str:
    return f"{x}.{M}({c.choice([0, -1, 1]) if c.ndim(x) else 0})"


def squeeze(c: Any, F: str, x: Any) -> str:
    ones = [k for k, n in enumerate(c.shape(x)) if n == 1]
    if not ones:
        x = f"{x}[None]" if c.args_dialect != "tensorflow" else f"tf.expand_dims({x}, 0)"
        ones = [0]
    ax = c.choice(ones)
    if _torch(c):
        return c.choice([f"{F}({x})", f"{F}({x}, {ax})", f"{F}({x}, dim={ax})"])
    if c.args_dialect == "tensorflow":
        return c.choice([f"{F}({x})", f"{F}({x}, axis=[{ax}])", f"{F}({x}, [{ax}])"])
    return c.choice([f"{F}({x})", f"{F}({x}, axis={ax})", f"{F}({x}, {ax})"])


def squeeze_method(c: Any, M: str, x: Any) -> str:
    ones = [k for k, n in enumerate(c.shape(x)) if n == 1]
    if not ones:
        return f"{x}[None].{M}()"
    return c.choice([f"{x}.{M}()", f"{x}.{M}({c.choice(ones)})"])


def join(c: Any, F: str, x: Any) -> str:
    """concatenate and stack: a list or tuple of arrays."""
    y = c.partner(x, "same")
    items = c.choice([f"[{x}, {y}]", f"({x}, {y})", f"[{x}, {x}]", f"[{y}, {x}, {y}]"])
    ax = c.axis(x, extra=1 if c.prim == "stack" else 0)
    if ax is None or c.chance(3):
        return f"{F}({items})"
    key = "dim" if _torch(c) else "axis"
    return c.choice([f"{F}({items}, {key}={ax})", f"{F}({items}, {ax})"])


def split(c: Any, F: str, x: Any) -> str:
    n = c.shape(x)[0] if c.ndim(x) else 1
    parts = c.choice([d for d in (2, 3, 4) if n % d == 0] or [1])
    if F.endswith("unstack"):
        call = f"{F}({x})" if c.chance(2) else f"{F}({x}, axis={c.axis(x) or 0})"
    elif F.endswith("tensor_split") or F.endswith("chunk"):
        call = f"{F}({x}, {parts})" if c.chance(2) else f"{F}({x}, {parts}, dim=0)"
    elif c.args_dialect == "tensorflow":
        call = f"{F}({x}, {parts})" if c.chance(2) else f"{F}({x}, {parts}, axis=0)"
    else:
        call = c.choice([f"{F}({x}, {parts})", f"{F}({x}, [1])", f"{F}({x}, {parts}, axis=0)"])
    return c.choice([f"{call}[0]", f"{call}[-1]"] + (
        [f"sum({call})"] if _switch("BUILTIN_SUM_OF_ARRAYS") else []))


def broadcast_to(c: Any, F: str, x: Any) -> str:
    shape = (2,) + tuple(c.shape(x))
    return f"{F}({x}, {list(shape) if c.args_dialect == 'tensorflow' else shape})"


def tile(c: Any, F: str, x: Any) -> str:
    n = c.ndim(x)
    if c.args_dialect == "tensorflow":
        return f"{F}({x}, {[2] + [1] * (n - 1) if n else [2]})"
    reps = c.choice(["2", "(2,)", f"{tuple([2] + [1] * (n - 1)) if n else (2,)}",
                     "(2, 1)", "(1, 2)"])
    return f"{F}({x}, {reps})"


def tile_method(c: Any, M: str, x: Any) -> str:
    """``x.repeat``: NumPy repeats each element, torch tiles."""
    n = c.ndim(x)
    if _torch(c):
        return c.choice([f"{x}.{M}(2)" if n <= 1 else f"{x}.{M}({', '.join(['2'] + ['1'] * (n - 1))})",
                         f"{x}.{M}({', '.join(['1'] * max(n, 1))})", f"{x}.{M}(2, 1)"])
    if not _switch("NUMPY_REPEAT"):
        return None
    return c.choice([f"{x}.{M}(2)", f"{x}.{M}(2, axis=0)", f"{x}.{M}(3)"])


def flip(c: Any, F: str, x: Any) -> str:
    ax = c.axis(x)
    if _torch(c):
        return c.choice([f"{F}({x}, dims=({ax or 0},))", f"{F}({x}, [{ax or 0}])"])
    if ax is None:
        return f"{F}({x})"
    return c.choice([f"{F}({x})", f"{F}({x}, axis={ax})", f"{F}({x}, {ax})"])


def pad(c: Any, F: str, x: Any) -> str:
    n = c.ndim(x)
    width = c.choice(["1", "(1, 2)", "((0, 1),) * %d" % n if n else "1"] +
                     ([f"((0, 1), (1, 0))"] if n == 2 else []))
    extra = c.choice(["", ", mode='edge'", ", mode='reflect'", ", mode='symmetric'",
                      ", mode='wrap'", ", constant_values=0.5", ", 'constant'"])
    return f"{F}({x}, {width}{extra})"


def take(c: Any, F: str, x: Any) -> str:
    n = c.shape(x)[0] if c.ndim(x) else 1
    idx = c.choice([f"[0, {n - 1}]", f"[{n - 1}, 0, 0]", "[1]" if n > 1 else "[0]", "0"])
    if c.ndim(x) >= 2 and c.chance(2):
        return f"{F}({x}, {idx}, axis={c.choice([0, 1, -1])})"
    return f"{F}({x}, {idx})"


def take_along(c: Any, F: str, x: Any) -> str | None:
    ax = c.axis(x)
    if ax is None:
        return None
    key = "dim" if _torch(c) else "axis"
    order = f"{c.name('argsort')}({x}, {key}={ax})"
    return f"{F}({x}, {order}, {key}={ax})"


def sort(c: Any, F: str, x: Any) -> str:
    ax = c.axis(x)
    call = f"{F}({x})" if ax is None or c.chance(2) else f"{F}({x}, axis={ax})"
    if c.prim == "argsort" and c.ndim(x) == 1:
        return c.choice([call, f"{x}[{call}]"])
    return call


def meshgrid(c: Any, F: str, x: Any) -> str:
    y = c.partner(x, "vector")
    return c.choice([f"{F}({x}, {y})[0]", f"{F}({x}, {y})[1]", f"{F}({x}, {y}, indexing='ij')[0]"])


def where(c: Any, F: str, x: Any) -> str:
    t = c.threshold()
    y = c.partner(x)
    forms = [f"{F}({x} > {t}, {x}, {y})", f"{F}({x} < {t}, {x} ** 2, {x})"]
    if c.args_dialect != "tensorflow":
        forms += [f"{F}({x} > {t}, {x}, 0.0)", f"{F}({x} > {t}, 1.0, {x})"]
    if _np(c) and c.chance(4):
        forms.append(f"{x}[{F}({x} > {t})]")
    return c.choice(forms)


def clip(c: Any, F: str, x: Any) -> str:
    lo, hi = c.choice([("-0.5", "0.5"), ("0.0", "1.0"), ("-1.0", "0.3")])
    if c.args_dialect == "tensorflow":
        return c.choice([f"{F}({x}, {lo}, {hi})",
                         f"{F}({x}, clip_value_min={lo}, clip_value_max={hi})"])
    if _torch(c):
        return c.choice([f"{F}({x}, {lo}, {hi})", f"{F}({x}, min={lo})", f"{F}({x}, max={hi})",
                         f"{F}({x}, min={lo}, max={hi})"])
    return c.choice([f"{F}({x}, {lo}, {hi})", f"{F}({x}, {lo}, None)", f"{F}({x}, None, {hi})",
                     f"{F}({x}, a_min={lo}, a_max={hi})", f"{F}({x}, min={lo}, max={hi})"])


def clip_method(c: Any, M: str, x: Any) -> str:
    lo, hi = c.choice([("-0.5", "0.5"), ("0.0", "1.0")])
    if _torch(c):
        return c.choice([f"{x}.{M}({lo}, {hi})", f"{x}.{M}(min={lo})", f"{x}.{M}(max={hi})"])
    return c.choice([f"{x}.{M}({lo}, {hi})", f"{x}.{M}(min={lo})", f"{x}.{M}({lo}, None)"])


def flatten(c: Any, F: str, x: Any) -> str:
    if _torch(c) and c.ndim(x) >= 2 and c.chance(2):
        return c.choice([f"{F}({x}, 1)", f"{F}({x}, start_dim=1)", f"{F}({x}, 0, -1)"])
    return f"{F}({x})"


def flatten_method(c: Any, M: str, x: Any) -> str:
    if _torch(c) and M == "flatten" and c.ndim(x) >= 2 and c.chance(2):
        return f"{x}.{M}(1)"
    return f"{x}.{M}()"


# --- making arrays ----------------------------------------------------------------------------
def creation(c: Any, F: str, x: Any) -> str | None:
    """A constant array, combined with ``x`` the way people use one (``x * np.ones(4)``)."""
    shape = tuple(c.shape(x))
    size = int(shape[-1]) if shape else 3
    prim = c.prim
    dt = c.float_dtype_kw()
    if prim in ("zeros", "ones"):
        arg = c.choice([str(size) if len(shape) <= 1 else str(shape), str(shape) if shape else "()",
                        f"{x}.shape" if shape else "()"])
        if c.args_dialect == "tensorflow":
            arg = str(list(shape))
        const = f"{F}({arg}{dt})"
    elif prim == "full":
        fill = c.const()
        if c.args_dialect == "tensorflow":
            const = f"{F}({list(shape)}, {fill})"
        else:
            const = f"{F}({shape if shape else '()'}, {fill}{dt})"
    elif prim in ("zeros_like", "ones_like"):
        const = f"{F}({x}{dt if c.chance(3) else ''})"
    elif prim == "full_like":
        const = f"{F}({x}, {c.const()})"
    elif prim == "arange":
        const = c.choice([f"{F}({size})", f"{F}({size}{dt})", f"{F}(1, {size + 1})",
                          f"{F}(0.0, {size / 2}, 0.5)"])
    elif prim == "linspace":
        const = f"{F}(0.0, 1.0, {size})" if not _torch(c) else f"{F}(0, 1, {size}{dt})"
    elif prim == "eye":
        const = f"{F}({size}{dt})"
        return c.choice([f"{x} @ {const}", f"{const} * {x}" if len(shape) == 2 else f"{x} @ {const}"])
    else:
        return None
    op = c.choice(["*", "+", "-"])
    c.mark(const)        # an int array (np.full(..., 2), np.arange(4)) is worth knowing
    return c.choice([f"{x} {op} {const}", f"{const} {op} {x}"])


def array(c: Any, F: str, x: Any) -> str:
    """np.array / np.asarray / torch.tensor / tf.constant of a value that carries a gradient:
    the identity, or a new array of scalars (``np.array([x[0], x[1]])``)."""
    forms = [f"{F}({x})"]
    if c.ndim(x) >= 1 and c.shape(x)[0] >= 2:
        forms.append(f"{F}([{x}[0], {x}[1]])")
        forms.append(f"{F}([{x}[1], {x}[0] * 2.0])")
    if _np(c):
        forms.append(f"{F}({x}, dtype=float)")
    if c.args_dialect == "tensorflow":
        forms.append(f"{F}({x}, dtype=tf.float64)")
    return c.choice(forms)


def astype(c: Any, M: str, x: Any) -> str:
    from tests.hardening.people import switches
    if M == "float" and not switches.MIXED_PRECISION:     # float32 meeting float64: open
        M = "double"
    if M in ("float", "double"):
        return f"{x}.{M}()"
    return c.choice([f"{x}.{M}({c.mod}.float64)", f"{x}.{M}(float)", f"{x}.{M}('float64')"]
                    + ([f"{x}.{M}({c.mod}.float32)"] if switches.MIXED_PRECISION else []))


def copy_method(c: Any, M: str, x: Any) -> str:
    if M == "item":
        return f"{c.scalar_of(x)}.item()"
    return f"{x}.{M}()"


# --- linear algebra ---------------------------------------------------------------------------
def linalg(c: Any, F: str, x: Any) -> str | None:
    a = c.square_matrix(x)
    if a is None:
        return None
    prim = c.prim
    if prim == "slogdet":
        if _torch(c):
            return c.choice([f"{F}({a})[1]", f"{F}({a}).logabsdet"])
        return c.choice([f"{F}({a})[1]", f"{F}({a})[0] * {F}({a})[1]"])
    if prim == "solve":
        b = c.solve_rhs(a)
        return c.choice([f"{F}({a}, {b})", f"{F}({a}, {a})"])
    return f"{F}({a})"


def einsum(c: Any, F: str, x: Any) -> str | None:
    n = c.ndim(x)
    if n == 1:
        y = c.partner(x, "same")
        eq = c.choice([("'i,i->'", f"{x}, {y}"), ("'i,j->ij'", f"{x}, {y}"), ("'i->'", f"{x}")])
    elif n == 2:
        eq = c.choice([("'ij->'", f"{x}"), ("'ij->ji'", f"{x}"), ("'ij,ij->'", f"{x}, {x}"),
                       ("'ij,kj->ik'", f"{x}, {x}"), ("'ij->j'", f"{x}"),
                       ("'ij,kj'", f"{x}, {x}"), ("'...j,kj->...k'", f"{x}, {x}"),
                       ("'ij,j->i'", f"{x}, {x}[0]"), ("'ij,ij,ij->'", f"{x}, {x}, {x}")])
        if c.shape(x)[0] == c.shape(x)[1]:
            eq = c.choice([eq, ("'ii->'", f"{x}"), ("'ii->i'", f"{x}")])
    else:
        return None
    return f"{F}({eq[0]}, {eq[1]})"


def softmax(c: Any, F: str, x: Any) -> str:
    ax = c.axis(x)
    if _torch(c):
        return c.choice([f"{F}({x}, dim={ax if ax is not None else 0})",
                         f"{F}({x}, {ax if ax is not None else 0})"])
    if ax is None or c.chance(3):
        return f"{F}({x})"
    return f"{F}({x}, axis={ax})"


def softmax_method(c: Any, M: str, x: Any) -> str:
    ax = c.axis(x)
    return f"{x}.{M}({0 if ax is None else ax})" if c.chance(2) else f"{x}.{M}(dim=-1)"


def one_hot(c: Any, F: str, x: Any) -> str | None:
    if c.ndim(x) != 1:
        return None
    n = c.shape(x)[0]
    index = f"{c.name('argmax')}({x})"
    if c.args_dialect == "tensorflow":
        return f"{x} * {F}({index}, {n}, dtype=tf.float64)"
    return f"{x} * {F}({index}, {n})"


# --- shape queries, builtins ------------------------------------------------------------------
def shape_query(c: Any, F: str, x: Any) -> str | None:
    """np.shape / np.size / np.ndim: numbers, used to scale an array."""
    q = f"{F}({x})" + ("[0]" if c.prim == "shape" and c.ndim(x) else "")
    if c.prim == "shape" and not c.ndim(x):
        return None
    return c.choice([f"{x} / {q}", f"{x} * {q}"])


def shape_method(c: Any, M: str, x: Any) -> str | None:
    if M == "size" and _torch(c):
        q = c.choice([f"{x}.size(0)", f"{x}.size()[0]", f"{x}.size(-1)"]) if c.ndim(x) else None
    elif M in ("numel", "dim"):
        q = f"{x}.{M}()"
    else:
        return None
    return None if q is None else f"{x} / {q}"


def shape_property(c: Any, P: str, x: Any) -> str | None:
    if P == "shape":
        return f"{x} / {x}.shape[0]" if c.ndim(x) else None
    if P in ("ndim", "size"):
        return f"{x} * {x}.{P}"
    if P == "dtype":
        return f"{x} + {c.name('zeros_like')}({x}, dtype={x}.dtype)" if _np(c) else None
    if P in ("T", "mT"):
        return f"{x}.{P}"
    if P == "real":
        return f"{x}.real"
    return None


def sum_list(c: Any, F: str, x: Any) -> str:
    y = c.partner(x, "same")
    return c.choice([f"{F}({x})", f"{F}([{x}, {y}])", f"{F}(({x}, {x} * 2.0, {y}))",
                     f"{F}({x}, 0.5)"])


def builtin_extremum(c: Any, F: str, x: Any) -> str:
    """builtins max/min: two numbers, three, an iterable, or one array (iterated)."""
    from tests.hardening.people import switches
    a = c.scalar_of(x)
    b = c.scalar_of(c.partner(x, "any"))
    t = c.threshold()
    if not switches.BUILTIN_MAX_MIN_OF_MANY:
        return c.choice([f"{F}({a}, {b})", f"{F}({a}, {t})"])
    return c.choice([f"{F}({a}, {b})", f"{F}({a}, {t})", f"{F}({a}, {b}, {t})",
                     f"{F}([{a}, {b}])", f"{F}(({a}, {b}, {t}))", f"{F}({x})" if c.ndim(x) == 1
                     else f"{F}({a}, {b})", f"{F}({a}, {b}, key=abs)"])


def builtin_unary(c: Any, F: str, x: Any) -> str:
    if F == "float":
        return f"float({c.scalar_of(x)})"
    if F == "pow":
        return c.choice([f"pow({x}, 2)", f"pow({x}, 3)"])
    return f"{F}({x})"


def math_scalar(c: Any, F: str, x: Any) -> str:
    """math.* take Python numbers: people pass an element or a 0-d value."""
    a = c.scalar_of(x)
    if c.prim in ("arctan2", "power"):
        return f"{F}({a}, {c.choice(['2.0', '0.5', c.scalar_of(c.partner(x, 'any'))])})" \
            if c.prim == "arctan2" else f"{F}({a}, 2)"
    return f"{F}({a})"


FAMILIES: dict[str, tuple[Family | None, Family | None]] = {}
for _p in UNARY:
    FAMILIES[_p] = (unary, unary_method)
for _p in BINARY:
    FAMILIES[_p] = (binary, binary_method)
for _p in REDUCE:
    FAMILIES[_p] = (reduce, reduce_method)
FAMILIES.update({
    "matmul": (matmul, matmul_method), "dot": (matmul, matmul_method), "outer": (outer, None),
    "argmax": (argreduce, argreduce_method), "argmin": (argreduce, argreduce_method),
    "var": (stat, stat_method), "std": (stat, stat_method), "norm": (norm, norm_method),
    "cumsum": (cumsum, cumsum_method),
    "reshape": (reshape, reshape_method), "transpose": (transpose, transpose_method),
    "swapaxes": (transpose, transpose_method), "moveaxis": (transpose, None),
    "expand_dims": (expand_dims, expand_dims_method), "squeeze": (squeeze, squeeze_method),
    "concatenate": (join, None), "stack": (join, None), "split": (split, None),
    "unstack": (split, None), "broadcast_to": (broadcast_to, None), "tile": (tile, tile_method),
    "flip": (flip, None), "pad": (pad, None), "take": (take, None),
    "take_along_axis": (take_along, None), "sort": (sort, None), "argsort": (sort, None),
    "meshgrid": (meshgrid, None), "where": (where, None), "clip": (clip, clip_method),
    "flatten": (flatten, flatten_method),
    **{p: (creation, None) for p in
       "zeros ones full zeros_like ones_like full_like arange linspace eye".split()},
    "array": (array, None), "astype": (None, astype),
    "inv": (linalg, None), "det": (linalg, None), "slogdet": (linalg, None),
    "solve": (linalg, None), "einsum": (einsum, None),
    "softmax": (softmax, softmax_method), "log_softmax": (softmax, softmax_method),
    "one_hot": (one_hot, None),
    "shape": (shape_query, shape_method), "size": (shape_query, shape_method),
    "ndim": (shape_query, shape_method), "dtype": (None, None),
    "sum_list": (sum_list, None),
})
FAMILIES["copy"] = (unary, copy_method)


def family_of(prim: str) -> tuple[Family | None, Family | None]:
    return FAMILIES.get(prim, (unary, unary_method))


# --- calls outside the table --------------------------------------------------------------------
#: Calls people write that gradlab's table does not list, per dialect: (callee, arity). The
#: builder checks each against the table at run time (a name that joins the table is drawn as
#: a table spelling instead) and against the installed framework (a missing one is skipped).
OFF_TABLE: dict[str, list[tuple[str, int]]] = {
    "numpy": [(f"np.{n}", k) for n, k in [
        ("hypot", 2), ("cbrt", 1), ("logaddexp", 2), ("logaddexp2", 2), ("exp2", 1),
        ("sinc", 1), ("fabs", 1), ("copysign", 2), ("fmax", 2), ("fmin", 2), ("fmod", 2),
        ("heaviside", 2), ("deg2rad", 1), ("radians", 1), ("rint", 1), ("trunc", 1),
        ("float_power", 2), ("remainder", 2), ("positive", 1), ("conj", 1), ("real", 1),
        ("diff", 1), ("cumprod", 1), ("trace", 1), ("diag", 1), ("triu", 1), ("tril", 1),
        ("kron", 2), ("median", 1), ("nansum", 1), ("nanmean", 1), ("average", 1),
        ("ptp", 1), ("roll", 1), ("repeat", 1), ("vstack", 2), ("hstack", 2),
        ("atleast_1d", 1), ("atleast_2d", 1), ("inner", 2), ("vdot", 2), ("tensordot", 2),
        ("linalg.eigh", 1), ("linalg.svd", 1), ("linalg.cholesky", 1), ("polyval", 2),
        ("nan_to_num", 1), ("maximum.reduce", 1), ("add.reduce", 1), ("cov", 1)]] + [
        ("scipy.special.gamma", 1), ("scipy.special.xlogy", 2), ("scipy.special.log_softmax", 1),
        ("scipy.special.logit", 1), ("math.erfc", 1), ("math.hypot", 2), ("math.gamma", 1),
        ("math.radians", 1), ("math.fsum", 1)],
    "torch": [(f"torch.{n}", k) for n, k in [
        ("logaddexp", 2), ("cumprod", 1), ("trace", 1), ("diag", 1), ("triu", 1),
        ("erfinv", 1), ("lerp", 3), ("hypot", 2), ("rsqrt", 1), ("exp2", 1), ("sinc", 1),
        ("frac", 1), ("trunc", 1), ("fmod", 2), ("remainder", 2), ("kron", 2), ("diff", 1),
        ("roll", 1), ("median", 1), ("sort", 1), ("argsort", 1), ("nan_to_num", 1),
        ("vstack", 2), ("hstack", 2), ("atleast_2d", 1), ("xlogy", 2), ("logit", 1),
        ("special.logit", 1), ("special.xlogy", 2), ("square", 1), ("sgn", 1),
        ("clamp_min", 1), ("cdist", 2), ("logdet", 1), ("addmm", 3)]] + [
        (f"F.{n}", k) for n, k in [
        ("gelu", 1), ("silu", 1), ("elu", 1), ("leaky_relu", 1), ("mse_loss", 2),
        ("l1_loss", 2), ("normalize", 1), ("softsign", 1), ("hardtanh", 1),
        ("logsigmoid", 1), ("tanhshrink", 1), ("smooth_l1_loss", 2), ("cosine_similarity", 2),
        ("softmin", 1), ("relu6", 1), ("mish", 1), ("selu", 1), ("celu", 1), ("pad", 1)]],
    "jax": [(f"jnp.{n}", k) for n, k in [
        ("hypot", 2), ("cbrt", 1), ("logaddexp", 2), ("exp2", 1), ("sinc", 1), ("fabs", 1),
        ("diff", 1), ("cumprod", 1), ("trace", 1), ("diag", 1), ("kron", 2), ("median", 1),
        ("roll", 1), ("repeat", 1), ("vstack", 2), ("inner", 2), ("heaviside", 2),
        ("nan_to_num", 1), ("average", 1), ("remainder", 2)]] + [
        (f"jax.nn.{n}", k) for n, k in [("gelu", 1), ("silu", 1), ("elu", 1),
                                        ("leaky_relu", 1), ("log_sigmoid", 1),
                                        ("standardize", 1), ("celu", 1)]] + [
        ("jax.scipy.special.logit", 1), ("jax.scipy.special.xlogy", 2)],
    "tensorflow": [(f"tf.{n}", k) for n, k in [
        ("math.reduce_euclidean_norm", 1), ("math.log_sigmoid", 1), ("nn.elu", 1),
        ("nn.leaky_relu", 1), ("nn.gelu", 1), ("nn.silu", 1), ("math.squared_difference", 2),
        ("math.rsqrt", 1), ("math.cumprod", 1), ("linalg.trace", 1), ("linalg.diag_part", 1),
        ("reverse", 1), ("math.xlogy", 2), ("math.divide_no_nan", 2), ("math.erfc", 1),
        ("math.softsign", 1), ("sort", 1), ("math.reciprocal_no_nan", 1), ("math.log", 1),
        ("math.floormod", 2), ("math.mod", 2), ("cast", 1), ("math.l2_normalize", 1),
        ("math.logical_xor", 2), ("keras.activations.swish", 1), ("math.polyval", 2)]],
}
OFF_TABLE["autograd"] = [(c, k) for c, k in OFF_TABLE["numpy"] if c.startswith("np.")]

#: Templates of calls that need particular arguments (``{x}``, ``{y}``: operands).
OFF_TABLE_TEMPLATES: dict[str, list[str]] = {
    "numpy": ["np.polyval([1.0, -2.0, 0.5], {x})", "np.repeat({x}, 2)", "np.roll({x}, 1)",
              "np.percentile({x}, 50)", "np.tensordot({x}, {y}, axes=1)",
              "np.average({x}, weights=np.abs({x}) + 1.0)", "np.linalg.matrix_power({x}, 2)",
              "np.apply_along_axis(np.sum, 0, {x})", "np.vectorize(math.sin)({x})",
              "np.frompyfunc(math.sin, 1, 1)({x}).astype(float)", "np.interp(0.3, [0.0, 1.0], [{x}[0], 1.0])"],
    "torch": ["{x}.to(torch.float64)", "{x}.type(torch.float64)", "{x}.add({y})", "{x}.sub({y})",
              "{x}.mul({y})", "{x}.div(2.0)", "{x}.neg()", "{x}.exp().mean()", "{x}.expand(2, *{x}.shape)",
              "{x}.diagonal()", "{x}.trace()", "torch.lerp({x}, {y}, 0.5)", "F.pad({x}, (1, 1))",
              "torch.roll({x}, 1)", "{x}.contiguous()", "{x}.masked_fill({x} > 0.5, 0.0)",
              "{x}.index_select(0, torch.tensor([0]))", "{x}.narrow(0, 0, 1)", "torch.gather({x}, 0, torch.zeros_like({x}, dtype=torch.long))",
              "torch.nan_to_num({x})", "{x}.new_ones({x}.shape) * {x}", "{x}.rsqrt()", "{x}.reciprocal()", "{x}.neg().exp()"],
    "jax": ["{x}.at[0].set(0.0)", "{x}.at[0].add({x}[1])", "{x}.at[-1].multiply(2.0)",
            "jnp.roll({x}, 1)", "jax.lax.select({x} > 0, {x}, -{x})",
            "jnp.polyval(jnp.array([1.0, -2.0, 0.5]), {x})", "jax.nn.normalize({x})",
            "jnp.repeat({x}, 2)"],
    "tensorflow": ["tf.cast({x}, tf.float64)", "tf.math.reduce_euclidean_norm({x})",
                   "tf.pad({x}, [[1, 1]] * len({x}.shape))", "tf.reverse({x}, [0])",
                   "tf.boolean_mask({x}, {x} > 0.0)", "tf.gather_nd({x}, [[0] * len({x}.shape)])",
                   "tf.math.segment_sum({x}, tf.zeros([{x}.shape[0]], dtype=tf.int32))",
                   "tf.Variable({x}) * 1.0", "tf.identity_n([{x}])[0]",
                   "tf.math.multiply_no_nan({x}, {y})", "tf.keras.activations.relu({x})"],
}
OFF_TABLE_TEMPLATES["autograd"] = [t for t in OFF_TABLE_TEMPLATES["numpy"]]
