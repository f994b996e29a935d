"""Switches that steer the people generator (and its oracle) around open gradlab bugs.

``True``: the construct is generated and judged. A switch is ``False`` while the bug class it
meets is open (the class ids are those of ``classes.py`` and ``/work/fuzz_findings.md``); each
such class has a minimal strict-xfail reproduction in ``test_known_bugs.py`` (named in the
comment), so that when the class is fixed the xfail XPASSes, the run fails, and whoever fixed
it turns the switch on here (and removes the xfail mark).

Two kinds: *generator* switches leave a construct out of the programs; *oracle* switches leave
one mode or backend unjudged on programs with the construct (the program is still generated
and its other checks still count), for bugs of one mode, where leaving the construct out would
lose coverage of the others. A check an oracle switch leaves out is counted as ``skipped``.

The CI run (derandomized, ~300 programs) passes with the switches as they are; ``--people-all``
(``run.py --all-on``) turns every switch on, to measure what is still open.
"""
from __future__ import annotations

ALL_ON = False     # set by --people-all: generate and judge everything, whatever is open

# --- generator switches ------------------------------------------------------------------------
#: output-not-scalar (test_grad_of_tuple_output_is_refused, test_hvp_of_array_output_is_refused):
#: grad of a function returning a tuple crashes inside; hvp of one returning an array answers.
TUPLE_AND_ARRAY_OUTPUTS = True
#: value-is-the-function (test_value_and_grad_of_float_return): value_and_grad of
#: ``return float(...)`` (or ``return v.item()``) gives the function object as the value.
RETURN_FLOAT = True
#: int-bool-input-gradient-truncated (test_gradient_wrt_int_input): the gradient w.r.t. an int or
#: bool input is truncated to its dtype. While False, only float inputs are differentiated.
DIFFERENTIATE_INT_AND_BOOL = True
#: complex-real-is-a-copy, complex-on-backends (test_real_part_of_complex_input): ``z.real`` was a
#: copy; argmax/products of complex values crashed on the other backends. FIXED: real, imag,
#: conj and angle are primitives (spec.py) with rules; a gradient that reaches a real input
#: through a complex value is refused (api.refuse_complex_gradient), differentiating w.r.t. a
#: complex input too (test_parts_of_a_complex_input, test_gradient_through_a_complex_value_is_refused).
COMPLEX_INPUTS = True
#: builtin-max-min-constant (test_builtin_max_of_three, test_builtin_min_of_a_list): builtin
#: max/min of 3 arguments, a list, a tuple or one array is a constant.
BUILTIN_MAX_MIN_OF_MANY = True
#: builtin-sum-of-array (test_builtin_sum_of_matrix): builtin sum() of an array crashes.
BUILTIN_SUM_OF_ARRAYS = True
#: bool-values-on-backends (test_bool_times_float_on_backends): bool values from comparisons,
#: isnan, logical_not... used in arithmetic crashed on TensorFlow (abs/floor of bools on
#: PyTorch). FIXED: unary functions of bools in NumPy's dtype on torch, TF and JAX
#: (backends/promote.py), TF's reductions of bools as NumPy's; TF's operators on bools (which
#: do not promote) are refused at the user's line, with the cast (test_bool_values_on_backends).
BOOL_VALUES = True
#: divmod-on-tensors (test_divmod_on_backends): divmod of a tensor crashes.
DIVMOD = True

#: conversion-is-a-constant (test_asarray_of_parameter): np.asarray/np.array/torch.as_tensor/
#: tf.convert_to_tensor/jnp.asarray of a value carrying a gradient gives a zero gradient.
CONVERSIONS = True
#: decorator-dropped (test_functools_wraps_decorator): the decorator of f is dropped.
DECORATORS = True
#: builtin-round-on-tensors (test_builtin_round_on_backends): round() of a tensor crashes.
#: FIXED: round(v) and round(v, n) are the table's builtin_round on every backend (Python's
#: round for numbers and NumPy values, elementwise for framework arrays).
BUILTIN_ROUND = True
#: loop-over-dict (test_loop_over_dict): ``for k in d`` over a dict crashes (KeyError: 0).
LOOP_OVER_DICT = True
#: mixed-float32-float64 (test_float32_times_float64_on_tensorflow, test_hvp_keeps_float32):
#: float32 and float64 values together (NumPy promotes) crash on TensorFlow/PyTorch, and hvp
#: comes back float64 for a float32 input. While False, a program's float inputs share one
#: dtype, and programs with float32 inputs are judged on NumPy and JAX, without hvp (an
#: oracle switch too: float64 constants such as np.eye(4) still meet them).
MIXED_PRECISION = True

