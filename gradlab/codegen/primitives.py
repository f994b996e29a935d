"""What each framework's functions mean as gradlab primitives: the data behind ``resolve``.

A user may write ``np.tanh``, ``math.tanh``, ``torch.tanh``, ``jnp.tanh``, ``tf.math.tanh`` or
``x.tanh()``; all of them are the primitive ``tanh`` with the canonical signature of
:mod:`gradlab.tensor.spec`. Each entry maps a dotted path (spelled from the root module's real
name, so aliases like ``np``/``jnp``/``F`` do not matter) to the primitive and, where the
framework names its arguments differently (``dim``/``keepdim``), how to rename them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Meaning:
    prim: str
    rename: dict[str, str] = field(default_factory=dict)   # framework kwarg -> canonical kwarg
    defaults: dict[str, Any] = field(default_factory=dict)  # canonical defaults that differ
    varargs_to: str = ""                                    # collect *args into this parameter
    drop: tuple[str, ...] = ()                              # kwargs with no meaning here (name=)


# Argument spellings per framework, applied to every entry of that framework.
TORCH_RENAME = {"dim": "axis", "keepdim": "keepdims", "input": "x", "other": "y",
                "tensors": "xs", "exponent": "y"}
TF_RENAME = {"input_tensor": "x", "input": "x", "logits": "x", "features": "x", "values": "xs",
             "a": "x", "b": "y", "perm": "axes"}
NP_RENAME = {"a": "x", "x1": "x", "x2": "y", "arrays": "xs", "tup": "xs", "newshape": "shape",
             "m": "x"}

_UNARY = """abs sign sqrt square exp expm1 log log1p log2 log10 sin cos tan arcsin arccos arctan
sinh cosh tanh arcsinh arccosh arctanh floor ceil round negative reciprocal isnan isinf isfinite
logical_not""".split()
_BINARY = """add subtract multiply divide power maximum minimum arctan2 equal not_equal less
less_equal greater greater_equal logical_and logical_or floor_divide mod matmul dot outer""".split()
_REDUCE = "sum mean prod max min all any var std argmax argmin cumsum".split()
_SHAPE = """reshape transpose swapaxes moveaxis expand_dims squeeze concatenate stack split
broadcast_to tile flip pad take take_along_axis sort argsort meshgrid where clip""".split()
_CREATE = "zeros ones full zeros_like ones_like full_like arange linspace eye".split()


def _numpy_like(root: str) -> dict[str, Meaning]:
    table = {f"{root}.{n}": Meaning(n) for n in _UNARY + _BINARY + _REDUCE + _SHAPE + _CREATE}
    table.update({
        f"{root}.absolute": Meaning("abs"), f"{root}.true_divide": Meaning("divide"),
        f"{root}.amax": Meaning("max"), f"{root}.amin": Meaning("min"),
        f"{root}.asin": Meaning("arcsin"), f"{root}.acos": Meaning("arccos"),
        f"{root}.atan": Meaning("arctan"), f"{root}.atan2": Meaning("arctan2"),
        f"{root}.asinh": Meaning("arcsinh"), f"{root}.acosh": Meaning("arccosh"),
        f"{root}.atanh": Meaning("arctanh"), f"{root}.pow": Meaning("power"),
        f"{root}.concat": Meaning("concatenate"), f"{root}.ravel": Meaning("flatten"),
        f"{root}.linalg.norm": Meaning("norm"), f"{root}.linalg.inv": Meaning("inv"),
        f"{root}.linalg.det": Meaning("det"), f"{root}.linalg.slogdet": Meaning("slogdet"),
        f"{root}.linalg.solve": Meaning("solve"), f"{root}.einsum": Meaning("einsum"),
        f"{root}.array": Meaning("array"), f"{root}.asarray": Meaning("array"),
        f"{root}.clip": Meaning("clip", {"min": "a_min", "max": "a_max"}),
        f"{root}.shape": Meaning("shape"), f"{root}.ndim": Meaning("ndim"),
        f"{root}.size": Meaning("size"), f"{root}.copy": Meaning("copy"),
    })
    return table


PATHS: dict[str, Meaning] = {}
PATHS.update(_numpy_like("numpy"))
PATHS.update(_numpy_like("jax.numpy"))
PATHS.update(_numpy_like("autograd.numpy"))
PATHS.update({
    # math: scalar counterparts
    **{f"math.{n}": Meaning(p) for n, p in dict(
        exp="exp", expm1="expm1", log1p="log1p", log2="log2", log10="log10", sqrt="sqrt",
        sin="sin", cos="cos", tan="tan", asin="arcsin", acos="arccos", atan="arctan",
        atan2="arctan2", sinh="sinh", cosh="cosh", tanh="tanh", asinh="arcsinh",
        acosh="arccosh", atanh="arctanh", fabs="abs", pow="power", erf="erf", floor="floor",
        ceil="ceil").items()},
    "math.log": Meaning("log"),
    # builtins that are arithmetic
    "builtins.abs": Meaning("abs"), "builtins.pow": Meaning("power"),
    "builtins.max": Meaning("maximum"), "builtins.min": Meaning("minimum"),
    "builtins.float": Meaning("copy"), "builtins.sum": Meaning("sum_list"),
    # scipy and jax extras
    "scipy.special.erf": Meaning("erf"), "scipy.special.expit": Meaning("sigmoid"),
    "scipy.special.logsumexp": Meaning("logsumexp"), "scipy.special.softmax": Meaning("softmax"),
    "jax.scipy.special.erf": Meaning("erf"), "jax.scipy.special.expit": Meaning("sigmoid"),
    "jax.scipy.special.logsumexp": Meaning("logsumexp"),
    "jax.nn.sigmoid": Meaning("sigmoid"), "jax.nn.softplus": Meaning("softplus"),
    "jax.nn.relu": Meaning("relu"), "jax.nn.softmax": Meaning("softmax"),
    "jax.nn.log_softmax": Meaning("log_softmax"), "jax.nn.logsumexp": Meaning("logsumexp"),
    "jax.nn.one_hot": Meaning("one_hot"), "jax.lax.stop_gradient": Meaning("stop_gradient"),
    "jax.numpy.linalg.norm": Meaning("norm"),
    # gradlab's own
    "gradlab.api.stop_gradient": Meaning("stop_gradient"),
    "gradlab.stop_gradient": Meaning("stop_gradient"),
})

_TORCH_SAME = _UNARY + """add subtract multiply divide maximum minimum matmul dot outer sum mean
prod all any argmax argmin cumsum reshape swapaxes moveaxis squeeze stack broadcast_to tile
flip where zeros ones full zeros_like ones_like full_like arange linspace eye sigmoid relu erf
logsumexp softmax log_softmax take_along_dim""".split()
PATHS.update({f"torch.{n}": Meaning(n, TORCH_RENAME) for n in _TORCH_SAME})
PATHS.update({
    "torch.take_along_dim": Meaning("take_along_axis", TORCH_RENAME),
    "torch.asin": Meaning("arcsin"), "torch.acos": Meaning("arccos"),
    "torch.atan": Meaning("arctan"), "torch.atan2": Meaning("arctan2", TORCH_RENAME),
    "torch.arctan2": Meaning("arctan2", TORCH_RENAME), "torch.asinh": Meaning("arcsinh"),
    "torch.acosh": Meaning("arccosh"), "torch.atanh": Meaning("arctanh"),
    "torch.neg": Meaning("negative"), "torch.sub": Meaning("subtract", TORCH_RENAME),
    "torch.mul": Meaning("multiply", TORCH_RENAME), "torch.div": Meaning("divide", TORCH_RENAME),
    "torch.true_divide": Meaning("divide", TORCH_RENAME),
    "torch.pow": Meaning("power", TORCH_RENAME),
    "torch.mm": Meaning("matmul", TORCH_RENAME), "torch.bmm": Meaning("matmul", TORCH_RENAME),
    "torch.mv": Meaning("matmul", TORCH_RENAME), "torch.ger": Meaning("outer", TORCH_RENAME),
    "torch.amax": Meaning("max", TORCH_RENAME), "torch.amin": Meaning("min", TORCH_RENAME),
    "torch.max": Meaning("max", TORCH_RENAME), "torch.min": Meaning("min", TORCH_RENAME),
    "torch.var": Meaning("var", {**TORCH_RENAME, "correction": "ddof"}, {"ddof": 1}),
    "torch.std": Meaning("std", {**TORCH_RENAME, "correction": "ddof"}, {"ddof": 1}),
    "torch.clamp": Meaning("clip", {**TORCH_RENAME, "min": "a_min", "max": "a_max"}),
    "torch.clip": Meaning("clip", {**TORCH_RENAME, "min": "a_min", "max": "a_max"}),
    "torch.cat": Meaning("concatenate", TORCH_RENAME),
    "torch.concat": Meaning("concatenate", TORCH_RENAME),
    "torch.unsqueeze": Meaning("expand_dims", TORCH_RENAME),
    "torch.permute": Meaning("transpose", {**TORCH_RENAME, "dims": "axes"}),
    "torch.transpose": Meaning("swapaxes", {**TORCH_RENAME, "dim0": "axis1", "dim1": "axis2"}),
    "torch.t": Meaning("transpose", TORCH_RENAME),
    "torch.tensor_split": Meaning("split", TORCH_RENAME),
    "torch.chunk": Meaning("split", {**TORCH_RENAME, "chunks": "indices_or_sections"}),
    "torch.flatten": Meaning("flatten", {**TORCH_RENAME, "start_dim": "start", "end_dim": "end"}),
    "torch.norm": Meaning("norm", {**TORCH_RENAME, "p": "ord"}),
    "torch.linalg.norm": Meaning("norm", TORCH_RENAME),
    "torch.linalg.vector_norm": Meaning("norm", TORCH_RENAME, {"ord": 2}),
    "torch.linalg.inv": Meaning("inv", TORCH_RENAME), "torch.inverse": Meaning("inv"),
    "torch.linalg.det": Meaning("det", TORCH_RENAME), "torch.det": Meaning("det"),
    "torch.linalg.slogdet": Meaning("slogdet", TORCH_RENAME),
    "torch.linalg.solve": Meaning("solve", {"A": "a", "B": "b"}),
    "torch.einsum": Meaning("einsum", {"equation": "subscripts"}),
    "torch.square": Meaning("square"), "torch.clone": Meaning("copy", TORCH_RENAME),
    "torch.detach": Meaning("stop_gradient"),
    "torch.nn.functional.softplus": Meaning("softplus", TORCH_RENAME),
    "torch.nn.functional.relu": Meaning("relu", TORCH_RENAME),
    "torch.nn.functional.sigmoid": Meaning("sigmoid", TORCH_RENAME),
    "torch.nn.functional.softmax": Meaning("softmax", TORCH_RENAME),
    "torch.nn.functional.log_softmax": Meaning("log_softmax", TORCH_RENAME),
    "torch.nn.functional.one_hot": Meaning("one_hot", TORCH_RENAME),
    "torch.special.erf": Meaning("erf", TORCH_RENAME),
    "torch.special.expit": Meaning("sigmoid", TORCH_RENAME),
    "torch.tensor": Meaning("array", {"data": "values"}),
    "torch.as_tensor": Meaning("array", {"data": "values"}),
})

_TF_MATH = dict(abs="abs", sign="sign", sqrt="sqrt", square="square", exp="exp", expm1="expm1",
                log="log", log1p="log1p", sin="sin", cos="cos", tan="tan", asin="arcsin",
                acos="arccos", atan="arctan", atan2="arctan2", sinh="sinh", cosh="cosh",
                tanh="tanh", asinh="arcsinh", acosh="arccosh", atanh="arctanh",
                sigmoid="sigmoid", softplus="softplus", erf="erf", floor="floor", ceil="ceil",
                round="round", negative="negative", reciprocal="reciprocal", add="add",
                subtract="subtract", multiply="multiply", divide="divide", truediv="divide",
                pow="power", maximum="maximum", minimum="minimum", equal="equal",
                not_equal="not_equal", less="less", less_equal="less_equal", greater="greater",
                greater_equal="greater_equal", logical_and="logical_and",
                logical_or="logical_or", logical_not="logical_not", is_nan="isnan",
                is_inf="isinf", is_finite="isfinite", reduce_sum="sum", reduce_mean="mean",
                reduce_prod="prod", reduce_max="max", reduce_min="min", reduce_all="all",
                reduce_any="any", reduce_logsumexp="logsumexp", reduce_variance="var",
                reduce_std="std", argmax="argmax", argmin="argmin", cumsum="cumsum",
                log_softmax="log_softmax", softmax="softmax")
for _short, _prim in _TF_MATH.items():
    PATHS[f"tensorflow.math.{_short}"] = Meaning(_prim, TF_RENAME, drop=("name",))
    PATHS.setdefault(f"tensorflow.{_short}", Meaning(_prim, TF_RENAME, drop=("name",)))
PATHS.update({f"tensorflow.{k}": Meaning(v, TF_RENAME, drop=("name",)) for k, v in dict(
    matmul="matmul", reshape="reshape", transpose="transpose", expand_dims="expand_dims",
    squeeze="squeeze", concat="concatenate", stack="stack", broadcast_to="broadcast_to",
    tile="tile", where="where", zeros="zeros", ones="ones", zeros_like="zeros_like",
    ones_like="ones_like", fill="full", range="arange", eye="eye", one_hot="one_hot",
    stop_gradient="stop_gradient", einsum="einsum", norm="norm", constant="array",
    convert_to_tensor="array", clip_by_value="clip", gather="take", unstack="unstack",
    split="split").items()})
PATHS.update({
    "tensorflow.clip_by_value": Meaning("clip", {**TF_RENAME, "t": "x",
                                                 "clip_value_min": "a_min",
                                                 "clip_value_max": "a_max"}, drop=("name",)),
    "tensorflow.nn.softmax": Meaning("softmax", TF_RENAME, drop=("name",)),
    "tensorflow.nn.log_softmax": Meaning("log_softmax", TF_RENAME, drop=("name",)),
    "tensorflow.nn.sigmoid": Meaning("sigmoid", TF_RENAME, drop=("name",)),
    "tensorflow.nn.softplus": Meaning("softplus", TF_RENAME, drop=("name",)),
    "tensorflow.nn.relu": Meaning("relu", TF_RENAME, drop=("name",)),
    "tensorflow.linalg.matmul": Meaning("matmul", TF_RENAME, drop=("name",)),
    "tensorflow.linalg.inv": Meaning("inv", TF_RENAME, drop=("name",)),
    "tensorflow.linalg.det": Meaning("det", TF_RENAME, drop=("name",)),
    "tensorflow.linalg.norm": Meaning("norm", {**TF_RENAME, "tensor": "x"}, drop=("name",)),
    "tensorflow.norm": Meaning("norm", {**TF_RENAME, "tensor": "x"}, drop=("name",)),
    "tensorflow.identity": Meaning("copy", TF_RENAME, drop=("name",)),
})

#: Array methods and properties, by name. Torch spellings mean the same where names collide,
#: except where noted in METHOD_DIALECT.
METHODS: dict[str, Meaning] = {
    **{n: Meaning(n, {**TORCH_RENAME}) for n in """sum mean prod max min all any var std
    argmax argmin cumsum exp log log1p expm1 sqrt square abs sign sin cos tan tanh sinh cosh
    sigmoid relu reshape squeeze flatten dot matmul clip round floor ceil""".split()},
    "amax": Meaning("max", TORCH_RENAME), "amin": Meaning("min", TORCH_RENAME),
    "arcsin": Meaning("arcsin"), "asin": Meaning("arcsin"), "arccos": Meaning("arccos"),
    "acos": Meaning("arccos"), "arctan": Meaning("arctan"), "atan": Meaning("arctan"),
    "pow": Meaning("power", TORCH_RENAME), "clamp": Meaning("clip", {"min": "a_min",
                                                                       "max": "a_max"}),
    "unsqueeze": Meaning("expand_dims", TORCH_RENAME), "view": Meaning("reshape"),
    "ravel": Meaning("flatten"), "permute": Meaning("transpose", {"dims": "axes"}),
    "t": Meaning("transpose"), "softmax": Meaning("softmax", TORCH_RENAME),
    "log_softmax": Meaning("log_softmax", TORCH_RENAME), "norm": Meaning("norm", {
        **TORCH_RENAME, "p": "ord"}),
    "astype": Meaning("astype"), "float": Meaning("astype", defaults={"dtype": "float32"}),
    "double": Meaning("astype", defaults={"dtype": "float64"}),
    "copy": Meaning("copy"), "clone": Meaning("copy"), "detach": Meaning("stop_gradient"),
    "item": Meaning("copy"), "logsumexp": Meaning("logsumexp", TORCH_RENAME),
    "repeat": Meaning("tile"), "transpose": Meaning("transpose"), "swapaxes": Meaning("swapaxes"),
    "numel": Meaning("size"), "dim": Meaning("ndim"), "size": Meaning("shape"),
}

#: Methods whose positional arguments are varargs in NumPy (``x.reshape(2, 3)``).
VARARG_METHODS = {"reshape": "shape", "view": "shape", "transpose": "axes", "permute": "axes",
                  "repeat": "reps"}

#: Array properties, by name.
PROPERTIES = {"T": "transpose", "mT": "transpose", "shape": "shape", "ndim": "ndim", "size": "size",
              "dtype": "dtype", "real": "copy"}

#: Method names that change an array in place: refused on values that carry a gradient.
INPLACE_METHODS = {"sort", "fill", "resize", "put", "itemset", "partition", "setflags",
                   "assign", "assign_add", "assign_sub", "scatter_", "index_put_"}
