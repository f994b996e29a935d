"""Activation functions and losses of ``torch.nn.functional``, ``jax.nn`` and ``tf.nn``, written
out as Python (see :mod:`.definitions`, whose registry they join).

Each is the formula its framework documents, with its defaults: ``jax.nn.gelu`` is the tanh
approximation unless told otherwise, ``torch.nn.functional.gelu`` the exact erf form,
``tf.nn.leaky_relu``'s slope 0.2 and torch's 0.01. A torch function without a definition
still runs through torch's own autodiff (see :mod:`..opaque`); defined here, it is readable,
and hvp can differentiate it twice. ``math.erf`` below is gradlab's ``erf`` primitive, of
arrays too (the definitions are read, never run).
"""
from __future__ import annotations

import math

import numpy

from ...errors import gradlab_refuses
from .definitions import np_cumprod, np_diagonal, np_polyval, spelled

_TORCH = ("torch.nn.functional",)
_JAX = ("jax.nn",)
_TF = ("tensorflow.nn",)


# --- activations ---------------------------------------------------------------------------------
@spelled()
def nn_gelu_erf(x):
    """x * Phi(x), Phi the standard normal's distribution function."""
    return 0.5 * x * (1.0 + math.erf(x * 0.7071067811865476))


@spelled()
def nn_gelu_tanh(x):
    """x * Phi(x) with tanh's approximation of Phi."""
    return 0.5 * x * (1.0 + numpy.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


@spelled("gelu", roots=_TORCH)
def torch_gelu(input, approximate="none"):
    """The erf form, or the tanh form with approximate='tanh'."""
    if approximate == "tanh":
        return nn_gelu_tanh(input)
    return nn_gelu_erf(input)


@spelled("gelu", roots=_JAX)
def jax_gelu(x, approximate=True):
    """The tanh form unless approximate=False."""
    if approximate:
        return nn_gelu_tanh(x)
    return nn_gelu_erf(x)


@spelled("gelu", roots=_TF)
def tf_gelu(features, approximate=False):
    """The erf form unless approximate=True, with TensorFlow's constants: 1/sqrt(2) and the
    cubic's 0.044715 rounded to float32 (its float64 values are those of these)."""
    if approximate:
        cubic = 0.044714998453855515 * features ** 3
        return 0.5 * features * (1.0 + numpy.tanh(0.7978845608028654 * (features + cubic)))
    return 0.5 * features * (1.0 + math.erf(features * 0.7071067690849304))


@spelled("silu", roots=_TORCH)
def torch_silu(input):
    return input / (1.0 + numpy.exp(-input))


@spelled("silu", "swish", roots=_JAX)
def jax_silu(x):
    return x / (1.0 + numpy.exp(-x))


@spelled("silu", "swish", roots=_TF + ("tensorflow.keras.activations",))
def tf_silu(features, beta=1.0):
    return features / (1.0 + numpy.exp(-beta * features))


@spelled("elu", roots=_TORCH + _JAX)
def nn_elu(x, alpha=1.0):
    """x above zero, alpha * (exp(x) - 1) below (exp of the negative part only, so the branch
    not taken never overflows)."""
    return numpy.where(x > 0, x, alpha * (numpy.exp(numpy.minimum(x, 0.0)) - 1.0))


@spelled("elu", roots=_TF)
def tf_elu(features):
    return numpy.where(features > 0, features,
                       numpy.exp(numpy.minimum(features, 0.0)) - 1.0)


@spelled("celu", roots=_TORCH + _JAX)
def nn_celu(x, alpha=1.0):
    return numpy.where(x > 0, x, alpha * (numpy.exp(numpy.minimum(x, 0.0) / alpha) - 1.0))


@spelled("selu", roots=_TORCH + _JAX + _TF)
def nn_selu(x):
    return 1.0507009873554805 * numpy.where(
        x > 0, x, 1.6732632423543772 * (numpy.exp(numpy.minimum(x, 0.0)) - 1.0))


@spelled("leaky_relu", roots=_TORCH)
def torch_leaky_relu(input, negative_slope=0.01):
    return numpy.where(input > 0, input, negative_slope * input)


@spelled("leaky_relu", roots=_JAX)
def jax_leaky_relu(x, negative_slope=0.01):
    return numpy.where(x >= 0, x, negative_slope * x)


@spelled("leaky_relu", roots=_TF)
def tf_leaky_relu(features, alpha=0.2):
    """alpha rounded to float32, as TensorFlow computes it for float64 features too."""
    return numpy.where(features > 0, features, float(numpy.float32(alpha)) * features)


@spelled("relu6", roots=_TORCH + _JAX + _TF)
def nn_relu6(x):
    return numpy.clip(x, 0.0, 6.0)


@spelled("logsigmoid", roots=_TORCH)
def torch_logsigmoid(input):
    """log(sigmoid(x)) = -softplus(-x), finite for large |x|."""
    return -numpy.logaddexp(0.0, -input)


@spelled("log_sigmoid", roots=_JAX)
def jax_log_sigmoid(x):
    return -numpy.logaddexp(0.0, -x)


@spelled("math.log_sigmoid", roots=("tensorflow",))
def tf_log_sigmoid(x):
    return -numpy.logaddexp(0.0, -x)


@spelled("softsign", roots=_TORCH + _JAX + _TF + ("tensorflow.math",))
def nn_softsign(x):
    return x / (1.0 + numpy.abs(x))


@spelled("tanhshrink", roots=_TORCH)
def torch_tanhshrink(input):
    return input - numpy.tanh(input)


@spelled("mish", roots=_TORCH + _JAX)
def nn_mish(x):
    return x * numpy.tanh(numpy.logaddexp(0.0, x))


@spelled("hardtanh", roots=_TORCH)
def torch_hardtanh(input, min_val=-1.0, max_val=1.0):
    return numpy.minimum(numpy.maximum(input, min_val), max_val)


@spelled("softmin", roots=_TORCH)
def torch_softmin(input, dim=None):
    """softmax of -x along ``dim``."""
    if dim is None:
        gradlab_refuses("softmin without dim: torch picks the axis from the rank (deprecated); "
                        "pass dim")
    shifted = -input - numpy.max(-input, axis=dim, keepdims=True)
    exps = numpy.exp(shifted)
    return exps / numpy.sum(exps, axis=dim, keepdims=True)


@spelled("standardize", "normalize", roots=_JAX)
def jax_standardize(x, axis=-1, epsilon=1e-5):
    """(x - mean) / sqrt(variance + epsilon) along ``axis``."""
    mean = numpy.mean(x, axis=axis, keepdims=True)
    variance = numpy.mean(x * x, axis=axis, keepdims=True) - mean * mean
    return (x - mean) / numpy.sqrt(variance + epsilon)


@spelled("normalize", roots=_TORCH)
def torch_normalize(input, p=2.0, dim=1, eps=1e-12):
    """x over its Euclidean norm along ``dim`` (at least ``eps``)."""
    if p != 2:
        gradlab_refuses("F.normalize: gradlab's definition takes p=2")
    norm = numpy.linalg.norm(input, axis=dim, keepdims=True)
    return input / numpy.maximum(norm, eps)


# --- losses --------------------------------------------------------------------------------------
@spelled()
def nn_reduced_loss(values, reduction):
    """A loss's values reduced as ``reduction`` says."""
    if reduction == "mean":
        return numpy.mean(values)
    if reduction == "sum":
        return numpy.sum(values)
    if reduction != "none":
        gradlab_refuses("reduction= takes 'mean', 'sum' or 'none'")
    return values


@spelled("mse_loss", roots=_TORCH)
def torch_mse_loss(input, target, reduction="mean"):
    return nn_reduced_loss((input - target) ** 2, reduction)


@spelled("l1_loss", roots=_TORCH)
def torch_l1_loss(input, target, reduction="mean"):
    return nn_reduced_loss(numpy.abs(input - target), reduction)


@spelled("smooth_l1_loss", roots=_TORCH)
def torch_smooth_l1_loss(input, target, reduction="mean", beta=1.0):
    """Quadratic within ``beta`` of the target, linear beyond."""
    gap = numpy.abs(input - target)
    return nn_reduced_loss(numpy.where(gap < beta, 0.5 * gap ** 2 / beta, gap - 0.5 * beta),
                    reduction)


@spelled("cosine_similarity", roots=_TORCH)
def torch_cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """The cosine of the angle between x1 and x2 along ``dim``, each norm at least ``eps``."""
    norm1 = numpy.maximum(numpy.linalg.norm(x1, axis=dim), eps)
    norm2 = numpy.maximum(numpy.linalg.norm(x2, axis=dim), eps)
    return numpy.sum(x1 * x2, axis=dim) / (norm1 * norm2)


# --- torch and TensorFlow spellings of NumPy's ---------------------------------------------------
@spelled("lerp", roots=("torch",), torch_method="lerp")
def torch_lerp(input, end, weight):
    return input + weight * (end - input)


@spelled("frac", roots=("torch",), torch_method="frac")
def torch_frac(input):
    return input - numpy.where(input >= 0, numpy.floor(input), numpy.ceil(input))


@spelled("sgn", roots=("torch",), torch_method="sgn")
def torch_sgn(input):
    return numpy.sign(input)


@spelled("clamp_min", roots=("torch",), torch_method="clamp_min")
def torch_clamp_min(input, min):
    return numpy.maximum(input, min)


@spelled("clamp_max", roots=("torch",), torch_method="clamp_max")
def torch_clamp_max(input, max):
    return numpy.minimum(input, max)


@spelled("logdet", roots=("torch",), torch_method="logdet")
def torch_logdet(input):
    return numpy.log(numpy.linalg.det(input))


@spelled("addmm", roots=("torch",))
def torch_addmm(input, mat1, mat2, beta=1.0, alpha=1.0):
    return beta * input + alpha * (mat1 @ mat2)


@spelled("math.erfc", roots=("tensorflow",))
def tf_erfc(x):
    return 1.0 - math.erf(x)


@spelled("math.divide_no_nan", roots=("tensorflow",))
def tf_divide_no_nan(x, y):
    """x / y, 0 where y is 0 (y there is read as 1, so no gradient is NaN)."""
    zero = y == 0
    return numpy.where(zero, 0.0, x / numpy.where(zero, 1.0, y))


@spelled("math.reciprocal_no_nan", roots=("tensorflow",))
def tf_reciprocal_no_nan(x):
    zero = x == 0
    return numpy.where(zero, 0.0, 1.0 / numpy.where(zero, 1.0, x))


@spelled("math.xlogy", roots=("tensorflow",))
def tf_xlogy(x, y):
    zero = x == 0
    return numpy.where(zero, 0.0, x * numpy.log(numpy.where(zero, 1.0, y)))


@spelled("math.cumprod", roots=("tensorflow",))
def tf_cumprod(x, axis=0):
    return np_cumprod(x, axis)


@spelled("math.polyval", roots=("tensorflow",))
def tf_polyval(coeffs, x):
    return np_polyval(coeffs, x)


@spelled("linalg.trace", roots=("tensorflow",))
def tf_trace(x):
    """The trace of each matrix of the last two axes."""
    return numpy.sum(tf_diag_part(x), axis=-1)


@spelled("linalg.diag_part", roots=("tensorflow",))
def tf_diag_part(input):
    """The diagonal of each matrix of the last two axes, as the last axis."""
    return np_diagonal(numpy.moveaxis(numpy.moveaxis(input, -1, 0), -1, 0), 0)


@spelled("math.reduce_euclidean_norm", roots=("tensorflow",))
def tf_reduce_euclidean_norm(input_tensor, axis=None, keepdims=False):
    """The square root of the sum of squares (over ``axis``, one int): the norm of the
    entries, whose derivative at zero is zero (a square root's would be infinite)."""
    if axis is None:
        if keepdims:
            gradlab_refuses("reduce_euclidean_norm with keepdims=True needs an axis here")
        return numpy.linalg.norm(numpy.reshape(input_tensor, (-1,)))
    if keepdims:
        return numpy.linalg.norm(input_tensor, axis=axis, keepdims=True)
    return numpy.linalg.norm(input_tensor, axis=axis)