#: attribute-of-expression-is-constant (test_transpose_of_expression): ``(w * 2.0).T`` and
#: ``np.tan(w).T`` give a zero gradient. While False, properties are read off names only.
ATTRIBUTE_OF_EXPRESSION = True
#: negative-step-slice-on-torch (test_negative_step_slice_on_torch): ``x[::-1]`` crashes on
#: PyTorch.
NEGATIVE_STEP_SLICES = True

#: dict-literal-is-a-constant (test_dict_literal_of_arrays): a dict literal holding arrays
#: gives a zero gradient (nested dict/list too). FIXED (codegen/dicts.py: dicts with constant
#: keys are replaced by their entries, loops over them written out per key): with this switch
#: on, the 106 programs with a dict construct among 6,000 drawn (hypothesis seed 7) were all
#: right or refused on every backend and mode. It had stayed off for the crash the
#: derandomized CI draws then met, ``x.mT`` of a 0-d torch tensor (IndexError: it was
#: swapaxes(x, -2, -1)); FIXED too (test_matrix_transpose_of_a_number_and_of_matrices):
#: ``x.mT`` is the primitive matrix_transpose, the value itself for a 0-d one as in torch, a
#: vector's refused.
DICT_LITERALS = True
#: mod-is-a-constant (test_mod_of_parameter): ``x % c`` and ``np.mod`` give a zero gradient.
MOD = True
#: axis-function-of-scalar (test_softmax_of_a_number, test_argsort_of_a_number): softmax or
#: argsort of a 0-d value crashes on TensorFlow and JAX (argsort on PyTorch too). FIXED: the
#: backends take a 0-d value as NumPy and SciPy do (softmax of a number is 1, argsort 0).
AXIS_FUNCTIONS_OF_SCALARS = True

#: solve-missing-adjoint-name (test_solve_with_constant_right_hand_side): the gradient of
#: ``np.linalg.solve(a, b)`` w.r.t. ``a`` when ``b`` is a constant fails with a NameError.
LINALG_SOLVE = True


#: list-index-on-jax-tf (test_list_index): ``x[[0, 3]]`` (a list as an index) crashes on
#: JAX and TensorFlow.
LIST_INDICES = True

#: unknown-call-chain-not-refused (test_two_unknown_calls_in_a_row): an unknown call whose
#: result only reaches another unknown call is not refused, nor is the second: a silent zero
#: gradient. While False, a program has at most one call outside the table.
CHAINED_OFF_TABLE_CALLS = True

#: framework-code-on-python-numbers (test_torch_code_called_with_a_python_float): a function
#: written with torch (or TF, JAX) and called with Python numbers only runs on gradlab's NumPy
#: backend, which chokes on torch.float64. While False, such programs take an array too.
FRAMEWORK_CODE_ON_NUMBERS = True

#: torch-max-min-with-dim (test_torch_max_with_dim): ``torch.max(x, 1)`` (values and indices)
#: is read as the plain reduction: ``[0]`` gives a wrong value, ``.values`` crashes.
TORCH_MAX_MIN_WITH_DIM = True

#: matrix-norm-ords (test_frobenius_norm, test_spectral_norm_of_matrix, test_nuclear_norm):
#: norms with an ord ('fro', 2, 1, 'nuc', 'euclidean') are vector norms or constants in gradlab:
#: 'fro' gives a zero gradient, 2 and 1 of a matrix a wrong value, string ords crash. While
#: False, norms take no ord. FIXED (test_norm_with_an_ord, test_norm_with_an_ord_in_each_framework,
#: test_matrix_norms_needing_singular_values_are_refused): ``linalg_norm`` reads a matrix as
#: np.linalg.norm does ('fro', 1, inf, -inf: column or row sums, their rules through
#: ``linalg_norm_weights``; tf.norm only over two axes); vector norms take inf and -inf;
#: ``np.inf``, ``math.inf``, ``float('inf')`` as an ord are the literal infinity; the matrix
#: norms that need singular values (2, -2, 'nuc') and -1 are refused, at the user's line.
NORM_ORDS = True
#: transpose-of-scalar-or-vector (test_transpose_of_a_number_on_torch,
#: test_transpose_method_with_one_axis): x.T of a 0-d value crashes on PyTorch; x.transpose(0)
#: of a vector crashes everywhere. While False, only matrices and up are transposed.
TRANSPOSE_OF_SCALARS = True
#: scipy-softmax-over-all-entries (test_scipy_softmax_of_matrix): scipy.special.softmax(M)
#: without an axis normalises over all entries; gradlab normalises each row: a wrong value.
SCIPY_SOFTMAX_OVER_ALL = True
#: std-of-one-element-nan (test_std_of_a_number): x.std() of a 0-d value has a NaN gradient.
#: FIXED: where std (or the 2-norm) is 0 its rules give the subgradient 0, not 0 / 0
#: (test_norm_and_std_at_zero_are_not_nan).
STATISTICS_OF_SCALARS = True

