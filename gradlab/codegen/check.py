"""Refusals that need the activity analysis: what would silently lose or corrupt a gradient
is refused here, at the user's line, before any code is generated (the stage ``check``, on
the code as the user wrote it).

A value that carries a gradient may not flow into code gradlab keeps as written (``and``/``or``,
a dict, an unknown attribute or function), into a parameter of a primitive that the gradient
does not flow back through, into a list changed in place in reverse mode, or into an in-place
update; and NumPy's in-place semantics are checked by :mod:`.aliasing`.
"""
from __future__ import annotations

import ast
import inspect
from typing import Any

import gast

from ..errors import NoRuleError
from ..tensor.spec import FROM_CONSTANTS, PRIMITIVES
from . import ir
from .aliasing import check_aliasing
from .dicts import why_kept
from .analyze import Activity, differentiable_inputs, static_gives_no_gradient, value_reads
from .ir import Assign, EffectKind, Op, OpKind
from .resolve import bindings
from .rules import ADJOINTS, NONDIFFERENTIABLE, TANGENTS, is_custom


def check(fn: ir.Function, act: Activity, mode: str = "reverse",
          helper: bool = False, generated: bool = False) -> None:
    """Refuse what would silently lose or corrupt a gradient. ``helper``: ``fn`` is called by
    the user's other code, which may read its arguments after the call. ``generated``: ``fn``
    is gradlab's own gradient code (``hvp`` differentiates it): it changes no array in place
    (``gl.index_update`` returns a new array, its stacks hold values no one writes into), so
    the aliasing check, which guards against NumPy's in-place semantics in the user's code
    (checked when that gradient was generated), has nothing to find there."""
    rules = ADJOINTS if mode == "reverse" else TANGENTS
    for s in ir.walk(fn.body):
        if mode == "reverse":
            _refuse_list_mutation(s, act)
        if isinstance(s, Assign) and s.op.kind is OpKind.STATIC:
            _refuse_kept_as_written(s, act)
        elif isinstance(s, Assign) and s.op.kind is OpKind.OPAQUE:
            _refuse_differentiated_callee(s, act)
        elif isinstance(s, Assign) and s.op.kind is OpKind.PRIM:
            _refuse_primitive(s, act, rules)
        elif isinstance(s, ir.Effect):
            _refuse_effect(s, act)
    if not generated:
        check_aliasing(fn, act, helper)


def _refuse_list_mutation(s: ir.Stmt, act: Activity) -> None:
    """Reverse mode builds a list's gradient item by item as the list was built (``append``);
    a list changed otherwise would need its items' history."""
    if (isinstance(s, ir.Effect) and s.kind is EffectKind.LIST_SET and s.target in act.varied
            or isinstance(s, Assign) and s.op.kind is OpKind.POP and s.op.args[0] in act.varied
            or ir.popped_list(s) in act.varied):
        raise ir.refusal("changing a list that carries a gradient (pop, item assignment) "
                         "cannot be differentiated in reverse mode: build lists with append",
                         s.origin, "list mutation")


def number_conversions(fn: ir.Function, act: Activity) -> list[Any]:
    """The lines that make a Python number of a value carrying a gradient (``float(s)``,
    ``s.item()``): the function's value depends on it, so gradlab differentiates through
    it, as differences of the function do; torch's and TensorFlow's autodiff see a constant
    there. Which one the user means is not written in the code: on their tensors such a
    line is refused (:func:`gradlab.calls.refuse_without_gradient`). A number the function
    returns as it is (``return float(loss)``) has no other reading: no tensor is left for the
    framework to differentiate."""
    found = []
    for s in ir.walk(fn.body):
        if isinstance(s, Assign) and fn.result in s.targets:
            continue
        if isinstance(s, Assign) and s.op.kind is OpKind.PRIM and s.op.prim == "copy" and \
                str(s.op.source or "").split(".")[-1] in ("float", "item") and \
                ir.op_reads(s.op) & act.varied and any(t in act.useful for t in s.targets):
            found.append(s.origin)
    return found


