"""Programs of the kind people write, as source text: a hypothesis strategy.

Unlike ``tests/hardening/generator.py``, which writes only what gradlab supports, this draws
from what people write: every spelling of gradlab's primitive table (``table.py``) with its
optional arguments in its own framework's words (``forms.py``), calls outside the table,
conversions, builtins, ``%``, containers, decorators, int/bool/complex/float32 inputs, and
constructs gradlab refuses (``try``, comprehensions, in-place updates...).

Programs are built *against their inputs*: the inputs are made first, and every candidate
statement is run on them (in a copy of the values so far) before it is kept. A statement the
framework rejects (a shape mismatch, a dtype clash, a value outside a function's domain, a
matrix norm of a vector) is drawn again. So every program runs, and returns a finite real
scalar, on its inputs; whether gradlab gets it right is the oracle's question.
"""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from hypothesis import strategies as st

from tests.hardening.people import dicts, forms, lists, switches
from tests.hardening.people.inputs import (DIALECTS, FRAMEWORK_OF, Param, framework_of_value,
                                           numpy_inputs, setup, to_dialect)
from tests.hardening.people.program import PeopleProgram
from tests.hardening.people.table import Spelling, primitive_table

HEADERS = {
    "numpy": "import functools\nimport math\n\nimport numpy as np\nimport scipy.special\n\nimport gradlab\n",
    "autograd": "import functools\nimport math\n\nimport autograd.numpy as np\n\nimport gradlab\n",
    "torch": "import functools\nimport math\n\nimport torch\nimport torch.nn.functional as F\n\nimport gradlab\n",
    "jax": "import functools\nimport math\n\nimport jax\nimport jax.numpy as jnp\nimport jax.scipy.special\n\nimport gradlab\n",
    "tensorflow": "import functools\nimport math\n\nimport tensorflow as tf\n\nimport gradlab\n",
}
MODULE_ALIAS = {"numpy": "np", "autograd": "np", "torch": "torch", "jax": "jnp",
                "tensorflow": "tf"}
ARGS_DIALECT = {"numpy": "numpy", "autograd": "numpy", "jax": "numpy", "torch": "torch",
                "tensorflow": "tensorflow"}
#: The table's roots each dialect draws function spellings from.
ROOTS = {"numpy": ("numpy", "math", "builtins", "scipy", "gradlab"),
         "autograd": ("autograd.numpy", "math", "builtins", "gradlab"),
         "jax": ("jax.numpy", "jax", "math", "builtins", "gradlab"),
         "torch": ("torch", "math", "builtins", "gradlab"),
         "tensorflow": ("tensorflow", "math", "builtins", "gradlab")}
#: Names of a few functions the program's own text needs (reductions for the return...).
NAMES = {
    "numpy": dict(sum="np.sum", mean="np.mean", exp="np.exp", log="np.log", tanh="np.tanh",
                  max="np.max", argmax="np.argmax", argsort="np.argsort", sqrt="np.sqrt",
                  zeros_like="np.zeros_like", eye="np.eye", ones="np.ones", stack="np.stack",
                  array="np.array", abs="np.abs", maximum="np.maximum", std="np.std",
                  sigmoid="scipy.special.expit", zeros="np.zeros", where="np.where"),
    "torch": dict(sum="torch.sum", mean="torch.mean", exp="torch.exp", log="torch.log",
                  tanh="torch.tanh", max="torch.max", argmax="torch.argmax",
                  argsort="torch.argsort", sqrt="torch.sqrt", zeros_like="torch.zeros_like",
                  eye="torch.eye", ones="torch.ones", stack="torch.stack", array="torch.tensor",
                  abs="torch.abs", maximum="torch.maximum", std="torch.std",
                  sigmoid="torch.sigmoid", zeros="torch.zeros", where="torch.where"),
    "jax": dict(sum="jnp.sum", mean="jnp.mean", exp="jnp.exp", log="jnp.log", tanh="jnp.tanh",
                max="jnp.max", argmax="jnp.argmax", argsort="jnp.argsort", sqrt="jnp.sqrt",
                zeros_like="jnp.zeros_like", eye="jnp.eye", ones="jnp.ones", stack="jnp.stack",
                array="jnp.array", abs="jnp.abs", maximum="jnp.maximum", std="jnp.std",
                sigmoid="jax.nn.sigmoid", zeros="jnp.zeros", where="jnp.where"),
    "tensorflow": dict(sum="tf.reduce_sum", mean="tf.reduce_mean", exp="tf.exp", log="tf.math.log",
                       tanh="tf.tanh", max="tf.reduce_max", argmax="tf.argmax",
                       argsort="tf.argsort", sqrt="tf.sqrt", zeros_like="tf.zeros_like",
                       eye="tf.eye", ones="tf.ones", stack="tf.stack", array="tf.constant",
                       abs="tf.abs", maximum="tf.maximum", std="tf.math.reduce_std",
                       sigmoid="tf.sigmoid", zeros="tf.zeros", where="tf.where"),
}
NAMES["autograd"] = NAMES["numpy"] | {"sigmoid": "np.tanh"}
FLOAT64 = {"numpy": "np.float64", "autograd": "np.float64", "torch": "torch.float64",
           "jax": "jnp.float64", "tensorflow": "tf.float64"}

SHAPES = ((), (4,), (3,), (3, 4), (2, 3), (3, 3), (4, 1), (2, 2, 3))
PARAM_NAMES = ("x", "w", "b", "y", "W", "t")

#: How often each dialect is drawn, and each kind of statement.
DIALECT_WEIGHTS = {"numpy": 40, "torch": 25, "jax": 15, "tensorflow": 12, "autograd": 8}
#: Programs (in a hundred) whose ``f`` takes a list or tuple of arrays (``lists.py``).
LIST_ARGUMENT_PERCENT = 7
#: Programs (in a hundred) whose ``f`` takes a dict of arrays (``dicts.py``): JAX-style
#: ``params = {"l1": {"W": .., "b": ..}, ...}``, read through the program's own helpers.
DICT_ARGUMENT_PERCENT = 7


def STOPS_GRADIENT(text: str, dialect: str) -> bool:
    """Whether a conversion leaves the framework's autodiff on purpose (``x.detach()``,
    ``torch.tensor(x)``, ``tf.constant(x.numpy())``): its framework's autodiff, not finite
    differences, says what the derivative is."""
    return any(s in text for s in (".detach()", ".numpy()")) or (
        dialect == "torch" and text.startswith(("torch.tensor(", "torch.as_tensor(")))


def callee(path: str, dialect: str) -> str:
    """The text people write for a table path: ``numpy.linalg.norm`` -> ``np.linalg.norm``."""
    for prefix, alias in (("autograd.numpy.", "np."), ("jax.numpy.", "jnp."),
                          ("numpy.", "np."), ("torch.nn.functional.", "F."),
                          ("tensorflow.", "tf."), ("builtins.", "")):
        if path.startswith(prefix):
            return alias + path[len(prefix):]
    return path


def spellings_for(dialect: str) -> list[Spelling]:
    roots = ROOTS[dialect]
    out = []
    for s in primitive_table():
        if s.kind == "function":
            root = s.root
            if root in roots or (root == "jax" and "jax" in roots and not
                                 s.path.startswith("jax.numpy")):
                out.append(s)
        elif dialect != "tensorflow" or s.kind == "property":
            out.append(s)
    return out


#: Primitives whose result is an int array (see switches.INT_ARRAYS_ON_TF, INT_ARRAYS_ON_TORCH).
INT_VALUED = {"argmax", "argmin", "argsort", "arange", "one_hot"}
#: Primitives that make a list or tuple on the way (see switches.HVP_OF_CONTAINERS).
CONTAINER_VALUED = {"split", "unstack", "meshgrid", "slogdet", "sum_list"}
#: Primitives whose result is bool (see switches.BOOL_VALUES).
BOOL_VALUED = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
               "logical_and", "logical_or", "logical_not", "isnan", "isinf", "isfinite", "all",
               "any"}


