#!/usr/bin/env python3
"""Where evaluations spend their time: reads `kfoundry eval --json` outputs (one JSON record
per line, files named TASK.MODE.ROUND.json) and prints, per task, mode and candidate, the
median of the worker's phases (docs/diagnosis.md, phases) over the rounds.

    python3 scripts/bench/eval_phases.py DIR
"""
import glob
import json
import os
import statistics
import sys


def flat(prefix, obj, out):
    for k, v in obj.items():
        if isinstance(v, dict):
            flat(prefix + k + ".", v, out)
        elif isinstance(v, (int, float)):
            out[prefix + k] = v


def records(text):
    """The JSON objects of a file: one per line, or pretty-printed one after the other."""
    dec, i = json.JSONDecoder(), 0
    while True:
        i = text.find("{", i)
        if i < 0:
            return
        try:
            obj, i = dec.raw_decode(text, i)
        except ValueError:
            i += 1
            continue
        yield obj


def main():
    rows = {}
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
        task, mode, _ = os.path.basename(path).rsplit(".", 3)[:3]
        for n, d in enumerate(records(open(path).read())):
            cand = os.path.basename(d.get("candidate", "") or d.get("source", "") or str(n))
            f = {"eval_s": d.get("eval_seconds", 0), "reps": (d.get("timing") or {}).get("reps", 0)}
            flat("", d.get("phases") or {}, f)
            rows.setdefault((task, mode, "%d:%s" % (n, cand), d.get("status")), []).append(f)
    keys = ["eval_s", "reps", "correctness_ms", "reference_timing_ms", "timing.loop_ms", "timing.prepare_ms",
            "timing.flush_ms", "timing.call_ms", "timing.after_ms", "post_check_ms", "site.bind_ms", "site.hush_ms", "site.hold_ms", "site.sync_ms",
            "site.memory_ms", "site.arm_ms", "site.call_ms", "site.count_ms", "site.calls"]
    print("| task | mode | candidate | status | " + " | ".join(keys) + " |")
    print("|" + "---|" * (len(keys) + 4))
    for (task, mode, cand, status), fs in sorted(rows.items()):
        cells = []
        for k in keys:
            vals = [f[k] for f in fs if k in f]
            cells.append("%.3g" % statistics.median(vals) if vals else "-")
        print("| %s | %s | %s | %s | %s |" % (task, mode, cand, status, " | ".join(cells)))


if __name__ == "__main__":
    main()
