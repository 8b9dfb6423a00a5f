#!/usr/bin/env python3
"""Turns the `kfoundry profile --json` records written by the profile part of
scripts/gpu-check.sh (OUTDIR/profile/*.json) into a Markdown table."""
import json
import os
import sys

out = sys.argv[1]
prof = os.path.join(out, "profile")


def f(v, digits=3):
    return "-" if not isinstance(v, (int, float)) else f"{v:.{digits}g}"


walls = {}
try:
    for line in open(os.path.join(prof, "summary.txt")):
        p = line.split()
        if len(p) >= 6:
            walls[(p[0], p[1])] = (p[3], p[5])
except OSError:
    pass

try:
    version = open(os.path.join(prof, "ncu-version.txt")).read().strip().splitlines()[-1]
except (OSError, IndexError):
    version = "ncu version unknown"
missing = []
try:
    missing = [l.split()[1] for l in open(os.path.join(prof, "metrics-check.txt")) if l.startswith("MISSING")]
except OSError:
    pass

print(f"\n## Profiles (Nsight Compute: {version})\n")
print("Metrics not offered by the device: " + (", ".join(missing) if missing else "none") + "\n")
print("| task | candidate | status | bound | evidence | DRAM % | SM % | achieved occ % | top stall | kernels | profiled us | timed ms | advice | profile s | wall s |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for name in sorted(os.listdir(prof)) if os.path.isdir(prof) else []:
    if not name.endswith(".json"):
        continue
    task, cand = name[:-5].rsplit(".", 1)
    rc, wall = walls.get((task, cand), ("?", "-"))
    try:
        with open(os.path.join(prof, name)) as fh:
            r = json.load(fh)
    except (OSError, ValueError) as e:
        err = ""
        try:
            err = open(os.path.join(prof, name[:-5] + ".err")).read().strip().splitlines()[-1][:120]
        except (OSError, IndexError):
            pass
        print(f"| {task} | {cand} | exit {rc}: {err or str(e)[:80]} | | | | | | | | | | | | {wall} |")
        continue
    p = r.get("profile") or {}
    t = r.get("timing") or {}
    if not p.get("available"):
        print(f"| {task} | {cand} | {r.get('status')}; no profile: {str(p.get('reason', ''))[:100]} | {p.get('bound', '-')} "
              f"| {'; '.join(p.get('evidence', []))[:80]} | | | | | | | {f(t.get('median_ms'), 4)} | {', '.join(r.get('advice', []))} "
              f"| {f(p.get('seconds'))} | {wall} |")
        continue
    s = p.get("summary", {})
    k = (p.get("kernels") or [{}])[0]
    stall = next((x for x in k.get("stalls", []) if x.get("reason") != "selected"), None)
    stall_s = f"{stall['reason']} {100 * stall['share']:.0f}%" if stall else "-"
    print(f"| {task} | {cand} | {r.get('status')} | {p.get('bound')} | {'; '.join(p.get('evidence', []))[:90]} "
          f"| {f(s.get('dram_throughput_pct'))} | {f(s.get('sm_throughput_pct'))} | {f(k.get('achieved_occupancy_pct'))} "
          f"| {stall_s} | {s.get('kernels')} | {f(s.get('total_duration_us'), 4)} | {f(t.get('median_ms'), 4)} "
          f"| {', '.join(r.get('advice', []))} | {f(p.get('seconds'))} | {wall} |")
