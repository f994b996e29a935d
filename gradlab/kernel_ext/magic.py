"""``%%grad``: differentiate the function a cell defines and show its backward pass."""
from __future__ import annotations

import ast
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from ..errors import GradlabError, GradlabSyntaxError
from ..tensor import FRAMEWORKS, frameworks


@magics_class
class GradMagics(Magics):
    @magic_arguments(name="%grad")   # (the usage line adds a '%': it reads %%grad)
    @argument("--wrt", default=None,
              help="parameters to differentiate with respect to, by name or index, comma "
                   "separated (default: the first)")
    @argument("--mode", choices=("reverse", "forward"), default="reverse",
              help="reverse mode (gradient) or forward mode (jvp)")
    @argument("--backend", default="numpy",
              help=f"where --run runs: {', '.join(FRAMEWORKS)} or all")
    @argument("--device", default="cpu",
              help="cpu, or cuda / gpu / cuda:N where the machine has a GPU")
    @argument("--no-optimize", action="store_true",
              help="show every generated statement (no dead-code or copy removal)")
    @argument("--check", action="store_true",
              help="compare with finite differences and the framework's own autodiff")
    @argument("--run", default=None, metavar="ARGS",
              help="inputs to run on: a Python expression in the notebook's namespace (in "
                   "forward mode, the tangent comes last)")
    @argument("--name", default=None,
              help="the name the gradient function gets in the namespace (default d<func>)")
    @argument("--exercise", action="store_true",
              help="hide the generated code: write the backward pass yourself, then Check "
                   "(needs --run for example inputs)")
    @argument("--func", default=None,
              help="which function of the cell to differentiate, when it defines several")
    @cell_magic
    def grad(self, line: str, cell: str) -> Any:
        """Differentiate the function defined in this cell and show its generated code.

        The cell runs as usual, so the function exists as written; the generated function is
        put in the namespace too (as ``d<func>``, or ``--name``). With ``--run``, it runs on
        the given inputs and shows where it ran and how long it took.
        """
        args = self._arguments(line)
        if args.exercise and getattr(args, "mode", "reverse") == "forward":
            raise UsageError("%%grad --exercise is an exercise on the backward pass: drop "
                             "--mode forward")
        shell: Any = self.shell
        ns = shell.user_ns
        source = shell.transform_cell(cell)
        func_name = _function_name(source, args.func)
        saved = _snapshot(ns, source)
        try:
            df, inputs = _define_and_transform(shell, line, cell, source, func_name, args)
            gradient_name = _gradient_name(args, func_name)
            if args.exercise and inputs is None:
                raise UsageError("%%grad --exercise needs example inputs: add --run \"ARGS\"")
        except UsageError:
            _restore(ns, saved)   # a refused cell leaves the namespace as it was
            raise
        return _open_panel(ns, df, inputs, args, gradient_name)

    def _arguments(self, line: str) -> Any:
        """The cell's options, checked; argparse's complaints as one-line usage errors."""
        try:
            args = parse_argstring(self.grad, line)
        except UsageError as e:
            raise UsageError(_did_you_mean(str(e), self.grad.parser)) from None
        except Exception as e:  # argparse exits on errors; turn them into a message
            raise UsageError(f"%%grad: {e}") from None
        _validate(args)
        return args


def _define_and_transform(shell: Any, line: str, cell: str, source: str, func_name: str,
                          args: Any) -> tuple[Any, tuple[Any, ...] | None]:
    """Run the cell, differentiate its function and evaluate ``--run``'s inputs; gradlab's
    refusals become usage errors that name the cell's line."""
    # The cell's file starts with the %%grad line (as a comment), so that every line number
    # (gradlab's errors, the step-through, tracebacks) is the one the cell editor shows.
    text = f"# %%grad {line}\n{source}"
    filename = shell.compile.cache(text, shell.execution_count, cell)
    try:
        exec(compile(text, filename, "exec"), shell.user_ns)
        df = _transform(shell.user_ns.get(func_name), args)
        inputs = _inputs(shell, args.run) if args.run is not None else None
        if inputs is not None and args.backend != "all":
            from ..workbench.session import device_for
            device_for(args.backend, args.device)    # a missing GPU is said before any run
    except GradlabSyntaxError as e:
        raise UsageError(_cell_error(e, filename)) from None
    except GradlabError as e:
        raise UsageError(f"%%grad: {e}") from None
    return df, inputs


def _gradient_name(args: Any, func_name: str) -> str:
    """The notebook's name for the gradient function (``d<func>`` or ``--name``)."""
    name = args.name or f"d{func_name}"
    if not name.isidentifier():
        raise UsageError(f"%%grad: --name {name!r} is not a Python name")
    return name


def _open_panel(ns: dict[str, Any], df: Any, inputs: tuple[Any, ...] | None, args: Any,
                gradient_name: str) -> Any:
    """The panel over the new gradient, its name bound in the notebook (in an exercise only
    once solved: the name would hand out the answer), run on the inputs unless an exercise."""
    from ..workbench.session import GradSession
    from .panel import GradPanel
    session = GradSession(df, inputs)
    task = None
    if args.exercise and inputs is not None:   # (grad refused an exercise without inputs)
        from ..workbench.exercises import Exercise
        ns.pop(gradient_name, None)
        task = Exercise(df, *inputs, backend="numpy")
    else:
        ns[gradient_name] = df
    session.on_active.append(_binder(ns, gradient_name, None if task else df))
    panel = GradPanel(session, backend=args.backend, device=args.device, check=args.check,
                      exercise=task, name=gradient_name)
    if inputs is not None and task is None:
        panel.run()
    return panel


