"""The primitive table checked against itself, the differentiation rules and the frameworks.

Every name set gradlab uses is derived from the table, so these checks are what keeps a new
record honest: a differentiable primitive has both rules, a spelling's argument mapping fits
the signature it maps to, and every spelling exists in the framework that spells it.
"""
from __future__ import annotations

import importlib
import inspect

import pytest

from gradlab.codegen.primitives import ATTRIBUTES, METHODS, PATHS
from gradlab.codegen.rules import ADJOINTS, TANGENTS, is_custom
from gradlab.tensor import primitive as kinds
from gradlab.tensor.primitive import Meaning, parse_signature
from gradlab.tensor.spec import (NONDIFFERENTIABLE, PRIMITIVES, STATIC_CALLS, TABLE)
from tests.conftest import import_path

#: Differentiated by the code generator itself rather than by a rule: an item of a Python list
#: passes its gradient to that item (``ListElement`` in codegen/reverse.py).
BY_THE_GENERATOR = {"list_getitem"}


def _needs_rules(record: kinds.Primitive) -> bool:
    return record.differentiable and not record.kinds & {kinds.TENSOR_ONLY, kinds.EXPANDED} \
        and record.name not in BY_THE_GENERATOR


@pytest.mark.parametrize("record", [r for r in TABLE if _needs_rules(r)], ids=lambda r: r.name)
def test_a_differentiable_primitive_has_its_rules(record: kinds.Primitive) -> None:
    """Reverse mode needs the adjoint; forward mode (and hvp, which runs forward mode over
    gradient code, where the helpers appear) needs the tangent."""
    assert record.name in TANGENTS, f"{record.name} has no tangent rule (rules/forward.py)"
    if kinds.GRADIENT_CODE not in record.kinds:
        assert record.name in ADJOINTS, f"{record.name} has no adjoint rule (rules/reverse.py)"


def test_the_exemptions_are_what_they_say() -> None:
    """A record exempt from rules is exempt for a reason the table states."""
    for record in TABLE:
        if record.kinds & {kinds.TENSOR_ONLY, kinds.EXPANDED}:
            assert not (kinds.TENSOR_ONLY in record.kinds and record.spellings), (
                f"{record.name} is tensor-only but has spellings that reach it: "
                f"{sorted(record.spellings)}")
    assert BY_THE_GENERATOR <= set(PRIMITIVES)


def test_rules_are_for_primitives_of_the_table() -> None:
    for table in (ADJOINTS, TANGENTS):
        unknown = sorted(n for n in table if n not in PRIMITIVES and not is_custom(n))
        assert not unknown, f"rules for names that are not in the table: {unknown}"


def test_no_reason_no_silence() -> None:
    """Each primitive no gradient flows through says why, in words a user can read."""
    for name, reason in NONDIFFERENTIABLE.items():
        assert isinstance(reason, str) and len(reason.split()) >= 4, (name, reason)


def test_value_parameters_are_parameters() -> None:
    for record in TABLE:
        params = set(parse_signature(record.signature).parameters)
        assert set(record.arrays) <= params, record.name
        assert set(record.no_gradient) <= set(record.arrays), record.name
        assert set(record.gradient_params) <= params, record.name


def _meanings() -> list[tuple[str, Meaning]]:
    out = [(path, m) for path, m in PATHS.items()]
    for dialect, table in METHODS.items():
        out += [(f".{name}() [{dialect}]", m) for name, m in table.items()]
    out += [(f".{name}", m) for name, m in ATTRIBUTES.items()]
    return out


