#!/usr/bin/env python3
"""Honest candidates' speedups under an old and a new worker, from the files
scripts/bench/honest_side_by_side.sh writes in OUTDIR: TASK.MODE.ROUND.json (MODE old or new),
`kfoundry eval --json` output, and hostile.old.log / hostile.new.log, the output of
gpu_test_cuda_eval run against each worker. Prints markdown: per candidate the statuses, the
median speedup over rounds under each worker and their ratio (new / old); the median ratio
and its range; the candidates ok under the old worker and not under the new; and, per test
case, how the hostile candidates fared under each worker.
    honest_side_by_side.py OUTDIR"""
import json
import os
import re
import statistics
import sys
from collections import defaultdict

MODES = ("old", "new")


def records(path):
    """The JSON records of a file: one JSON document, or one per line."""
    try:
        text = open(path).read()
    except OSError:
        return []
    try:
        data = json.loads(text)
        return data if isinstance(data, list) else [data]
    except ValueError:
        out = []
        for line in text.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
        return out


def fmt(v, digits=3):
    return "-" if v is None else f"{v:.{digits}g}"


def speed_table(d):
    # (task, candidate) -> mode -> list of (speedup, status, median_ms)
    rows = defaultdict(lambda: defaultdict(list))
    for name in sorted(os.listdir(d)):
        parts = name.split(".")
        if len(parts) != 4 or parts[3] != "json" or parts[1] not in MODES:
            continue
        task, mode = parts[0], parts[1]
        for r in records(os.path.join(d, name)):
            t = r.get("timing") or {}
            cand = os.path.basename(r.get("candidate", "?"))
            rows[(task, cand)][mode].append((t.get("speedup"), r.get("status") or "?", t.get("median_ms")))
    if not rows:
        print("No evaluation records in", d)
        return

    def med(values):
        v = [x for x in values if x]
        return statistics.median(v) if v else None

    print("| task | candidate | status old | status new | speedup old | speedup new | new / old |")
    print("|---|---|---|---|---|---|---|")
    ratios, regressed = [], []
    for (task, cand), modes in sorted(rows.items()):
        st = {m: "/".join(sorted({x[1] for x in modes.get(m, [])})) or "-" for m in MODES}
        so = med([x[0] for x in modes.get("old", [])])
        sn = med([x[0] for x in modes.get("new", [])])
        ratio = sn / so if so and sn else None
        # The reference's speedup is 1 by definition under both: no ratio to report. Only
        # candidates ok in every round under both workers count.
        if ratio is not None and cand != "reference.cu" and st["old"] == "ok" and st["new"] == "ok":
            ratios.append((ratio, task, cand))
        if "ok" in st["old"].split("/") and any(s != "ok" for s in st["new"].split("/")):
            regressed.append((task, cand, st["old"], st["new"]))
        print(f"| {task} | {cand} | {st['old']} | {st['new']} | {fmt(so)} | {fmt(sn)} | {fmt(ratio)} |")
    rounds = max(len(m) for modes in rows.values() for m in modes.values())
    print()
    if ratios:
        values = [r[0] for r in ratios]
        lo, hi = min(ratios), max(ratios)
        print(f"Speedup under the new worker over the old: median {statistics.median(values):.3f}, range "
              f"{lo[0]:.3f} ({lo[1]}/{lo[2]}) to {hi[0]:.3f} ({hi[1]}/{hi[2]}), over {len(values)} candidates "
              f"ok and timed under both (medians over up to {rounds} round(s); references left out).")
    else:
        print("No candidate was ok and timed under both workers.")
    print()
    if regressed:
        print("Ok under the old worker, not ok under the new:")
        for task, cand, so, sn in regressed:
            print(f"- {task}/{cand}: old {so}, new {sn}")
    else:
        print("No candidate ok under the old worker is not ok under the new.")


# QTest's lines: "PASS   : TestCudaEval::oobWrite()", "FAIL!  : TestCudaEval::oobWrite() ...",
# "SKIP   : ...", and the test's own "QINFO  : TestCudaEval::oobWrite() oob_write -> ok (stage done): ..."
RESULT = re.compile(r"^(PASS|FAIL!|SKIP|XFAIL|XPASS|BPASS|BFAIL)\s*:\s*\w+::(\w+)\(\)(.*)$")
VERDICT = re.compile(r"^QINFO\s*:\s*\w+::(\w+)\(\)\s+(\S+) -> (\w+) \(stage")


def hostile(d):
    logs = {m: os.path.join(d, f"hostile.{m}.log") for m in MODES}
    logs = {m: p for m, p in logs.items() if os.path.exists(p)}
    if not logs:
        return
    # test function -> mode -> (result, detail); test function -> mode -> [candidate -> status]
    results = defaultdict(dict)
    verdicts = defaultdict(lambda: defaultdict(list))
    for mode, path in logs.items():
        for line in open(path, errors="replace"):
            line = line.rstrip("\n")
            m = RESULT.match(line)
            if m:
                results[m.group(2)][mode] = (m.group(1).rstrip("!"), m.group(3).strip())
                continue
            v = VERDICT.match(line)
            if v:
                verdicts[v.group(1)][mode].append(f"{v.group(2)}: {v.group(3)}")
    shown = [m for m in MODES if m in logs]
    print()
    print("gpu_test_cuda_eval against " + " and ".join(f"the {m} worker" for m in shown) +
          " (each test case expects its candidate's status and the check that catches it; "
          "the candidates' verdicts are those the test logged, the hostile one first):")
    print()
    print("| test case | " + " | ".join(f"{m} result | {m} verdicts" for m in shown) + " |")
    print("|---|" + "---|---|" * len(shown))
    failed_old = []
    for fn in results:  # in the order the test ran them
        if fn in ("initTestCase", "cleanupTestCase"):
            continue
        cells = []
        for m in shown:
            res, detail = results[fn].get(m, ("-", ""))
            # A failure's first words say whether a verdict differed or a check is missing.
            cells.append(res if res != "FAIL" or not detail else f"FAIL: {detail[:90]}")
            cells.append("; ".join(verdicts[fn].get(m, [])) or "-")
            if m == "old" and res == "FAIL":
                failed_old.append(fn)
        print(f"| {fn} | " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    if "old" in logs:
        print()
        print("Failed against the old worker (what it judged otherwise than the test expects): " +
              (", ".join(failed_old) if failed_old else "none") + ".")
        if not results:
            print("The log holds no test results: see hostile.old.log.")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    speed_table(d)
    hostile(d)


if __name__ == "__main__":
    main()