def _refuse_kept_as_written(s: Assign, act: Activity) -> None:
    """Code kept as written gets no gradient: refused where a gradient flows through it."""
    reads = ir.op_reads(s.op)
    flows = any(t in act.useful for t in s.targets)
    if not (reads & act.varied) or not flows:
        return
    node = s.op.node
    if s.op.unknown:
        raise NoRuleError(_no_rule_message(s.op.source, s.origin, s.op.callee))
    if isinstance(node, gast.BoolOp):
        raise ir.refusal("`and`/`or` between values that carry a gradient cannot be "
                         "differentiated: use np.logical_and/np.where or an if", s.origin,
                         "and/or")
    if s.op.attribute:
        attr = s.op.attribute
        raise ir.refusal(f"gradlab does not know the attribute .{attr} of an array that "
                         f"carries a gradient", s.origin, f".{attr}")
    flowing = sorted(value_reads(node) & act.varied)
    if flowing and not static_gives_no_gradient(s.op):
        what = _describe(node)
        raise ir.refusal(f"{what} is built from {flowing[0]}, which carries a gradient, but "
                         f"gradlab cannot differentiate through {what}: {_advice(node)}",
                         s.origin, what)


def _refuse_differentiated_callee(s: Assign, act: Activity) -> None:
    """An opaque call (see opaque.py) is differentiated with respect to its arguments, and
    a callable named by a variable that carries a gradient (``wrt="model"``) with respect to
    its parameters; a callable reached otherwise (``layers[0](x)``) is not followed."""
    callee = ir.atom_names(s.op.node) & act.varied
    if callee and s.targets[0] in act.useful and not isinstance(s.op.node, gast.Name):
        what = sorted(callee)[0]
        raise ir.refusal(f"{s.op.source}(...) is a call gradlab cannot read, differentiated by "
                         f"the framework's own autodiff with respect to its arguments; "
                         f"{what} itself carries a gradient, which gradlab does not follow "
                         f"through the call: pass the arrays it is made of as arguments",
                         s.origin, str(s.op.source))


def _refuse_primitive(s: Assign, act: Activity, rules: Any) -> None:
    """A gradient reaches a primitive only through the parameters it flows back through, and
    only a primitive with a rule for this mode (or none needed)."""
    if set(s.targets) & act.useful:
        _check_options(s, act)
    if s.op.prim not in rules and s.op.prim != "list_getitem" and (
            s.op.prim not in NONDIFFERENTIABLE) and set(s.targets) & act.useful and (
            differentiable_inputs(s) & act.varied):
        raise NoRuleError(_no_rule_message(s.op.source or s.op.prim, s.origin))


def _refuse_effect(s: ir.Effect, act: Activity) -> None:
    """A statement kept for its effect on an array: generated code makes new arrays instead."""
    if s.call and s.node is not None and ir.atom_names(s.node) & (act.varied | act.arrays):
        raise ir.refusal(f"{s.call}(...) on a line of its own can only matter by changing its "
                         f"arguments in place, which gradlab cannot follow (its code makes new "
                         f"arrays instead of changing old ones): assign a result instead",
                         s.origin, "in-place update")
    if s.kind is EffectKind.INPLACE and s.target in act.varied:
        raise ir.refusal(f"an in-place update of {s.target}, an array that carries a gradient, "
                         f"cannot be followed: write {s.target} = ... with a new value",
                         s.origin, "in-place update")


def _describe(node: Any) -> str:
    if isinstance(node, gast.Dict):
        return "a dict"
    try:
        text = ast.unparse(gast.gast_to_ast(node))
    except Exception:  # pragma: no cover - best effort for messages
        text = type(node).__name__
    return f"`{text}`" if len(text) <= 40 else f"`{text[:37]}...`"


_ADVICE: dict[type, str] = {
    gast.Dict: "keep the arrays in variables of their own (or pass them as separate "
               "arguments)",
    gast.BinOp: "this operator has no derivative rule; write it with NumPy functions",
    gast.UnaryOp: "this operator has no derivative rule; write it with NumPy functions",
}


def _advice(node: Any) -> str:
    """What to write instead; for a dict, why it was not replaced by its entries."""
    advice = _ADVICE.get(type(node), "compute it with NumPy functions")
    kept = why_kept(node)
    if kept is None:
        return advice
    return (f"gradlab differentiates a dict read and written with constant string keys "
            f"(p[\"a\"]), but {kept}; {advice}")


