#!/usr/bin/env python3
"""The KernelBench search loop with LLM experts, answers served by a local stand-in model:
`kfoundry kernelbench run --llm-config` on the test problems (tests/data/kernelbench), on a
GPU with the real Python worker (or, with --kb-worker, any worker). The stand-in model's
first answer for each problem is a ModelNew that lets PyTorch compute the result (the worker
must reject it, framework_compute); every later answer is the problem's hand-written CUDA
ModelNew (tests/data/kernelbench/candidates/good_cuda_*.py). Writes OUTDIR/summary.json and
prints a table: per problem the statuses of its evaluations, the best speedup, the wall time
per evaluation and the build times the worker reported.

    scripts/kernelbench/kb_llm_gpu_check.py OUTDIR [--kfoundry PATH] [--kb-worker PATH] [--device cpu|0]
"""
import argparse
import http.server
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data", "kernelbench")
CANDIDATES = os.path.join(DATA, "candidates")

# (level, id, name in the prompt, the good ModelNew, the first answer: PyTorch computes it)
PROBLEMS = [
    (1, 1, "Scale_Relu", "good_cuda_scale_relu.py",
     "import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n    def __init__(self, scale):\n"
     "        super().__init__()\n        self.scale = scale\n\n    def forward(self, x):\n"
     "        return torch.relu(x * self.scale)\n"),
    (1, 4, "Scaled_Difference", "good_cuda_scaled_difference.py",
     "import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n    def __init__(self, scale):\n"
     "        super().__init__()\n        self.scale = scale\n\n    def forward(self, a, b):\n"
     "        return (a - b) * self.scale\n"),
    (2, 1, "Linear_Relu", "good_cuda_linear_relu.py",
     "import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n    def __init__(self, in_features, out_features):\n"
     "        super().__init__()\n        self.linear = nn.Linear(in_features, out_features)\n\n    def forward(self, x):\n"
     "        return torch.relu(self.linear(x))\n"),
]

requests = []  # (kind, problem) per request, for the summary
lock = threading.Lock()


def answer_for(prompt):
    if "State the reusable lesson" in prompt:
        return "insight", None, "CONDITION: an elementwise problem\nACTION: one fused kernel, one pass over memory"
    for level, pid, name, good, cheat in PROBLEMS:
        if name in prompt:
            if "Write the first `ModelNew`" in prompt:
                return "first", name, "PyTorch can do this directly.\n```python\n" + cheat + "```\n"
            with open(os.path.join(CANDIDATES, good)) as f:
                return "kernel", name, "One fused CUDA kernel.\n```python\n" + f.read() + "```\n"
    return "unknown", None, "I cannot tell which problem this is."


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            req = json.loads(body)
            prompt = "\n".join(m.get("content", "") if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
                               for m in req.get("messages", []))
        except ValueError:
            prompt = ""
        kind, problem, text = answer_for(prompt)
        with lock:
            requests.append((kind, problem))
        out = json.dumps({
            "id": "standin-%d" % len(requests), "object": "chat.completion", "model": req.get("model", "m1"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 250, "total_tokens": 1250},
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


def evaluations(db):
    """(task, status, seconds, compile seconds) of every evaluation in a project's store."""
    out = []
    con = sqlite3.connect(db)
    try:
        rows = con.execute("select r.task, e.status, e.diagnosis from evaluations e join candidates c on c.id = e.candidate_id "
                           "join runs r on r.id = c.run_id order by e.id").fetchall()
    finally:
        con.close()
    for task, status, diag in rows:
        d = json.loads(diag) if diag else {}
        comp = d.get("compile") or {}
        out.append({"task": task, "status": status, "eval_seconds": d.get("eval_seconds"),
                    "compile_seconds": comp.get("seconds"), "compile_cached": comp.get("cached"),
                    "speedup": (d.get("timing") or {}).get("speedup"), "integrity": [c.get("name") for c in d.get("integrity", [])
                                                                                     if c.get("outcome") == "fail"]})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--kfoundry", default=os.path.join(ROOT, ".gpu", "bin", "kfoundry"))
    ap.add_argument("--kb-worker", default="")
    ap.add_argument("--device", default="0")
    ap.add_argument("--budget", default="3")
    ap.add_argument("--timeout", type=int, default=420)
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    config = os.path.join(a.outdir, "llm.json")
    with open(config, "w") as f:
        json.dump({"providers": [{"name": "standin", "kind": "openai", "base_url": "http://127.0.0.1:%d/v1" % server.server_port,
                                  "api_key_env": "KF_STANDIN_KEY", "retries": 0, "timeout_s": 120, "concurrency": 2}],
                   "models": [{"name": "m1", "provider": "standin"}]}, f, indent=2)
    env = dict(os.environ, KF_STANDIN_KEY="sk-standin")
    for v in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"):
        env.pop(v, None)
    summary = {"runs": []}
    for level, ids in ((1, "1,4"), (2, "1")):
        project = os.path.join(a.outdir, "project-level%d" % level)
        cmd = [a.kfoundry, "kernelbench", "run", "--kb", DATA, "--level", str(level), "--problems", ids, "--project", project,
               "--llm-config", config, "--budget", a.budget, "--islands", "1", "--device", a.device, "--no-library",
               "--worker-log", os.path.join(a.outdir, "worker-level%d.log" % level)]
        if a.kb_worker:
            cmd += ["--kb-worker", a.kb_worker]
        t0 = time.time()
        with open(os.path.join(a.outdir, "run-level%d.log" % level), "w") as log:
            try:
                rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, timeout=a.timeout).returncode
            except subprocess.TimeoutExpired:
                rc = "timeout"
        wall = time.time() - t0
        evs = evaluations(os.path.join(project, "project.db")) if os.path.exists(os.path.join(project, "project.db")) else []
        summary["runs"].append({"level": level, "problems": ids, "exit": rc, "wall_s": wall, "evaluations": evs})
    with lock:
        summary["llm_requests"] = [{"kind": k, "problem": p} for k, p in requests]
    with open(os.path.join(a.outdir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print("| level | problem | evaluations | statuses | failed checks | best speedup | eval s (median) | builds s (not cached) | wall s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for run in summary["runs"]:
        tasks = sorted({e["task"] for e in run["evaluations"]}) or ["-"]
        for t in tasks:
            evs = [e for e in run["evaluations"] if e["task"] == t]
            st = ", ".join(sorted({e["status"] for e in evs})) or "-"
            checks = ", ".join(sorted({c for e in evs for c in e["integrity"]})) or "-"
            sp = [e["speedup"] for e in evs if e["speedup"] and e["status"] == "ok"]
            es = sorted(e["eval_seconds"] for e in evs if e["eval_seconds"] is not None)
            builds = [round(e["compile_seconds"], 1) for e in evs if e["compile_seconds"] and not e["compile_cached"]]
            print("| %d | %s | %d | %s | %s | %s | %s | %s | %.0f (exit %s) |" % (
                run["level"], t, len(evs), st, checks, "%.3g" % max(sp) if sp else "-",
                "%.2f" % es[len(es) // 2] if es else "-", builds or "-", run["wall_s"], run["exit"]))
    kinds = {}
    for r in summary["llm_requests"]:
        kinds[r["kind"]] = kinds.get(r["kind"], 0) + 1
    print("\nStand-in model requests: " + ", ".join("%s %d" % kv for kv in sorted(kinds.items())))
    server.shutdown()


if __name__ == "__main__":
    sys.exit(main())
