"""Sort the failures of people runs into classes (``classes.py``), reducing each program to the
statements its failure needs first when the message alone does not tell the class.

    PYTHONPATH=$PWD nice .venv/bin/python -m tests.hardening.people.triage /tmp/fuzz/run-*.jsonl \\
        --cache /tmp/fuzz/triage.jsonl

Reductions are cached (one JSON line per program and failure signature), so a rerun after a
rule changes is quick. Prints, per class: programs, checks by mode and backend, and the
shortest reduced example; then the unclassified failures.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import sys
from typing import Any

from tests.hardening.people.classes import classify, failure_of, message_class, title
from tests.hardening.people.report import rows, signature


def load_cache(path: str) -> dict[str, str]:
    out: dict[str, str] = {}
    if path and os.path.exists(path):
        with open(path) as fh:
            for line in fh:
                r = json.loads(line)
                out[r["key"]] = r["reduced"]
    return out


def reduced_body(row: dict[str, Any], check: dict[str, Any], cache: dict[str, str],
                 cache_path: str, budget: list[int]) -> str:
    from tests.hardening.people.reduce import body_of, reduce_source
    key = f"{row['digest']}|{signature(check)}"
    if key in cache:
        return cache[key]
    if budget[0] <= 0:
        return body_of(row["source"])
    budget[0] -= 1
    try:
        body = body_of(reduce_source(row, check))
    except Exception:
        body = body_of(row["source"])
    cache[key] = body
    if cache_path:
        with open(cache_path, "a") as fh:
            fh.write(json.dumps({"key": key, "reduced": body}) + "\n")
    return body


def triage(data: list[dict[str, Any]], cache_path: str, budget: int) -> dict[str, Any]:
    cache = load_cache(cache_path)
    left = [budget]
    classes: dict[str, dict[str, Any]] = collections.defaultdict(
        lambda: {"programs": set(), "checks": collections.Counter(), "examples": [],
                 "dialects": collections.Counter()})
    for r in data:
        if r["invalid"]:
            continue
        failing = [c for c in r["checks"] if c["status"] in ("wrong", "crash")]
        by_sig: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
        for c in failing:
            by_sig[signature(c)].append(c)
        for sig, checks in by_sig.items():
            first = sorted(checks, key=lambda c: c["backend"] != "numpy")[0]
            f = failure_of(r, first, r["source"])
            cid = message_class(f)
            if cid is None:
                f.body = reduced_body(r, first, cache, cache_path, left)
                cid = classify(f)
            entry = classes[cid]
            if r["digest"] not in entry["programs"]:
                entry["dialects"][r["dialect"]] += 1
            entry["programs"].add(r["digest"])
            for c in checks:
                entry["checks"][(c["mode"], c["backend"])] += 1
            entry["examples"].append((len(f.body), f.body, r, first))
            if cid == "unclassified":
                entry.setdefault("signatures", collections.defaultdict(list))[sig].append(
                    (len(f.body), f.body, r, first))
    return classes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--cache", default="")
    parser.add_argument("--budget", type=int, default=10_000, help="reductions at most")
    parser.add_argument("--show", type=int, default=1)
    args = parser.parse_args(argv)
    from gradlab.tensor import FRAMEWORKS, is_installed
    from tests.hardening.people.inputs import setup
    for fw in FRAMEWORKS:
        if is_installed(fw):
            setup(fw)
    data = rows(args.paths)
    classes = triage(data, args.cache, args.budget)
    checked = sum(1 for r in data if not r["invalid"])
    print(f"{checked} programs checked")
    for cid, e in sorted(classes.items(), key=lambda kv: -len(kv[1]["programs"])):
        modes = collections.Counter()
        for (mode, backend), n in e["checks"].items():
            modes[f"{mode}/{backend}"] += n
        print(f"\n== {cid}: {len(e['programs'])} programs; {title(cid)}")
        print("   dialects: " + ", ".join(f"{d} {n}" for d, n in e["dialects"].most_common()))
        print("   checks: " + ", ".join(f"{k} {n}" for k, n in sorted(modes.items())))
        groups = [sorted(xs, key=lambda t: t[0])[:1] for xs in e["signatures"].values()] \
            if "signatures" in e else [sorted(e["examples"], key=lambda t: t[0])[:args.show]]
        for _, body, r, c in [x for g in groups for x in g]:
            print(f"   e.g. [{r['digest']} {r['dialect']} {r['params']} wrt={r['wrt']}] "
                  f"{c['mode']}/{c['backend']} {c['status']} {c['kind']}: {c['detail'][:240]}")
            for line in body.strip().splitlines():
                if line.strip():
                    print("      | " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
