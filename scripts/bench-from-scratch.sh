#!/usr/bin/env bash
# The search from scratch: `kfoundry evolve` on every bundled task (and the from-scratch test
# tasks) with every library pattern written for that task removed and without the task's own
# hand-written candidates, so that the kernels come from the op-class templates, from other
# tasks' patterns of the same op class (adapted to the entry point) and from the experts.
# Writes OUTDIR/<task>.json (evolve --json), OUTDIR/<task>.log and OUTDIR/results.md.
#   scripts/bench-from-scratch.sh OUTDIR [--backend cuda|host] [--budget N] [--islands N] [TASK...]
# Environment: KF_BIN (folder of kfoundry; default build/bin or .gpu/bin), KF_BENCH_TIMEOUT
# (seconds per task, default 900). TASK: a folder under tasks/ or tests/data/tasks/ (default all).
set -uo pipefail
out=${1:?usage: scripts/bench-from-scratch.sh OUTDIR [--backend B] [--budget N] [--islands N] [TASK...]}
shift
backend=cuda budget=60 islands=4
tasks=()
while [ $# -gt 0 ]; do
  case $1 in
    --backend) backend=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --islands) islands=$2; shift 2 ;;
    *) tasks+=("$1"); shift ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${KF_BIN:-}
[ -z "$bin" ] && for b in "$root/.gpu/bin" "$root/build/bin" "$root/build-gpu/bin"; do [ -x "$b/kfoundry" ] && bin=$b && break; done
[ -x "$bin/kfoundry" ] || { echo "no kfoundry (set KF_BIN)" >&2; exit 2; }
[ -d "$root/.gpu/lib" ] && export LD_LIBRARY_PATH=$root/.gpu/lib:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ ${#tasks[@]} -eq 0 ]; then
  for d in "$root"/tasks/level*/*/ "$root"/tests/data/tasks/{sigmoid,row_max,rmsnorm,matvec,scaled_transpose,linear_tanh,row_cummax,blur3x3,bucket_count,col_std,dwconv1d,add_layernorm,smooth_clamp,col_cumsum}/; do
    [ -f "$d/task.json" ] && tasks+=("${d%/}")
  done
fi
export KF_CACHE_DIR=${KF_CACHE_DIR:-$work/cache}
"$bin/kfoundry" device info --backend "$backend" --json >"$out/device.json" 2>/dev/null || true

for t in "${tasks[@]}"; do
  if [ ! -d "$t" ]; then [ -d "$root/tasks/$t" ] && t=$root/tasks/$t || t=$root/tests/data/tasks/$t; fi
  name=$(basename "$t")
  rel=${t#"$root"/tasks/}
  # The task without its hand-written candidates.
  copy=$work/tasks/$name
  rm -rf "$copy"; mkdir -p "$copy"
  (cd "$t" && find . -maxdepth 1 -type f -exec cp {} "$copy/" \;)
  # Resources whose seed library has no pattern written for this task.
  res=$work/resources-$name
  rm -rf "$res"; cp -r "$root/resources" "$res"
  python3 - "$res/library/seed.json" "$rel" "$name" <<'PY'
import json, sys
path, rel, name = sys.argv[1:]
seed = json.load(open(path))
keep = [p for p in seed["patterns"] if p.get("task") not in (rel, name) and not p.get("task", "").endswith("/" + name)]
seed["patterns"] = keep
json.dump(seed, open(path, "w"), indent=2)
PY
  echo "[bench-from-scratch $(date +%T)] $name"
  start=$(date +%s)
  XDG_DATA_HOME=$work/data-$name KF_RESOURCES_DIR=$res KF_TASKS_DIR=$root/tasks \
    timeout "${KF_BENCH_TIMEOUT:-900}" "$bin/kfoundry" evolve "$copy" --project "$work/project-$name" --backend "$backend" \
    --islands "$islands" --budget "$budget" --no-profile --json >"$out/$name.json" 2>"$out/$name.log"
  rc=$?
  echo "{\"task\": \"$name\", \"exit\": $rc, \"wall_s\": $(( $(date +%s) - start ))}" >"$out/$name.exit.json"
  # What each family of candidates came to: why a task did not improve shows here.
  python3 - "$work/project-$name/project.db" >"$out/$name.families.txt" 2>&1 <<'PY'
import json, sqlite3, sys
from collections import defaultdict
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT c.family, c.expert, e.status, e.fitness, e.diagnosis, c.source, c.tunables FROM candidates c "
                  "JOIN evaluations e ON e.candidate_id = c.id ORDER BY c.id").fetchall()
by = defaultdict(list)
for fam, expert, status, fit, diag, src, tun in rows:
    by[(fam, expert)].append((status, fit, diag, (src, tun)))
for (fam, expert), evs in sorted(by.items()):
    statuses = defaultdict(int)
    for s, _, _, _ in evs:
        statuses[s] += 1
    ok = [(f, src) for s, f, _, src in evs if s == "ok"]
    best = max(ok, default=(0, ("", "{}")), key=lambda e: e[0])
    # The best one's tunables: its source's defaults, then its assignment.
    values = {l.split()[1]: l.split()[2] for l in best[1][0].splitlines()
              if l.startswith("#define ") and "@kf tunable" in l and len(l.split()) > 2}
    try:
        values.update({k: str(v) for k, v in json.loads(best[1][1] or "{}").items()})
    except Exception:
        pass
    tunables = " ".join(f"{k}={v}" for k, v in sorted(values.items()))
    print(f"{fam} ({expert}): {len(evs)} evaluated, {dict(statuses)}, best {best[0]:.3f}x" + (f" at {tunables}" if tunables else ""))
    for s, _, d, _ in evs:
        if s != "ok":
            try:
                d = json.loads(d)
            except Exception:
                d = {}
            print("   first failure:", s, json.dumps({k: d.get(k) for k in ("stage", "message", "correctness") if k in d})[:600])
            break
PY
done

python3 - "$out" "${tasks[@]}" <<'PY'
import json, os, sys
out, tasks = sys.argv[1], sys.argv[2:]
device = {}
try:
    device = json.load(open(os.path.join(out, "device.json")))
except Exception:
    pass
peaks = device.get("peaks", {})
rows = ["| task | outcome (exit) | evaluations | best speedup | timed again | best family (expert) | % of bound (bound) | reference % of bound | reference against itself | evals to 90% of best | generic kernels tried | wall |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|"]
for t in tasks:
    name = os.path.basename(t.rstrip("/"))
    ex = json.load(open(os.path.join(out, name + ".exit.json")))
    try:
        s = json.load(open(os.path.join(out, name + ".json")))
    except Exception:
        rows.append(f"| {name} | no summary (exit {ex['exit']}) | | | | | | | | | | {ex['wall_s']} s |")
        continue
    b = s.get("best") or {}
    pct = lambda v: f"{100 * v:.0f}%" if isinstance(v, (int, float)) and v >= 0 else "-"
    own = f"{s['reference_self_speedup']:.2f}x" if "reference_self_speedup" in s else "-"
    again = f"{b['confirmed_speedup']:.2f}x" if "confirmed_speedup" in b else "-"
    generic = ", ".join(f"{g['family'].split('/')[-1]} " + (f"{g['best_speedup']:.2f}x" if g.get("correct") else g.get("status", "?"))
                        for g in s.get("generic", [])) or "-"
    rows.append(f"| {name} | {s['outcome']} ({ex['exit']}) | {s['evaluations']} | {b.get('speedup', 0):.2f}x | {again} | "
                f"{b.get('family', '-')} ({b.get('expert', '-')}) | {pct(b.get('bound_fraction', -1))} ({b.get('bound', '-')}) | "
                f"{pct(b.get('reference_bound_fraction', -1))} | {own} | {s.get('evals_to_90pct', 0)} | {generic} | {ex['wall_s']} s |")
head = f"Measured copy bandwidth {peaks.get('bandwidth_gbps', '?')} GB/s, FMA rate {peaks.get('fp32_gflops', '?')} GFLOP/s.\n\n"
open(os.path.join(out, "results.md"), "w").write(head + "\n".join(rows) + "\n")
print(head + "\n".join(rows))
PY