def _check_options(s: Assign, act: Activity) -> None:
    """A value that carries a gradient may only reach a primitive through a parameter the
    gradient flows back through: ``np.full((3,), x)``'s fill value does, ``np.linspace(0, x)``'s
    end does not (gradlab would treat it as a constant), nor does an inline expression gradlab
    kept as written (``np.exp(a & b)``)."""
    op = s.op
    record = PRIMITIVES.get(op.prim)
    constants_only = record is not None and record.nondifferentiable in FROM_CONSTANTS
    if op.prim in NONDIFFERENTIABLE and not constants_only:
        return
    through = set(record.gradient_params) if record is not None and not is_custom(op.prim) \
        else None
    for pname, atom in bindings(op).items():
        if isinstance(atom, (str, ir.Const)) and (through is None or pname in through or
                                                  not isinstance(atom, str)):
            continue
        if record is not None and pname in record.no_gradient:
            continue     # only its shape, dtype or truth value matters
        names = {atom} if isinstance(atom, str) else value_reads(atom)
        flowing = sorted(names & act.varied - set(s.frozen))
        if not flowing:
            continue
        label = op.source or op.prim
        if constants_only:
            raise ir.refusal(f"{label}: its {pname} argument carries a gradient (from "
                        f"{flowing[0]}), but {label} makes arrays from constants in gradlab's "
                        f"eyes ({record.nondifferentiable}): compute {pname} from constants, "  # type: ignore[union-attr]
                        f"or build the array from {flowing[0]} with arithmetic", s.origin,
                        f"{label}({pname}=...)")
        if isinstance(atom, str) or through is not None and pname not in through:
            raise ir.refusal(f"{label}: its {pname} argument carries a gradient (from "
                        f"{flowing[0]}), but gradlab differentiates {label} only through "
                        f"{', '.join(sorted(through or ())) or 'none of its arguments'}: "
                        f"compute {pname} from constants", s.origin, f"{label}({pname}=...)")
        raise ir.refusal(f"{label}: its argument {_describe(atom)} is computed from {flowing[0]}, "
                    f"which carries a gradient, in a way gradlab cannot differentiate: "
                    f"compute it on a line of its own with NumPy functions", s.origin,
                    _describe(atom))


def _no_rule_message(label: object, origin: ir.Origin | None, target: object = None) -> str:
    where = f" (line {origin.lineno}: {origin.text})" if origin else ""
    args = "<its arguments>"
    if target is not None:
        try:
            params = inspect.signature(target).parameters  # type: ignore[arg-type]
            required = [n for n, p in params.items() if p.default is p.empty and p.kind in (
                p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            args = ", ".join(required) or args
        except (TypeError, ValueError):
            pass
    first = args.split(", ")[0] if args != "<its arguments>" else "<argument>"
    if str(label).endswith(" of an iterable"):     # builtin max(values): no function to name
        return (f"gradlab has no derivative rule for {label}{where}: write the items out "
                f"(max(a, b, c)), or use the framework's reduction of an array (np.max(x))")
    if target is dict:
        return (f"a dict(...) built inside a call's arguments{where} is not differentiated: "
                f"gradlab reads a dict with constant keys in the function that builds it "
                f"(assigned to a name); pass its values as arguments instead")
    if target is list or target is tuple:
        return (f"{label}(...) of a value that carries a gradient{where} is not "
                f"differentiated: index it (x[0], x[1]), unpack it (first, *rest = x) or "
                f"build the list with a comprehension ([r for r in x])")
    receiver, _, method = str(label).rpartition(".")
    if receiver and method.isidentifier() and not all(
            part.isidentifier() for part in receiver.split(".")):
        # a method of an expression ((A.T @ A).trace): no name to register a rule under
        return (f"gradlab has no derivative rule for the method .{method}(){where}: write it "
                f"with functions gradlab differentiates, or register a rule for the function "
                f"the method calls with gradlab.adjoint")
    if not all(part.isidentifier() for part in str(label).split(".")):
        # a callable computed in the call itself (getattr(np, "sum")(...)): no name to give
        return (f"gradlab has no derivative rule for {label}{where}, a callable the call "
                f"computes: gradlab reads the function a call names; call it by its name "
                f"(np.sum(...)), or register a rule for that function with gradlab.adjoint")
    return (f"gradlab has no derivative rule for {label}{where}. Add one with\n"
            f"    @gradlab.adjoint({label})\n"
            f"    def {str(label).split('.')[-1]}_adjoint(result, {args}):\n"
            f"        d{first} = ...  # in terms of dresult\n"
            f"or mark it with gradlab.nondifferentiable({label}) if no gradient flows through it")