def allowed(sp: Spelling) -> bool:
    """Whether the switches let the generator write this spelling."""
    if sp.prim in BOOL_VALUED and not switches.BOOL_VALUES:
        return False
    if sp.path in ("builtins.max", "builtins.min") and not switches.BUILTIN_MAX_MIN_OF_MANY:
        return True       # two numbers only (forms.builtin_extremum reads the switch)
    if sp.prim == "sum_list" and not switches.BUILTIN_SUM_OF_ARRAYS:
        return False
    if sp.prim == "array" and not switches.CONVERSIONS:
        return False
    if sp.prim == "mod" and not switches.MOD:
        return False
    if sp.prim == "solve" and not switches.LINALG_SOLVE:
        return False
    return True


def is_array(v: Any) -> bool:
    return framework_of_value(v) in ("numpy", "torch", "tensorflow", "jax") and hasattr(v, "shape")


def is_operand(v: Any) -> bool:
    """A value an array function may take: an array, or a Python/NumPy number."""
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float, complex, np.number)):
        return True
    return is_array(v)


def shape_of(v: Any) -> tuple[int, ...]:
    try:
        return tuple(int(n) for n in v.shape)
    except (AttributeError, TypeError):
        return ()


def as_numpy(v: Any) -> np.ndarray | None:
    try:
        if hasattr(v, "detach"):
            return v.detach().numpy()
        if hasattr(v, "numpy") and not isinstance(v, np.ndarray):
            return np.asarray(v.numpy())
        return np.asarray(v)
    except Exception:
        return None


def sane(v: Any, depth: int = 0) -> bool:
    """A value a program may go on with: finite, moderate, small, not an object array."""
    if depth > 3:
        return False
    if isinstance(v, (list, tuple)):
        return len(v) <= 64 and all(sane(u, depth + 1) for u in v)
    if isinstance(v, dict):
        return len(v) <= 16 and all(sane(u, depth + 1) for u in v.values())
    if v is None or isinstance(v, (str, bool, type, slice, range)) or callable(v):
        return True
    if isinstance(v, (int, float, complex, np.generic)) or is_array(v):
        a = as_numpy(v)
        if a is None or a.dtype == object or a.size > 512:
            return False
        if a.dtype.kind in "fc":
            return bool(np.all(np.isfinite(a))) and (a.size == 0 or float(np.max(np.abs(a))) <= 1e4)
        return True
    return framework_of_value(v) in ("numpy", "torch", "tensorflow", "jax")


def is_real_scalar(v: Any) -> bool:
    a = as_numpy(v) if is_operand(v) else None
    return a is not None and a.shape == () and a.dtype.kind in "fiub" and bool(np.isfinite(a))


def snapshot(v: Any) -> Any:
    """A copy that an in-place statement cannot change under the builder."""
    if isinstance(v, np.ndarray):
        return v.copy()
    if hasattr(v, "clone") and hasattr(v, "detach"):
        return v.detach().clone()
    if type(v) is list:
        return [snapshot(u) for u in v]
    if type(v) is dict:
        return {k: snapshot(u) for k, u in v.items()}
    if type(v) is tuple:
        return tuple(snapshot(u) for u in v)
    return v


def stored_names(code: str) -> list[str]:
    """The names ``code`` assigns, in order of appearance (an ordered list, not a set: the
    builder's choices must not depend on string hashing, or derandomized runs would differ
    from one process to the next)."""
    out: list[str] = []
    for node in ast.walk(ast.parse(code)):
        name = None
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            name = node.id
        elif isinstance(node, ast.FunctionDef):
            name = node.name
        if name is not None and name not in out:
            out.append(name)
    return out


def result_names(code: str) -> list[str]:
    """The names ``code`` assigns one value to (``v = ...``, not loop variables or unpacked
    items), in source order: the last is what the statement computes."""
    assigns = [node for node in ast.walk(ast.parse(code)) if isinstance(node, ast.Assign)
               and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)]
    return [a.targets[0].id for a in sorted(assigns, key=lambda a: a.lineno)]  # type: ignore


