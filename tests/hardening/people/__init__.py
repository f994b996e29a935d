"""Programs of the kind people write, and the oracle that judges gradlab on them (issue 15).

``table`` reads gradlab's primitive table (one adapter to repoint); ``forms`` says how people
call each primitive in each framework; ``inputs`` makes the arguments; ``builder`` draws
programs (a hypothesis strategy) and ``program`` imports them; ``reference`` computes finite
differences and the framework's own autodiff; ``oracle`` judges grad, jvp and hvp on every
backend; ``switches`` steers around open bugs. ``run``, ``report``, ``reduce``, ``classes`` and
``triage`` run the fuzzer at scale and sort what it finds.
"""