@pytest.mark.parametrize(("spelled", "meaning"), _meanings(), ids=lambda v: str(v)[:40])
def test_a_spelling_fits_the_signature_it_maps_to(spelled: str, meaning: Meaning) -> None:
    """Defaults, literal flags, collected varargs and a framework's positional order name
    canonical parameters; transforms and returned indices name primitives of the table."""
    assert meaning.prim in PRIMITIVES, f"{spelled} means an unknown primitive {meaning.prim}"
    params = set(parse_signature(PRIMITIVES[meaning.prim].signature).parameters)
    assert set(meaning.defaults) <= params, (spelled, meaning.defaults)
    assert {target for target, _ in meaning.literals.values()} <= params, spelled
    assert not meaning.varargs or meaning.varargs in params, spelled
    for param, prim, _ in meaning.transforms.values():
        assert param in params and prim in PRIMITIVES, (spelled, param, prim)
    if meaning.with_indices:
        index_prim = PRIMITIVES[meaning.with_indices]
        assert index_prim.nondifferentiable, (spelled, meaning.with_indices)
        assert set(parse_signature(index_prim.signature).parameters) == params, spelled
    if meaning.positional is not None:
        known = params | set(meaning.rename) | set(meaning.literals) | set(meaning.transforms)
        assert set(meaning.positional) <= known, (spelled, meaning.positional)
    if meaning.arity is not None:
        required = [p for p in parse_signature(PRIMITIVES[meaning.prim].signature)
                    .parameters.values() if p.default is p.empty]
        assert meaning.arity == len(required), spelled


#: Module roots a family's spellings are first written for; the NumPy family is also read
#: under ``jax.numpy`` and ``autograd.numpy``, which lack a few of NumPy's names.
_PRIMARY = {"numpy", "math", "builtins", "scipy", "torch", "tensorflow", "jax", "gradlab"}
_CLONES = ("jax.numpy.", "autograd.numpy.", "jax.scipy.")


@pytest.mark.parametrize("path", sorted(PATHS) + sorted(STATIC_CALLS))
def test_a_spelling_exists_in_its_framework(path: str) -> None:
    """A typo in the table would silently make a spelling unknown (and so refused)."""
    root = path.split(".")[0]
    assert root in _PRIMARY | {"autograd"}, path
    try:
        importlib.import_module(root)
    except ImportError:
        pytest.skip(f"{root} is not installed")
    try:
        obj = import_path(path)
    except AttributeError:
        if path.startswith(_CLONES):
            pytest.skip(f"{path}: the clone of NumPy's API lacks this name")
        raise
    assert callable(obj), path


def test_methods_exist_on_the_arrays_of_their_dialect() -> None:
    """Each torch-dialect method exists on a torch tensor; each NumPy-dialect method that a
    NumPy array has means what NumPy means by it (a torch meaning is never borrowed for a
    name NumPy arrays already have)."""
    import numpy as np
    torch = pytest.importorskip("torch")
    from gradlab.codegen.primitives import _SHARED_METHODS, _TORCH_METHODS
    tensor = torch.zeros(2)
    missing = sorted(n for n in _TORCH_METHODS if not hasattr(tensor, n))
    assert not missing, f"torch tensors have no methods {missing}"
    nowhere = sorted(n for n in _SHARED_METHODS
                     if not hasattr(np.ndarray, n) and not hasattr(tensor, n))
    assert not nowhere, f"neither NumPy arrays nor torch tensors have methods {nowhere}"
    for name, meaning in METHODS["numpy"].items():
        if hasattr(np.ndarray, name):
            assert _SHARED_METHODS.get(name) == meaning, name


def test_derived_sets_come_from_the_table() -> None:
    """The analyses' name sets are the table's kinds (no second list to drift)."""
    from gradlab.codegen import analyze
    from gradlab.codegen.rules import ELEMENTWISE, LINEAR
    assert analyze.CREATION == {r.name for r in TABLE if kinds.CREATION in r.kinds}
    assert ELEMENTWISE == {r.name for r in TABLE if kinds.BROADCASTING in r.kinds
                           and r.differentiable}
    assert set(LINEAR) == {r.name for r in TABLE if r.linear}
    for record in TABLE:
        assert inspect.Signature is type(parse_signature(record.signature))
