#!/usr/bin/env python3
"""A stand-in for resources/kernelbench/kb_worker.py that needs no PyTorch or GPU.

It speaks the same protocol (docs/kernelbench-worker.md) and answers from directives written
in the problem and candidate files, so that the engine's side (time limits, restarts,
parallel compiles, the store and the report) is tested on any machine:

  problem:   # fake-eager-ms: 2.0        # fake-compile-ms: 1.0 | error
             # fake-inputs: float32 16x1024   (the input list of a baselines-only reply)
  candidate: # fake: ms=0.5 | status=incorrect | hang | crash | compile-error | fp64
             # fake: integrity=framework_compute   (that check fails, by name)
             (fp64: incorrect under the current tolerance, correct by the fp64 rule under v0 or
             current's fp64 rule: passed_by fp64; the request's tolerance is echoed back)
             # fake: ms-per-block        (median = 100 / BLOCK, BLOCK from its #define)
             # fake-compile-seconds: 1.0
"""
import json
import os
import re
import sys
import time


def directives(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return "", {}
    found = {}
    for m in re.finditer(r"#\s*fake(?:-([a-z-]+))?:\s*([^\n]+)", text):
        key, value = m.group(1) or "", m.group(2).strip()
        if key:
            found[key] = value
        else:
            for item in value.split():
                k, _, v = item.partition("=")
                found[k] = v or True
    return text, found


def compile_mode(candidate, build_dir):
    text, d = directives(candidate)
    if "compile-error" in d:
        print(json.dumps({"ok": False, "status": "compile_error", "message": "fake build failed",
                          "log": "candidate.cu(3): error: expected a ';'"}))
        return 3
    marker = os.path.join(build_dir, "built")
    if os.path.exists(marker):
        print(json.dumps({"ok": True, "seconds": 0.01, "cached": True}))
        return 0
    seconds = float(d.get("compile-seconds", "0"))
    time.sleep(seconds)
    os.makedirs(build_dir, exist_ok=True)
    with open(marker, "w") as f:
        f.write("ok\n")
    print(json.dumps({"ok": True, "seconds": seconds, "cached": False}))
    return 0


def evaluate(req, send):
    _, prob = directives(req["problem"])
    eager = float(prob.get("eager-ms", "2.0"))
    baselines = {"eager": {"median_ms": eager, "mean_ms": eager * 1.01, "min_ms": eager * 0.98, "reps": 100}}
    if "compile" in req["options"].get("baselines", []):
        c = prob.get("compile-ms", "1.0")
        baselines["compile"] = {"error": "fake torch.compile failure"} if c == "error" else {
            "median_ms": float(c), "mean_ms": float(c), "min_ms": float(c), "reps": 100}
    send({"progress": {"stage": "baseline", "what": "eager"}})
    policy = req["options"].get("tolerance", "current")
    if policy not in ("current", "v0", "strict"):
        return None
    result = {"backend": "kernelbench", "device": "Fake GPU", "baselines": baselines, "integrity": [],
              "kernelbench_mean_ms": {"eager": eager * 1.01}, "tolerance": {"policy": policy}}
    cand = req.get("candidate")
    if cand is None:
        result.update({"status": "ok", "stage": "done", "message": "baselines timed"})
        if "inputs" in prob:
            result["inputs"] = [prob["inputs"]]
        return result
    text, d = directives(cand)
    send({"progress": {"stage": "correctness", "trial": 1}})
    if "hang" in d:
        time.sleep(3600)
    if "crash" in d:
        os._exit(9)
    if "compile-error" in d:
        result.update({"status": "compile_error", "stage": "compile", "message": "fake build failed",
                       "compile": {"ok": False, "log": "candidate.cu(3): error: expected a ';'"}})
        return result
    status = d.get("status", "ok")
    result["compile"] = {"ok": True, "cached": True, "seconds": 0, "compiler": "fake"}
    if "fp64" in d and policy == "strict":
        status = "incorrect"
    result["correctness"] = {"passed": status == "ok", "trials": 5, "max_abs_error": 0.0 if status == "ok" else 1.0,
                             "max_rel_error": 0.0, "mismatches": 0 if status == "ok" else 10, "cases": [],
                             "passed_by": ("fp64" if "fp64" in d else "tolerance") if status == "ok" else "",
                             "fp64_available": True, "candidate_error_fp64": 0.02 if "fp64" in d else 1e-6,
                             "reference_error_fp64": 0.003 if "fp64" in d else 1e-6}
    if status != "ok":
        result.update({"status": status, "stage": "correctness", "message": "fake " + status})
        return result
    if "integrity" in d:
        check = d["integrity"]
        result["integrity"] = [{"name": check, "outcome": "fail", "detail": "fake: forward computes with aten::mul"}]
        result.update({"status": "integrity_violation", "stage": "integrity",
                       "message": "integrity check %s failed: fake: forward computes with aten::mul" % check})
        return result
    if "ms-per-block" in d:
        block = int(re.search(r"#define\s+BLOCK\s+(\d+)", text).group(1))
        ms = 100.0 / block
    else:
        ms = float(d.get("ms", "1.0"))
    result["timing"] = {"case_name": "primary", "median_ms": ms, "min_ms": ms, "max_ms": ms, "mean_ms": ms,
                        "reps": 100, "reference_median_ms": eager, "speedup": eager / ms}
    result["integrity"] = [{"name": "framework_compute", "outcome": "pass", "detail": "fake"}]
    result["kernel_launches"] = 1
    result["kernelbench_mean_ms"]["candidate"] = ms
    result.update({"status": "ok", "stage": "done", "message": "correct; fake"})
    return result


def main():
    args = sys.argv[1:]
    if "--compile" in args:
        return compile_mode(args[args.index("--compile") + 1], args[args.index("--build-dir") + 1])
    out = sys.stdout
    for line in sys.stdin:
        try:
            req = json.loads(line)
        except ValueError:
            out.write(json.dumps({"id": None, "ok": False, "error": "malformed request"}) + "\n")
            out.flush()
            continue
        rid = req.get("id")

        def send(obj):
            obj["id"] = rid
            out.write(json.dumps(obj) + "\n")
            out.flush()

        cmd = req.get("cmd")
        if cmd == "hello":
            if os.environ.get("FAKE_NO_TORCH"):
                send({"ok": True, "protocol": 1, "backend": "kernelbench", "torch": None, "cuda": False,
                      "error": "PyTorch is not installed for " + sys.executable})
            else:
                send({"ok": True, "protocol": 1, "backend": "kernelbench", "torch": "fake", "cuda": True,
                      "device": {"name": "Fake GPU"}, "pid": os.getpid()})
        elif cmd == "evaluate":
            res = evaluate(req, send)
            if res is None:
                send({"ok": False, "error": "option tolerance must be one of current, strict, v0"})
            else:
                send({"ok": True, "result": res})
        elif cmd == "shutdown":
            send({"ok": True})
            return 0
        else:
            send({"ok": False, "error": "unknown command"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
