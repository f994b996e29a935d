"""The failure classes found so far, each recognised by a rule, for the catalogue's counts.

A rule sees one failing check (mode, backend, status, kind, detail), the program (its
parameters, ``wrt``, output) and the *reduced* body of ``f`` (``reduce.py``: the statements the
failure needs), and says whether the failure is of its class. Rules are tried in order; the
first that matches wins; a failure no rule matches is ``unclassified`` (to be looked at).
The ids are the names used in ``/work/fuzz_findings.md`` and in ``switches.py``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable


@dataclass
class Failure:
    mode: str
    backend: str
    status: str
    kind: str
    detail: str
    dialect: str
    params: list[str]
    wrt: str
    output: str
    body: str          # the reduced program (or the whole one, before reduction)

    def has(self, pattern: str) -> bool:
        return re.search(pattern, self.body) is not None

    def says(self, pattern: str) -> bool:
        return re.search(pattern, self.detail) is not None

    @property
    def wrt_params(self) -> list[str]:
        import ast
        wrt = ast.literal_eval(self.wrt)
        items = wrt if isinstance(wrt, tuple) else (wrt,)
        names = [p.split(":")[0] for p in self.params]
        return [self.params[names.index(w) if isinstance(w, str) else w] for w in items]


@dataclass
class FailureClass:
    id: str
    title: str
    rule: Callable[[Failure], bool]
    needs_body: bool = True     # False: the message alone decides (no reduction needed)


def _single_tuple(f: Failure) -> bool:
    return bool(re.fullmatch(r"\((\d+|'\w+'),\)", f.wrt))


def _int_wrt(f: Failure) -> bool:
    return any(re.search(r": (int64|bool)\[", p) for p in f.wrt_params)


def _bool_crash(f: Failure) -> bool:
    if f.status == "crash" and f.says(
            r"of bool is not in the list|expected to be a bool tensor|to EagerTensor of dtype bool|"
            r"not implemented for 'Bool'|LogicalNot|LogicalOr|LogicalAnd|bool.*not supported|"
            r"Subtraction, the `-` operator, with a bool tensor|boolean|requested dtype bool|"
            r"but is a bool tensor|half tensor"):
        return True
    if f.status == "crash" and f.says(r"does not support bool|bool != double|not bool"):
        return True
    # a function of a bool computed in a 16-bit float (JAX; NumPy for a bool input): a value
    # off by ~1e-4
    return f.kind == "value" and (f.has(r"\.(all|any)\(|isnan|isinf|isfinite|equal|less|"
                                        r"greater|logical_") or any(": bool[" in p for p in
                                                                    f.params)) and \
        not _float32_rounding(f)


CLASSES: list[FailureClass] = [
    FailureClass("harness-stop-gradient", "(not a gradlab bug: runs before the oracle judged "
                 "stop_gradient/detach by the framework's autodiff)",
                 lambda f: f.kind in ("derivative", "vs autodiff") and f.has(
                     r"stop_gradient\(|\.detach\(\)|\.numpy\(\)|torch\.tensor\(")),
    FailureClass("output-not-scalar", "grad/hvp of a function returning a tuple or an array: a "
                 "crash inside, or an answer, instead of a refusal",
                 lambda f: f.output != "scalar", needs_body=False),
    FailureClass("hvp-zero-hessian-float", "hvp returns the Python float 0.0 for a zero "
                 "Hessian instead of an array shaped like the input (TensorFlow: a float32 "
                 "tensor)",
                 lambda f: f.mode == "hvp" and (f.says(r"a builtins\.float") or (
                     f.backend == "tensorflow" and f.says(r"dtype float32, the input's is "
                                                          r"float64"))), needs_body=False),
    FailureClass("hvp-one-element-tuple-wrt", "hvp with wrt=(i,) iterates over the array H v "
                 "(a tuple of its rows, or a crash on a 0-d input) instead of (H v,)",
                 lambda f: f.mode == "hvp" and _single_tuple(f) and (
                     f.kind == "structure" or f.says(r"not iterable|iteration over|Cannot "
                                                    r"iterate")), needs_body=False),
    FailureClass("forward-drops-default-arguments", "jvp and hvp of a function with a default "
                 "argument (def f(x, n=2)) shift the tangent into the default's place",
                 lambda f: f.mode in ("jvp", "hvp") and f.says(
                     r"missing \d+ required positional argument: '\w+_dot'"), needs_body=False),
    FailureClass("value-is-the-function", "value_and_grad of a function returning float(...) "
                 "gives the function object itself as the value",
                 lambda f: f.says(r"value is builtins\.function"), needs_body=False),
    FailureClass("int-bool-input-gradient-truncated", "the gradient w.r.t. an int or bool "
                 "input is truncated to the input's dtype (TensorFlow: a crash)",
                 lambda f: _int_wrt(f) and (f.kind in ("dtype", "derivative") or f.says(
                     r"EagerTensor of dtype (int64|bool)|Cannot cast ufunc|tf\.int64")),
                 needs_body=False),
]


def _unknown_chain(f: Failure) -> bool:
    """Two calls outside the table, the second reading the first's result."""
    from tests.hardening.people.forms import OFF_TABLE, OFF_TABLE_TEMPLATES
    names = {c for c, _ in OFF_TABLE.get(f.dialect, [])} | {
        t.split("(")[0] for t in OFF_TABLE_TEMPLATES.get(f.dialect, []) if "{x}" not in
        t.split("(")[0]}
    found = [n for n in names if n + "(" in f.body]
    return len(found) >= 2 or any(f.body.count(n + "(") >= 2 for n in found)


