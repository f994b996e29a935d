"""The backends: one file each, and one registration line each, here.

Each file is a flat namespace of primitives (see :mod:`gradlab.tensor.spec`) plus ``BACKEND``,
its :class:`~.base.Backend` object. A primitive is bound to the framework's own function where
its signature already matches the canonical one, otherwise to the thinnest adapter; what a
framework lacks comes from the templates in :mod:`.common` and :mod:`.adjoint_helpers`.
Frameworks are imported only when their backend is first asked for.

Adding a backend: write its file, add its line to :data:`REGISTRATIONS` (or, from outside,
``gradlab.tensor.registry.register(Registration(...))``).
"""
from __future__ import annotations

from .base import Backend, Registration

_HERE = "gradlab.tensor.backends"

#: Every backend gradlab ships, in the order they are shown to users.
REGISTRATIONS = (
    Registration("numpy", f"{_HERE}.numpy_backend", roots=("numpy",), aliases=("np",)),
    Registration("torch", f"{_HERE}.torch_backend", roots=("torch",), aliases=("pytorch",),
                 install="torch"),
    Registration("tensorflow", f"{_HERE}.tensorflow_backend", roots=("tensorflow", "keras"),
                 aliases=("tf",), install="tensorflow-cpu (or tensorflow)"),
    Registration("jax", f"{_HERE}.jax_backend", roots=("jax", "jaxlib"), aliases=("jnp",),
                 install="'jax[cpu]'"),
    # plain Python numbers: ``math`` for scalars, NumPy for the rest (not offered to users)
    Registration("python", f"{_HERE}.python_backend", types=(bool, int, float, complex),
                 listed=False),
)

__all__ = ["REGISTRATIONS", "Backend", "Registration"]