def read_names(code: str) -> set[str]:
    return {n.id for n in ast.walk(ast.parse(code))
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def value_kinds(v: Any) -> set[str]:
    """What a statement made, for the oracle's switches: ``value: int array``, ``value: bool
    array``, ``value: Python float`` (a number outside any framework)."""
    if isinstance(v, (list, tuple)):
        return {"value: container"}.union(*(value_kinds(u) for u in v))
    if isinstance(v, dict):
        return {"value: container"}.union(*(value_kinds(u) for u in v.values()))
    if isinstance(v, bool):
        return set()
    if isinstance(v, (float, int)) and not isinstance(v, np.generic):
        return {"value: Python float"} if isinstance(v, float) else {"value: Python int"}
    if is_array(v) or isinstance(v, np.generic):
        a = as_numpy(v)
        if a is not None and a.dtype.kind in "iu":
            return {"value: int array"}
        if a is not None and a.dtype.kind == "b":
            return {"value: bool array"}
        if isinstance(v, np.generic):
            return {"value: NumPy scalar"}
    return set()


class Rejected(Exception):
    """A candidate statement the framework does not accept on the inputs."""


@dataclass
class Var:
    value: Any
    carries: bool        # computed from a parameter that is differentiated


class Builder:
    """Draws one program. Family renderers in ``forms`` call back into it (``ctx``)."""

    def __init__(self, draw: Callable[[Any], Any], dialect: str) -> None:
        self.draw = draw
        self.dialect = dialect
        self.framework = FRAMEWORK_OF[dialect]
        self.args_dialect = ARGS_DIALECT[dialect]
        self.mod = MODULE_ALIAS[dialect]
        self.names = NAMES[dialect]
        self.prim = ""
        self.constructs: set[str] = set()
        self.lines: list[str] = []          # f's body, indented by 4
        self.module_blocks: list[str] = []  # helpers, constants, decorators (module level)
        self.decorator: str | None = None
        self.defaults: list[str] = []       # "scale=0.5" parameters of f
        self.env: dict[str, Var] = {}
        self.list_params: list[str] = []    # parameters that are lists, tuples or dicts of arrays
        self.dict_style: dict[str, bool] | None = None   # how dicts.py wrote its dense helper
        self.list_results: list[str] = []   # the values statements made of them
        self.counter = 0
        self.spellings = spellings_for(dialect)
        self.globals: dict[str, Any] = {}
        exec(compile(HEADERS[dialect], "<people header>", "exec"), self.globals)

    # --- draws ------------------------------------------------------------------------------
    def choice(self, seq: Any) -> Any:
        seq = list(seq)
        return seq[self.draw(st.integers(0, len(seq) - 1))]

    def chance(self, n: int) -> bool:
        """True one time in ``n`` (on the largest draw: hypothesis's simplest examples, made of
        zeros, are then plain programs without the rare constructs)."""
        return self.draw(st.integers(0, n - 1)) == n - 1

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def weighted(self, table: dict[str, float]) -> str:
        keys = list(table)
        total = sum(table.values())
        r = self.draw(st.integers(0, 999)) / 1000 * total
        for k in keys:
            r -= table[k]
            if r < 0:
                return k
        return keys[-1]

    def fresh(self, stem: str = "v") -> str:
        self.counter += 1
        return f"{stem}{self.counter}"

    # --- values -------------------------------------------------------------------------------
    def namespace(self) -> dict[str, Any]:
        ns = dict(self.globals)
        ns.update({n: snapshot(v.value) for n, v in self.env.items()})
        return ns

    def value_of(self, text: str) -> Any:
        ns = dict(self.globals)
        ns.update({n: v.value for n, v in self.env.items()})
        return eval(text, ns)

    def shape(self, text: str) -> tuple[int, ...]:
        try:
            return shape_of(self.value_of(text))
        except Exception:
            return ()

    def ndim(self, text: str) -> int:
        return len(self.shape(text))

    def mark(self, text: str) -> None:
        """Note what kind of value an inline expression makes (see :func:`value_kinds`)."""
        try:
            self.constructs.update(value_kinds(self.value_of(text)))
        except Exception:
            pass

    def carries(self, code: str) -> bool:
        return any(self.env[n].carries for n in read_names(code) if n in self.env)

    def run(self, code: str, label: str | None = None) -> dict[str, Any]:
        """Run ``code`` (lines at f's level) on copies of the values so far; keep it if the
        framework accepts it and its results are sane, else raise :class:`Rejected`."""
        ns = self.namespace()
        try:
            exec(compile(code, "<candidate>", "exec"), ns)
        except Exception as e:
            raise Rejected(f"{type(e).__name__}: {e}") from None
        stored = stored_names(code)
        names = list(self.env) + [n for n in stored if n not in self.env]
        changed = {n: ns[n] for n in names if n in ns}
        if not all(sane(v) for v in changed.values()):
            raise Rejected("not sane")
        return changed

    def accept(self, code: str, changed: dict[str, Any], *constructs: str) -> None:
        carries = self.carries(code)
        stored = stored_names(code)
        for n, v in changed.items():
            if n in stored:
                self.env[n] = Var(v, carries or (n in self.env and self.env[n].carries
                                                 and n not in stored))
            else:
                self.env[n].value = v
        self.lines.extend("    " + line for line in code.splitlines())
        self.constructs.update(constructs)
        if read_names(code) & set(self.list_params):
            made = [n for n in result_names(code) if is_operand(self.env[n].value)]
            self.list_results += made[-1:]
        for n in stored:
            if n in changed:
                self.constructs.update(value_kinds(changed[n]))

    def attempt(self, make: Callable[[], tuple[str, tuple[str, ...]] | None], tries: int = 6
                ) -> bool:
        """Draw a statement with ``make`` (code, constructs) until one runs."""
        for _ in range(tries):
            try:
                made = make()
            except Rejected:
                continue
            if made is None:
                continue
            code, constructs = made
            try:
                changed = self.run(code)
            except Rejected:
                continue
            self.accept(code, changed, *constructs)
            return True
        return False

    # --- operands (called by the families in forms.py) ------------------------------------------
    def pool(self, want: Callable[[Any], bool] = is_operand, carrying: bool | None = None
             ) -> list[str]:
        return [n for n, v in self.env.items() if want(v.value) and not callable(v.value)
                and (carrying is None or v.carries == carrying)]

    def operand(self, want: Callable[[Any], bool] = is_operand) -> str:
        carriers = self.pool(want, True)
        others = self.pool(want, False)
        if carriers and (not others or not self.chance(4)):
            if len(carriers) > 2 and not self.chance(3):   # people chain: the latest values
                return self.choice(carriers[-2:])
            return self.choice(carriers)
        if others:
            return self.choice(others)
        raise Rejected("no operand")

    def partner(self, x: str, kind: str = "") -> str:
        shape = self.shape(x)
        if kind == "same":
            same = [n for n in self.pool(is_array) if shape_of(self.env[n].value) == shape
                    and n != x]
            if same and not self.chance(3):
                return self.choice(same)
            return self.choice([f"{x} * 0.5", f"{x} ** 2", f"(1.0 - {x})"])
        if kind == "vector":
            vec = [n for n in self.pool(is_array) if len(shape_of(self.env[n].value)) == 1]
            return self.choice(vec) if vec else x
        if kind in ("pos", "nonzero"):
            if self.chance(2):
                return self.choice(["2.0", "0.5", "1.5", "3.0"])
            return self.in_domain(self.operand(), "pos")
        if kind == "any":
            return self.operand()
        fits = []
        for n in self.pool():
            try:
                if np.broadcast_shapes(shape_of(self.env[n].value), shape) == shape:
                    fits.append(n)
            except ValueError:
                pass
        if fits and not self.chance(4):
            return self.choice(fits)
        return self.const()

    def const(self) -> str:
        return self.choice(["2.0", "0.5", "1.5", "0.1", "3.0", "2", "-1.0"])

    def threshold(self) -> str:
        return self.choice(["0.0", "0.5", "-0.5", "0.2"])

    def float_dtype_kw(self) -> str:
        if self.dialect in ("torch", "tensorflow") or self.chance(3):
            return f", dtype={FLOAT64[self.dialect]}"
        return ""

    def name(self, what: str) -> str:
        return self.names[what]

    def in_domain(self, x: str, domain: str | None) -> str:
        """``x``, or ``x`` reshaped into ``domain`` when its values are outside it."""
        if not domain or domain == "square":
            return x
        try:
            a = as_numpy(self.value_of(x))
        except Exception:
            a = None
        if a is not None and a.dtype.kind in "fiu" and a.size:
            a = a.astype(float)
            ok = {"pos": a > 0.05, "nonzero": np.abs(a) > 0.05, "unit": np.abs(a) < 0.95,
                  "ge1": a > 1.05, "gtm1": a > -0.95}[domain]
            if np.all(ok):
                return x
        return {"pos": f"({x} ** 2 + 0.5)", "nonzero": f"({x} ** 2 + 0.5)",
                "unit": f"({x} / (1.0 + {x} ** 2) ** 0.5 * 0.9)", "ge1": f"({x} ** 2 + 1.2)",
                "gtm1": f"({x} ** 2)"}[domain]

    def axis(self, x: str, extra: int = 0) -> int | None:
        n = self.ndim(x) + extra
        if n == 0:
            return None
        return self.choice(list(range(n)) + [-1])

    def axes(self, x: str, as_list: bool = False) -> str:
        n = self.ndim(x)
        axes = (0, 1) if n >= 2 else (0,)
        if n == 3 and self.chance(2):
            axes = (1, 2)
        return str(list(axes)) if as_list else str(axes)

    def permutation(self, n: int) -> tuple[int, ...]:
        if n <= 1:
            return tuple(range(n))
        perms = [tuple(reversed(range(n)))] + ([(1, 0, 2), (0, 2, 1), (2, 0, 1)] if n == 3 else [])
        return self.choice(perms)

    def reshape_target(self, x: str) -> tuple[int, ...]:
        size = int(np.prod(self.shape(x))) if self.shape(x) else 1
        options = [(size,), (1, size), (size, 1), (-1,)]
        for a in (2, 3, 4, 6):
            if size % a == 0 and size // a > 1:
                options += [(a, size // a), (a, -1)]
        return self.choice(options)

    def scalar_of(self, x: str) -> str:
        n = self.ndim(x)
        if n == 0:
            return x
        return f"{x}[{', '.join(self.choice(['0', '-1', '1']) if self.shape(x)[k] > 1 else '0' for k in range(n))}]"

    def matmul_partner(self, x: str) -> str | None:
        shape = self.shape(x)
        if not shape:
            return None
        want = shape[-1]
        fits = [n for n in self.pool(is_array) if shape_of(self.env[n].value)
                and (shape_of(self.env[n].value)[0] == want if len(shape_of(self.env[n].value)) <= 2 else False)]
        if fits and not self.chance(4):
            return self.choice(fits)
        if len(shape) == 2 and (x in self.env or switches.ATTRIBUTE_OF_EXPRESSION):
            return f"{x}.T" if self.dialect != "tensorflow" else f"tf.transpose({x})"
        return x if len(shape) == 1 else None

    def square_matrix(self, x: str) -> str | None:
        shape = self.shape(x)
        eye = f"{self.names['eye']}({{n}}{self.float_dtype_kw() if self.dialect in ('torch', 'tensorflow') else ''})"
        if len(shape) == 2 and shape[0] == shape[1]:
            return x if self.chance(2) else f"({x} + {eye.format(n=shape[0])} * 3.0)"
        if len(shape) == 2:
            t = f"{x}.T" if self.dialect != "tensorflow" else f"tf.transpose({x})"
            if x not in self.env and not switches.ATTRIBUTE_OF_EXPRESSION:
                t = f"{self.mod}.transpose({x})" if self.dialect != "torch" else f"torch.t({x})"
            return f"({x} @ {t} + {eye.format(n=shape[0])})"
        return None

    def solve_rhs(self, a: str) -> str:
        n = self.shape(a)[0] if self.shape(a) else 3
        vec = [v for v in self.pool(is_array) if shape_of(self.env[v].value) == (n,)]
        return self.choice(vec) if vec else f"{self.names['ones']}({n}{self.float_dtype_kw()})"

    # --- statements -------------------------------------------------------------------------
    def assign(self, expr: str, *constructs: str) -> tuple[str, tuple[str, ...]]:
        return f"{self.fresh()} = {expr}", constructs

    def table_call(self) -> tuple[str, tuple[str, ...]] | None:
        sp: Spelling = self.choice(self.spellings)
        self.prim = sp.prim
        if not allowed(sp):
            return None
        function, method = forms.family_of(sp.prim)
        x = self.operand()
        if self.chance(5) and (sp.kind != "property" or switches.ATTRIBUTE_OF_EXPRESSION):
            x = self.nested_operand() or x     # a nested call as the operand
        x = self.in_domain(x, forms.DOMAIN.get(sp.prim))
        if not self.fits_switches(sp, x):
            return None
        if sp.kind == "function":
            if sp.root == "math":
                text = forms.math_scalar(self, callee(sp.path, self.dialect), x)
            elif sp.path in ("builtins.max", "builtins.min"):
                text = forms.builtin_extremum(self, callee(sp.path, self.dialect), x)
            elif sp.root == "builtins" and sp.prim != "sum_list":
                text = forms.builtin_unary(self, callee(sp.path, self.dialect), x)
            elif function is None:
                return None
            else:
                text = function(self, callee(sp.path, self.dialect), x)
            label = callee(sp.path, self.dialect)
        elif sp.kind == "method":
            text = method(self, sp.path, x) if method else f"{x}.{sp.path}()"
            label = f".{sp.path}()"
        else:
            text = forms.shape_property(self, sp.path, x)
            label = f".{sp.path}"
        if text is None:
            return None
        if sp.prim == "stop_gradient":
            return self.assign(text, f"table: {label}", f"stops gradient: {label}")
        if sp.prim in INT_VALUED:
            return self.assign(text, f"table: {label}", "value: int array")
        if sp.prim in CONTAINER_VALUED:
            return self.assign(text, f"table: {label}", "value: container")
        return self.assign(text, f"table: {label}")

    def fits_switches(self, sp: Spelling, x: str) -> bool:
        """Whether the switches let ``sp`` take the operand ``x``."""
        if sp.prim in ("softmax", "log_softmax", "argsort", "sort", "take_along_axis") and \
                not switches.AXIS_FUNCTIONS_OF_SCALARS and not self.ndim(x):
            return False
        if sp.prim in ("transpose", "swapaxes", "moveaxis") and not \
                switches.TRANSPOSE_OF_SCALARS and self.ndim(x) <= 1:
            return False
        if sp.path == "scipy.special.softmax" and not switches.SCIPY_SOFTMAX_OVER_ALL and \
                self.ndim(x) >= 2:
            return False
        if sp.prim in ("var", "std") and not switches.STATISTICS_OF_SCALARS and \
                int(np.prod(self.shape(x))) <= 1:
            return False
        return True

    def nested_operand(self) -> str | None:
        """An operand that is itself a call (``np.sum(np.tanh(x @ W))``)."""
        sp: Spelling = self.choice([s for s in self.spellings if s.kind == "function"])
        function, _ = forms.family_of(sp.prim)
        if not allowed(sp):
            return None
        if function is None or sp.root in ("math", "builtins"):
            return None
        saved = self.prim
        self.prim = sp.prim
        x = self.in_domain(self.operand(), forms.DOMAIN.get(sp.prim))
        if not self.fits_switches(sp, x):
            self.prim = saved
            return None
        text = function(self, callee(sp.path, self.dialect), x)
        self.prim = saved
        if text is None:
            return None
        if sp.prim in INT_VALUED:
            self.constructs.add("value: int array")
        if sp.prim in CONTAINER_VALUED:
            self.constructs.add("value: container")
        try:
            value = self.value_of(text)
        except Exception:
            return None
        if not is_operand(value) or not sane(value):
            return None
        self.constructs.add(f"table: {callee(sp.path, self.dialect)}")
        return text

    def off_table_call(self) -> tuple[str, tuple[str, ...]] | None:
        if not switches.CHAINED_OFF_TABLE_CALLS and any(
                c.startswith("off-table") for c in self.constructs):
            return None
        templates = forms.OFF_TABLE_TEMPLATES.get(self.dialect, [])
        calls = forms.OFF_TABLE.get(self.dialect, [])
        x = self.operand()
        if templates and self.chance(3):
            t = self.choice(templates)
            y = self.partner(x, "same")
            text = t.format(x=x, y=y)
            head = t.split("(")[0].replace("{x}", "x")
            return self.assign(text, f"off-table: {head}")
        fn, arity = self.choice(calls)
        args = [x] + [self.partner(x) for _ in range(arity - 1)]
        if fn.startswith("math."):
            args = [self.scalar_of(a) if a in self.env else a for a in args]
        return self.assign(f"{fn}({', '.join(args)})", f"off-table: {fn}")

    def operator(self) -> tuple[str, tuple[str, ...]] | None:
        x = self.operand()
        op = self.choice(["+", "-", "*", "/", "**", "@", "%", "//", "neg", "abs", "+", "*"])
        if op == "@":
            y = self.matmul_partner(x)
            if y is None:
                return None
            return self.assign(f"{x} @ {y}", "operator: @")
        if op == "neg":
            return self.assign(f"-{x}", "operator: unary -")
        if op == "abs":
            return self.assign(f"abs({x})", "builtin: abs")
        if op == "**":
            e = self.choice(["2", "3", "0.5", "2.0", "-1", self.partner(x, "pos")])
            base = self.in_domain(x, "pos") if e not in ("2", "3", "2.0") else x
            return self.assign(f"{base} ** {e}", "operator: **")
        if op == "%" and not switches.MOD:
            op = "/"
        if op in ("/", "%", "//"):
            y = self.partner(x, "nonzero")
            if self.chance(4):
                return self.assign(f"{self.const()} {op} {self.in_domain(x, 'nonzero')}",
                                   f"operator: {op}")
            return self.assign(f"{x} {op} {y}", f"operator: {op}")
        y = self.partner(x)
        if self.chance(4):
            x, y = y, x
        return self.assign(f"{x} {op} {y}", f"operator: {op}")

    def builtin(self) -> tuple[str, tuple[str, ...]] | None:
        x = self.operand()
        s = self.scalar_of(x)
        kind = self.choice(["divmod", "round", "len", "max3", "maxiter", "maxgen", "minlist",
                            "sum", "float", "int", "pow", "mod"])
        if kind == "round" and not switches.BUILTIN_ROUND or \
                kind == "divmod" and not switches.DIVMOD or kind in ("max3", "maxiter", "maxgen",
                                                                     "minlist") \
                and not switches.BUILTIN_MAX_MIN_OF_MANY or kind == "sum" and not \
                switches.BUILTIN_SUM_OF_ARRAYS or kind == "int" and not switches.BOOL_VALUES:
            return None
        if kind == "divmod":
            q, r = self.fresh("q"), self.fresh("r")
            return f"{q}, {r} = divmod({x}, {self.choice(['1.0', '0.5', '2.0'])})", \
                ("builtin: divmod",)
        if kind == "round":
            return self.assign(f"round({s}{self.choice(['', ', 2', ', 1'])})", "builtin: round")
        if kind == "len":
            if not self.ndim(x):
                return None
            return self.assign(f"{x} / len({x})", "builtin: len")
        if kind == "max3":
            y, z = self.scalar_of(self.operand()), self.scalar_of(self.operand())
            return self.assign(f"{self.choice(['max', 'min'])}({s}, {y}, {z})",
                               "builtin: max/min of 3")
        if kind == "maxiter":
            if self.ndim(x) != 1:
                return None
            return self.assign(f"{self.choice(['max', 'min'])}({x})", "builtin: max/min of an array")
        if kind == "maxgen":
            if self.ndim(x) != 1:
                return None
            v = self.fresh("v")
            items = self.choice([f"{v} * {v} for {v} in {x}", f"abs({v}) for {v} in {x}",
                                 f"{x}[i] - {s} for i in range(len({x}))"])
            return self.assign(f"{self.choice(['max', 'min'])}"
                               f"{self.choice([f'({items})', f'([{items}])'])}",
                               "builtin: max/min of a generator or comprehension")
        if kind == "minlist":
            y = self.scalar_of(self.operand())
            return self.assign(f"{self.choice(['max', 'min'])}([{s}, {y}])",
                               "builtin: max/min of a list")
        if kind == "sum":
            if self.ndim(x) == 0:
                return None
            return self.assign(self.choice([f"sum({x})", f"sum({x}) / len({x})"]),
                               "builtin: sum of an array")
        if kind == "float":
            return self.assign(f"float({s})", "builtin: float")
        if kind == "int":
            return self.assign(f"{x} * int({s} > 0)", "builtin: int of a comparison")
        if kind == "pow":
            return self.assign(f"pow({x}, 2)", "builtin: pow")
        if not switches.MOD:
            return None
        return self.assign(f"{x} % {self.choice(['1.0', '2.0', '0.7'])}", "operator: %")

    def conversion(self) -> tuple[str, tuple[str, ...]] | None:
        if not switches.CONVERSIONS:
            return None
        x = self.operand()
        d = self.dialect
        options = {
            "numpy": [f"np.asarray({x})", f"np.array({x})", f"np.array({x}, dtype=float)",
                      f"{x}.astype(np.float64)", f"np.asarray({x}, dtype=np.float64)",
                      f"np.array({x}.tolist())" if self.ndim(x) else f"float({x})",
                      f"np.float64({x})", f"{x}.copy()", f"np.copy({x})"],
            "autograd": [f"np.asarray({x})", f"np.array({x})", f"{x}.astype(np.float64)"],
            "torch": [f"torch.as_tensor({x})", f"torch.tensor({x})", f"{x}.double()",
                      f"{x}.float()" if switches.MIXED_PRECISION else f"{x}.double()",
                      f"{x}.clone()", f"{x}.detach()", f"torch.as_tensor({x}, dtype=torch.float64)",
                      f"{x}.to(torch.float64)", f"torch.from_numpy({x}.detach().numpy())",
                      f"torch.tensor({x}.tolist())" if self.ndim(x) else f"float({x})"],
            "jax": [f"jnp.asarray({x})", f"jnp.array({x})", f"{x}.astype(jnp.float64)",
                    f"jnp.asarray({x}, dtype=jnp.float64)", f"jnp.array({x}.tolist())"
                    if self.ndim(x) else f"float({x})"],
            "tensorflow": [f"tf.convert_to_tensor({x})", f"tf.constant({x})", f"tf.identity({x})",
                           f"tf.cast({x}, tf.float64)", f"tf.convert_to_tensor({x}, dtype=tf.float64)",
                           f"tf.constant({x}.numpy())"],
        }[d]
        if self.ndim(x) == 0 or self.chance(4):
            options = options + [f"float({self.scalar_of(x)})"]
        text = self.choice(options)
        head = text.split("(")[0] if not text.startswith(x) else f".{text[len(x) + 1:].split('(')[0]}()"
        if STOPS_GRADIENT(text, self.dialect):
            return self.assign(text, f"conversion: {head}", f"stops gradient: {head}")
        if ".tolist()" in text:
            # x.tolist() is a method gradlab keeps as written (TensorFlow's tensors have none:
            # test_array_of_a_list_on_backends, switch OFF_TABLE_CALLS_ON_OTHER_BACKENDS)
            return self.assign(text, f"conversion: {head}", "off-table: .tolist()")
        return self.assign(text, f"conversion: {head}")

    def reassign_param(self) -> tuple[str, tuple[str, ...]] | None:
        """``x = np.asarray(x)`` (or a reshape, a cast) at the top of the function."""
        if not switches.CONVERSIONS:
            return None
        params = [n for n in self.param_names if n in self.env and is_array(self.env[n].value)]
        if not params:
            return None
        p = self.choice(params)
        conv = {"numpy": [f"np.asarray({p})", f"np.array({p}, dtype=float)", f"{p}.reshape(-1)",
                          f"np.atleast_1d({p})", f"{p}.astype(float)"],
                "autograd": [f"np.asarray({p})", f"np.array({p})"],
                "torch": [f"torch.as_tensor({p})", f"{p}.double()", f"{p}.view(-1)",
                          f"{p}.reshape(-1)"],
                "jax": [f"jnp.asarray({p})", f"jnp.atleast_1d({p})", f"{p}.reshape(-1)"],
                "tensorflow": [f"tf.convert_to_tensor({p})", f"tf.reshape({p}, [-1])",
                               f"tf.cast({p}, tf.float64)"]}[self.dialect]
        text = self.choice(conv)
        return f"{p} = {text}", (f"reassigned parameter: {text.replace(p, 'x')}",)

    def subscript(self) -> tuple[str, tuple[str, ...]] | None:
        x = self.operand(is_array)
        shape = self.shape(x)
        if not shape:
            return None
        n = shape[0]
        numpy_indexing = self.dialect != "tensorflow"   # TF reads lists and masks otherwise
        options = ["[0]", "[-1]", "[1:]", "[:-1]", "[::2]", "[None]", "[..., 0]",
                   f"[[0, {n - 1}]]" if switches.LIST_INDICES and numpy_indexing else "[0]",
                   f"[{x} > 0]" if numpy_indexing else "[0]",
                   f"[{self.names['argmax']}({x})]" if len(shape) == 1 else "[0]"]
        if len(shape) >= 2:
            options += ["[:, 0]", "[0, 1]", "[1:, :2]", "[:, -1]", "[:, None]", "[0][1]"]
        if switches.NEGATIVE_STEP_SLICES:
            options += ["[::-1]"] + (["[:, ::-1]"] if len(shape) >= 2 else [])
        index = self.choice(options)
        kind = {"[0]": "int", "[-1]": "int", "[None]": "None", "[..., 0]": "Ellipsis",
                f"[[0, {n - 1}]]": "int list", f"[{x} > 0]": "mask", "[0][1]": "chained",
                "[0, 1]": "int"}.get(index, "slice")
        if "argmax" in index:
            kind = "argmax"
        return self.assign(f"{x}{index}", f"subscript: {kind}")

    def container(self) -> tuple[str, tuple[str, ...]] | None:
        kinds = ["dict", "list", "tuple", "unpack", "list_sum", "dict_loop", "nested", "pairs",
                 "list_to_helpers", "pair_to_helper"]
        kind = self.choice(kinds + (["list_argument"] * 3 if self.list_params else []))
        if kind == "list_argument":
            return self.list_argument()
        x, y = self.operand(), self.operand()
        if kind == "list_sum" and not switches.BUILTIN_SUM_OF_ARRAYS or \
                kind == "dict_loop" and not (switches.LOOP_OVER_DICT and switches.DICT_LITERALS) \
                or kind in ("dict", "nested") and not switches.DICT_LITERALS:
            return None
        d = self.fresh("p")
        v = self.fresh()
        if kind == "dict":
            return (f'{d} = {{"a": {x}, "b": {y}}}\n{v} = {d}["a"] * 2.0 + {d}["b"]',
                    ("container: dict literal",))
        if kind == "list":
            return f"{d} = [{x}, {y}]\n{v} = {d}[0] * {d}[-1]", ("container: list literal",)
        if kind == "tuple":
            return f"{d} = ({x}, {y})\n{v} = {d}[1] - {d}[0]", ("container: tuple literal",)
        if kind == "unpack":
            a, b = self.fresh("a"), self.fresh("b")
            return f"{a}, {b} = {x}, {y}\n{v} = {a} * {b}", ("container: tuple unpacking",)
        if kind == "list_sum":
            return f"{d} = [{x}, {y}, {x}]\n{v} = sum({d})", ("container: sum of a list",)
        if kind == "pairs":
            a, b = self.fresh("a"), self.fresh("b")
            return (f"{d} = [({x}, {y}), ({y}, {x})]\n{a}, {b} = {d}[0]\n"
                    f"{v} = {a} * {b} + {d}[1][0] * {d}[0][1]",
                    ("container: list of pairs",))
        if kind == "list_to_helpers":     # a list passed to two functions (loss and penalty)
            self.list_helper("squares", f"def squares(vs):\n    s = 0.0\n    for u in vs:\n"
                                        f"        s = s + {self.names['sum']}(u ** 2)\n"
                                        f"    return s\n")
            return (f"{d} = [{x}, {y}]\n{v} = squares({d}) + 0.5 * squares({d}[::-1])",
                    ("container: list passed to functions",))
        if kind == "pair_to_helper":
            self.list_helper("pair_product", "def pair_product(p):\n    a, b = p\n"
                                             "    return a * b\n")
            return (f"{d} = [({x}, {y}), ({y}, {x})]\n"
                    f"{v} = pair_product({d}[0]) + pair_product({d}[1]) * pair_product({d}[0])",
                    ("container: pairs passed to a function",))
        if kind == "dict_loop":
            k = self.fresh("k")
            return (f'{d} = {{"a": {x}, "b": {y}}}\n{v} = 0.0\nfor {k} in {d}:\n'
                    f'    {v} = {v} + {self.names["sum"]}({d}[{k}] ** 2)',
                    ("container: loop over a dict",))
        return (f'{d} = {{"layers": [{x}, {y}]}}\n{v} = {d}["layers"][0] + {d}["layers"][1]',
                ("container: nested dict/list",))

    def list_argument(self) -> tuple[str, tuple[str, ...]] | None:
        """A statement that reads a list (or tuple) parameter as people do (``lists.py``), or a
        dict parameter (``dicts.py``)."""
        if not self.list_params:
            return None
        name = self.choice(self.list_params)
        if isinstance(self.env[name].value, dict):
            return dicts.DictBodies(self, name).draw()
        return lists.ListBodies(self, name).draw()

    def control(self) -> tuple[str, tuple[str, ...]] | None:
        x = self.operand()
        S, T, E = self.names["sum"], self.names["tanh"], self.names["exp"]
        v, i = self.fresh(), self.fresh("i")
        kind = self.choice(["for_index", "for_range_update", "while", "if", "ifexp",
                            "for_rows", "append", "enumerate", "zip", "if_shape",
                            "early_exit"])
        shape = self.shape(x)
        if kind == "for_index":
            if not shape:
                return None
            return (f"{v} = 0.0\nfor {i} in range(len({x})):\n    {v} = {v} + {x}[{i}] ** 2",
                    ("loop: for i in range(len(x))",))
        if kind == "for_range_update":
            y = self.partner(x)
            return (f"{v} = {x}\nfor {i} in range({self.integer(1, 3)}):\n"
                    f"    {v} = {T}({v} * {y} + 0.1)", ("loop: repeated update",))
        if kind == "while":
            k = self.fresh("k")
            return (f"{v} = {x}\n{k} = 0\nwhile {k} < 3:\n    {v} = {v} * 0.5 + {x}\n"
                    f"    {k} += 1", ("loop: while",))
        if kind == "if":
            t = self.threshold()
            return (f"if {S}({x}) > {t}:\n    {v} = {x} * 2.0\nelse:\n    {v} = -{x} ** 2",
                    ("branch: if on a value",))
        if kind == "ifexp":
            return (f"{v} = {x} if {S}({x}) > {self.threshold()} else {x} ** 2",
                    ("branch: conditional expression",))
        if kind == "for_rows":
            if not shape:
                return None
            r = self.fresh("row")
            return (f"{v} = 0.0\nfor {r} in {x}:\n    {v} = {v} + {S}({r} ** 2)",
                    ("loop: for row in array",))
        if kind == "append":
            acc = self.fresh("acc")
            tail = self.choice([f"{v} = sum({acc})" if switches.BUILTIN_SUM_OF_ARRAYS else
                                f"{v} = {acc}[1] * 2.0", f"{v} = {self.names['stack']}({acc})",
                                f"{v} = {acc}[-1] + {acc}[0]"])
            return (f"{acc} = []\nfor {i} in range(3):\n    {acc}.append({x} * {i})\n{tail}",
                    ("loop: list append",))
        if kind == "enumerate":
            if len(shape) != 1:
                return None
            e = self.fresh("e")
            return (f"{v} = 0.0\nfor {i}, {e} in enumerate({x}):\n    {v} = {v} + {i} * {e}",
                    ("loop: enumerate",))
        if kind == "zip":
            if len(shape) != 1:
                return None
            y = self.partner(x, "same")
            a, b = self.fresh("a"), self.fresh("b")
            return (f"{v} = 0.0\nfor {a}, {b} in zip({x}, {y}):\n    {v} = {v} + {a} * {b}",
                    ("loop: zip",))
        if kind == "if_shape":
            return (f"if {x}.ndim == 1:\n    {v} = {x} * 2.0\nelse:\n    {v} = {x} + 1.0"
                    if self.dialect != "tensorflow" else
                    f"if len({x}.shape) == 1:\n    {v} = {x} * 2.0\nelse:\n    {v} = {x} + 1.0",
                    ("branch: if on a shape",))
        if not shape:
            return None
        return (f"{v} = 0.0\nfor {i} in range(len({x})):\n    if {i} > 1:\n        break\n"
                f"    {v} = {v} + {E}({x}[{i}] * 0.1)", ("loop: break",))

    def unsupported(self) -> tuple[str, tuple[str, ...]] | None:
        x = self.operand()
        S, L = self.names["sum"], self.names["log"]
        v = self.fresh()
        kind = self.choice(["try", "listcomp", "genexpr", "inplace_param", "inplace_local",
                            "setitem", "lambda", "nested_def", "assert", "print", "global",
                            "torch_inplace", "comp_array"])
        shape = self.shape(x)
        if kind == "try":
            return (f"try:\n    {v} = {L}({self.in_domain(x, 'pos')})\nexcept Exception:\n"
                    f"    {v} = {x}", ("unsupported: try",))
        if kind == "listcomp":
            if not shape:
                return None
            t = self.fresh("t")
            return f"{v} = sum([{t} ** 2 for {t} in {x}])", ("list comprehension",)
        if kind == "genexpr":
            if not shape:
                return None
            i = self.fresh("i")
            return (f"{v} = sum({x}[{i}] * {i} for {i} in range(len({x})))",
                    ("generator expression",))
        if kind == "comp_array":
            if not shape:
                return None
            t = self.fresh("t")
            return (f"{v} = {self.names['array']}([{self.names['exp']}({t}) for {t} in {x}])",
                    ("array of a comprehension",))
        if kind == "inplace_param":
            params = [p for p in self.param_names if p in self.env and p in self.wrt_names
                      and p not in self.list_params]
            if not params:
                return None
            p = self.choice(params)
            op = self.choice(["+=", "*=", "-="])
            return f"{p} {op} {self.const()}", (f"in-place: {op} on a parameter",)
        if kind == "inplace_local":
            return (f"{v} = {x} * 1.0\n{v} {self.choice(['+=', '*=', '-='])} {x}",
                    ("in-place: augmented assignment on a local",))
        if kind == "setitem":
            if not shape or self.dialect in ("jax", "tensorflow"):
                return None
            return (f"{v} = {x} * 1.0\n{v}[0] = {self.scalar_of(x)} * 3.0",
                    ("in-place: item assignment",))
        if kind == "torch_inplace":
            if self.dialect != "torch":
                return None
            m = self.choice(["add_(1.0)", "mul_(2.0)", "clamp_(min=0.0)", "exp_()", "zero_()"])
            return f"{v} = {x} * 1.0\n{v}.{m}", (f"in-place: torch .{m.split('(')[0]}",)
        if kind == "lambda":
            g = self.fresh("g")
            return (f"{g} = lambda t: t ** 2 + {self.const()}\n{v} = {g}({x})",
                    ("lambda assigned to a name",))
        if kind == "nested_def":
            g = self.fresh("g")
            return (f"def {g}(t):\n    return {self.names['tanh']}(t) * 2.0\n{v} = {g}({x})",
                    ("unsupported: nested def",))
        if kind == "assert":
            return (f"assert {x} is not None\n{v} = {x} * 2.0", ("statement: assert",))
        if kind == "print":
            return f"print({x})\n{v} = {x} + 1.0" if False else None
        return None

    def idiom(self) -> tuple[str, tuple[str, ...]] | None:
        x = self.operand()
        y = self.partner(x)
        N = self.names
        S, M, E, L, T = N["sum"], N["mean"], N["exp"], N["log"], N["tanh"]
        v = self.fresh()
        kind = self.choice(["mse", "logistic", "l2", "standardize", "softmax", "logsumexp",
                            "layer", "huber", "cross_entropy", "polynomial", "cosine"])
        if kind == "mse":
            return f"{v} = {M}(({x} - {y}) ** 2)", ("idiom: mean squared error",)
        if kind == "logistic":
            return f"{v} = {M}({L}(1.0 + {E}(-{y} * {x})))", ("idiom: logistic loss",)
        if kind == "l2":
            return f"{v} = 0.5 * {S}({x} ** 2)", ("idiom: L2 penalty",)
        if kind == "standardize" and not switches.STATISTICS_OF_SCALARS and \
                int(np.prod(self.shape(x))) <= 1:
            return None
        if kind == "standardize":
            if self.dialect == "tensorflow":
                return (f"{v} = ({x} - {M}({x})) / ({N['std']}({x}) + 1e-3)",
                        ("idiom: standardize",))
            return f"{v} = ({x} - {x}.mean()) / ({x}.std() + 1e-3)", ("idiom: standardize",)
        if kind == "softmax":
            e = self.fresh("e")
            return (f"{e} = {E}({x} - {N['max']}({x}))\n{v} = {e} / {S}({e})",
                    ("idiom: softmax by hand",))
        if kind == "logsumexp":
            m = self.fresh("m")
            return (f"{m} = {N['max']}({x})\n{v} = {m} + {L}({S}({E}({x} - {m})))",
                    ("idiom: logsumexp by hand",))
        if kind == "layer":
            W = self.matmul_partner(x)
            if W is None:
                return None
            return f"{v} = {T}({x} @ {W} + 0.1)", ("idiom: dense layer",)
        if kind == "huber":
            r = self.fresh("r")
            return (f"{r} = {N['abs']}({x} - {y})\n"
                    f"{v} = {N['where']}({r} < 0.5, 0.5 * {r} ** 2, 0.5 * ({r} - 0.25))",
                    ("idiom: huber loss",))
        if kind == "cross_entropy":
            p = self.fresh("p")
            return (f"{p} = {N['sigmoid']}({x})\n"
                    f"{v} = -{M}({y} * {L}({p}) + (1.0 - {y}) * {L}(1.0 - {p}))",
                    ("idiom: binary cross-entropy",))
        if kind == "polynomial":
            return f"{v} = 3.0 * {x} ** 3 - 2.0 * {x} ** 2 + {x} - 1.0", ("idiom: polynomial",)
        return (f"{v} = {S}({x} * {y}) / ({N['sqrt']}({S}({x} ** 2)) * "
                f"{N['sqrt']}({S}({y} ** 2)) + 1e-6)", ("idiom: cosine similarity",))

    def helper_call(self) -> tuple[str, tuple[str, ...]] | None:
        if not self.helpers:
            return None
        name = self.choice(self.helpers)
        return self.assign(f"{name}({self.operand()})", "call: module-level helper")

    # --- whole program ----------------------------------------------------------------------
    MOVES = {"table_call": 9.0, "off_table_call": 1.5, "operator": 3.0, "builtin": 1.5,
             "conversion": 1.5, "subscript": 2.0, "container": 2.0, "control": 2.0,
             "unsupported": 1.0, "idiom": 2.0, "helper_call": 1.0, "reassign_param": 0.6}

    def body(self, statements: int) -> None:
        made = 0
        for _ in range(statements * 3):
            if made >= statements:
                break
            move = getattr(self, self.weighted(self.MOVES))
            if self.attempt(move):
                made += 1

    def make_helpers(self) -> None:
        """Module-level helpers people write: an activation, a loss, with default arguments."""
        self.helpers: list[str] = []
        N = self.names
        options = [
            ("act", f"def act(v):\n    return {N['tanh']}(v)\n"),
            ("scaled", f"def scaled(v, k=2.0):\n    return v * k\n"),
            ("penalty", f"def penalty(v):\n    return 0.5 * {N['sum']}(v ** 2)\n"),
            ("smooth", f"def smooth(v, eps=1e-3):\n    return {N['sqrt']}(v ** 2 + eps)\n"),
            ("twice", f"def twice(v):\n    return act(v) + act(2.0 * v)\n"),
        ]
        if self.chance(3):
            count = self.integer(1, 2)
            for name, src in options[:count] + ([options[4]] if count == 1 and self.chance(3) else []):
                if name == "twice" and "act" not in self.helpers:
                    continue
                self.module_blocks.append(src)
                exec(compile(src, "<helper>", "exec"), self.globals)
                self.helpers.append(name)
        if self.chance(8):
            value = self.choice(["0.5", "2.0", "1e-3"])
            self.module_blocks.append(f"SCALE = {value}\n")
            self.globals["SCALE"] = float(value)
            self.constructs.add("module constant")

    def list_helper(self, name: str, src: str) -> None:
        """A module-level helper taking a list or a pair, written once where first used."""
        if name not in self.globals:
            self.module_blocks.append(src)
            exec(compile(src, "<helper>", "exec"), self.globals)

    def make_decorator(self) -> None:
        if not self.chance(12) or not switches.DECORATORS:
            return
        kind = self.choice(["doubled", "logged", "plain"])
        if kind == "doubled":
            src = ("def doubled(fn):\n    @functools.wraps(fn)\n    def wrapper(*args, **kwargs):\n"
                   "        return 2.0 * fn(*args, **kwargs)\n    return wrapper\n")
        elif kind == "logged":
            src = ("def logged(fn):\n    @functools.wraps(fn)\n    def wrapper(*args, **kwargs):\n"
                   "        result = fn(*args, **kwargs)\n        return result\n    return wrapper\n")
        else:
            src = ("def plain(fn):\n    def wrapper(*args):\n        return fn(*args) + 1.0\n"
                   "    return wrapper\n")
        self.module_blocks.append(src)
        self.decorator = kind
        self.constructs.add(f"decorator: {kind}" + (" (functools.wraps)" if kind != "plain" else ""))

    def final_return(self) -> tuple[str, str]:
        """The return statement (a scalar on the inputs) and the output kind."""
        carriers = [n for n in self.pool(is_operand, True)]
        name = carriers[-1] if carriers and self.chance(2) else (
            self.choice(carriers) if carriers else self.choice(self.wrt_names))
        ret, output = self.scalar_text(name)
        if output == "scalar" and len(carriers) > 1 and self.chance(2):
            other = self.choice([c for c in carriers if c != name])
            more, kind = self.scalar_text(other, plain=True)
            ret = f"{ret} + {more}"
        if output == "scalar" and self.list_results and self.list_results[-1] not in \
                read_names(ret):     # what was made of a list argument reaches the value
            more, _ = self.scalar_text(self.list_results[-1], plain=True)
            ret = f"{ret} + {more}"
        return f"return {ret}", output

    def scalar_text(self, name: str, plain: bool = False) -> tuple[str, str]:
        """A scalar made of ``name`` (reduced, made real) and the output kind."""
        if name in self.list_params:       # every item of a list argument, squared and summed
            if isinstance(self.env[name].value, dict):
                return dicts.DictBodies(self, name).scalar(), "scalar"
            return lists.ListBodies(self, name).scalar(), "scalar"
        value = self.env[name].value
        a = as_numpy(value)
        N = self.names
        text = name
        if a is not None and a.dtype.kind == "c":
            text = self.choice([f"{N['abs']}({name}) ** 2", f"{name}.real" if self.dialect !=
                                "tensorflow" else f"tf.math.real({name})"])
            self.constructs.add("complex: made real at the end")
        if a is not None and a.dtype.kind in "biu":
            text = f"{text} * 1.0"
        if a is not None and a.size != 1 or (a is not None and a.ndim > 0):
            red = self.choice([f"{N['sum']}({{}})", f"{N['mean']}({{}})", "{}.sum()", "{}.mean()"]
                              if self.dialect != "tensorflow" else [f"{N['sum']}({{}})",
                                                                     f"{N['mean']}({{}})"])
            text = red.format(text if text == name else f"({text})")
        if plain or self.decorator:
            return text, "scalar"
        if self.chance(40) and switches.TUPLE_AND_ARRAY_OUTPUTS:
            other = self.choice(self.wrt_names)
            return f"{text}, {other}", "tuple"
        if self.chance(40) and a is not None and a.ndim >= 1 and switches.TUPLE_AND_ARRAY_OUTPUTS:
            return f"{name} * 1.0", "array"
        if self.dialect == "torch" and self.chance(10) and switches.RETURN_FLOAT:
            text = f"({text}).item()" if not text.endswith(")") else f"{text}.item()"
            self.constructs.add("return: .item()")
        elif self.chance(12) and switches.RETURN_FLOAT:
            text = f"float({text})"
            self.constructs.add("return: float()")
        return text, "scalar"

    def build(self, params: tuple[Param, ...], wrt: tuple[int, ...], seed: int) -> tuple[str, str]:
        self.param_names = [p.name for p in params]
        self.wrt_names = [params[i].name for i in wrt]
        self.list_params = [p.name for p in params if p.is_container]
        inputs = [to_dialect(v, self.dialect) for v in numpy_inputs(params, seed)]
        for p, value in zip(params, inputs):
            self.env[p.name] = Var(value, p.name in self.wrt_names)
        self.make_helpers()
        self.make_decorator()
        if self.chance(10):
            self.defaults.append(self.choice(["scale=0.5", "eps=1e-3", "n=2"]))
            name, value = self.defaults[-1].split("=")
            self.env[name] = Var(float(value) if "." in value or "e" in value else int(value),
                                 False)
            self.constructs.add("default argument")
        if self.list_params:      # a list argument is read at least once, first (as people do)
            self.attempt(self.list_argument, tries=12)
        self.body(self.integer(1, 6))
        ret, output = self.final_return()
        try:
            result = self.value_of(ret[len("return "):])
        except Exception:
            result = None
        if output == "scalar" and not is_real_scalar(result):
            fallback = self.choice(self.wrt_names)
            ret = f"return {self.scalar_text(fallback, plain=True)[0]}"
        signature = ", ".join(self.param_names + self.defaults)
        head = (f"@{self.decorator}\n" if self.decorator else "") + f"def f({signature}):\n"
        blocks = self.module_blocks + [head + "\n".join(self.lines + ["    " + ret]) + "\n"]
        source = HEADERS[self.dialect] + "\n\n" + "\n\n".join(blocks)
        return source, output


def _param(draw: Callable[[Any], Any], name: str, dialect: str, differentiated: bool) -> Param:
    shape = draw(st.sampled_from(SHAPES))
    positive = draw(st.integers(0, 3)) == 0
    if differentiated:
        r = draw(st.integers(0, 99))
        dtype = ("float64" if r < 78 else "float32" if r < 86 else "pyfloat" if r < 91
                 else "int64" if r < 95 else "complex128" if r < 98 else "bool")
        if dtype in ("int64", "bool") and not switches.DIFFERENTIATE_INT_AND_BOOL:
            dtype = "float64"
    else:
        r = draw(st.integers(0, 99))
        dtype = ("float64" if r < 70 else "pyfloat" if r < 78 else "pyint" if r < 84
                 else "int64" if r < 92 else "bool" if r < 96 else "float32")
    if dtype in ("pyfloat", "pyint"):
        shape = ()
    if dtype == "complex128" and (dialect == "autograd" or not switches.COMPLEX_INPUTS):
        dtype = "float64"
    if dtype == "bool" and not switches.BOOL_VALUES:
        dtype = "int64"
    return Param(name, shape, dtype, positive)


def _list_signature(draw: Callable[[Any], Any], dialect: str
                    ) -> tuple[tuple[Param, ...], tuple[int, ...]]:
    """``f(params, x)``: a list (or tuple) parameter of one of ``lists.KINDS``, the input ``x``
    its layers take, maybe one more parameter. Differentiated with respect to the list (most
    often, as people train weights), the other parameter beside it (the list is a constant),
    or both."""
    kind = draw(st.sampled_from(lists.KINDS + ("arrays", "pairs")))
    name = draw(st.sampled_from(lists.LIST_NAMES[kind]))
    float32 = kind == "arrays" and switches.MIXED_PRECISION and draw(st.integers(0, 7)) == 0
    listp, x_shape = lists.list_param(draw, kind, name, dialect, float32)
    return _beside(draw, dialect, listp, x_shape)


def _dict_signature(draw: Callable[[Any], Any], dialect: str
                    ) -> tuple[tuple[Param, ...], tuple[int, ...]]:
    """``f(params, x)``: a dict parameter of one of ``dicts.KINDS``, the input ``x`` its layers
    take, maybe one more parameter; differentiated as :func:`_list_signature`'s list (the
    gradient then comes back as a dict of the same structure)."""
    kind = draw(st.sampled_from(dicts.KINDS + ("nested", "layers")))
    name = draw(st.sampled_from(dicts.DICT_NAMES[kind]))
    dictp, x_shape = dicts.dict_param(draw, kind, name, dialect)
    return _beside(draw, dialect, dictp, x_shape)


def _beside(draw: Callable[[Any], Any], dialect: str, container: Param,
            x_shape: tuple[int, ...] | None) -> tuple[tuple[Param, ...], tuple[int, ...]]:
    """A list or dict parameter's signature: the input ``x`` its layers take (or numbers and
    arrays beside a container without layers), maybe one more parameter, and which are
    differentiated: the container (most often, as people train weights), the other parameter
    (the container is a constant), or both."""
    mode = draw(st.sampled_from(("container", "container", "container", "other", "both")))
    others: list[Param] = []
    if x_shape is not None:
        others.append(Param("x", x_shape, "float64"))
        if draw(st.integers(0, 3)) == 0:
            others.append(_param(draw, "y", dialect, False))
    else:
        others = [_param(draw, ("x", "y")[k], dialect, k == 0 and mode != "container")
                  for k in range(draw(st.sampled_from((0, 1, 1, 2))))]
    if not others:
        mode = "container"
    first = not others or draw(st.integers(0, 3)) != 0
    params = (container, *others) if first else (others[0], container, *others[1:])
    at_container, at_other = (0, 1) if first else (1, 0)
    wrt = {"container": (at_container,), "other": (at_other,),
           "both": tuple(sorted((at_container, at_other)))}[mode]
    return params, wrt


@st.composite
def people_programs(draw: Callable[[Any], Any], dialect: str | None = None) -> PeopleProgram:
    """One program people might write, in ``dialect`` (drawn when None)."""
    if dialect is None:
        dialect = draw(st.sampled_from([d for d, w in DIALECT_WEIGHTS.items() for _ in range(w)]))
    setup(FRAMEWORK_OF[dialect])
    share = draw(st.integers(0, 99))      # (lists and dicts are rare: on the largest draws)
    if share >= 100 - LIST_ARGUMENT_PERCENT:
        params, wrt = _list_signature(draw, dialect)
    elif share >= 100 - LIST_ARGUMENT_PERCENT - DICT_ARGUMENT_PERCENT:
        params, wrt = _dict_signature(draw, dialect)
    else:
        nparams = draw(st.integers(1, 3))
        nwrt = draw(st.integers(1, nparams))
        wrt = tuple(sorted(draw(st.lists(st.integers(0, nparams - 1), min_size=nwrt,
                                         max_size=nwrt, unique=True))))
        params = tuple(_param(draw, PARAM_NAMES[k], dialect, k in wrt) for k in range(nparams))
    if not switches.FRAMEWORK_CODE_ON_NUMBERS and ARGS_DIALECT[dialect] != "numpy" and all(
            p.is_python for p in params):
        params = (Param(params[0].name, (), "float64", params[0].positive),) + params[1:]
    if not switches.MIXED_PRECISION:     # one float dtype for every float array
        floats = {p.dtype for p in params if p.dtype in ("float32", "float64")}
        if len(floats) > 1:
            params = tuple(Param(p.name, p.shape, "float64", p.positive)
                           if p.dtype == "float32" else p for p in params)
    seed = draw(st.integers(0, 2 ** 31 - 1))
    builder = Builder(draw, dialect)
    source, output = builder.build(params, wrt, seed)
    how = draw(st.sampled_from(["int", "name", "tuple"]))
    spec: Any
    if len(wrt) > 1 or how == "tuple":
        spec = tuple(params[i].name if draw(st.booleans()) and how == "name" else i for i in wrt)
    elif how == "int":
        spec = wrt[0]
    else:
        spec = params[wrt[0]].name
    constructs = set(builder.constructs)
    for p in params:
        if p.is_dict:
            constructs.add(dicts.kind_label(p))
            constructs.add("dict argument: differentiated" if p.name in builder.wrt_names
                           else "dict argument: a constant beside the differentiated one")
        elif p.is_container:
            constructs.add(lists.kind_label(p))
            constructs.add("list argument: differentiated" if p.name in builder.wrt_names
                           else "list argument: a constant beside the differentiated one")
            if any(leaf.dtype == "float32" for leaf in p.leaves()):
                constructs.add("input: float32 (items of a list)")
        elif p.dtype != "float64":
            constructs.add(f"input: {p.dtype}" + (" (differentiated)" if p.name in
                                                   builder.wrt_names else ""))
    if output != "scalar":
        constructs.add(f"output: {output}")
    return PeopleProgram(source, dialect, params, spec, seed, frozenset(constructs), output)