def _binder(ns: dict[str, Any], name: str, bound: Any) -> Any:
    """Rebind ``name`` to each new active version (an edit that compiled, Reset, a solved
    exercise), as long as the name still holds what the panel put there: a name the user has
    since given to something else, or a newer cell's gradient, is left alone."""
    state = {"bound": bound}

    def bind(version: Any) -> None:
        current = ns.get(name)
        if current is not state["bound"] and current is not None:
            return
        ns[name] = state["bound"] = version
    return bind


def _did_you_mean(message: str, parser: Any) -> str:
    """argparse's complaint about an option it does not know, with the closest known one."""
    import difflib
    text = f"%%grad: {message}"
    if "unrecognized arguments" not in message:
        return text
    known = [o for action in parser._actions for o in action.option_strings]
    hints = []
    for word in message.split(":", 1)[1].split():
        option = word.split("=", 1)[0]
        close = difflib.get_close_matches(option, known, n=1, cutoff=0.6)
        if option.startswith("-") and close:
            hints.append(f"{option}: did you mean {close[0]}?")
    return text + ("\n" + "\n".join(hints) if hints else "") + "\n(%%grad? lists the options)"


def _validate(args: Any) -> None:
    backend = args.backend
    if backend != "all" and backend not in frameworks():
        raise UsageError(f"%%grad: unknown --backend {backend!r}; choose one of "
                         f"{', '.join(frameworks())} or all")
    if args.device not in ("cpu", "cuda", "gpu") and not args.device.startswith(
            ("cuda:", "gpu:")):
        raise UsageError(f"%%grad: unknown --device {args.device!r}; choose cpu, or a GPU "
                         f"(cuda, gpu, cuda:1) where there is one")
    if args.device != "cpu" and args.run is None:
        pass  # the device matters only for runs; checked when running
    if args.name is not None and not args.name.isidentifier():
        raise UsageError(f"%%grad: --name {args.name!r} is not a Python name")
    if args.wrt is not None:
        from ..cli import parse_wrt
        try:
            parse_wrt(args.wrt)
        except GradlabError as e:
            raise UsageError(f"%%grad: {e}") from None


def _function_name(source: str, wanted: str | None) -> str:
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        raise UsageError(f"%%grad: the cell has a syntax error on line {(e.lineno or 0) + 1}: "
                         f"{e.msg}\n"
                         f"    {(e.text or '').rstrip()}") from None
    defs = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    if wanted is not None:
        if wanted not in defs:
            raise UsageError(f"%%grad: the cell defines no function {wanted!r} "
                             f"(it defines {', '.join(defs) or 'none'})")
        return wanted
    if not defs:
        raise UsageError("%%grad: the cell defines no function; write `def f(...):` in it")
    if len(defs) > 1:
        raise UsageError(f"%%grad: the cell defines {', '.join(defs)}; choose the one to "
                         f"differentiate with --func NAME (and its gradient's name with --name)")
    return defs[0]


def _transform(fn: Any, args: Any) -> Any:
    from ..api import grad, jvp
    from ..cli import parse_wrt
    wrt: Any = 0 if args.wrt is None else parse_wrt(args.wrt)
    make = grad if args.mode == "reverse" else jvp
    return make(fn, wrt, optimized=not args.no_optimize)


def _inputs(shell: Any, expression: str) -> tuple[Any, ...]:
    expression = expression.strip()
    if len(expression) >= 2 and expression[0] == expression[-1] and expression[0] in "'\"":
        expression = expression[1:-1]   # --run "W, x" keeps its quotes through argparse
    try:
        value = eval(expression, shell.user_ns)
    except Exception as e:
        raise UsageError(f"%%grad: --run {expression!r} failed: {type(e).__name__}: {e}") \
            from None
    return value if isinstance(value, tuple) else (value,)


def _snapshot(ns: dict[str, Any], source: str) -> dict[str, Any]:
    """What the cell is about to (re)define, so a failure can put it back."""
    missing = object()
    names: set[str] = set()
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        for sub in ast.walk(node) if isinstance(node, (ast.Assign, ast.AugAssign,
                                                       ast.AnnAssign, ast.Import,
                                                       ast.ImportFrom, ast.For)) else ():
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                names.add(sub.id)
            if isinstance(sub, ast.alias):
                names.add((sub.asname or sub.name).split(".")[0])
    return {n: ns.get(n, missing) for n in names} | {"__missing__": missing}


def _restore(ns: dict[str, Any], saved: dict[str, Any]) -> None:
    missing = saved.get("__missing__")
    for name, value in saved.items():
        if name == "__missing__":
            continue
        if value is missing:
            ns.pop(name, None)
        else:
            ns[name] = value


def _cell_error(e: GradlabSyntaxError, filename: str) -> str:
    where = f"line {e.lineno}" if e.lineno else "the cell"
    if e.filename == filename and e.lineno:
        # the cell's file starts with the %%grad line: its numbers are the cell editor's
        where = f"cell line {e.lineno}"
    message = str(e).split("\n  at ")[0]
    return f"%%grad: {message}\n  at {where}: {e.line}"
