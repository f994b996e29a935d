"""Summarise the JSON lines of ``run.py``: counts per mode and backend, refusals by construct,
failures grouped by their signature (mode, status, kind and the message with numbers and names
blanked), each with its shortest program.

    PYTHONPATH=$PWD .venv/bin/python -m tests.hardening.people.report /tmp/fuzz-*.jsonl [--show N]
"""
from __future__ import annotations

import argparse
import collections
import json
import re
import sys
from typing import Any, Iterable


def rows(paths: Iterable[str]) -> list[dict[str, Any]]:
    out = []
    seen = set()
    for path in paths:
        with open(path) as fh:
            for line in fh:
                line = line.strip()
                if not line:
                    continue
                r = json.loads(line)
                if r["digest"] in seen:
                    continue
                seen.add(r["digest"])
                out.append(r)
    return out


def signature(check: dict[str, Any]) -> str:
    """A failure's class: what went wrong, with the numbers and generated names blanked."""
    detail = check["detail"]
    if check["status"] == "crash":
        detail = re.sub(r"\[[^\]]*\]$", "", detail).strip()   # keep the where separately
        where = re.search(r"\[([^\]]*)\]$", check["detail"])
        detail = detail.split("\n")[0]
        detail = re.sub(r"'[^']*'", "'…'", detail)
        detail = re.sub(r"\b[a-z_]*\d+[a-z_\d]*\b", "…", detail)
        detail = re.sub(r"-?\d+(\.\d+)?(e-?\d+)?", "N", detail)[:160]
        return f"{check['mode']} crash {detail}" + (f" [{where.group(1).split(':')[0]}"
                                                     f" {where.group(1).split(' in ')[-1]}]"
                                                     if where else "")
    return f"{check['mode']} {check['status']} {check['kind']}"


#: The constructs of programs whose ``f`` takes a list or tuple argument (``lists.py``).
LIST_CONSTRUCTS = re.compile(r"^(container: (list|tuple|list of pairs) argument|list argument: )")
#: The constructs of programs whose ``f`` takes a dict argument (``dicts.py``).
DICT_CONSTRUCTS = re.compile(r"^(container: dict argument|dict argument: )")


def list_argument_counts(checked: list[dict[str, Any]], failing: list[dict[str, Any]],
                         constructs: re.Pattern[str] = LIST_CONSTRUCTS,
                         what: str = "list and tuple arguments") -> list[str]:
    """Programs with a list (or tuple) argument, by construct, with how many fail: the kinds
    of list and the ways the body reads it (or, with ``DICT_CONSTRUCTS``, the same of dict
    arguments, with how many of their checks were refused)."""
    made: collections.Counter[str] = collections.Counter()
    failed: collections.Counter[str] = collections.Counter()
    bad = {r["digest"] for r in failing}
    programs = [r for r in checked if any(constructs.match(c) for c in r["constructs"])]
    for r in programs:
        for c in r["constructs"]:
            if constructs.match(c):
                made[c] += 1
                failed[c] += r["digest"] in bad
    if not programs:
        return []
    statuses = collections.Counter(c["status"] for r in programs for c in r["checks"])
    lines = ["", f"{what}: {len(programs)} programs "
                 f"({sum(r['digest'] in bad for r in programs)} failing); checks: " +
             ", ".join(f"{s} {n}" for s, n in statuses.most_common())]
    lines += [f"  {n:5d}  ({failed[c]:3d})  {c}" for c, n in sorted(
        made.items(), key=lambda kv: (not kv[0].startswith("container"), -kv[1], kv[0]))]
    return lines


def summarise(data: list[dict[str, Any]], show: int = 3, reduce: int = 0) -> list[str]:
    lines = []
    programs = len(data)
    invalid = sum(1 for r in data if r["invalid"])
    checked = [r for r in data if not r["invalid"]]
    seconds = sum(r["seconds"] for r in data)
    failing = [r for r in checked if any(c["status"] in ("wrong", "crash") for c in r["checks"])]
    lines.append(f"{programs} programs ({invalid} invalid, not checked); {len(failing)} with "
                 f"a wrong or crashing check; {seconds:.0f} s of checking "
                 f"({programs / max(seconds, 1e-9):.2f} programs/s)")
    by = collections.Counter()
    for r in checked:
        for c in r["checks"]:
            by[(c["mode"], c["backend"], c["status"])] += 1
    statuses = ["right", "refused", "wrong", "crash", "unstable", "undefined"]
    lines.append("")
    lines.append("| mode | backend | " + " | ".join(statuses) + " |")
    lines.append("|---|---|" + "---|" * len(statuses))
    for mode in ("grad", "jvp", "hvp"):
        for backend in ("numpy", "torch", "tensorflow", "jax"):
            counts = [by[(mode, backend, s)] for s in statuses]
            if sum(counts):
                lines.append(f"| {mode} | {backend} | " + " | ".join(map(str, counts)) + " |")
    dialects = collections.Counter(r["dialect"] for r in checked)
    failing_d = collections.Counter(r["dialect"] for r in failing)
    lines.append("")
    lines.append("programs by dialect (failing): " + ", ".join(
        f"{d} {n} ({failing_d[d]})" for d, n in dialects.most_common()))
    lines.extend(list_argument_counts(checked, failing))
    lines.extend(list_argument_counts(checked, failing, DICT_CONSTRUCTS, "dict arguments"))
    refused = collections.Counter()
    for r in checked:
        for kind in {c["kind"] for c in r["checks"] if c["status"] == "refused"}:
            refused[kind] += 1
    lines.append("")
    lines.append(f"refusals by construct (programs): {len(refused)} kinds")
    for kind, n in refused.most_common(40):
        lines.append(f"  {n:5d}  {kind}")
    classes: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for r in checked:
        for sig in {signature(c) for c in r["checks"] if c["status"] in ("wrong", "crash")}:
            classes[sig].append(r)
    lines.append("")
    lines.append(f"failure signatures: {len(classes)}")
    for sig, rs in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        backends = collections.Counter(c["backend"] for r in rs for c in r["checks"]
                                       if signature(c) == sig)
        lines.append(f"  {len(rs):5d}  {sig}   backends: {dict(backends)}")
        for k, r in enumerate(sorted(rs, key=lambda r: len(r["source"]))[:show]):
            body = r["source"].split("\n\n\n")[-1]
            c = next(c for c in r["checks"] if signature(c) == sig)
            if k == 0 and reduce and len(classes) and sig in list(classes)[:0] + [
                    s for s, _ in sorted(classes.items(), key=lambda kv: -len(kv[1]))][:reduce]:
                from tests.hardening.people.reduce import body_of, reduce_source
                try:
                    body = "(reduced)\n" + body_of(reduce_source(r, c))
                except Exception as e:
                    body = f"(reduction failed: {type(e).__name__}: {e})\n" + body
            lines.append(f"         [{r['digest']} {r['dialect']} {r['params']} wrt={r['wrt']}] "
                         f"{c['detail'][:300]}")
            lines.extend("           | " + line for line in body.splitlines())
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--show", type=int, default=2)
    parser.add_argument("--reduce", type=int, default=0,
                        help="reduce the shortest program of the N largest classes")
    args = parser.parse_args(argv)
    if args.reduce:
        from gradlab.tensor import FRAMEWORKS, is_installed
        from tests.hardening.people.inputs import setup
        for fw in FRAMEWORKS:
            if is_installed(fw):
                setup(fw)
    for line in summarise(rows(args.paths), args.show, args.reduce):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
