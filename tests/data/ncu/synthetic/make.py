#!/usr/bin/env python3
"""Writes the synthetic ncu outputs in this folder: the format of `ncu --csv --page raw
--print-units base` as recorded on the H200 (tests/data/ncu/h200/), with chosen values, so
that the parser, the classifier and the advice are pinned on clear cases. Run it again after
changing a case; the expected outcomes are in tests/unit/test_profile.cpp."""
import csv
import io
import os

here = os.path.dirname(os.path.abspath(__file__))
REASONS = ["long_scoreboard", "short_scoreboard", "mio_throttle", "lg_throttle", "barrier", "math_pipe_throttle",
           "wait", "not_selected", "no_instruction", "dispatch_stall", "drain", "imc_miss", "membar",
           "branch_resolving", "sleeping", "tex_throttle", "selected"]
ID_COLS = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
           "Grid Size", "Device", "CC"]
METRICS = [("device__attribute_display_name", ""), ("dram__bytes.sum", "byte"),
           ("dram__throughput.avg.pct_of_peak_sustained_elapsed", "%"),
           ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "%"),
           ("gpu__time_duration.sum", "ns"), ("l1tex__t_sector_hit_rate.pct", "%"),
           ("launch__block_size", ""), ("launch__grid_size", ""),
           ("launch__occupancy_limit_blocks", "block"), ("launch__occupancy_limit_registers", "block"),
           ("launch__occupancy_limit_shared_mem", "block"), ("launch__occupancy_limit_warps", "block"),
           ("launch__registers_per_thread", "register/thread"),
           ("launch__shared_mem_per_block_dynamic", "byte/block"),
           ("launch__shared_mem_per_block_static", "byte/block"), ("launch__sm_count", "SM"),
           ("lts__t_sector_hit_rate.pct", "%"), ("sm__maximum_warps_per_active_cycle_pct", "%"),
           ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "%"),
           ("sm__warps_active.avg.pct_of_peak_sustained_active", "%")] + \
          [(f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio", "inst") for r in sorted(REASONS)]

PRE = ["==PROF== Connected to process 4242 (/opt/kf/bin/kfoundry-worker)",
       "==WARNING== Note: Running with unmodified GPU clocks. If not controlled otherwise, profiling results may be inconsistent."]


def fmt(v):
    if isinstance(v, str):
        return v
    if isinstance(v, int) or float(v).is_integer():
        return f"{int(v):,}"
    return f"{v:,.2f}"


def kernel(name, grid, block, dur_ns, dram, mem, sm, ach, theo, regs, smem_s, smem_d, l1, l2, limits, stalls):
    m = {"device__attribute_display_name": "NVIDIA H200", "dram__bytes.sum": int(dram * 4.8e3 * dur_ns / 100),
         "dram__throughput.avg.pct_of_peak_sustained_elapsed": dram,
         "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": mem,
         "gpu__time_duration.sum": dur_ns, "l1tex__t_sector_hit_rate.pct": l1,
         "launch__block_size": block[0] * block[1] * block[2], "launch__grid_size": grid[0] * grid[1] * grid[2],
         "launch__occupancy_limit_blocks": limits[3], "launch__occupancy_limit_registers": limits[0],
         "launch__occupancy_limit_shared_mem": limits[1], "launch__occupancy_limit_warps": limits[2],
         "launch__registers_per_thread": regs, "launch__shared_mem_per_block_dynamic": smem_d,
         "launch__shared_mem_per_block_static": smem_s, "launch__sm_count": 132,
         "lts__t_sector_hit_rate.pct": l2, "sm__maximum_warps_per_active_cycle_pct": theo,
         "sm__throughput.avg.pct_of_peak_sustained_elapsed": sm,
         "sm__warps_active.avg.pct_of_peak_sustained_active": ach}
    for r in REASONS:
        m[f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio"] = stalls.get(r, 0)
    return {"name": name, "grid": grid, "block": block, "m": m}


def write(fname, kernels, pre=PRE, post=(), runs=1, cut=None, drop_field_in_row=None):
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(ID_COLS + [n for n, _ in METRICS])
    w.writerow([""] * len(ID_COLS) + [u for _, u in METRICS])
    i = 0
    for _ in range(runs):
        for k in kernels:
            row = [str(i), "4242", "kfoundry-worker", "127.0.0.1", k["name"], "1", "13",
                   "({}, {}, {})".format(*k["block"]), "({}, {}, {})".format(*k["grid"]), "0", "9.0"]
            row += [fmt(k["m"][n]) for n, _ in METRICS]
            if drop_field_in_row == i:
                del row[20]
            w.writerow(row)
            i += 1
    text = "\n".join(pre) + "\n" + buf.getvalue() + "".join(p + "\n" for p in post)
    if cut:
        text = text[:cut(text)]
    with open(os.path.join(here, fname), "w") as f:
        f.write(text)


# DRAM near peak, long-scoreboard stalls: memory-bound, fuse first.
mem = kernel("void scale_add_kernel<4>(const float *, const float *, float *, long long)", (16384, 1, 1), (256, 1, 1),
             412_832, 91.27, 92.4, 31.05, 86.1, 100, 24, 0, 0, 0.0, 33.71, (10, 32, 8, 32),
             {"long_scoreboard": 21.4, "lg_throttle": 1.9, "wait": 0.62, "not_selected": 0.31, "selected": 1.0,
              "dispatch_stall": 0.12, "drain": 0.4, "short_scoreboard": 0.05})
write("memory_bound.csv", [mem])

# SM near peak with math-pipe throttle: compute-bound.
comp = kernel("void sgemm_tiled_kernel<128, 128, 8>(const float *, const float *, float *, int, int, int)", (32, 32, 1),
              (256, 1, 1), 3_520_448, 11.8, 41.3, 83.6, 24.7, 25, 128, 16384, 0, 2.1, 86.4, (2, 13, 8, 32),
              {"math_pipe_throttle": 2.9, "not_selected": 1.6, "selected": 1.0, "mio_throttle": 0.7, "barrier": 0.45,
               "long_scoreboard": 0.38, "short_scoreboard": 0.52, "wait": 0.9, "dispatch_stall": 0.1})
write("compute_bound.csv", [comp])

# Registers limit theoretical occupancy to 25%; barrier stalls; neither SOL high.
low = kernel("layernorm_welford_kernel(const float *, const float *, const float *, float *, int, int)", (1024, 1, 1),
             (512, 1, 1), 96_512, 28.4, 35.2, 24.9, 23.8, 25, 96, 8192, 0, 45.2, 52.3, (1, 4, 4, 32),
             {"barrier": 6.2, "long_scoreboard": 9.1, "short_scoreboard": 1.2, "wait": 1.1, "selected": 1.0,
              "not_selected": 0.2, "mio_throttle": 0.9, "membar": 0.05})
write("low_occupancy.csv", [low])

# Three short kernels per call, profiled twice: launch overhead.
k1 = kernel("row_partial_sum_kernel(const float *, float *, int, int)", (64, 1, 1), (256, 1, 1), 2_944, 8.1, 12.5,
            6.3, 11.9, 100, 30, 1024, 0, 0.0, 48.7, (8, 64, 8, 32),
            {"long_scoreboard": 3.1, "barrier": 0.6, "selected": 1.0, "wait": 0.7})
k2 = kernel("row_final_sum_kernel(const float *, float *, int)", (1, 1, 1), (256, 1, 1), 1_888, 0.4, 1.2, 0.3, 1.5, 100,
            22, 1024, 0, 12.2, 80.1, (10, 64, 8, 32), {"barrier": 2.2, "long_scoreboard": 1.4, "selected": 1.0})
k3 = kernel("scale_rows_kernel(float *, const float *, int, int)", (64, 1, 1), (256, 1, 1), 2_464, 10.2, 14.9, 5.8,
            12.6, 100, 18, 0, 0, 0.0, 55.5, (14, 32, 8, 32), {"long_scoreboard": 4.4, "selected": 1.0, "wait": 0.5})
write("multi_kernel.csv", [k1, k2, k3], runs=2,
      post=["==PROF== Disconnected from process 4242"])

# Neither saturated, full occupancy, long-scoreboard stalls: latency-bound, memory access advice.
lat = kernel("void gather_rows_kernel<float>(const float *, const int *, float *, int, int)", (2048, 1, 1), (128, 1, 1),
             188_224, 24.6, 27.9, 18.2, 81.3, 100, 32, 0, 0, 3.5, 21.4, (16, 32, 16, 32),
             {"long_scoreboard": 14.8, "wait": 1.1, "selected": 1.0, "not_selected": 0.2, "lg_throttle": 0.8})
write("latency_bound.csv", [lat])

# A row with a field missing (not at the end): malformed.
write("malformed.csv", [mem, comp, low], drop_field_in_row=1)
# Output cut inside the last row's quoted kernel name: truncated.
write("truncated.csv", [mem, comp], cut=lambda t: t.rfind("void sgemm_tiled_kernel") + 20)
# Cut right after the header: no units row.
write("no_units.csv", [mem], cut=lambda t: t.index("\n", t.index('"ID"')) + 1)
# ncu ran but the NVTX range held no kernel.
with open(os.path.join(here, "no_kernels.txt"), "w") as f:
    f.write(PRE[0] + "\n==PROF== Disconnected from process 4242\n==WARNING== No kernels were profiled.\n")
