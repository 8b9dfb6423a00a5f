#!/usr/bin/env python3
"""Build time of load_inline candidates: torch's plain build against the worker's fast build
(resources/kernelbench/kb_fastbuild.py), measured side by side in one run.

    python3 scripts/kernelbench/kb_build_bench.py OUT.json [--rounds 2] [--candidates F.py ...]

Every build is cold: a fresh build folder per build, nothing cached by torch. The fast build's
precompiled header is built once, first, into a fresh folder (its time is reported on its
own); every fast build after it uses it, as every candidate after the first does in a search.
Builds run one at a time, in the order plain, fast, fast, plain, ... so that drift on the
machine falls on both. Each build is a `kb_worker.py --compile` process; the table shows the
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
        for f in glob.glob(os.path.join(build_dir, "*", "build.ninja")) + glob.glob(os.path.join(pch_dir, "*", "*.log")):
            shutil.copy(f, os.path.join(os.environ["KF_BENCH_KEEP"], mode + "-" + os.path.basename(os.path.dirname(f))
                                        + "-" + os.path.basename(f)))
    return {"mode": mode, "ok": p.returncode == 0 and reply.get("ok", False), "seconds": reply.get("seconds"),
            "wall": round(wall, 3), "build": reply.get("build", {}), "message": reply.get("message", ""),
            "log": (reply.get("log") or p.stderr)[-1500:] if p.returncode else ""}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--candidates", nargs="*")
    args = ap.parse_args()
    cands = args.candidates or default_candidates()
    tmp = tempfile.mkdtemp(prefix="kf-build-bench-")
    pch_dir = os.path.join(tmp, "pch")
    results = {"candidates": {}, "pch": None}

    # The precompiled header, once, timed on its own (the first candidate builds it).
    first = build(cands[0], os.path.join(tmp, "warm-pch"), "1", pch_dir)
    results["pch"] = {"seconds": first["build"].get("pch_build_seconds"), "first_build": first}
    print("precompiled header: %.1f s (first fast build %.1f s wall, ok=%s)"
          % (first["build"].get("pch_build_seconds") or -1, first["wall"], first["ok"]), flush=True)

    n = 0
    for cand in cands:
        rows = []
        for r in range(args.rounds):
            order = ("0", "1") if r % 2 == 0 else ("1", "0")
            for mode in order:
                n += 1
                rows.append(build(cand, os.path.join(tmp, "b%d" % n), mode, pch_dir))
        # Same source again in the last fast folder: must be cached.
        last_fast = [i for i, x in enumerate(rows) if x["mode"] == "1"][-1]
        again = build(cand, os.path.join(tmp, "b%d" % (n - (len(rows) - 1 - last_fast))), "1", pch_dir)
        plain = [x["seconds"] for x in rows if x["mode"] == "0" and x["ok"]]
        fast = [x["seconds"] for x in rows if x["mode"] == "1" and x["ok"]]
        entry = {"rows": rows, "cached_rebuild": again,
                 "plain_median": statistics.median(plain) if plain else None,
                 "fast_median": statistics.median(fast) if fast else None}
        if plain and fast:
            entry["ratio"] = entry["plain_median"] / entry["fast_median"]
        results["candidates"][os.path.relpath(cand, ROOT)] = entry
        steps = [x["build"].get("steps", {}) for x in rows if x["mode"] == "1" and x["ok"]]
        psteps = [x["build"].get("steps", {}) for x in rows if x["mode"] == "0" and x["ok"]]
        print("%-60s plain %6s s  fast %6s s  x%s  cached %s s  cuda header %s\n    plain steps %s\n    fast steps  %s"
              % (os.path.basename(cand), "%.1f" % entry["plain_median"] if plain else "FAIL",
                 "%.1f" % entry["fast_median"] if fast else "FAIL",
                 "%.2f" % entry["ratio"] if "ratio" in entry else "-",
                 "%.2f" % again["seconds"] if again["seconds"] is not None else "?",
                 rows[-1]["build"].get("cuda_header"), psteps[-1] if psteps else {}, steps[-1] if steps else {}),
              flush=True)
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
        for x in rows:
            if not x["ok"]:
                print("    FAILED (%s): %s\n%s" % (x["mode"], x["message"], x["log"]), flush=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    ok = all(e["fast_median"] is not None and e["plain_median"] is not None
             for e in results["candidates"].values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
