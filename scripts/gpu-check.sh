#!/usr/bin/env bash
# On an NVIDIA machine: build (or take the binaries packed by scripts/gpu-bundle.sh in .gpu/),
# run the GPU-labelled tests, evaluate every bundled task's reference and hand-written
# candidates, and write the results (logs, JSON records, results.md) into OUTDIR.
#   scripts/gpu-check.sh OUTDIR
set -uo pipefail
out=${1:?usage: scripts/gpu-check.sh OUTDIR}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
log() { echo "[gpu-check $(date +%T)] $*"; }

if [ -x "$root/.gpu/bin/kfoundry" ]; then
  # gpu-bundle.sh packs the libraries compressed, to keep what travels small.
  [ -f "$root/.gpu/lib.tar.xz" ] && [ ! -d "$root/.gpu/lib" ] && tar xJf "$root/.gpu/lib.tar.xz" -C "$root/.gpu"
  bin=$root/.gpu/bin
  tests=$root/.gpu/tests
  export LD_LIBRARY_PATH=$root/.gpu/lib:${LD_LIBRARY_PATH:-}
  export PATH=$PATH:$root/.gpu/bin  # ninja for load_inline, bwrap for the sandbox, where missing
else
  log "building (no .gpu bundle found)"
  build=$root/build-gpu
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKF_BUILD_GUI=OFF -DKF_WITH_CUDA=ON >"$out/build.log" 2>&1 &&
    cmake --build "$build" -j "$(nproc)" >>"$out/build.log" 2>&1 || { log "build failed: see build.log"; exit 1; }
  bin=$build/bin
  tests=$build/tests
fi
for d in /usr/local/cuda/lib64 /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$d
done
export PATH=/usr/local/cuda/bin:$PATH
# The generic expert and the recogniser read references through libclang, which a bare GPU
# server may lack: .whl/ may carry PyPI's libclang wheel and clang's builtin headers
# (scripts/gpu-libclang.sh), unpacked here where no libclang loads.
if [ -z "${KF_LIBCLANG:-}" ]; then
  whl=$(ls "$root"/.whl/libclang-*.whl 2>/dev/null | head -1)
  if [ -n "$whl" ] && [ -f "$root/.whl/clang-include.tar.xz" ]; then
    lc=/tmp/kf-libclang
    python3 -m zipfile -e "$whl" "$lc" && native=$(dirname "$(find "$lc" -name libclang.so | head -1)")
    # The headers where the engine looks for them: <dir of the library>/clang/<major version>/include.
    major=$(basename "$whl" | sed -E 's/^libclang-([0-9]+).*/\1/')
    mkdir -p "$native/clang/$major" && tar xJf "$root/.whl/clang-include.tar.xz" -C "$native/clang/$major"
    export KF_LIBCLANG=$native/libclang.so
    log "libclang: $KF_LIBCLANG (carried)"
  else
    log "libclang: the system's, if any (none carried; see scripts/gpu-libclang.sh)"
  fi
fi
cache=${KF_GPU_CACHE:-/tmp/kf-gpu-cache}
export KF_SOURCE_DIR=$root KF_BIN_DIR=$bin KF_CACHE_DIR=$cache/compile XDG_CACHE_HOME=$cache
# Qt Test stops a test function after 5 minutes by default; KernelBench builds take longer.
export QTEST_FUNCTION_TIMEOUT=${QTEST_FUNCTION_TIMEOUT:-900000}

{ nvidia-smi; nvcc --version; } >"$out/machine.txt" 2>&1
log "device"
"$bin/kfoundry" device info --backend cuda --json >"$out/device.json" 2>"$out/device.err"
cat "$out/device.json"

