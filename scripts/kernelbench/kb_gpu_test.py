#!/usr/bin/env python3
"""End-to-end test of the KernelBench worker (resources/kernelbench/kb_worker.py).

Run on a machine whose python3 has PyTorch with CUDA (and Triton):

    python3 scripts/kernelbench/kb_gpu_test.py OUT.json [--device 0] [--jobs 8]

It builds every test candidate with the worker's one-shot compile mode, in parallel into
fresh build folders (one per candidate file content), builds the good ones again (they must
be cached), then starts the worker, speaks its protocol and evaluates every candidate of
tests/data/kernelbench/candidates/README.md against its problem, checking the expected
status and the check that must fail. It prints a table, writes the results as JSON to
OUT.json and exits 0 only when every expectation holds.

`--device cpu` runs the worker's CPU testing mode over tests/data/kernelbench/cpu_candidates
(needs only a CPU build of PyTorch, a C++ compiler and ninja).
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WORKER = os.path.join(ROOT, "resources", "kernelbench", "kb_worker.py")
DATA = os.path.join(ROOT, "tests", "data", "kernelbench")
PROBLEMS = os.path.join(DATA, "KernelBench")


def read_table(readme):
    """Rows of the README table: file, problem, expected status, check."""
    rows = []
    with open(readme) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) != 4 or cells[0] in ("file", "") or set(cells[0]) <= set("-"):
                continue
            if not cells[0].endswith(".py"):
                continue
            rows.append({"file": cells[0], "problem": cells[1], "status": cells[2], "check": cells[3]})
    return rows


def build_dir_for(root, path):
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    return os.path.join(root, digest)


def uses_extension(path):
    with open(path, encoding="utf-8") as f:
        return "load_inline" in f.read()


def run_compile(python, device_env, cand, build_dir, timeout):
    t0 = time.monotonic()
    try:
        p = subprocess.run([python, WORKER, "--compile", cand, "--build-dir", build_dir], capture_output=True,
                           text=True, timeout=timeout, env=device_env)
        wall = time.monotonic() - t0
        lines = [ln for ln in p.stdout.splitlines() if ln.strip()]
        reply = json.loads(lines[-1]) if lines else {}
        return {"file": os.path.basename(cand), "exit": p.returncode, "wall_s": wall, "reply": reply,
                "stderr_tail": p.stderr[-2000:]}
    except subprocess.TimeoutExpired:
        return {"file": os.path.basename(cand), "exit": None, "wall_s": time.monotonic() - t0,
                "reply": {"ok": False, "message": "timed out after %d s" % timeout}, "stderr_tail": ""}
    except Exception as e:
        return {"file": os.path.basename(cand), "exit": None, "wall_s": time.monotonic() - t0,
                "reply": {"ok": False, "message": "%s: %s" % (type(e).__name__, e)}, "stderr_tail": ""}


class WorkerProcess:
    """The worker as a child process; replies read on a thread so a hang can time out."""

    log_path = os.path.join(tempfile.gettempdir(), "kb_worker_test.stderr")

    def __init__(self, python, device, env):
        with open(WorkerProcess.log_path, "a") as log:
            self.p = subprocess.Popen([python, WORKER, "--device", device], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=log, text=True, env=env, bufsize=1)
        self.lines = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def request(self, req, timeout=900):
        self.next_id += 1
        rid = "t%d" % self.next_id
        req = dict(req, id=rid)
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        last_progress = None
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no reply to %s within %d s (last progress %s)" % (req["cmd"], timeout,
                                                                                    last_progress))
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise RuntimeError("the worker exited (code %s) during %s; last progress %s"
                                   % (self.p.wait(), req["cmd"], last_progress))
            msg = json.loads(line)
            if msg.get("id") != rid:
                raise RuntimeError("reply for id %r while waiting for %r: %s" % (msg.get("id"), rid, line[:300]))
            if "progress" in msg:
                last_progress = msg["progress"]
                continue
            return msg

    def alive(self):
        return self.p.poll() is None

    def close(self):
        if self.alive():
            try:
                self.request({"cmd": "shutdown"}, timeout=30)
            except Exception:
                pass
        try:
            self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()


def check_row(row, result, cpu):
    """Problems with the result against the row's expectation (empty list: as expected)."""
    bad = []
    status = result.get("status")
    if status != row["status"]:
        bad.append("status %s, expected %s (%s)" % (status, row["status"], result.get("message", "")))
    integrity = {c["name"]: c for c in result.get("integrity", [])}
    check = row["check"]
    if check == "rel_l2":
        corr = result.get("correctness", {})
        if "outputs are small" not in result.get("message", "") and not (corr.get("rel_l2_error") or 0) > 1e-2:
            bad.append("not rejected by the relative L2 rule: %s" % result.get("message", ""))
    elif check == "fatal":
        if result.get("fatal") is not True:
            bad.append("fatal is %s, expected true" % result.get("fatal"))
    elif check not in ("-", ""):
        c = integrity.get(check)
        if c is None or c["outcome"] != "fail":
            bad.append("check %s is %s, expected fail" % (check, c["outcome"] if c else "missing"))
    if row["status"] == "ok":
        failed = [n for n, c in integrity.items() if c["outcome"] == "fail"]
        if failed:
            bad.append("checks failed: %s" % ", ".join(failed))
        t = result.get("timing") or {}
        if not t.get("median_ms") or not t.get("reference_median_ms"):
            bad.append("no timing")
        if not result.get("kernelbench_mean_ms", {}).get("candidate"):
            bad.append("no kernelbench_mean_ms")
        if not cpu and not (result.get("kernel_launches") or 0) >= 1:
            bad.append("kernel_launches is %s on CUDA" % result.get("kernel_launches"))
        if not cpu and integrity.get("kernel_launch", {}).get("outcome") != "pass":
            bad.append("kernel_launch was not checked: %s" % integrity.get("kernel_launch"))
        if not cpu and integrity.get("side_stream", {}).get("outcome") != "pass":
            bad.append("side_stream was not checked: %s" % integrity.get("side_stream"))
    if row["status"] == "compile_error":
        comp = result.get("compile", {})
        if comp.get("ok") is not False or not comp.get("log"):
            bad.append("compile error without its log")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="where to write the JSON results")
    ap.add_argument("--device", default="0", help="CUDA ordinal, or cpu for the CPU testing mode")
    ap.add_argument("--python", default=sys.executable, help="the Python that has PyTorch")
    ap.add_argument("--jobs", type=int, default=min(8, os.cpu_count() or 2), help="parallel compiles")
    ap.add_argument("--build-root", default="", help="build folders (default: a fresh temporary folder)")
    ap.add_argument("--baselines", default="", help="comma-separated baselines to time (default: eager,compile "
                                                    "on CUDA, eager on the CPU)")
    ap.add_argument("--reps", type=int, default=0, help="timed calls (default: 100 on CUDA, 20 on the CPU)")
    ap.add_argument("--only", default="", help="comma-separated candidate files to run (default: all)")
    ap.add_argument("--worker-log", default="", help="where the worker's stderr goes (default: "
                                                      "kb_worker_test.stderr in the temporary folder)")
    ap.add_argument("--keep-build", action="store_true",
                    help="keep what --build-root holds (the first compile pass is then not cold)")
    ap.add_argument("--shared-build", action="store_true",
                    help="one build folder for all candidates (identical extension sources build once) instead "
                         "of one per candidate file content, as the engine does")
    args = ap.parse_args()

    cpu = args.device == "cpu"
    if args.worker_log:
        WorkerProcess.log_path = os.path.abspath(args.worker_log)
    cand_dir = os.path.join(DATA, "cpu_candidates" if cpu else "candidates")
    rows = read_table(os.path.join(cand_dir, "README.md"))
    if args.only:
        keep = set(args.only.split(","))
        rows = [r for r in rows if os.path.basename(r["file"]) in keep]
    baselines = [b for b in (args.baselines or ("eager" if cpu else "eager,compile")).split(",") if b]
    reps = args.reps or (20 if cpu else 100)
    build_root = args.build_root or tempfile.mkdtemp(prefix="kb_build_")
    if os.path.isdir(build_root) and not args.keep_build:
        shutil.rmtree(build_root)
    os.makedirs(build_root, exist_ok=True)
    env = dict(os.environ)
    env.setdefault("XDG_CACHE_HOME", os.path.join(build_root, "cache"))
    report = {"device": args.device, "python": args.python, "build_root": build_root, "compile": {},
              "results": [], "baseline_only": {}, "problems": []}

    for r in rows:
        r["path"] = os.path.normpath(os.path.join(cand_dir, r["file"]))
        r["problem_path"] = os.path.join(PROBLEMS, r["problem"])
        r["build_dir"] = os.path.join(build_root, "shared") if args.shared_build else build_dir_for(build_root,
                                                                                                     r["path"])

    # 1. One-shot compiles: all extension candidates in parallel into cold build folders,
    #    then the good ones again (they must be cached).
    ext_rows = [r for r in rows if uses_extension(r["path"])]
    print("compiling %d candidates, %d at a time..." % (len(ext_rows), args.jobs), flush=True)
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        cold = list(pool.map(lambda r: run_compile(args.python, env, r["path"], r["build_dir"], 1200), ext_rows))
    cold_wall = time.monotonic() - t0
    good = [r for r in ext_rows if r["status"] != "compile_error"]
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        warm = list(pool.map(lambda r: run_compile(args.python, env, r["path"], r["build_dir"], 600), good))
    warm_wall = time.monotonic() - t0
    report["compile"] = {"cold_parallel_wall_s": cold_wall, "cached_parallel_wall_s": warm_wall, "jobs": args.jobs,
                         "cold": cold, "cached": warm}
    failures = []
    by_file = {r["file"]: r for r in ext_rows}
    for c in cold:
        row = next(r for r in ext_rows if os.path.basename(r["path"]) == c["file"])
        want_fail = row["status"] == "compile_error"
        got_ok = c["exit"] == 0 and c["reply"].get("ok") is True
        if want_fail and not (c["exit"] == 3 and c["reply"].get("status") == "compile_error"):
            failures.append("--compile %s: expected exit 3 and compile_error, got exit %s %s"
                            % (c["file"], c["exit"], json.dumps(c["reply"])[:300]))
        if not want_fail and row["status"] != "load_error" and not got_ok:
            failures.append("--compile %s: expected success, got exit %s %s"
                            % (c["file"], c["exit"], json.dumps(c["reply"])[:300]))
    for c in warm:
        if not (c["exit"] == 0 and c["reply"].get("cached") is True):
            failures.append("--compile %s again: expected cached, got exit %s %s"
                            % (c["file"], c["exit"], json.dumps(c["reply"])[:300]))
    print("  cold: %.1f s wall for %d builds; again (cached): %.1f s" % (cold_wall, len(cold), warm_wall))
    for c in cold:
        print("    %-34s exit %-4s %6.1f s  %s" % (c["file"], c["exit"], c["reply"].get("seconds") or 0,
                                                 "cached" if c["reply"].get("cached") else
                                                 c["reply"].get("status", "built")))
    del by_file

    # 2. The protocol: hello, device_info, baselines alone (twice: the second is cached),
    #    then every candidate.
    w = WorkerProcess(args.python, args.device, env)
    hello = w.request({"cmd": "hello"}, timeout=120)
    report["hello"] = hello
    print("worker: torch %s, triton %s, device %s" % (hello.get("torch"), hello.get("triton"),
                                                      hello.get("device", {}).get("name")))
    if not hello.get("ok") or hello.get("error"):
        failures.append("hello: %s" % json.dumps(hello)[:300])
    info = w.request({"cmd": "device_info"}, timeout=300)
    report["device_info"] = info
    if not info.get("ok") or not info.get("peaks", {}).get("bandwidth_gbps"):
        failures.append("device_info: %s" % json.dumps(info)[:300])
    else:
        print("peaks: %.0f GB/s, %.0f GFLOP/s" % (info["peaks"]["bandwidth_gbps"], info["peaks"]["fp32_gflops"]))
    opts = {"reps": reps, "baselines": baselines}
    first_problem = os.path.join(PROBLEMS, "level1", "1_Scale_Relu.py")
    for attempt in (1, 2):
        b = w.request({"cmd": "evaluate", "problem": first_problem, "candidate": None, "options": opts})
        report["baseline_only"]["call%d" % attempt] = b
        res = b.get("result", {})
        eager = res.get("baselines", {}).get("eager", {})
        if not b.get("ok") or res.get("status") != "ok" or not eager.get("median_ms"):
            failures.append("baselines only (call %d): %s" % (attempt, json.dumps(b)[:400]))
        elif attempt == 2 and not eager.get("cached"):
            failures.append("baselines only: the second call did not use the cached baseline")
        if any(c["outcome"] == "fail" for c in res.get("integrity", [])):
            failures.append("baselines only: an integrity check failed: %s" % json.dumps(res.get("integrity"))[:300])
    bad_req = w.request({"cmd": "evaluate", "problem": "/nonexistent/problem.py", "candidate": None})
    if bad_req.get("ok") is not False:
        failures.append("a missing problem was not refused: %s" % json.dumps(bad_req)[:200])

    header = "%-34s %-30s %-20s %-20s %-18s %9s %8s  %s" % ("candidate", "problem", "expected", "got", "check",
                                                           "median", "speedup", "verdict")
    print(header)
    print("-" * len(header))
    for r in rows:
        if not w.alive():
            w = WorkerProcess(args.python, args.device, env)
        t0 = time.monotonic()
        try:
            reply = w.request({"cmd": "evaluate", "problem": r["problem_path"], "candidate": r["path"],
                               "build_dir": r["build_dir"], "options": opts})
            result = reply.get("result", {}) if reply.get("ok") else {"status": "request_failed",
                                                                       "message": reply.get("error")}
        except Exception as e:
            result = {"status": "worker_failed", "message": "%s: %s" % (type(e).__name__, e)}
            w.p.kill()
            w = WorkerProcess(args.python, args.device, env)
        wall = time.monotonic() - t0
        if result.get("fatal"):
            # The worker exits after a fatal result; the next candidate gets a new one.
            try:
                w.p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                result.setdefault("test_note", "the worker did not exit after a fatal result")
                w.p.kill()
            w = WorkerProcess(args.python, args.device, env)
        bad = check_row(r, result, cpu)
        integrity = {c["name"]: c["outcome"] for c in result.get("integrity", [])}
        t = result.get("timing") or {}
        print("%-34s %-30s %-20s %-20s %-18s %9s %8s  %s" % (
            os.path.basename(r["file"]), r["problem"], r["status"], result.get("status"),
            "%s=%s" % (r["check"], integrity.get(r["check"], "-")) if r["check"] not in ("-", "rel_l2", "fatal")
            else r["check"],
            ("%.4f" % t["median_ms"]) if t.get("median_ms") else "-",
            ("%.2f" % t["speedup"]) if t.get("speedup") else "-", "PASS" if not bad else "FAIL"), flush=True)
        if bad:
            for b in bad:
                print("    " + b)
            failures.extend("%s: %s" % (r["file"], b) for b in bad)
        report["results"].append({"file": r["file"], "problem": r["problem"], "expected_status": r["status"],
                                  "expected_check": r["check"], "wall_s": wall, "ok": not bad, "problems": bad,
                                  "result": result})
    w.close()
    report["failures"] = failures
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    n_ok = sum(1 for x in report["results"] if x["ok"])
    print()
    for f_ in failures:
        print("FAILED: " + f_)
    print("worker log: %s" % WorkerProcess.log_path)
    print("%d passed, %d failed" % (n_ok, len(report["results"]) - n_ok))
    print("other expectations (compile, protocol, baselines): %s" %
          ("all held" if len(failures) == len(report["results"]) - n_ok else "some failed (see above)"))
    sys.exit(0 if not failures else 1)


if __name__ == "__main__":
    main()
