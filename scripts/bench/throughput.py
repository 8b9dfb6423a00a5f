#!/usr/bin/env python3
"""Summarises scripts/gpu-check.sh part `throughput`: evaluations per minute of `kfoundry evolve`
with runners started ahead, four at a time, while a candidate is evaluated (the default,
'ahead'), one at a time ('depth1', KF_RUNNER_AHEAD_DEPTH=1),
started between evaluations ('after', KF_RUNNER_AHEAD=after), contexts made only while the
worker is idle or when taken ('idle', KF_RUNNER_OPEN=idle; the default before the next runner's
context was made while a candidate is evaluated, which runs of that time name 'take'), started
per evaluation ('fresh', KF_RUNNER_AHEAD=0), eight hardware queues per context, the
driver's default ('conn8', CUDA_DEVICE_MAX_CONNECTIONS=8; one is the worker's default), launch
queues a quarter of the driver's size ('scaleq', CUDA_SCALE_LAUNCH_QUEUES=0.25x), compilers at
the engine's priority ('nice0', KF_COMPILE_NICE=0; 10 lower is the default) and
candidates in the worker's process ('inprocess', KF_CUDA_IN_PROCESS=1), side by side in one run; 'old' is an earlier build's default mode where the run has one. A second table gives the runner
site's steps (medians per evaluation, ms) and the wall time per evaluation outside the worker's
evaluations (waits for compilation and the engine's own work), a third the runner's own start
step by step (runner.setup_steps).

usage: throughput.py DIR   (DIR holds <task>.<mode>.<round>.db and summary.txt)"""
import json
import os
import sqlite3
import statistics
import sys

MODES = ["ahead", "idle", "take", "conn8", "scaleq", "nice0", "depth1", "after", "old", "fresh", "inprocess"]
SITE = ["arenas", "bind_ms", "hush_ms", "sync_ms", "hold_ms", "holds", "settled_holds", "settle_ms", "memory_ms", "arm_ms", "call_ms", "count_ms", "account_ms",
        "freeze_ms", "mapped_ms", "calls"]
# The runner's start, step by step (runner.setup_steps, medians, ms): the judge's fork to the
# runner's main (bubblewrap, exec), the driver's start, the wait for the judge's Open, the device
# (of it: cudaInitDevice, the context with its stream and events), a first timed call and
# CUPTI, the filter.
STEPS = ["spawn_ms", "driver_ms", "unopened_ms", "device_ms", "init_ms", "context_ms", "threads_ms", "confine_ms"]


def one(db):
    con = sqlite3.connect(db)
    rows = con.execute("select e.status, e.diagnosis from evaluations e order by e.id").fetchall()
    stopped = con.execute("select payload from events where kind = 'stopped' order by id desc limit 1").fetchone()
    pipe = {}
    if stopped:
        try:
            pipe = json.loads(stopped[0]).get("data", {}).get("pipeline", {}) or {}
        except ValueError:
            pipe = {}
    wall = pipe.get("wall_s") or 0
    waited, setup, ahead, statuses = [], [], 0, {}
    steps = {k: [] for k in STEPS}
    phases = {"eval_s": [], "reps": [], "correctness_ms": [], "timing_ms": []}
    site = {k: [] for k in SITE}
    for status, diag in rows:
        statuses[status] = statuses.get(status, 0) + 1
        try:
            d = json.loads(diag) if diag else {}
        except ValueError:
            d = {}
        r = d.get("runner") or {}
        ph = d.get("phases") or {}
        if d.get("eval_seconds"):
            phases["eval_s"].append(d["eval_seconds"])
        if (d.get("timing") or {}).get("reps"):
            phases["reps"].append(d["timing"]["reps"])
        if "correctness_ms" in ph:
            phases["correctness_ms"].append(ph["correctness_ms"])
        if "loop_ms" in (ph.get("timing") or {}):
            phases["timing_ms"].append(ph["timing"]["loop_ms"])
        for k in SITE:
            if k in (ph.get("site") or {}):
                site[k].append(ph["site"][k])
        if "waited_ms" in r:
            waited.append(r["waited_ms"])
        if "setup_ms" in r:
            setup.append(r["setup_ms"])
        for k in STEPS:
            if k in (r.get("setup_steps") or {}):
                steps[k].append(r["setup_steps"][k])
        ahead += 1 if r.get("ahead") else 0
    return {
        "evaluations": len(rows),
        "wall_s": wall,
        "per_min": 60 * len(rows) / wall if wall else None,
        "busy": pipe.get("device_busy_s", 0) / wall if wall else None,
        "starved_s": pipe.get("device_starved_s"),
        "profile_s": pipe.get("profile_s"),
        "profiles": pipe.get("profiles"),
        "waited_ms": statistics.median(waited) if waited else None,
        "setup_ms": statistics.median(setup) if setup else None,
        "ahead": ahead,
        "statuses": statuses,
        "phases": {k: statistics.median(v) if v else None for k, v in phases.items()},
        "site": {k: statistics.median(v) if v else None for k, v in site.items()},
        "steps": {k: statistics.median(v) if v else None for k, v in steps.items()},
        "eval_sum_s": sum(phases["eval_s"]),
    }


