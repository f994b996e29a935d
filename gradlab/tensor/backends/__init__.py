"""One flat namespace of primitives per framework (see :mod:`gradlab.tensor.spec`).

Each backend is a module whose top-level names are the primitives. A name is bound to the
framework's own function where its signature already matches the canonical one, otherwise to the
thinnest adapter. Frameworks are imported only when their backend is first asked for.
"""
