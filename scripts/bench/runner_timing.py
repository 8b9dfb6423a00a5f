#!/usr/bin/env python3
"""Timing of CUDA candidates through the sandboxed runner against the in-process comparison
mode (KF_CUDA_IN_PROCESS=1), from the files scripts/gpu-check.sh writes in OUTDIR/runner:
TASK.MODE.ROUND.json (MODE runner or inprocess), `kfoundry eval --json` output. Prints a
markdown table: per candidate, the median over rounds of each mode's median time and
speedup, and their ratios."""
import json
import os
import statistics
import sys
from collections import defaultdict


def records(path):
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


def main():
    d = sys.argv[1]
    # (task, candidate) -> mode -> list of (median_ms, speedup, status, round_trip)
    rows = defaultdict(lambda: defaultdict(list))
    for name in sorted(os.listdir(d)):
        parts = name.split(".")
        if len(parts) != 4 or parts[3] != "json":
            continue
        task, mode = parts[0], parts[1]
        for r in records(os.path.join(d, name)):
            t = r.get("timing") or {}
            cand = os.path.basename(r.get("candidate", "?"))
            rows[(task, cand)][mode].append((t.get("median_ms"), t.get("speedup"), r.get("status")))
    print("| task | candidate | status (runner / in process) | median ms runner | median ms in process | time ratio | "
          "speedup runner | speedup in process | speedup ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    ratios = []
    for (task, cand), modes in sorted(rows.items()):
        def med(mode, k):
            v = [x[k] for x in modes.get(mode, []) if x[k]]
            return statistics.median(v) if v else None
        rm, im = med("runner", 0), med("inprocess", 0)
        rs, is_ = med("runner", 1), med("inprocess", 1)
        st = "/".join(sorted({x[2] or "?" for x in modes.get("runner", [])})) + " / " + \
             "/".join(sorted({x[2] or "?" for x in modes.get("inprocess", [])}))
        tr = rm / im if rm and im else None
        sr = rs / is_ if rs and is_ else None
        if sr:
            ratios.append(sr)
        f = lambda v, n=4: "-" if v is None else f"{v:.{n}g}"
        print(f"| {task} | {cand} | {st} | {f(rm)} | {f(im)} | {f(tr, 3)} | {f(rs, 3)} | {f(is_, 3)} | {f(sr, 3)} |")
    if ratios:
        print(f"\nSpeedup through the runner over speedup in process: median {statistics.median(ratios):.3f}, "
              f"range {min(ratios):.3f} to {max(ratios):.3f}, over {len(ratios)} timed candidates.")


if __name__ == "__main__":
    main()
