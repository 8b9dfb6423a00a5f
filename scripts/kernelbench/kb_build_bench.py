#!/usr/bin/env python3
"""Build time of load_inline candidates: torch's plain build against the worker's fast build
(resources/kernelbench/kb_fastbuild.py), measured side by side in one run.

    python3 scripts/kernelbench/kb_build_bench.py OUT.json [--rounds 2] [--candidates F.py ...]

Every build is cold: a fresh build folder per build, nothing cached by torch. The fast build's
precompiled headers are built once per set of flags, by an untimed build of each candidate in
each fast mode before its timed ones (their time is reported on its own); every timed build
uses them, as every candidate after the first with the same flags does in a search.
Builds run one at a time, the modes (--modes) in turn and in reverse order every other
round, so that drift on the machine falls on all. Each build is a `kb_worker.py --compile` process; the table shows the
candidate's build seconds (inside the worker, after `import torch`), the process's wall time,
and ninja's seconds per step (main.cpp, cuda.cu, link). That a fast-built candidate computes
what it did is checked by scripts/kernelbench/kb_gpu_test.py, whose builds are fast builds.
"""

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WORKER = os.path.join(ROOT, "resources", "kernelbench", "kb_worker.py")


def default_candidates():
    out = []
    for pattern in ("tests/data/kernelbench/candidates/good_cuda_*.py",
                    "tests/data/kernelbench-compile/candidates/*.py"):
        out += sorted(glob.glob(os.path.join(ROOT, pattern)))
    return [p for p in out if "load_inline" in open(p).read()]


def build(candidate, build_dir, mode, pch_dir):
    env = dict(os.environ)
    env["KF_KB_FASTBUILD"] = mode
    env["KF_KB_PCH_DIR"] = pch_dir
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, WORKER, "--compile", candidate, "--build-dir", build_dir],
                       capture_output=True, text=True, env=env, timeout=1800)
    wall = time.perf_counter() - t0
    reply = {}
    for line in p.stdout.splitlines():
        try:
            reply = json.loads(line)
        except ValueError:
            pass
    if os.environ.get("KF_BENCH_KEEP"):
        import shutil
        for f in (glob.glob(os.path.join(build_dir, "*", "build.ninja")) + glob.glob(os.path.join(pch_dir, "*", "*.log"))
                  + glob.glob(os.path.join(build_dir, "*", "kf", "no-split"))):
            shutil.copy(f, os.path.join(os.environ["KF_BENCH_KEEP"], mode + "-" + os.path.basename(os.path.dirname(f))
                                        + "-" + os.path.basename(f)))
    return {"mode": mode, "ok": p.returncode == 0 and reply.get("ok", False), "seconds": reply.get("seconds"),
            "wall": round(wall, 3), "build": reply.get("build", {}), "message": reply.get("message", ""),
            "log": (reply.get("log") or p.stderr)[-1500:] if p.returncode else ""}


MODE_NAMES = {"0": "plain", "pch": "pch", "header": "pch+header", "1": "split"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--modes", default="0,header,1",
                    help="KF_KB_FASTBUILD values to compare: 0 (torch's plain build), pch, header "
                         "(precompiled header and lighter CUDA header), 1 (all, with the split)")
    ap.add_argument("--candidates", nargs="*")
    args = ap.parse_args()
    modes = args.modes.split(",")
    cands = args.candidates or default_candidates()
    tmp = tempfile.mkdtemp(prefix="kf-build-bench-")
    pch_dir = os.path.join(tmp, "pch")
    results = {"candidates": {}, "pch": None, "modes": {m: MODE_NAMES.get(m, m) for m in modes}}

    results["pch"] = {}
    n = 0
    for cand in cands:
        # The precompiled headers for this candidate's flags (main.cpp's, and the host half's
        # for its CUDA flags), built once by an untimed build, as the first candidate with
        # those flags builds them in a search; their time is reported on its own.
        for mode in modes:
            if mode != "0":
                warm = build(cand, os.path.join(tmp, "warm%d" % n), mode, pch_dir)
                n += 1
                secs = warm["build"].get("pch_build_seconds")
                if secs:
                    results["pch"][os.path.basename(cand) + " " + mode] = secs
                    print("precompiled headers for %s (%s): %.1f s" % (os.path.basename(cand), mode, secs), flush=True)
        rows = []
        for r in range(args.rounds):
            order = modes if r % 2 == 0 else list(reversed(modes))
            for mode in order:
                n += 1
                rows.append(build(cand, os.path.join(tmp, "b%d" % n), mode, pch_dir))
        # Same source again in the last folder of the last mode: must be cached.
        last = [i for i, x in enumerate(rows) if x["mode"] == modes[-1]][-1]
        again = build(cand, os.path.join(tmp, "b%d" % (n - (len(rows) - 1 - last))), modes[-1], pch_dir)
        entry = {"rows": rows, "cached_rebuild": again, "median": {}, "steps": {}, "how": {}}
        for mode in modes:
            secs = [x["seconds"] for x in rows if x["mode"] == mode and x["ok"]]
            entry["median"][mode] = statistics.median(secs) if secs else None
            ok_rows = [x for x in rows if x["mode"] == mode and x["ok"]]
            entry["steps"][mode] = ok_rows[-1]["build"].get("steps", {}) if ok_rows else {}
            entry["how"][mode] = {k: ok_rows[-1]["build"].get(k) for k in ("cuda_header", "split", "host_header", "retried_plain")} \
                if ok_rows else {}
        plain = entry["median"].get("0")
        entry["ratio_to_plain"] = {m: plain / v for m, v in entry["median"].items() if plain and v and m != "0"}
        results["candidates"][os.path.relpath(cand, ROOT)] = entry
        print("%s  cached rebuild %s s" % (os.path.basename(cand),
                                          "%.2f" % again["seconds"] if again["seconds"] is not None else "?"), flush=True)
        for mode in modes:
            v = entry["median"][mode]
            print("    %-11s %7s s  x%-5s  %s  steps %s" % (
                MODE_NAMES.get(mode, mode), "%.1f" % v if v is not None else "FAIL",
                "%.2f" % entry["ratio_to_plain"][mode] if mode in entry["ratio_to_plain"] else "-",
                entry["how"][mode], entry["steps"][mode]), flush=True)
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
        for x in rows:
            if not x["ok"]:
                print("    FAILED (%s): %s\n%s" % (x["mode"], x["message"], x["log"]), flush=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    ok = all(v is not None for e in results["candidates"].values() for v in e["median"].values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
