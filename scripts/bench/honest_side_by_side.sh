#!/usr/bin/env bash
# Honest candidates' speed under two builds of the worker, side by side on one CUDA machine:
# every bundled task's reference.cu and candidates/*.cu evaluated by `kfoundry eval` from
# each bin folder (kfoundry finds the kfoundry-worker next to itself), old and new in turn,
# their order swapped from one round and one task to the next. Then a summary table
# (scripts/bench/honest_side_by_side.py) in OUTDIR/summary.md.
#   scripts/bench/honest_side_by_side.sh OLD_BIN NEW_BIN OUTDIR
# Environment:
#   KF_HONEST_ROUNDS  rounds (default 2)
#   KF_HONEST_TASKS   task folders to evaluate (default: tasks/level*/*/)
#   KF_HONEST_CACHE   where each worker keeps its own compile cache and device peaks (default
#                     /tmp/kf-honest-cache/old and .../new: neither reads what the other wrote)
#   KF_HONEST_TEST    a gpu_test_cuda_eval executable: also run it with KF_BIN_DIR=OLD_BIN, so
#                     that its hostile CUDA candidates meet the old worker (OUTDIR/hostile.old.log);
#                     with KF_HONEST_TEST_NEW=1, with NEW_BIN as well (OUTDIR/hostile.new.log)
set -uo pipefail
old=${1:?usage: honest_side_by_side.sh OLD_BIN NEW_BIN OUTDIR}
new=${2:?usage: honest_side_by_side.sh OLD_BIN NEW_BIN OUTDIR}
out=${3:?usage: honest_side_by_side.sh OLD_BIN NEW_BIN OUTDIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
log() { echo "[honest $(date +%T)] $*"; }
for b in "$old" "$new"; do
  for exe in kfoundry kfoundry-worker; do
    [ -x "$b/$exe" ] || { echo "honest_side_by_side.sh: no executable $b/$exe" >&2; exit 2; }
  done
done
rounds=${KF_HONEST_ROUNDS:-2}
cache=${KF_HONEST_CACHE:-/tmp/kf-honest-cache}
# Runs a command with the compile cache and cached peaks of one mode.
in_cache() {
  local mode=$1
  shift
  KF_CACHE_DIR=$cache/$mode/compile XDG_CACHE_HOME=$cache/$mode "$@"
}
if [ -n "${KF_HONEST_TASKS:-}" ]; then
  read -r -a tasks <<<"$KF_HONEST_TASKS"
else
  tasks=("$root"/tasks/level*/*/)
fi
# COMMIT, where a bin folder has one, names the commit it was built from.
for mode in old new; do
  b=$old
  [ "$mode" = new ] && b=$new
  echo "$mode: $b: $("$b/kfoundry" --version 2>&1 | head -1), commit $(cat "$b/COMMIT" 2>/dev/null || echo unknown)"
done >"$out/versions.txt"

# One evaluation: TASK.MODE.ROUND.json with one JSON line per candidate.
evaluate() {
  local mode=$1 bin=$2 task=$3 round=$4
  local name cands c start
  name=$(basename "$task")
  cands=("$task/reference.cu")
  for c in "$task"/candidates/*.cu; do [ -f "$c" ] && cands+=("$c"); done
  start=$SECONDS
  in_cache "$mode" timeout "${KF_HONEST_TIMEOUT:-300}" "$bin/kfoundry" eval "$task" "${cands[@]}" --backend cuda --json \
    >"$out/$name.$mode.$round.json" 2>>"$out/errors.$mode.txt"
  echo "$name $mode round $round exit $? wall $((SECONDS - start)) s" >>"$out/runs.txt"
}

: >"$out/runs.txt"
i=0
for round in $(seq 1 "$rounds"); do
  log "round $round of $rounds: ${#tasks[@]} task(s)"
  for task in "${tasks[@]}"; do
    task=${task%/}
    if (( (round + i) % 2 )); then
      evaluate old "$old" "$task" "$round"
      evaluate new "$new" "$task" "$round"
    else
      evaluate new "$new" "$task" "$round"
      evaluate old "$old" "$task" "$round"
    fi
    i=$((i + 1))
  done
done

# The hostile CUDA candidates of the GPU test against the old worker. The test's engine is the
# new one; the worker protocol (version 1) is the same on both sides, so the old worker judges
# them: a case that fails here is one the old worker let through or judged otherwise.
if [ -n "${KF_HONEST_TEST:-}" ]; then
  if [ -x "$KF_HONEST_TEST" ]; then
    log "$(basename "$KF_HONEST_TEST") against the old worker ($old)"
    KF_BIN_DIR=$old in_cache old timeout "${KF_HONEST_TEST_TIMEOUT:-1800}" "$KF_HONEST_TEST" >"$out/hostile.old.log" 2>&1
    echo "hostile old exit $?" >>"$out/runs.txt"
    if [ -n "${KF_HONEST_TEST_NEW:-}" ]; then
      log "$(basename "$KF_HONEST_TEST") against the new worker ($new)"
      KF_BIN_DIR=$new in_cache new timeout "${KF_HONEST_TEST_TIMEOUT:-1800}" "$KF_HONEST_TEST" >"$out/hostile.new.log" 2>&1
      echo "hostile new exit $?" >>"$out/runs.txt"
    fi
  else
    log "no test executable $KF_HONEST_TEST: hostile candidates not run"
  fi
fi

python3 "$here/honest_side_by_side.py" "$out" | tee "$out/summary.md"
