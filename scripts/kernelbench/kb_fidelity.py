#!/usr/bin/env python3
"""Does the KernelBench worker's eager baseline agree with KernelBench's own way of timing?

    python3 scripts/kernelbench/kb_fidelity.py PROBLEM_DIR OUT.json [--device 0]

For each problem file in PROBLEM_DIR (KernelBench format, e.g. tests/data/kernelbench/fidelity)
it times the problem's Model twice:

- plainly, as KernelBench's harness does: the model and one input set on the GPU, 3 warm-up
  calls, then 100 calls, each after an L2 flush, timed with CUDA events on the default stream;
  the mean in ms (this loop is written here from the description of KernelBench's method;
  inputs are drawn on the GPU to save time, which does not change what is timed);
- through resources/kernelbench/kb_worker.py, `evaluate` with candidate null and the eager
  baseline only (rotated inputs, device-wide synchronisation around each call).

It prints both means, the worker's median and the ratio worker mean / plain mean, and writes
the rows as JSON to OUT.json. Needs python3 with PyTorch and CUDA.
"""

import argparse
import gc
import importlib.util
import json
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WORKER = os.path.join(ROOT, "resources", "kernelbench", "kb_worker.py")


def problem_files(d):
    files = [f for f in os.listdir(d) if re.match(r"^\d+_.*\.py$", f)]
    return sorted(files, key=lambda f: int(f.split("_", 1)[0]))


def load(path, n):
    spec = importlib.util.spec_from_file_location("kb_fidelity_problem_%d" % n, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def plain_time(torch, path, n, device, warmup, reps, seed):
    """The plain loop: one input set, L2 flush, CUDA events on the default stream, mean."""
    mod = load(path, n)
    dev = torch.device("cuda", device)
    torch.manual_seed(seed)
    model = mod.Model(*mod.get_init_inputs()).to(dev)
    torch.manual_seed(seed)
    with torch.device(dev):
        inputs = [x.to(dev) if isinstance(x, torch.Tensor) else x for x in mod.get_inputs()]
    l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0) or (64 << 20)
    flush = torch.empty(2 * l2 // 4, dtype=torch.float32, device=dev)
    times = []
    with torch.no_grad():
        for _ in range(warmup):
            model(*inputs)
        torch.cuda.synchronize(device)
        for _ in range(reps):
            flush.zero_()
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            model(*inputs)
            end.record()
            torch.cuda.synchronize(device)
            times.append(start.elapsed_time(end))
    del model, inputs, flush
    gc.collect()
    torch.cuda.empty_cache()
    times.sort()
    return {"mean_ms": sum(times) / len(times), "median_ms": times[len(times) // 2], "min_ms": times[0],
            "reps": len(times)}


class Worker:
    def __init__(self, python, device):
        self.p = subprocess.Popen([python, WORKER, "--device", str(device)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, bufsize=1)
        self.n = 0

    def request(self, req):
        self.n += 1
        req = dict(req, id=self.n)
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        for line in self.p.stdout:
            msg = json.loads(line)
            if "progress" in msg:
                continue
            return msg
        raise RuntimeError("the worker exited (code %s)" % self.p.wait())

    def close(self):
        try:
            self.request({"cmd": "shutdown"})
        except Exception:
            pass
        self.p.wait(timeout=60)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("problem_dir")
    ap.add_argument("out")
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--python", default=sys.executable, help="the Python the worker runs with")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--compile", action="store_true", help="time the torch.compile baseline through the worker too")
    args = ap.parse_args()

    import torch

    if not torch.cuda.is_available():
        sys.exit("kb_fidelity: CUDA is not available to %s" % sys.executable)
    files = problem_files(args.problem_dir)
    rows = []
    worker = Worker(args.python, args.device)
    hello = worker.request({"cmd": "hello"})
    print("device: %s, torch %s" % (hello.get("device", {}).get("name"), hello.get("torch")), flush=True)
    print("%-22s %12s %12s %12s %8s" % ("problem", "plain mean", "worker mean", "worker med", "ratio"))
    for n, f in enumerate(files):
        path = os.path.abspath(os.path.join(args.problem_dir, f))
        row = {"problem": f}
        try:
            row["plain"] = plain_time(torch, path, n, args.device, args.warmup, args.reps, args.seed)
        except Exception as e:
            row["plain"] = {"error": "%s: %s" % (type(e).__name__, e)}
            gc.collect()
            torch.cuda.empty_cache()
        reply = worker.request({"cmd": "evaluate", "problem": path, "candidate": None,
                                "options": {"warmup": args.warmup, "reps": args.reps, "seed": args.seed,
                                            "baselines": ["eager", "compile"] if args.compile else ["eager"]}})
        if reply.get("ok"):
            row["worker"] = reply["result"].get("baselines", {})
        else:
            row["worker"] = {"error": reply.get("error")}
        pm = row["plain"].get("mean_ms")
        wm = row["worker"].get("eager", {}).get("mean_ms")
        wmed = row["worker"].get("eager", {}).get("median_ms")
        row["ratio_worker_over_plain"] = wm / pm if pm and wm else None
        rows.append(row)
        print("%-22s %12s %12s %12s %8s" % (
            f[:22], "%.3f" % pm if pm else "error", "%.3f" % wm if wm else "error", "%.3f" % wmed if wmed else "-",
            "%.3f" % row["ratio_worker_over_plain"] if row["ratio_worker_over_plain"] else "-"), flush=True)
        for k in ("plain", "worker"):
            if "error" in row[k]:
                print("    %s: %s" % (k, row[k]["error"]))
        # Written after every problem, so that a run cut short keeps what it measured.
        with open(args.out, "w") as fh:
            json.dump({"device": hello.get("device"), "torch": hello.get("torch"), "rows": rows}, fh, indent=1)
    worker.close()
    ratios = [r["ratio_worker_over_plain"] for r in rows if r["ratio_worker_over_plain"]]
    if ratios:
        print("ratio worker/plain: min %.3f, max %.3f over %d problems" % (min(ratios), max(ratios), len(ratios)))
    sys.exit(0 if len(ratios) == len(rows) else 1)


if __name__ == "__main__":
    main()
