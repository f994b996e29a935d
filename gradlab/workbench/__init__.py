"""Seeing and changing a generated gradient: the tools around the engine.

``tracing`` records every step of a run (shapes, norms, the first NaN), ``stepping`` walks the
backward pass a statement at a time, ``graphs`` draws the computation, ``health`` reads
vanishing and exploding gradients off a trace, ``checking`` compares a gradient with finite
differences and the framework's own autodiff, ``timing`` measures calls honestly, ``edit``
recompiles an edited backward pass (gradient surgery), ``exercises`` hide it for a student,
``session`` keeps one function's runs for the notebook panel and ``display`` highlights code.
The engine (``gradlab.api``, ``codegen``, ``tensor``) never imports this package.
"""
