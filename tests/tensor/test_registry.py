"""The backend registry, proved with a fifth backend made for the tests.

``tests/tensor/boxed_backend.py`` is one file: NumPy arrays in a box of another type. The
fixture below registers it with one line; from then on gradlab detects its values, lists it,
converts to and from it, differentiates on it (the generated code runs on boxes, through its
namespace), checks against its reference, and the session and the panel offer it.
"""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.errors import BackendError
from gradlab.tensor import Registration, registry
from gradlab.tensor import (available_devices, backend, canonical_name, convert, device_label,
                            device_of, framework_of, frameworks, installed_frameworks,
                            require_framework)
from tests.codegen.corpus import CORPUS
from tests.tensor.boxed_backend import Boxed, BoxedBackend

BOXED = "tests.tensor.boxed_backend"


@pytest.fixture()
def boxed():
    registry.register(Registration("boxed", BOXED, roots=(BOXED,), aliases=("box",)))
    yield "boxed"
    registry.unregister("boxed")


def test_the_registration_lists_it_and_detects_its_values(boxed):
    assert frameworks()[-1] == "boxed" and "boxed" in installed_frameworks()
    assert canonical_name("box") == "boxed"
    x = Boxed([1.0, 2.0])
    assert framework_of(x) == "boxed"
    assert available_devices("boxed") == ["cpu"]
    assert device_of(x) == "cpu" and device_label(x) == "cpu"
    assert isinstance(registry.get("boxed"), BoxedBackend)
    assert gradlab.tensor.astensor(x).framework == "boxed"
    assert type(gradlab.tensor.astensor(x)).__name__ == "BoxedTensor"


def test_unregistered_it_is_gone():
    registry.register(Registration("boxed", BOXED, roots=(BOXED,)))
    assert framework_of(Boxed(1.0)) == "boxed"
    registry.unregister("boxed")
    assert "boxed" not in frameworks() and framework_of(Boxed(1.0)) is None
    with pytest.raises(BackendError, match="choose one of numpy, torch, tensorflow, jax$"):
        canonical_name("boxed")
    with pytest.raises(BackendError, match="cannot use a value of type .*Boxed"):
        require_framework(Boxed(1.0))


def _loss(W, x):
    h = np.tanh(x @ W)
    return np.mean(h ** 2)


CASES = ["op_matvec", "op_broadcast_col", "f_sigmoid_relu", "r_softmax_logsoftmax",
         "r_logsumexp", "la_concat_stack", "la_broadcast_to_tile", "ix_write_loop", "ix_add_into",
         "b_if_elif", "l_zip", "l_rnn"]


@pytest.mark.parametrize("name", CASES)
def test_grad_on_boxed_values_gives_numpys_gradients(boxed, name):
    case = next(c for c in CORPUS if c.name == name)
    args = case.inputs()
    df = gradlab.grad(case.fn, wrt=case.wrt)
    want = df(*args)
    got = df(*[Boxed(a) if isinstance(a, np.ndarray) else a for a in args])
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        assert type(g) is Boxed and g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g.array, w, rtol=1e-12, atol=1e-14)


def test_float32_values_get_a_float32_seed_and_gradient(boxed):
    """The backend object makes the default seed (1 in the inputs' dtype)."""
    W, x = np.full((3, 2), 0.1, np.float32), np.ones((4, 3), np.float32)
    got = gradlab.grad(_loss)(Boxed(W), Boxed(x))
    assert type(got) is Boxed and got.dtype == np.float32
    np.testing.assert_allclose(got.array, gradlab.grad(_loss)(W, x), rtol=1e-6)


def test_forward_mode_and_value_and_grad(boxed):
    W, x, v = np.full((3, 2), 0.1), np.ones((4, 3)), np.arange(6.0).reshape(3, 2)
    value, tangent = gradlab.jvp(_loss)(Boxed(W), Boxed(x), Boxed(v))
    want_value, want_tangent = gradlab.jvp(_loss)(W, x, v)
    np.testing.assert_allclose(np.asarray(value.array), want_value, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(tangent.array), want_tangent, rtol=1e-12)
    value, grads = gradlab.value_and_grad(_loss, wrt=(0, 1))(Boxed(W), Boxed(x))
    assert all(type(g) is Boxed for g in grads)


def test_conversion_in_and_out(boxed):
    a = np.arange(6.0).reshape(2, 3)
    b = convert(a, "boxed")
    assert type(b) is Boxed and np.array_equal(b.array, a)
    back = convert(b, "numpy")
    assert type(back) is np.ndarray and np.array_equal(back, a)
    assert type(convert([1.0, 2.0], "box")) is Boxed


def test_gradient_check_uses_its_reference(boxed):
    from gradlab.workbench.checking import check_gradient
    W, x = np.full((3, 2), 0.1), np.ones((4, 3))
    report = check_gradient(_loss, gradlab.grad(_loss), (Boxed(W), Boxed(x)))
    assert [r.reference for r in report.rows] == ["finite differences", "HIPS autograd (unboxed)"]
    assert report.ok, report.table()


def test_session_and_panel_offer_it(boxed):
    from gradlab.kernel_ext.panel import GradPanel
    from gradlab.workbench.session import GradSession
    session = GradSession(gradlab.grad(_loss), args=(np.full((3, 2), 0.1), np.ones((4, 3))))
    [result] = session.run("boxed")
    assert not result.error and result.framework == "boxed" and type(result.gradients) is Boxed
    assert result.line.startswith("boxed · cpu · ")
    panel = GradPanel(session)
    assert "boxed" in panel.backend_options() and panel.device_options("boxed") == ["cpu"]


def test_its_namespace_takes_the_formulas_and_helpers_it_lacks(boxed):
    """The file defines NumPy's own primitives on boxes; softmax, sigmoid, broadcast_like and
    matmul's adjoint halves come from the templates and work on boxes through them."""
    ops = backend("boxed")
    x = Boxed(np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 5.0]]))
    for name in ("softmax", "sigmoid", "relu", "broadcast_like", "matmul_grad_x", "unbroadcast"):
        template = ops.TENSOR_ONLY.get(name) or getattr(ops, name)   # before Python numbers
        assert template.__globals__["gl"].__name__ == BOXED, name
    s = ops.softmax(x, axis=-1)
    assert type(s) is Boxed
    np.testing.assert_allclose(s.array, backend("numpy").softmax(x.array, axis=-1))
    g = ops.broadcast_like(Boxed(np.float64(2.0)), x)
    assert type(g) is Boxed and g.shape == (2, 3)


def test_registration_matches_modules_not_prefixes():
    r = Registration("boxed", BOXED, roots=(BOXED,))
    assert r.owns_module(BOXED) and r.owns_module(BOXED + ".inner")
    assert not r.owns_module(BOXED + "_other") and not r.owns_module("tests.tensor")
