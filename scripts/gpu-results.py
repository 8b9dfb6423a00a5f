#!/usr/bin/env python3
"""Turns the JSON records written by scripts/gpu-check.sh into a Markdown results table."""
import json
import os
import statistics
import sys

out = sys.argv[1]
bench = os.path.join(out, "bench")


def records(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        return [], str(e)
    return (data if isinstance(data, list) else [data]), None


def f(v, digits=3):
    return "-" if v is None else f"{v:.{digits}g}"


try:
    with open(os.path.join(out, "device.json")) as fh:
        dev = json.load(fh)
    print(f"Device: {dev['device']['name']}, {dev['device']['sm_count']} SMs; measured copy bandwidth "
          f"{dev['peaks']['bandwidth_gbps']:.0f} GB/s, FMA rate {dev['peaks']['fp32_gflops']:.0f} GFLOP/s\n")
except (OSError, ValueError, KeyError):
    print("Device: (device info missing)\n")

print("| task | candidate | status | median ms | reference ms | speedup | GB/s | % peak BW | GFLOP/s | bound | compile s | eval s |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for name in sorted(os.listdir(bench)) if os.path.isdir(bench) else []:
    if not name.endswith(".json") or name == "eval_speed.json":
        continue
    recs, err = records(os.path.join(bench, name))
    if err:
        print(f"| {name[:-5]} | - | no record: {err[:60]} | | | | | | | | | |")
        continue
    for r in recs:
        cand = os.path.basename(r.get("candidate", "?"))
        t = r.get("timing") or {}
        rl = r.get("roofline") or {}
        print(f"| {name[:-5]} | {cand} | {r['status']} | {f(t.get('median_ms'), 4)} | {f(t.get('reference_median_ms'), 4)} | "
              f"{f(t.get('speedup'))} | {f(rl.get('achieved_gbps'), 4)} | {f(100 * rl['bandwidth_fraction'] if rl else None)} | "
              f"{f(rl.get('achieved_gflops'), 4)} | {rl.get('bound', '-')} | "
              f"{'cached' if r['compile'].get('cached') else f(r['compile'].get('seconds'))} | {f(r.get('eval_seconds'))} |")
        if r["status"] != "ok":
            print(f"|  | | {r.get('message', '')[:160]} | | | | | | | | | |")

recs, err = records(os.path.join(bench, "eval_speed.json"))
if recs:
    ev = [r.get("eval_seconds", 0) for r in recs]
    comp = [r["compile"].get("seconds", 0) for r in recs if not r["compile"].get("cached")]
    print(f"\nEvaluation speed (scale_add, n=16M, 3 trials x 2 cases + timing, one engine): "
          f"evaluation median {statistics.median(ev):.3f} s over {len(ev)} runs (first, with reference timing: {ev[0]:.3f} s; "
          f"later runs: median {statistics.median(ev[1:]) if len(ev) > 1 else ev[0]:.3f} s); "
          f"compile {', '.join(f'{c:.1f}' for c in comp) or 'cached'} s; statuses {sorted(set(r['status'] for r in recs))}")

evolve = os.path.join(out, "evolve")
if os.path.isdir(evolve):
    print("\n| task (evolve) | evaluations | best speedup | best expert | failures by status | wall |")
    print("|---|---|---|---|---|---|")
    walls = {}
    try:
        for line in open(os.path.join(evolve, "summary.txt")):
            parts = line.split()
            walls[parts[0]] = " ".join(parts[1:])
    except OSError:
        pass
    for name in sorted(n[:-10] for n in os.listdir(evolve) if n.endswith(".runs.json")):
        runs, err = records(os.path.join(evolve, name + ".runs.json"))
        best, _ = records(os.path.join(evolve, name + ".best.json"))
        evals = sum(r.get("evaluations", 0) for r in runs) if runs else 0
        b = best[0] if best else {}
        fails = "-"
        try:
            con = __import__("sqlite3").connect(os.path.join("/tmp/kf-gpu-cache/projects", name, "project.db"))
            rows = con.execute("select status, count(*) from evaluations group by status").fetchall()
            fails = ", ".join(f"{s} {c}" for s, c in rows if s != "ok") or "none"
        except Exception:
            pass
        print(f"| {name} | {evals} | {f(b.get('fitness'))} | {b.get('expert', '-')} | {fails} | {walls.get(name, '-')} |")
