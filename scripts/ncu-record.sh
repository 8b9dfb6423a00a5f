#!/usr/bin/env bash
# On an NVIDIA machine with Nsight Compute: records raw `ncu --csv --page raw` output of the
# bundled tasks' references and hand-written candidates (test data for the profile parser),
# and the list of metrics the device offers.
#   scripts/ncu-record.sh OUTDIR
set -uo pipefail
out=${1:?usage: scripts/ncu-record.sh OUTDIR}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
bin=$root/.gpu/bin
[ -x "$bin/kfoundry" ] || bin=$root/build-gpu/bin
export LD_LIBRARY_PATH=$root/.gpu/lib:/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/kf-ncu-cache}
ncu --version >"$out/ncu-version.txt" 2>&1
ncu --query-metrics >"$out/query-metrics.txt" 2>&1
wanted=(gpu__time_duration.sum dram__throughput.avg.pct_of_peak_sustained_elapsed
  sm__throughput.avg.pct_of_peak_sustained_elapsed gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed
  sm__warps_active.avg.pct_of_peak_sustained_active sm__maximum_warps_per_active_cycle_pct
  launch__registers_per_thread launch__shared_mem_per_block_static launch__shared_mem_per_block_dynamic
  launch__grid_size launch__block_size launch__occupancy_limit_registers launch__occupancy_limit_shared_mem
  launch__occupancy_limit_warps launch__occupancy_limit_blocks
  l1tex__t_sector_hit_rate.pct lts__t_sector_hit_rate.pct dram__bytes.sum)
for r in long_scoreboard short_scoreboard mio_throttle lg_throttle barrier math_pipe_throttle wait not_selected \
         no_instruction dispatch_stall drain imc_miss membar branch_resolving sleeping tex_throttle selected; do
  wanted+=("smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio")
done
metrics=()
for m in "${wanted[@]}"; do
  # launch__* and a few derived metrics are not in the query list but are valid.
  if [[ $m == launch__* || $m == sm__maximum_warps_per_active_cycle_pct ]] || grep -q "^${m%%.*}\b" "$out/query-metrics.txt" || grep -q "[[:space:]]${m%%.*}[[:space:]]" "$out/query-metrics.txt"; then
    metrics+=("$m")
  else
    echo "missing: $m" >>"$out/missing-metrics.txt"
  fi
done
list=$(IFS=,; echo "${metrics[*]}")
echo "$list" >"$out/metrics-used.txt"
"$bin/kfoundry" device info --backend cuda >/dev/null 2>&1  # peaks measured once, outside the profiler
record() {  # name task candidate kernel-regex
  local start=$SECONDS
  timeout 300 ncu --csv --page raw --clock-control none --metrics "$list" -k "regex:$4" --launch-count 8 \
    --log-file "$out/$1.csv" "$bin/kfoundry" eval "$root/tasks/$2" "$root/tasks/$2/$3" --backend cuda --trials 1 --no-time \
    >"$out/$1.out" 2>"$out/$1.err"
  echo "$1 exit $? $((SECONDS - start)) s" | tee -a "$out/record.log"
}
record softmax_fast level1/softmax candidates/fast.cu softmax
record matmul_fast level1/matmul candidates/fast.cu 'sgemm|matmul'
record row_sum_fast level1/row_sum candidates/fast.cu row_sum
record histogram_fast level1/histogram candidates/fast.cu histogram
record transpose_fast level1/transpose candidates/fast.cu transpose
record scan_fast level1/scan candidates/fast.cu scan
record gelu_fast level1/gelu candidates/fast.cu gelu
record layernorm_fast level1/layernorm candidates/fast.cu layernorm
record gemm_bias_relu_fast level2/gemm_bias_relu candidates/fast.cu 'gemm|sgemm'
record stencil2d_fast level1/stencil2d candidates/fast.cu stencil