#: numpy-repeat-read-as-tile (test_numpy_repeat_method): ``x.repeat(3)`` on a NumPy (or JAX)
#: array repeats each element; gradlab reads it as torch's repeat (tile): a wrong value.
NUMPY_REPEAT = True

#: torch-var-std-methods-biased (test_torch_var_method): ``x.var()`` / ``x.std()`` of a torch
#: tensor (unbiased by default) are read as NumPy's (biased): a wrong value and gradient.
TORCH_VAR_STD_METHODS = True

# --- oracle switches ---------------------------------------------------------------------------
#: hvp-zero-hessian-float (test_hvp_of_linear_function_is_an_array): hvp returns the Python
#: float 0.0 for a zero Hessian. While False, that answer is read as zeros shaped like the input.
HVP_ZERO_HESSIAN_SHAPED = True
#: hvp-one-element-tuple-wrt (test_hvp_one_element_tuple_wrt): hvp(f, (0,)) iterates over H v.
#: While False, hvp is not judged when wrt is a one-element tuple.
HVP_ONE_ELEMENT_TUPLE = True
#: forward-drops-default-arguments (test_jvp_with_default_argument): jvp/hvp of
#: ``def f(x, n=2)`` put the tangent in n's place. While False, jvp and hvp are not judged on
#: functions with default arguments.
FORWARD_DEFAULT_ARGUMENTS = True
#: hvp-through-loops (test_hvp_loop_over_rows, test_hvp_loop_over_indices): hvp through a loop
#: that reads ``x[i]`` or ``for row in A`` uses the iterations in reverse order (silently
#: wrong). While False, hvp is not judged on programs with a loop.
HVP_THROUGH_LOOPS = True
#: numpy-call-on-other-backend (test_numpy_call_kept_on_torch): a NumPy call gradlab keeps as
#: written (no gradient through it) ran on torch/TF/JAX values (a NumPy array met torch's sum;
#: TF's tensors have no tolist). FIXED: kept NumPy calls on the backend's values are
#: ``gl.numpy_call(np.unique, b)`` (NumPy copies in, the backend's arrays out) and
#: ``v.tolist()`` reads a NumPy copy (codegen/primal.py; test_kept_numpy_calls_on_backends).
OFF_TABLE_CALLS_ON_OTHER_BACKENDS = True
#: hvp-float-tangent-on-torch (test_hvp_of_sum_over_axis_of_vector, test_hvp_of_squeeze_on_torch):
#: in hvp, a tangent that is the Python float 0.0 (of the seed, or of a value whose second
#: derivative is zero) reaches torch's reshape/unsqueeze: TypeError. While False, hvp is not
#: judged on PyTorch for programs with shape functions or reductions along an axis.
HVP_SHAPE_FUNCTIONS_ON_TORCH = True
#: hvp-of-containers (test_hvp_with_a_tuple): hvp of a program that holds a tuple, list or dict
#: of values crashes. While False, hvp is not judged on such programs.
HVP_OF_CONTAINERS = True
#: python-float-into-torch-tf (test_outer_of_python_float): a Python float reaching a
#: primitive crashes on PyTorch (or goes float32 on TensorFlow). While False, NumPy programs
#: that make Python floats are judged on NumPy and JAX only.
PYTHON_FLOATS_ON_TORCH_TF = True
#: int-float-mix-on-backends (test_int_array_times_float_on_tensorflow,
#: test_float_functions_of_int_arrays): np.log of an int array was float32 on torch (NumPy:
#: float64) and crashed on TensorFlow; torch's gradient code mixed that float32 with float64.
#: FIXED on TensorFlow: the unary functions of ints compute in NumPy's dtype
#: (backends/promote.py); TF's operators, which do not promote (an int array times a float
#: one), are refused at the user's line with the cast to write. While False, programs that
#: make int arrays or take int inputs are not judged on that backend.
INT_ARRAYS_ON_TF = True
#: int-times-python-float-on-torch (test_int_tensor_times_python_float_on_torch): the unary
#: functions are fixed as on TF, but ``k * 1.0`` of an int tensor ``k`` (an argmax) is
#: float32 on torch (its default dtype; NumPy: float64). REFUSED: the semantic guard compares
#: the forward value in the precision of the function's own inputs and value, so a float32
#: detour in a float64 function is a mismatch named at the user's line (the operator is written
#: as such in the generated code, shared by every backend, so it cannot compute NumPy's dtype).
INT_ARRAYS_ON_TORCH = True


def turn_all_on() -> None:
    """Generate and judge every construct, open bugs included (``--people-all``,
    ``run.py --all-on``)."""
    global ALL_ON
    ALL_ON = True
    for name, value in list(globals().items()):
        if name.isupper() and isinstance(value, bool):
            globals()[name] = True