# KF_GPU_PARTS selects what runs (default: all of "tests generic bench runner evolve profile kernelbench";
# "kbllm", "kbbuild", "throughput", "contexts" and "honest" run only when named).
parts=" ${KF_GPU_PARTS:-tests generic bench runner evolve profile kernelbench} "
if [[ $parts == *" tests "* ]]; then
log "GPU-labelled tests"
: >"$out/tests.log"
# KF_GPU_TESTS narrows the test executables (a glob, e.g. gpu_test_kernelbench*).
for t in "$tests"/${KF_GPU_TESTS:-gpu_*}; do
  [ -x "$t" ] || continue
  log "  $(basename "$t")"
  timeout 900 "$t" >>"$out/tests.log" 2>&1
  echo "$(basename "$t") exit $?" | tee -a "$out/tests.log"
done
grep -E '^(PASS|FAIL|SKIP|XFAIL|Totals)' "$out/tests.log" | tail -60
fi

if [[ $parts == *" bench "* ]]; then
log "benchmark: references and hand-written candidates of every bundled task"
mkdir -p "$out/bench"
for task in "$root"/tasks/level*/*/; do
  name=$(basename "$task")
  cands=("$task/reference.cu")
  for c in "$task"/candidates/*.cu; do [ -f "$c" ] && cands+=("$c"); done
  log "  $name: ${#cands[@]} candidate(s)"
  start=$SECONDS
  timeout 300 "$bin/kfoundry" eval "$task" "${cands[@]}" --backend cuda --json >"$out/bench/$name.json" 2>"$out/bench/$name.err"
  echo "$name exit $? wall $((SECONDS - start)) s" | tee -a "$out/bench/summary.txt"
done
log "evaluation speed: one small candidate evaluated 7 times by one engine (compile cached after the first)"
sc=$root/tests/data/candidates/cuda/correct.cu
"$bin/kfoundry" eval "$root/tests/data/tasks/scale_add" $sc $sc $sc $sc $sc $sc $sc --backend cuda --json \
  >"$out/bench/eval_speed.json" 2>"$out/bench/eval_speed.err"
fi
if [[ $parts == *" generic "* ]]; then
log "generic expert: its CUDA instances judged, then the search from scratch of the tasks no template knows"
mkdir -p "$out/generic"
timeout 900 "$tests/gpu_test_generic_gpu" >"$out/generic/test.log" 2>&1
echo "gpu_test_generic_gpu exit $?" | tee -a "$out/generic/test.log"
grep -E '^(PASS|FAIL|SKIP|Totals)|not correct|WARNING' "$out/generic/test.log" | tail -20
# The op-class templates of the broadcasts the recogniser reads (elementwise with a layout).
KF_GPU_TEMPLATE_TASKS=${KF_GPU_GENERIC_TEMPLATES:-bias_relu_cols,leaky_rows} timeout 600 "$tests/gpu_test_templates_gpu" \
  >"$out/generic/templates.log" 2>&1
echo "gpu_test_templates_gpu (${KF_GPU_GENERIC_TEMPLATES:-bias_relu_cols,leaky_rows}) exit $?" | tee -a "$out/generic/templates.log"
grep -E '^(FAIL|Totals)|not correct' "$out/generic/templates.log" | tail -5
KF_BIN=$bin "$root/scripts/bench-from-scratch.sh" "$out/generic/scratch" --budget "${KF_GPU_GENERIC_BUDGET:-60}" --islands 4 \
  ${KF_GPU_GENERIC_SEARCH:-embedding_gather maxpool2d bias_relu_cols leaky_rows scatter_add absmax_scale bucketize} 2>&1 |
  tail -14
fi

if [[ $parts == *" runner "* ]]; then
log "timing through the sandboxed runner against the in-process comparison mode, side by side"
ro=$out/runner
mkdir -p "$ro"
for round in $(seq 1 "${KF_GPU_RUNNER_ROUNDS:-2}"); do
  for task in "$root"/tasks/level*/*/; do
    name=$(basename "$task")
    cands=("$task/reference.cu")
    for c in "$task"/candidates/*.cu; do [ -f "$c" ] && cands+=("$c"); done
    timeout 300 "$bin/kfoundry" eval "$task" "${cands[@]}" --backend cuda --json >"$ro/$name.runner.$round.json" 2>>"$ro/errors.txt"
    KF_CUDA_IN_PROCESS=1 timeout 300 "$bin/kfoundry" eval "$task" "${cands[@]}" --backend cuda --json \
      >"$ro/$name.inprocess.$round.json" 2>>"$ro/errors.txt"
  done
done
python3 "$root/scripts/bench/runner_timing.py" "$ro" | tee "$ro/summary.md"
fi
if [[ $parts == *" throughput "* ]]; then
# Evaluations per minute of a search: runners started ahead, four at a time, while a
# candidate is evaluated (the default, 'ahead'), one at a time ('depth1',
# KF_RUNNER_AHEAD_DEPTH=1) and candidates in the worker's process ('inprocess',
# KF_CUDA_IN_PROCESS=1), the modes in a rotating order per task so that none always runs
# first. Modes named only in KF_GPU_THROUGHPUT_MODES: 'fresh' (KF_RUNNER_AHEAD=0, a runner
# started per evaluation), 'after' (KF_RUNNER_AHEAD=after, the next runner started between
# evaluations), 'idle' (KF_RUNNER_OPEN=idle, runners' contexts made only while the worker is
# idle or when taken, not while the candidate before is evaluated), 'conn8'
# (CUDA_DEVICE_MAX_CONNECTIONS=8, the driver's default, for the worker and its runners, which
# otherwise get one hardware queue per context), 'scaleq' (CUDA_SCALE_LAUNCH_QUEUES=0.25x:
# launch queues a quarter of the driver's size), 'nice0' (KF_COMPILE_NICE=0: compilers at the
# engine's priority) and 'old' (the default mode
# of the earlier build in .gpu/old/bin).
tput_tasks=${KF_GPU_THROUGHPUT_TASKS:-level1/row_sum level1/softmax level1/gelu}
log "throughput: kfoundry evolve --budget ${KF_GPU_THROUGHPUT_BUDGET:-40} on $tput_tasks, three runner modes side by side"
tp=$out/throughput
mkdir -p "$tp"
export XDG_DATA_HOME=$cache/data-throughput-$$
# KF_GPU_THROUGHPUT_MODES narrows the modes (default: all three); KF_GPU_THROUGHPUT_ARGS adds
# arguments to every evolve (e.g. --no-profile: no Nsight Compute runs between evaluations).
read -r -a modes <<<"${KF_GPU_THROUGHPUT_MODES:-ahead depth1 inprocess}"
nmodes=${#modes[@]}
i=0
for round in $(seq 1 "${KF_GPU_THROUGHPUT_ROUNDS:-1}"); do
  for task in $tput_tasks; do
    name=$(basename "$task")
    for k in $(seq 0 $((nmodes - 1))); do
      mode=${modes[$(( (i + k) % nmodes ))]}
      envs=()
      [ "$mode" = fresh ] && envs=(KF_RUNNER_AHEAD=0)
      [ "$mode" = depth1 ] && envs=(KF_RUNNER_AHEAD_DEPTH=1)
      [ "$mode" = idle ] && envs=(KF_RUNNER_OPEN=idle)
      [ "$mode" = conn8 ] && envs=(CUDA_DEVICE_MAX_CONNECTIONS=8)
      [ "$mode" = scaleq ] && envs=(CUDA_SCALE_LAUNCH_QUEUES=0.25x)
      [ "$mode" = nice0 ] && envs=(KF_COMPILE_NICE=0)
      [ "$mode" = after ] && envs=(KF_RUNNER_AHEAD=after)
      [ "$mode" = inprocess ] && envs=(KF_CUDA_IN_PROCESS=1)
      mbin=$bin
      [ "$mode" = old ] && mbin=${KF_GPU_OLD_BIN:-$root/.gpu/old/bin}
      proj=$cache/throughput/$name.$mode.$round
      rm -rf "$proj"
      start=$SECONDS
      env "${envs[@]}" timeout "${KF_GPU_THROUGHPUT_TIMEOUT:-180}" "$mbin/kfoundry" evolve "$root/tasks/$task" --project "$proj" \
        --backend cuda --islands 4 --budget "${KF_GPU_THROUGHPUT_BUDGET:-40}" ${KF_GPU_THROUGHPUT_ARGS:-} >"$tp/$name.$mode.$round.log" 2>&1
      echo "$name $mode round $round exit $? wall $((SECONDS - start)) s" | tee -a "$tp/summary.txt"
      cp "$proj/project.db" "$tp/$name.$mode.$round.db" 2>/dev/null
    done
    i=$((i + 1))
  done
done
python3 "$root/scripts/bench/throughput.py" "$tp" | tee "$tp/summary.md"
fi
if [[ $parts == *" contexts "* ]]; then
# What a runner's CUDA context costs, setting by setting, and what making one does to another
# process's driver calls (scripts/bench/context_probe.py; docs/sandbox.md, Hardware queues).
log "contexts: a context's cost under driver settings, and the stalls it causes"
mkdir -p "$out/contexts"
if nvcc -O2 -arch=native -o "$out/contexts/context_probe" "$root/scripts/bench/context_probe.cu" -lcuda >"$out/contexts/build.log" 2>&1; then
  timeout 300 python3 "$root/scripts/bench/context_probe.py" "$out/contexts/context_probe" "$out/contexts/summary.json" \
    >"$out/contexts/probe.log" 2>&1
  echo "context_probe exit $?"; grep -E '^(SUM|STALL|mps)' "$out/contexts/probe.log"
  rm -f "$out/contexts/context_probe"
else
  log "contexts: the probe did not build: see contexts/build.log"
fi
fi
if [[ $parts == *" honest "* ]]; then
# Honest candidates' speed under an earlier build of the worker and this one, side by side, and
# the hostile CUDA candidates of gpu_test_cuda_eval against the earlier worker
# (scripts/bench/honest_side_by_side.sh). The earlier kfoundry and kfoundry-worker are taken
# from .gpu/old/bin (scripts/gpu-bundle.sh copies them there from .gpu-old/bin).
old_bin=${KF_GPU_OLD_BIN:-$root/.gpu/old/bin}
if [ -x "$old_bin/kfoundry" ] && [ -x "$old_bin/kfoundry-worker" ]; then
  log "honest: every bundled task's candidates under the old worker ($old_bin) and this one, ${KF_GPU_HONEST_ROUNDS:-2} rounds"
  LD_LIBRARY_PATH=$root/.gpu/lib:${LD_LIBRARY_PATH:-} KF_HONEST_ROUNDS=${KF_GPU_HONEST_ROUNDS:-2} \
    KF_HONEST_CACHE=$cache/honest KF_HONEST_TEST=$([ "${KF_GPU_HONEST_HOSTILE:-1}" = 0 ] || echo "$tests/gpu_test_cuda_eval") \
    KF_HONEST_TEST_NEW=${KF_GPU_HONEST_TEST_NEW:-} \
    "$root/scripts/bench/honest_side_by_side.sh" "$old_bin" "$bin" "$out/honest"
else
  log "honest: skipped: no old kfoundry and kfoundry-worker in $old_bin"
fi
fi
if [[ $parts == *" evolve "* ]]; then
all_tasks=$(cd "$root/tasks" && ls -d level*/*/ | sed 's#/$##' | paste -sd' ')
log "search: kfoundry evolve on ${KF_GPU_EVOLVE_TASKS:=$all_tasks} (budget ${KF_GPU_EVOLVE_BUDGET:=60} each)"
mkdir -p "$out/evolve"
# A fresh experience library per check: patterns retrieved from the seed, evidence recorded.
export XDG_DATA_HOME=$cache/data-$$
for task in $KF_GPU_EVOLVE_TASKS; do
  name=$(basename "$task")
  start=$SECONDS
  rm -rf "$cache/projects/$name"
  timeout "${KF_GPU_EVOLVE_TIMEOUT:-150}" "$bin/kfoundry" evolve "$task" --project "$cache/projects/$name" --backend cuda \
    --islands 4 --budget "$KF_GPU_EVOLVE_BUDGET" >"$out/evolve/$name.log" 2>&1
  echo "$name exit $? wall $((SECONDS - start)) s" | tee -a "$out/evolve/summary.txt"
  "$bin/kfoundry" best --project "$cache/projects/$name" --json >"$out/evolve/$name.best.json" 2>/dev/null
  "$bin/kfoundry" runs --project "$cache/projects/$name" --json >"$out/evolve/$name.runs.json" 2>/dev/null
  cp "$cache/projects/$name/project.db" "$out/evolve/$name.db" 2>/dev/null
