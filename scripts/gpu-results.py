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
    import sqlite3
    print("\n| task (evolve) | evaluations | best speedup | best family (expert) | % of copy BW / TFLOP/s | evals to 90% of best | evals/min | device busy | failures by status | wall |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    walls = {}
    try:
        for line in open(os.path.join(evolve, "summary.txt")):
            parts = line.split()
            walls[parts[0]] = " ".join(parts[1:])
    except OSError:
        pass
    for name in sorted(n[:-3] for n in os.listdir(evolve) if n.endswith(".db")):
        try:
            con = sqlite3.connect(os.path.join(evolve, name + ".db"))
            rows = con.execute("select e.status, e.fitness, e.diagnosis, c.family, c.expert from evaluations e "
                               "join candidates c on c.id = e.candidate_id order by e.id").fetchall()
            stopped = con.execute("select payload from events where kind = 'stopped' order by id desc limit 1").fetchone()
        except Exception as e:
            print(f"| {name} | unreadable: {e} |")
            continue
        if not rows:
            print(f"| {name} | 0 | - | - | - | - | - | - | - | {walls.get(name, '-')} |")
            continue
        best_i = max(range(len(rows)), key=lambda i: rows[i][1])
        best = rows[best_i][1]
        running, to90 = 0.0, None
        for i, r in enumerate(rows):
            running = max(running, r[1])
            if to90 is None and best > 0 and running >= 0.9 * best:
                to90 = i + 1
        d = json.loads(rows[best_i][2]) if rows[best_i][2] else {}
        roof = d.get("roofline") or {}
        if roof.get("bound") == "compute" or name in ("matmul", "gemm_bias_relu"):
            where = f"{roof.get('achieved_gflops', 0) / 1000:.1f} TFLOP/s"
        else:
            where = f"{100 * roof.get('bandwidth_fraction', 0):.0f}%"
        pipe = {}
        if stopped:
            try:
                pipe = json.loads(stopped[0]).get("data", {}).get("pipeline", {}) or {}
            except Exception:
                pipe = {}
        wall = pipe.get("wall_s") or 0
        rate = f"{60 * len(rows) / wall:.0f}" if wall else "-"
        busy = f"{100 * pipe.get('device_busy_s', 0) / wall:.0f}% (starved {pipe.get('device_starved_s', 0):.1f} s)" if wall else "-"
        if wall and pipe.get("profiles"):
            busy += f"; {pipe['profiles']} profiled, {pipe.get('profile_s', 0):.1f} s = {100 * pipe.get('profile_s', 0) / wall:.0f}% of the run"
        fails = {}
        for r in rows:
            if r[0] != "ok":
                fails[r[0]] = fails.get(r[0], 0) + 1
        failtxt = ", ".join(f"{k} {v}" for k, v in sorted(fails.items())) or "none"
        print(f"| {name} | {len(rows)} | {best:.2f}x | {rows[best_i][3] or '-'} ({rows[best_i][4]}) | {where} | {to90} | {rate} | {busy} | {failtxt} | {walls.get(name, '-')} |")
    cb, _ = records(os.path.join(evolve, "cublas.json")) if os.path.exists(os.path.join(evolve, "cublas.json")) else (None, None)
    if cb and len(cb) == 2:
        c, b = cb
        ct, bt = (c.get("timing") or {}), (b.get("timing") or {})
        if ct.get("median_ms") and bt.get("median_ms"):
            print(f"\nmatmul, side by side in one worker: cuBLAS SGEMM (FP32) {ct['median_ms']:.3f} ms ({c['status']}), "
                  f"search's best {bt['median_ms']:.3f} ms ({b['status']}): best/cuBLAS throughput = {ct['median_ms'] / bt['median_ms']:.2f}x")
        else:
            print(f"\ncuBLAS comparison incomplete: statuses {c.get('status')} / {b.get('status')}: {c.get('message', '')} {b.get('message', '')}")
