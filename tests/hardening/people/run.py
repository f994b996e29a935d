"""Run the people fuzzer outside pytest, at scale, writing one JSON line per program.

    PYTHONPATH=$PWD nice .venv/bin/python -m tests.hardening.people.run \\
        --programs 500 --seed 7 --out /tmp/fuzz-7.jsonl [--dialect torch] [--all-on]

Every program is checked (nothing stops at the first failure); ``report.py`` reads the lines
back and groups the failures. Chunks with different seeds can run one after another (or side
by side) and be reported together.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--programs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True)
    parser.add_argument("--dialect", default=None)
    parser.add_argument("--all-on", action="store_true",
                        help="turn every switch on (generate constructs of open bugs too)")
    parser.add_argument("--modes", default="grad,jvp,hvp")
    args = parser.parse_args(argv)

    from hypothesis import HealthCheck, Phase, given, seed, settings

    from gradlab.tensor import FRAMEWORKS, is_installed
    from tests.hardening.people import switches
    from tests.hardening.people.builder import people_programs
    from tests.hardening.people.inputs import setup
    from tests.hardening.people.oracle import Checker

    if args.all_on:
        switches.turn_all_on()
    installed = [fw for fw in FRAMEWORKS if is_installed(fw)]
    for fw in installed:
        setup(fw)
    checker = Checker(installed, tuple(args.modes.split(",")))
    start = time.perf_counter()
    counts = {"programs": 0, "failing": 0, "invalid": 0, "repeated": 0}
    seen: set[str] = set()

    with open(args.out, "a") as out:
        @seed(args.seed)
        @settings(max_examples=args.programs, deadline=None, database=None,
                  phases=[Phase.generate], suppress_health_check=list(HealthCheck))
        @given(people_programs(args.dialect))
        def one(program):  # type: ignore[no-untyped-def]
            if program.digest in seen:          # hypothesis may draw a program twice
                counts["repeated"] += 1
                return
            seen.add(program.digest)
            verdict = checker.run(program)
            counts["programs"] += 1
            counts["invalid"] += bool(verdict.invalid)
            counts["failing"] += bool(verdict.failures)
            row = {"digest": program.digest, "dialect": program.dialect,
                   "params": [p.describe() for p in program.params],
                   "param_specs": [p.to_spec() for p in program.params],
                   "wrt": repr(program.wrt),
                   "seed": program.seed, "output": program.output,
                   "constructs": sorted(program.constructs), "source": program.source,
                   "invalid": verdict.invalid, "seconds": round(verdict.seconds, 3),
                   "checks": [asdict(c) for c in verdict.checks], "run_seed": args.seed}
            out.write(json.dumps(row) + "\n")
            out.flush()
            if counts["programs"] % 25 == 0:
                elapsed = time.perf_counter() - start
                print(f"[people] {counts['programs']} programs, {counts['failing']} failing, "
                      f"{counts['invalid']} invalid ({elapsed:.0f} s, "
                      f"{counts['programs'] / elapsed:.2f}/s)", flush=True)

        one()
    elapsed = time.perf_counter() - start
    print(f"[people] done: {counts['programs']} programs in {elapsed:.0f} s "
          f"({counts['programs'] / max(elapsed, 1e-9):.2f}/s), {counts['failing']} failing, "
          f"{counts['invalid']} invalid, {counts['repeated']} drawn twice", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