done
# The search's best GEMM against cuBLAS SGEMM (FP32), side by side in one worker, on a copy
# of the task that allows cuBLAS.
if [ -f "$cache/projects/matmul/project.db" ]; then
  log "search's best matmul against cuBLAS SGEMM"
  rm -rf "$cache/matmul-cublas" "$cache/matmul-best"
  cp -r "$root/tasks/level1/matmul" "$cache/matmul-cublas"
  python3 - "$cache/matmul-cublas/task.json" <<'PY'
import json, sys
p = sys.argv[1]; j = json.load(open(p))
j["rules"]["allowed_libraries"] = ["cublas"]
json.dump(j, open(p, "w"), indent=2)
PY
  "$bin/kfoundry" export --project "$cache/projects/matmul" --out "$cache/matmul-best" >/dev/null 2>&1
  timeout 300 "$bin/kfoundry" eval "$cache/matmul-cublas" "$root/scripts/bench/cublas_sgemm.cu" \
    "$cache/matmul-best/matmul.cu" --backend cuda --json >"$out/evolve/cublas.json" 2>"$out/evolve/cublas.err"
  echo "cublas exit $?" | tee -a "$out/evolve/summary.txt"
fi
fi
if [[ $parts == *" profile "* ]]; then
log "profile: Nsight Compute metrics of every bundled task's reference and fast candidate (docs/profiling.md)"
prof=$out/profile
mkdir -p "$prof/csv"
ncu_bin=${KF_NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
"$ncu_bin" --version >"$prof/ncu-version.txt" 2>&1
# (a) every metric the engine asks for must exist on this device.
"$bin/kfoundry" profile --list-metrics >"$prof/metrics-used.txt"
"$ncu_bin" --query-metrics >"$prof/query-metrics.txt" 2>&1
bases=$(sed 's/\..*//' "$prof/metrics-used.txt" | sort -u | paste -sd, -)
"$ncu_bin" --query-metrics-mode suffix --metrics "$bases" >"$prof/query-metrics-suffix.txt" 2>&1
while read -r m; do
  base=${m%%.*}
  if grep -qE "(^|[[:space:]])${base}([[:space:]]|$)" "$prof/query-metrics.txt"; then
    if [ "$m" = "$base" ] || grep -qF -- "$m" "$prof/query-metrics-suffix.txt"; then
      echo "ok       $m"
    else
      echo "base-ok  $m (the base metric exists; the suffix is not in the --query-metrics-mode suffix list)"
    fi
  elif [[ $m == launch__* || $m == sm__maximum_warps_per_active_cycle_pct ]]; then
    echo "unlisted $m (launch attributes are not in --query-metrics; the profile runs show whether ncu accepts it)"
  else
    echo "MISSING  $m"
  fi
done <"$prof/metrics-used.txt" >"$prof/metrics-check.txt"
grep -c '^ok' "$prof/metrics-check.txt" | sed 's/^/metrics found: /'
grep '^MISSING' "$prof/metrics-check.txt"
# (b) kfoundry profile --json on each reference and fast candidate, keeping ncu's raw CSV.
: >"$prof/summary.txt"
for task in "$root"/tasks/level*/*/; do
  name=$(basename "$task")
  for cand in "$task/reference.cu" "$task/candidates/fast.cu"; do
    [ -f "$cand" ] || continue
    stem=$(basename "$cand" .cu)
    start=$(date +%s%N)
    timeout 600 "$bin/kfoundry" profile "$task" "$cand" --backend cuda --json --keep-csv "$prof/csv" \
      >"$prof/$name.$stem.json" 2>"$prof/$name.$stem.err"
    rc=$?
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    echo "$name $stem exit $rc wall $((ms / 1000)).$(( (ms % 1000) / 100 )) s" | tee -a "$prof/summary.txt"
  done
done
fi
if [[ $parts == *" kernelbench "* ]]; then
log "KernelBench: the Python worker on the test problems and cheating ModelNew files, then the fidelity check"
kbo=$out/kernelbench
mkdir -p "$kbo"
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
python3 -c "import torch, sys; print(sys.version.split()[0], torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0))" \
  >"$kbo/python.txt" 2>&1
cat "$kbo/python.txt"
start=$SECONDS
timeout "${KF_GPU_KB_TIMEOUT:-900}" python3 "$root/scripts/kernelbench/kb_gpu_test.py" "$kbo/worker.json" >"$kbo/worker.log" 2>&1
echo "kb_gpu_test exit $? wall $((SECONDS - start)) s" | tee -a "$kbo/summary.txt"
tail -40 "$kbo/worker.log"
if [ -z "${KF_GPU_KB_NO_FIDELITY:-}" ]; then
  start=$SECONDS
  timeout "${KF_GPU_KB_FIDELITY_TIMEOUT:-900}" python3 "$root/scripts/kernelbench/kb_fidelity.py" \
    "$root/tests/data/kernelbench/fidelity" "$kbo/fidelity.json" >"$kbo/fidelity.log" 2>&1
  echo "kb_fidelity exit $? wall $((SECONDS - start)) s" | tee -a "$kbo/summary.txt"
  tail -20 "$kbo/fidelity.log"
fi
fi
if [[ $parts == *" kbllm "* ]]; then
log "KernelBench search with LLM experts, answers from a local stand-in model (scripts/kernelbench/kb_llm_gpu_check.py)"
mkdir -p "$out/kbllm"
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
timeout "${KF_GPU_KBLLM_TIMEOUT:-600}" python3 "$root/scripts/kernelbench/kb_llm_gpu_check.py" "$out/kbllm" \
  --kfoundry "$bin/kfoundry" --timeout "${KF_GPU_KBLLM_RUN_TIMEOUT:-280}" | tee "$out/kbllm/summary.md"
fi
if [[ $parts == *" kbbuild "* ]]; then
log "KernelBench candidate build times: torch's plain build, the fast build without and with the split (scripts/kernelbench/kb_build_bench.py)"
mkdir -p "$out/kbbuild"
timeout "${KF_GPU_KBBUILD_TIMEOUT:-1200}" python3 "$root/scripts/kernelbench/kb_build_bench.py" "$out/kbbuild/build_bench.json" \
  --modes "${KF_GPU_KBBUILD_MODES:-0,header,1}" --rounds "${KF_GPU_KBBUILD_ROUNDS:-1}" ${KF_GPU_KBBUILD_CANDIDATES:+--candidates $KF_GPU_KBBUILD_CANDIDATES} | tee "$out/kbbuild/build_bench.log"
fi
python3 "$root/scripts/gpu-results.py" "$out" | tee "$out/results.md"
# (c) the profile table, appended to results.md.
[ -d "$out/profile" ] && python3 "$root/scripts/gpu-profile-results.py" "$out" | tee -a "$out/results.md"
# (d) the honest side-by-side summary, appended too.
[ -f "$out/honest/summary.md" ] && { printf '\n## Honest candidates: old worker and this one\n\n'; cat "$out/honest/summary.md"; } >>"$out/results.md"