CLASSES += [
    FailureClass("unknown-call-chain-not-refused", "a call outside the table whose result only "
                 "reaches another call outside the table is not refused (nor is the second): "
                 "a silent zero gradient",
                 lambda f: f.kind in ("derivative", "vs autodiff") and _unknown_chain(f)),
    FailureClass("attribute-of-expression-is-constant", "an attribute of a computed value "
                 "((w * 2.0).T, np.tan(w).T) is read as a constant: zero gradient",
                 lambda f: f.kind in ("derivative", "vs autodiff") and f.has(r"\)\.(T|mT)\b")),
    FailureClass("hvp-of-containers", "hvp of a program holding a tuple or a list of values "
                 "crashes (the tangent of a list is built as an array)",
                 lambda f: f.mode == "hvp" and f.status == "crash" and f.says(
                     r"<class 'list'>|not list|too many indices for array: array is "
                     r"0-dimensional|'list' object")),
    FailureClass("negative-step-slice-on-torch", "x[::-1] (a negative step) crashes on "
                 "PyTorch", lambda f: f.says(r"step must be greater than zero")),
    FailureClass("python-float-into-torch-tf", "a Python float (from math.*, float(), .item(), a "
                 "Python-number input) reaching a primitive on PyTorch/TensorFlow: a crash, or "
                 "float32", lambda f: f.says(r"'float' object has no attribute|must be Tensor, "
                                             r"not float|got \(float\)") and not (
                     f.mode == "hvp" and f.says("unsqueeze|reshape"))),
    FailureClass("dict-literal-is-a-constant", "a dict literal holding arrays (also nested "
                 "in a list) is read as a constant: zero gradient",
                 lambda f: f.kind in ("derivative", "vs autodiff") and f.has(r"\{\s*'\w+':")),
    FailureClass("mod-is-a-constant", "x % c and np.mod/np.remainder/torch.remainder are read "
                 "as constants: zero gradient (should be 1)",
                 lambda f: f.kind in ("derivative", "vs autodiff") and f.has(
                     r" % |\.mod\(|remainder\(|fmod\(")),
    FailureClass("axis-function-of-scalar", "softmax or argsort of a 0-d value crashes on "
                 "TensorFlow and JAX (argsort on PyTorch too)",
                 lambda f: f.has(r"softmax\(|argsort\(") and f.says(
                     r"axis -1 is out of bounds|Invalid reduction dimension|0-dim|slice "
                     r"index|Attempting to slice scalar")),
    FailureClass("solve-missing-adjoint-name", "the gradient of np.linalg.solve(a, b) w.r.t. "
                 "a alone (b constant, or not differentiated) names an undefined adjoint "
                 "(NameError)", lambda f: f.has(r"solve\(") and f.says(r"NameError")),
    FailureClass("list-index-on-jax-tf", "x[[0, 3]] (a list of ints as an index) crashes on JAX and TensorFlow",
                 lambda f: f.says(r"non-tuple sequence for multidimensional indexing|take "
                                  r"requires ndarray or scalar arguments, got <class 'list'>") or (
                     f.has(r"\[\[") and f.says("Index out of range"))),
    FailureClass("framework-code-on-python-numbers", "a function written with torch/TF/JAX "
                 "and called with Python numbers only runs on the NumPy backend and crashes on "
                 "the framework's dtypes", lambda f: f.says(r"Cannot interpret 'torch\.|"
                                                            r"Cannot interpret 'tf\.")),
    FailureClass("torch-max-min-with-dim", "torch.max/min(x, dim) (values and indices) is read "
                 "as the plain reduction: [0] gives a wrong value, .values/.indices crash",
                 lambda f: f.dialect == "torch" and f.has(
                     r"(max|min)\([^)]*\d[^)]*\)(\.values|\.indices|\[0\])|\.(max|min)\(\w*\d") and
                 (f.kind in ("value", "derivative", "vs autodiff") or f.says(
                     "builtin_function_or_method|list"))),
    FailureClass("numpy-repeat-read-as-tile", "x.repeat(n) of a NumPy/JAX array (repeat each "
                 "element) is read as torch's repeat (tile): a wrong value",
                 lambda f: f.dialect != "torch" and f.has(r"\.repeat\(") and f.kind in (
                     "value", "derivative", "vs autodiff", "shape")),
    FailureClass("torch-var-std-methods-biased", "x.var()/x.std() of a torch tensor (unbiased "
                 "by default) are read as NumPy's (biased): a wrong value and gradient",
                 lambda f: f.dialect == "torch" and f.has(r"\.(var|std)\(") and f.kind in (
                     "value", "derivative", "vs autodiff")),
    FailureClass("decorator-dropped", "a functools.wraps decorator is dropped: gradlab "
                 "differentiates the undecorated function (value and derivatives wrong)",
                 lambda f: f.has(r"@functools\.wraps") and f.kind in ("value", "derivative")),
    FailureClass("conversion-is-a-constant", "np.asarray/np.array/torch.as_tensor/"
                 "tf.convert_to_tensor/jnp.asarray of a value that carries a gradient is read as "
                 "a constant (zero gradient); np.array(x.tolist()) crashes on TensorFlow",
                 lambda f: (f.kind in ("derivative", "vs autodiff") and f.has(
                     r"(np|jnp)\.(asarray|array)\(|torch\.(as_tensor|tensor)\(|"
                     r"tf\.(convert_to_tensor|constant)\(")) or f.says("no attribute 'tolist'")),
    FailureClass("matrix-norm-ords", "norms with an ord: gradlab's norm is a vector norm, so "
                 "np.linalg.norm(M, 'fro') has a zero gradient, norm(M, 2) and norm(M, 1) of a "
                 "matrix a wrong value, string ords ('nuc', 'euclidean') crash",
                 lambda f: f.says(r"Cannot convert '\w+' to EagerTensor|'Tensor' and 'str'|"
                                  r"and 'str'|ufunc 'power' not supported") or (
                     f.kind in ("value", "derivative", "vs autodiff") and f.has(
                         r"norm\([^)]*,\s*(ord=|p=)?('fro'|'nuc'|'euclidean'|-?\d|-?np\.inf)"))),
    FailureClass("transpose-of-scalar-or-vector", "x.T / torch.permute of a 0-d value crashes "
                 "on PyTorch (permute() missing dims); x.transpose(0) of a vector crashes "
                 "everywhere", lambda f: f.says(r"permute\(\) missing|permute\(\) argument after|"
                                                r"perm must be rank 1|inverse_axes") or (
                     f.has(r"\.transpose\(\d\)") and f.says(r"'int' object is not iterable"))),
    FailureClass("scipy-softmax-over-all-entries", "scipy.special.softmax(M) without an axis "
                 "(over all entries) is read as a softmax over the last axis: a wrong value",
                 lambda f: f.has(r"scipy\.special\.softmax\([^,()]*(\([^()]*\))?[^,()]*\)") and
                 f.kind in ("value", "derivative", "vs autodiff")),
    FailureClass("std-of-one-element-nan", "x.std() of a 0-d value: gradient NaN (the function "
                 "is the constant 0)", lambda f: f.says(r"got \[nan") and f.has(r"std\(")),
    FailureClass("complex-jvp-crash", "jvp of a function of complex inputs crashes on NumPy "
                 "(cannot reshape the tangent)", lambda f: f.mode == "jvp" and f.says(
                     r"cannot reshape array of size") and any("complex" in p for p in f.params)),
    FailureClass("builtin-round-on-tensors", "builtin round() of a torch/TF value: the "
                 "generated code crashes (torch: no __round__, TF: no astype)",
                 lambda f: f.says(r"__round__|no attribute 'astype'")),
    FailureClass("loop-over-dict", "`for k in d:` over a dict: the generated code indexes it "
                 "by position (KeyError: 0)", lambda f: f.says(r"KeyError: 0") and f.has(
                     r"for \w+ in \w+:")),
    FailureClass("mixed-float32-float64", "float32 and float64 values together (NumPy "
                 "promotes): TensorFlow/PyTorch code crashes, hvp comes back float64",
                 lambda f: any("float32" in p for p in f.params) and (f.says(
                     r"float tensor but is a double|double tensor but is a float|"
                     r"\(Float\) and source \(Double\)|\(Double\) and source \(Float\)|"
                     r"double != float|float != double|"
                     r"tf\.float32 != tf\.float64|tf\.float64 != tf\.float32") or (
                     f.kind == "dtype" and f.says("float64, the input's is float32")))),
    FailureClass("complex-real-is-a-copy", "z.real (and .imag) of a complex value is read as a "
                 "copy: the value stays complex, or the gradient is wrong",
                 lambda f: f.says(r"returns complex") or (
                     f.has(r"\.real\b|\.imag\b|np\.real\(|tf\.math\.real\(") and
                     any("complex" in p for p in f.params))),
    FailureClass("builtin-max-min-constant", "builtin max/min with 3 arguments, a list, a tuple "
                 "or one array is treated as a constant (zero gradient)",
                 lambda f: f.kind in ("derivative", "vs autodiff") and f.has(
                     r"(?<![\w.])(max|min)\((\[|\(|[^,()]+\)|[^,]+,[^,]+,)")),
    FailureClass("hvp-through-loops", "hvp through a loop (`for i in range(n): ... x[i]`, "
                 "`for row in A`) uses the iterations in reverse order: silently wrong",
                 lambda f: f.mode == "hvp" and f.kind in ("derivative", "vs autodiff")
                 and f.has(r"(for|while) ")),
    FailureClass("builtin-sum-of-array", "builtin sum() of an array or of a list of arrays (it "
                 "iterates over the first axis): a crash or a wrong shape inside",
                 lambda f: f.has(r"(?<![\w.])sum\(") and (f.status == "crash" and f.says(
                     r"list|incompatible shapes|full_like|with a sequence|expand\(") or
                     f.says("builtins.list") or f.kind == "shape")),
    FailureClass("bool-values-on-backends", "a comparison's bool result used in arithmetic "
                 "(v * 1.0, abs, floor, logical_not of floats) crashes on TensorFlow and PyTorch",
                 _bool_crash),
    FailureClass("divmod-on-tensors", "divmod(x, c): the generated code calls Python's divmod "
                 "on torch/TF values (a crash); the remainder gets a zero gradient",
                 lambda f: f.says(r"divmod") or (f.has(r"divmod\(") and f.kind in (
                     "derivative", "vs autodiff"))),
    FailureClass("numpy-call-on-other-backend", "a NumPy call gradlab keeps as written (no "
                 "gradient flows through it) runs on torch/TF/JAX values, or returns a NumPy "
                 "array into their code",
                 lambda f: f.says(r"numpy\.ndarray|'ndarray'|Failed to convert a NumPy array")),
    FailureClass("tf-float32-constants", "TensorFlow: Python floats become float32 tensors next "
                 "to float64 ones (a crash, or a value rounded to float32)",
                 lambda f: f.backend == "tensorflow" and (f.says(
                     r"tf\.float32 != tf\.float64|expected to be a float tensor but is a double|"
                     r"expected to be a double tensor but is a float") or (
                     f.kind == "value" and _float32_rounding(f)))),
    FailureClass("int-float-mix-on-backends", "int values (argmax, an int input) meet floats in "
                 "TensorFlow/PyTorch code: a crash, or float32 arithmetic",
                 lambda f: f.says(r"of int64 is not in the list|but is a int64|int64 tensor|"
                                  r"Long|EagerTensor of dtype int64") or (f.kind == "value" and f.backend == "torch" and
                                               _float32_rounding(f))),
    FailureClass("hvp-float32-becomes-float64", "hvp of float32 inputs comes back float64",
                 lambda f: f.mode == "hvp" and f.kind == "dtype" and f.says("float64, the "
                                                                           "input's is float32")),
    FailureClass("hvp-float-tangent-on-torch", "hvp on PyTorch: a tangent that is the Python "
                 "float 0.0 (of the seed, or of a value with a zero second derivative) reaches "
                 "reshape/unsqueeze (np.sum(x, axis=0) of a vector, squeeze of x[0][None])",
                 lambda f: f.mode == "hvp" and f.says(r"(unsqueeze|reshape)\(\): argument "
                                                      r"'input'.*not float")),
    FailureClass("complex-on-backends", "complex values on PyTorch/TF/JAX: argmax, comparisons "
                 "and products with real tensors crash",
                 lambda f: (f.says(r"complex") and not f.says("gradlab knows")) or (
                     f.status == "crash" and any("complex" in p for p in f.params))),
]


def _float32_rounding(f: Failure) -> bool:
    """A value wrong by about one part in 1e8: computed in float32 somewhere."""
    m = re.search(r"value (-?[\d.e+-]+) on \w+, the function gives (-?[\d.e+-]+)", f.detail)
    if not m:
        return False
    got, want = float(m.group(1)), float(m.group(2))
    return abs(got - want) <= 1e-6 * max(1.0, abs(want))


def classify(f: Failure) -> str:
    for c in CLASSES:
        try:
            if c.rule(f):
                return c.id
        except Exception:
            continue
    return "unclassified"


def message_class(f: Failure) -> str | None:
    """The class when the message alone decides it (no reduction needed)."""
    for c in CLASSES:
        if c.needs_body:
            continue
        try:
            if c.rule(f):
                return c.id
        except Exception:
            continue
    return None


def title(class_id: str) -> str:
    return next((c.title for c in CLASSES if c.id == class_id), class_id)


def failure_of(row: dict[str, Any], check: dict[str, Any], body: str) -> Failure:
    return Failure(check["mode"], check["backend"], check["status"], check["kind"],
                   check["detail"], row["dialect"], row["params"], row["wrt"],
                   row.get("output", "scalar"), body)
