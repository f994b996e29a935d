"""What a call of a generated function must satisfy, checked before (or instead of) computing:
arguments that have a gradient, a seed or tangent of the right shape, and the arguments the
function takes. Each failure is a clear error naming what to change, never a failure inside
the generated code (or, worse, a broadcast into the gradient of something else)."""
from __future__ import annotations

import inspect
import linecache
import re
from typing import Any

import numpy as np

from .errors import CallError, GradlabError
from .rerun import run_original


def shape_of(value: Any) -> tuple[Any, ...] | None:
    """The shape of an output or a seed: () for a number, None when there is none."""
    if value is None:
        return None
    shape = getattr(value, "shape", None)
    if shape is None:
        if isinstance(value, (list, tuple)):
            try:
                return tuple(np.shape(value))
            except Exception:
                return None
        return ()
    try:
        return tuple(shape)
    except TypeError:       # a TensorFlow shape of unknown rank
        return None


def size_of(shape: tuple[Any, ...]) -> int | None:
    size = 1
    for d in shape:
        if d is None:
            return None
        size *= int(d)
    return size


def require_seed_shape(df: Any, seed: Any, value_shape: Any) -> None:
    """The seed is the output's gradient, so it has the output's shape (a number does for a
    scalar output): a seed of another shape would broadcast into a gradient of something else."""
    seed_shape = shape_of(seed)
    if value_shape is None or seed_shape is None or seed_shape == value_shape:
        return
    if size_of(seed_shape) == 1 and size_of(value_shape) == 1 and len(seed_shape) <= len(
            value_shape):    # (a number for an output of shape (1,); not (1, 1) for a number:
        return               # its axes would broadcast into the gradient)
    if None in seed_shape or None in value_shape:   # symbolic sizes (tf.function)
        return
    raise GradlabError(
        f"seed= has shape {seed_shape}, but {getattr(df.fn, '__qualname__', 'the function')} "
        f"returns a value of shape {value_shape}: the seed is the gradient of the output and "
        f"has its shape")


def require_gradient_per_input(df: Any, grads: Any, args: tuple[Any, ...]) -> None:
    """An edited backward pass returns one gradient per ``wrt``, each shaped like its input:
    a None, a missing gradient or a gradient of another shape would otherwise be broadcast
    into a plausible array (``return None`` came back as NaN)."""
    name = getattr(df, "name", "the edited function")
    several = df.many and len(df.wrt) > 1       # (wrt=(0,): the code returns the one)
    if several and (not isinstance(grads, (tuple, list)) or len(grads) != len(df.wrt)):
        count = len(grads) if isinstance(grads, (tuple, list)) else 1
        raise GradlabError(
            f"{name} returns {count} value{'s' * (count != 1)}, but it is the gradient with "
            f"respect to {', '.join(df.wrt)}: return {len(df.wrt)} gradients in that order "
            f"(return {', '.join('d' + w for w in df.wrt)})")
    index = {n: i for i, n in enumerate(df.params)}
    for g, w in zip(grads if several else (grads,), df.wrt):
        x = args[index[w]] if index.get(w, len(args)) < len(args) else None
        if x is None or isinstance(x, (list, tuple, dict)) or callable(x):
            continue     # (containers and models: their own structure, checked where built)
        if g is None:
            raise GradlabError(f"{name} returns None as the gradient of {w}: return an array "
                               f"shaped like {w}")
        want, got = shape_of(x), shape_of(g)
        if want is not None and got is not None and want != got and not (
                got == () and size_of(want) == 1):
            raise GradlabError(f"{name} returns a gradient of shape {got} for {w}, whose shape "
                               f"is {want}: the gradient of an input has the input's shape")


def explain_call_error(df: Any, error: Exception, args: tuple[Any, ...],
                        seed: Any, kwargs: dict[str, Any]) -> None:
    """Say what went wrong when a call failed because of how it was made, not inside: the
    arguments do not fit the gradient's parameters, or a given seed has the wrong shape
    (found by running the original function for its output's shape). Returns when neither."""
    tb = error.__traceback__
    if isinstance(error, TypeError) and tb is not None and tb.tb_next is None:
        raise CallError(f"{error}: {df.name} takes the arguments of "
                        f"{getattr(df.fn, '__qualname__', 'the function')} "
                        f"({', '.join(df.params)}); the output's gradient, if any, goes in "
                        f"seed=... by keyword") from None
    if seed is not None:
        original = run_original(df, args, kwargs)
        if original.ran:
            require_seed_shape(df, seed, shape_of(original.value))