def main():
    d = sys.argv[1]
    runs = {}
    for name in sorted(os.listdir(d)):
        if not name.endswith(".db"):
            continue
        task, mode, rnd = name[:-3].rsplit(".", 2)
        try:
            runs.setdefault(task, {}).setdefault(mode, []).append(one(os.path.join(d, name)))
        except sqlite3.Error as e:
            print(f"{name}: unreadable ({e})")
    print("| task | mode | evaluations | evals/min | device busy | runner: waited (median) | runner: set-up (median) | started ahead | "
          "evaluation s (median) | timed reps | correctness ms | timing ms | statuses |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    ratios = []
    for task, modes in sorted(runs.items()):
        rate = {}
        for mode in MODES:
            for r in modes.get(mode, []):
                f = lambda v, fmt: "-" if v is None else fmt.format(v)
                print(f"| {task} | {mode} | {r['evaluations']} | {f(r['per_min'], '{:.0f}')} | {f(r['busy'] and 100 * r['busy'], '{:.0f}%')} | "
                      f"{f(r['waited_ms'], '{:.1f} ms')} | {f(r['setup_ms'], '{:.0f} ms')} | {r['ahead']} | "
                      f"{f(r['phases']['eval_s'], '{:.3f}')} | {f(r['phases']['reps'], '{:.0f}')} | "
                      f"{f(r['phases']['correctness_ms'], '{:.0f}')} | {f(r['phases']['timing_ms'], '{:.0f}')} | "
                      f"{', '.join(f'{k} {v}' for k, v in sorted(r['statuses'].items()))} |")
            vals = [r["per_min"] for r in modes.get(mode, []) if r["per_min"]]
            if vals:
                rate[mode] = statistics.median(vals)
        if "ahead" in rate and "inprocess" in rate:
            ratios.append((task, rate["ahead"] / rate["inprocess"], rate))
    print()
    print("| task | mode | " + " | ".join(SITE) + " | wall s per evaluation | of it outside evaluations | "
          "device starved s (run) | profiles (s) |")
    print("|---|---|" + "---|" * (len(SITE) + 4))
    for task, modes in sorted(runs.items()):
        for mode in MODES:
            for r in modes.get(mode, []):
                f = lambda v: "-" if v is None else f"{v:.3g}"
                per = r["wall_s"] / r["evaluations"] if r["evaluations"] and r["wall_s"] else None
                outside = (r["wall_s"] - r["eval_sum_s"]) / r["evaluations"] if per else None
                prof = "-" if r["profiles"] is None else f"{r['profiles']} ({f(r['profile_s'])})"
                print(f"| {task} | {mode} | " + " | ".join(f(r["site"][k]) for k in SITE) + f" | {f(per)} | {f(outside)} | "
                      f"{f(r['starved_s'])} | {prof} |")
    print()
    print("| task | mode | runner set-up ms | " + " | ".join(STEPS) + " |")
    print("|---|---|---|" + "---|" * len(STEPS))
    for task, modes in sorted(runs.items()):
        for mode in MODES:
            for r in modes.get(mode, []):
                if r["setup_ms"] is None:
                    continue
                f = lambda v: "-" if v is None else f"{v:.3g}"
                print(f"| {task} | {mode} | {f(r['setup_ms'])} | " + " | ".join(f(r["steps"][k]) for k in STEPS) + " |")
    print()
    for task, ratio, rate in ratios:
        extra = f", started per evaluation {rate['fresh']:.0f}/min" if "fresh" in rate else ""
        if "idle" in rate:
            extra += f", contexts made only while idle {rate['idle']:.0f}/min (ahead / idle = {rate['ahead'] / rate['idle']:.2f})"
        if "take" in rate:
            extra += f", next context made during an evaluation {rate['take']:.0f}/min (/ in-process = {rate['take'] / rate['inprocess']:.2f})"
        for mode in ("conn8", "scaleq", "nice0"):
            if mode in rate:
                extra += f", {mode} {rate[mode]:.0f}/min (ahead / {mode} = {rate['ahead'] / rate[mode]:.2f})"
        if "old" in rate:
            extra += f", earlier build {rate['old']:.0f}/min (ahead / earlier = {rate['ahead'] / rate['old']:.2f})"
        print(f"- {task}: runner started ahead {rate['ahead']:.0f}/min, in-process {rate['inprocess']:.0f}/min "
              f"(ahead / in-process = {ratio:.2f}){extra}")


if __name__ == "__main__":
    main()
