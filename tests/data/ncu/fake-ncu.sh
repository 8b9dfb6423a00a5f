#!/usr/bin/env bash
# A stand-in for Nsight Compute in tests (tests/unit/test_profile.cpp). KF_FAKE_NCU_MODE:
#   csv      run the target program, then print the file $KF_FAKE_NCU_CSV (a recorded output)
#   perm     print what ncu prints when the GPU performance counters are not accessible
#   slow     hang (for the time limit)
#   unknown  reject the metric imc_miss stall metric once, like a device without it
# The arguments are written to $KF_FAKE_NCU_ARGS when set.
[ -n "${KF_FAKE_NCU_ARGS:-}" ] && printf '%s\n' "$@" >"$KF_FAKE_NCU_ARGS"
metrics=""
args=("$@")
target=()
for ((i = 0; i < ${#args[@]}; i++)); do
  if [ "${args[$i]}" = "--metrics" ]; then
    metrics=${args[$((i + 1))]}
    target=("${args[@]:$((i + 2))}")
    break
  fi
done
case "${KF_FAKE_NCU_MODE:-csv}" in
perm)
  echo "==PROF== Connected to process 4242 (${target[0]:-?})"
  echo "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0. For instructions on enabling permissions and to get more information see https://developer.nvidia.com/ERR_NVGPUCTRPERM"
  echo "==PROF== Disconnected from process 4242"
  exit 1
  ;;
slow)
  sleep 60
  ;;
unknown)
  if [[ $metrics == *imc_miss* ]]; then
    echo "==ERROR== Failed to find metric regex:^smsp__average_warps_issue_stalled_imc_miss_per_issue_active\$"
    exit 1
  fi
  cat "$KF_FAKE_NCU_CSV"
  ;;
*)
  [ ${#target[@]} -gt 0 ] && "${target[@]}" >/dev/null 2>&1
  cat "$KF_FAKE_NCU_CSV"
  ;;
esac