#: How TensorFlow says that an operation met two dtypes (NumPy would have promoted them).
_TF_DTYPE_CLASHES = (
    re.compile(r"expected to be a (?P<a>\w+) tensor but is a (?P<b>\w+) tensor"),
    re.compile(r"Cannot convert (?P<b>\S+) to EagerTensor of dtype (?P<a>\w+)"),
    re.compile(r"must have the same dtype, got tf\.(?P<a>\w+) != tf\.(?P<b>\w+)"),
)
#: How PyTorch says that an operation met a NumPy array beside a tensor.
_NUMPY_BESIDE_TENSOR = re.compile(r"must be Tensor, not numpy\.ndarray|"
                                  r"operand type\(s\) for .*'numpy\.ndarray' and 'Tensor'|"
                                  r"operand type\(s\) for .*'Tensor' and 'numpy\.ndarray'")


def numpy_arrays_from_outside(fn: Any) -> list[str]:
    """The names of the NumPy arrays ``fn`` reads from its module or its closure."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return []
    found = [n for n in code.co_names if isinstance(fn.__globals__.get(n), np.ndarray)]
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            if isinstance(cell.cell_contents, np.ndarray):
                found.append(name)
        except ValueError:      # a cell not filled yet
            pass
    return found


#: How TensorFlow and PyTorch say that an operation met a bool tensor (NumPy counts True as 1).
_BOOL_ARITHMETIC = re.compile(r"Value for attr 'T' of bool is not in the list|"
                              r"Subtraction, the `-` operator, with a bool tensor")


def explain_framework_error(df: Any, error: Exception) -> None:
    """An error a framework raised inside the generated code. A dtype clash that TensorFlow
    refuses where NumPy would promote (float32 times float64, an int array times 1.5) is
    raised as a GradlabError at the user's line, with the cast to write; any other error gets
    a note saying where in the generated code, and from which line of the user's, it came.
    Returns when it only noted."""
    where = generated_line(df, error)
    if type(error).__name__ in ("InvalidArgumentError", "TypeError", "RuntimeError") and \
            where and _BOOL_ARITHMETIC.search(str(error)):
        torch = type(error).__name__ == "RuntimeError"
        raise GradlabError(
            f"{'PyTorch subtracts' if torch else 'TensorFlow computes'} nothing on bool tensors "
            f"(NumPy counts True as 1 and False as 0){where}: cast the bool value on that line, "
            f"{'m.to(x.dtype)' if torch else 'tf.cast(m, x.dtype)'}, or pass NumPy arrays"
        ) from error
    if type(error).__name__ in ("InvalidArgumentError", "TypeError") and where:
        for pattern in _TF_DTYPE_CLASHES:
            clash = pattern.search(str(error))
            if clash is not None and (type(error).__module__.startswith("tensorflow")
                                      or _framework_of(error).startswith("tensorflow")):
                raise GradlabError(
                    f"TensorFlow does not mix {clash.group('a')} with {clash.group('b')} in one "
                    f"operation, as NumPy does (it promotes both to the wider dtype){where}: "
                    f"cast one operand to the other's dtype on that line (tf.cast(w, x.dtype), "
                    f"or a float literal such as 1.0 for a count), or pass NumPy arrays"
                ) from error
    if isinstance(error, TypeError) and _NUMPY_BESIDE_TENSOR.search(str(error)):
        outside = numpy_arrays_from_outside(getattr(df, "fn", None))
        name = outside[0] if outside else "W"
        raise GradlabError(
            f"PyTorch does not mix a NumPy array with a tensor in one operation{where}: the "
            f"NumPy array{'s' if len(outside) > 1 else ''} "
            f"{', '.join(outside) if outside else 'there'} from outside the function meet"
            f"{'' if len(outside) > 1 else 's'} torch tensors, as in your function itself; "
            f"make {'them tensors' if len(outside) > 1 else 'it a tensor'} "
            f"({name} = torch.as_tensor({name})), or pass NumPy arrays") from error
    note = f"gradlab: raised{where}"
    add_note = getattr(error, "add_note", None)      # Python 3.11 and later
    if where and add_note is not None and note not in getattr(error, "__notes__", ()):
        add_note(note)


def _framework_of(error: BaseException) -> str:
    """The module of the innermost frame that raised ``error`` (a TypeError from TensorFlow's
    own code is told from one of the user's by where it came from)."""
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_globals.get("__name__", "") if tb is not None else ""


def generated_line(df: Any, error: BaseException) -> str:
    """`` at its line N (`code`), from your line L: `text` `` for the frame of generated code
    an exception came from."""
    frame = None
    tb = error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith("<gradlab:"):
            frame = (tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    if frame is None:
        return ""
    filename, lineno = frame
    code = linecache.getline(filename, lineno).strip()
    where = f" at line {lineno} of its code (`{code}`)"
    variants = getattr(getattr(df, "_transform", None), "variants", {}).values()
    source = next((v.source for v in variants if v.filename == filename), None)
    if source is not None and source.line_map.get(lineno):
        where += f", from your line {source.line_map[lineno]}: `{source.line_text[lineno]}`"
    return where


def _refuse_number_conversions(df: Any, name: str, x: Any) -> None:
    """``float(s)`` or ``s.item()`` of a value carrying a gradient, on torch's or TensorFlow's
    tensors: the function's value depends on it and gradlab differentiates through it (as
    differences of the function do), while those frameworks' own autodiff reads a constant
    there. The code does not say which is meant: refused, with both ways to write it."""
    framework = type(x).__module__.split(".")[0]
    if framework not in ("torch", "tensorflow"):
        return
    lines: list[Any] = []
    for fn in (df, getattr(df, "gradient", None)):      # (hvp: its gradient's lines)
        main = getattr(getattr(fn, "_transform", None), "main", None)
        lines += [o for o in getattr(main, "conversions", ()) if o not in lines]
    if not lines:
        return
    origin = lines[0]
    kind = "torch" if framework == "torch" else "TensorFlow"
    raise GradlabError(
        f"line {origin.lineno}: `{origin.text}` makes a Python number of a value that carries "
        f"a gradient from {name}. {kind}'s autodiff reads that number as a constant, while the "
        f"function's value depends on it (gradlab would differentiate through it, as "
        f"differences of the function do), and the code does not say which you mean: keep it "
        f"a tensor (drop float()/.item()) to differentiate through it, or stop the gradient "
        f"on purpose ({'s.detach()' if framework == 'torch' else 'tf.stop_gradient(s)'})")


def _refuse_without_numbers(name: str, x: Any) -> None:
    """Text, None and arrays of Python objects hold no numbers to differentiate with respect
    to (a string's "gradient" came back as an empty string)."""
    kind = dtype_name(x) if hasattr(x, "shape") else None
    if isinstance(x, (str, bytes)) or x is None:
        what = "None" if x is None else f"a {type(x).__name__} ({x!r:.40})"
    elif kind == "object" or (kind or "").startswith(("str", "bytes")):
        what = f"an array of {kind}"
    else:
        return
    raise GradlabError(f"{name} is {what}: there is nothing to differentiate with respect to. "
                       f"Name a floating-point argument in wrt= (its index or its name)"
                       + (", or convert the array: np.asarray(x, dtype=np.float64)"
                          if kind == "object" else ""))


def refuse_without_gradient(df: Any, args: tuple[Any, ...]) -> None:
    """Integer and bool arrays have no gradient of their own dtype (it would be cut to whole
    numbers): refused, as JAX does, with the cast to write. A Python int is promoted: its
    gradient is a float. (Dicts and other containers never come here: their calls are
    specialised for their structure, see :mod:`gradlab.pytrees`.)"""
    index = {n: i for i, n in enumerate(df.params)}
    for w in df.wrt:
        i = index.get(w)
        if i is None or i >= len(args):
            continue
        x = args[i]
        _refuse_without_numbers(w, x)
        _refuse_number_conversions(df, w, x)
        if isinstance(x, complex) or (dtype_name(x) or "").startswith("complex"):
            raise GradlabError(
                f"{w} is complex: gradlab differentiates with respect to real inputs (a complex "
                f"gradient needs a convention, holomorphic or not, that gradlab does not "
                f"pick for you). Pass the real and imaginary parts as two real arguments")
        if isinstance(x, bool):
            kind = "a bool"
        else:
            name = dtype_name(x)
            if name is None or not (name.startswith(("int", "uint")) or name.startswith("bool")):
                continue
            kind = f"an array of {name}"
        raise GradlabError(
            f"{w} is {kind}: gradients are taken with respect to floating-point inputs (an "
            f"integer gradient would be cut to whole numbers). Cast it first: "
            f"{w}.astype(np.float64) in NumPy or JAX, {w}.double() in torch, "
            f"tf.cast({w}, tf.float64) in TensorFlow, float({w}) for a number")


def dtype_name(x: Any) -> str | None:
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        return None
    name = getattr(dtype, "name", None)
    if not isinstance(name, str):
        name = str(dtype).rpartition(".")[2]
    return name


def require_tangent_shapes(df: Any, primals: list[Any],
                            tangents: tuple[Any, ...]) -> None:
    """A tangent (jvp) or vector (hvp) has the shape of the argument it goes with: said
    before computing, naming both, instead of a broadcast error inside (or a silent
    broadcast)."""
    what = "v" if df.mode == "hvp" else "tangent"
    for name, t in zip(df.wrt, tangents):
        i = df.params.index(name) if name in df.params else len(primals)
        if i >= len(primals):
            continue
        want, got = shape_of(primals[i]), shape_of(t)
        if want == got or want is None or got is None or None in want or None in got:
            continue
        if size_of(want) == 1 and size_of(got) == 1 and (not want or not got):
            continue     # a number for a one-element array, or the other way round
        raise GradlabError(f"the {what} for {name} has shape {got}, but {name} has shape "
                           f"{want}: {df.name} needs a {what} shaped like {name}")


def several_outputs(name: str, kind: str, count: int) -> str:
    """The refusal for a function returning several outputs without a seed for them."""
    return (f"{name} returns a {kind} of {count} outputs, not a scalar: pass the gradient of "
            f"each output as seed=(...), e.g. seed=({', '.join(['1.0'] * count)}), to "
            f"differentiate their weighted sum, or differentiate one output as a function of "
            f"its own")


def require_call(df: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """The arguments fit the function differentiated (and a jvp's or hvp's call ends with
    its tangent), said in the user's terms, not as the generated function's TypeError; an
    integer input is refused as the gradient's own call refuses it."""
    fn = df.fn
    primals = args
    if df.mode in ("jvp", "hvp"):
        what = "v" if df.mode == "hvp" else "tangent"
        if not args:
            raise GradlabError(f"{df.name} takes {fn.__qualname__}'s arguments, then the "
                               f"{what}: {df.name}(*args, {what})")
        primals = args[:-1]
    try:
        inspect.signature(fn).bind(*primals, **kwargs)
    except TypeError as e:
        tail = ", then the tangent" if df.mode == "jvp" else ", then v" if (
            df.mode == "hvp") else ""
        raise GradlabError(f"{df.name}: {e}; it takes the arguments of "
                           f"{fn.__qualname__}{inspect.signature(fn)}{tail}") from None
    refuse_without_gradient(df, primals)


def require_scalar_value(df: Any, value: Any) -> None:
    """Without a seed the function must return a scalar (None: an edited gradient that no
    longer computes the value)."""
    shape = getattr(value, "shape", None)
    if shape and any(d != 1 for d in tuple(shape)):
        raise GradlabError(
            f"{getattr(df.fn, '__qualname__', 'the function')} returns a value of shape "
            f"{tuple(shape)}, not a scalar: pass its gradient as seed=..., e.g. "
            f"{df.name}(..., seed=ones_like(output))")
