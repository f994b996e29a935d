"""Switches that steer the people generator around open gradlab bugs.

``True``: the construct is generated. A switch is ``False`` while the bug class it meets is
open; each such class has a minimal strict-xfail reproduction in ``test_known_bugs.py`` (named
in the comment), so that when the class is fixed the xfail XPASSes, the run fails, and whoever
fixed it turns the switch back on here (and removes the xfail mark).

The CI run (derandomized, ~300 programs) must pass with the switches as they are; ``make fuzz``
with ``--people-all`` turns every switch on, to measure what is still open.
"""
from __future__ import annotations

ALL_ON = False     # set by --people-all: generate everything, whatever is open


def turn_all_on() -> None:
    """Generate every construct, open bugs included (``--people-all``, ``run.py --all-on``)."""
    global ALL_ON
    ALL_ON = True
    for name, value in list(globals().items()):
        if name.isupper() and isinstance(value, bool):
            globals()[name] = True
