#!/usr/bin/env python3
"""Kernel Foundry's KernelBench worker.

Evaluates KernelBench candidates (a Python module defining ``ModelNew``) against their
problem (a module defining ``Model``, ``get_inputs`` and ``get_init_inputs``) with the host's
PyTorch, speaking the JSON-lines protocol of docs/kernelbench-worker.md on stdin/stdout:

    python3 kb_worker.py [--device N]
    python3 kb_worker.py --compile CANDIDATE.py --build-dir DIR

Only the standard library is imported at start; PyTorch is imported on first use, so that
``hello`` can say when it is missing. The checks are stricter than KernelBench's own harness:
fresh inputs every trial, poisoned free memory, input checksums, a relative-L2 check against
outputs that pass only because they are small, a smaller-batch run, framework-op and kernel
accounting, stream, thread, monkey-patch and precision checks, rotated inputs while timing,
a fresh-values check after timing and a physical floor.
"""

# The worker's modules, beside this file, in the one order they depend on each other: each
# imports only modules listed above it (no cycles), and this entry point comes last.
#   kb_protocol    the protocol channel (JSON lines), log, text tails, RequestError
#   kb_device      PyTorch loaded lazily, the Device candidates run on
#   kb_timing      statistics of timed calls, the device's peaks, the torch.compile time limit
#   kb_build       loading problems and candidates, load_inline builds, diagnostics, --compile
#   kb_compare     inputs and outputs, tolerance policies, the comparison with the reference
#   kb_guards      guards against a candidate changing the harness, thread and process watches, symbols
#   kb_options     the options of an evaluate request
#   kb_session     what both sides of an evaluation share: the checks, CandidateError, Session
#   kb_runner      the candidate's process: CandidateRunner in it, CandidateProcess driving it
#   kb_evaluation  one evaluate request on the harness's side
# State a module rebinds (the protocol streams, the imported torch, torch.Tensor) is read
# through that module (kb_device._torch), never copied with from-imports. No module name may
# begin with kb_candidate_ or kb_problem_, the names candidates and problems are loaded under.

import argparse
import gc
import json
import os
import platform
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kb_protocol  # noqa: E402
import kb_device  # noqa: E402
import kb_compare  # noqa: E402
from kb_protocol import (  # noqa: E402
    BACKEND, PROTOCOL_VERSION, RequestError, _setup_private_streams, format_exception_tail, log, one_line, send)
from kb_device import Device, package_version, torch_or_none  # noqa: E402
from kb_timing import peaks_for  # noqa: E402
from kb_build import compile_one  # noqa: E402
from kb_guards import harness_originals, precision_state  # noqa: E402
from kb_options import parse_options  # noqa: E402
from kb_runner import PR_SET_CHILD_SUBREAPER, PR_SET_DUMPABLE, _prctl, candidate_process  # noqa: E402
from kb_evaluation import Evaluation  # noqa: E402


# --------------------------------------------------------------------------------------
# The worker loop
# --------------------------------------------------------------------------------------


class Worker:
    def __init__(self, device_spec):
        self.dev = Device(device_spec)
        self.baseline_cache = {}
        self.originals = None
        self.precision = None

    def prepare_torch(self):
        """Imports torch and takes the harness's originals before any candidate is loaded."""
        torch = self.dev.require()
        if self.originals is None:
            kb_compare._TensorType = torch.Tensor
            # Imported before the snapshot: torch._dynamo wraps torch.manual_seed when imported.
            import torch._dynamo  # noqa: F401
            import torch.profiler  # noqa: F401
            import torch.utils._python_dispatch  # noqa: F401

            self.originals = harness_originals(torch)
            self.precision = precision_state(torch)
        return torch

    def hello(self):
        torch = torch_or_none()
        r = {"ok": True, "protocol": PROTOCOL_VERSION, "backend": BACKEND, "pid": os.getpid(),
             "python": platform.python_version(), "torch": None, "cuda": False,
             "triton": package_version("triton"), "device": {}}
        if torch is None:
            r["error"] = kb_device._torch_error
            return r
        r["torch"] = torch.__version__
        try:
            r["cuda"] = bool(torch.cuda.is_available())
        except Exception:
            r["cuda"] = False
        if self.dev.available():
            try:
                r["device"] = self.dev.info()
            except Exception as e:
                r["error"] = "cannot query the device: %s" % one_line(e, 300)
        elif not self.dev.cpu:
            r["error"] = "no CUDA device %s visible to PyTorch" % self.dev.spec
        return r

    def handle(self, req):
        """Serves one request; returns False when the worker must exit."""
        rid = req.get("id")
        cmd = req.get("cmd")
        try:
            if cmd == "hello":
                reply = {"id": rid}
                reply.update(self.hello())
                send(reply)
            elif cmd == "device_info":
                self.prepare_torch()
                remeasure = bool(req.get("remeasure", False))
                info = self.dev.info()
                peaks = peaks_for(self.dev, remeasure)
                send({"id": rid, "ok": True, "device": info, "peaks": peaks})
            elif cmd == "evaluate":
                return self.evaluate(rid, req)
            elif cmd == "shutdown":
                send({"id": rid, "ok": True})
                return False
            else:
                send({"id": rid, "ok": False, "error": "unknown command %r" % (cmd,)})
        except RequestError as e:
            send({"id": rid, "ok": False, "error": str(e)})
        except Exception as e:
            log(format_exception_tail(e))
            send({"id": rid, "ok": False, "error": "%s: %s" % (type(e).__name__, one_line(e, 400))})
        return True

    def evaluate(self, rid, req):
        problem = req.get("problem")
        candidate = req.get("candidate")
        build_dir = req.get("build_dir")
        if not isinstance(problem, str) or not problem:
            raise RequestError("evaluate needs problem (the path of a KernelBench problem file)")
        if not os.path.isfile(problem):
            raise RequestError("the problem %s does not exist" % problem)
        if candidate is not None and (not isinstance(candidate, str) or not candidate):
            raise RequestError("candidate must be a path or null")
        if build_dir is not None and not isinstance(build_dir, str):
            raise RequestError("build_dir must be a path")
        opts = parse_options(req.get("options"))
        self.prepare_torch()
        ev = Evaluation(self, rid, os.path.abspath(problem),
                        os.path.abspath(candidate) if candidate else None,
                        os.path.abspath(build_dir) if build_dir else None, opts)
        result = None
        try:
            result = ev.run()
        except RequestError:
            raise
        except Exception as e:
            # A failure of the harness itself, or of the device outside the candidate.
            broken = ev.device_broken()
            result = ev.result
            result.update(status="runtime_error", message="evaluation failed outside the candidate: %s: %s"
                          % (type(e).__name__, one_line(e, 300)), fatal=broken, log=format_exception_tail(e))
            if "integrity" not in result:
                ev.finish_common()
        finally:
            ev.model = ev.model64 = ev.flush_buf = None
            ev.problem = None
            for name in [m for m in sys.modules if m.startswith(("kb_candidate_", "kb_problem_"))]:
                sys.modules.pop(name, None)
            gc.collect()
            if not self.dev.cpu and not (result or {}).get("fatal"):
                try:
                    kb_device._torch.cuda.empty_cache()
                except Exception:
                    pass
        send({"id": rid, "ok": True, "result": result})
        return not result.get("fatal", False)


def serve(args):
    _setup_private_streams()
    # Candidates run in processes of their own (CandidateProcess). Not dumpable: they cannot
    # read this process's memory through /proc or ptrace (unless they run as root). A
    # subreaper: a process they start whose parent dies is adopted here and killed with the
    # evaluation.
    _prctl(PR_SET_DUMPABLE, 0)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    worker = Worker(args.device)
    while True:
        raw = kb_protocol._proto_in.readline()
        if not raw:
            break
        line = raw.decode("utf-8", "replace").strip()
        if not line:
            continue
        try:
            req = json.loads(line)
        except ValueError as e:
            send({"id": None, "ok": False, "error": "malformed JSON request: %s" % one_line(e, 200)})
            continue
        if not isinstance(req, dict):
            send({"id": None, "ok": False, "error": "a request must be a JSON object"})
            continue
        try:
            keep_going = worker.handle(req)
        except BaseException as e:  # SystemExit from a candidate outside the evaluation guards
            try:
                send({"id": req.get("id"), "ok": False, "error": "%s: %s" % (type(e).__name__, one_line(e, 300))})
            except Exception:
                pass
            keep_going = not isinstance(e, KeyboardInterrupt)
        if not keep_going:
            break
    try:
        kb_protocol._proto_out.flush()
    except Exception:
        pass
    os._exit(0)


def main(argv=None):
    sys.dont_write_bytecode = True  # no __pycache__ beside problems and candidates
    ap = argparse.ArgumentParser(description="Kernel Foundry's KernelBench worker (JSON lines on stdin/stdout; "
                                             "docs/kernelbench-worker.md)")
    ap.add_argument("--device", default="0", help="CUDA device ordinal (default 0)")
    ap.add_argument("--compile", metavar="CANDIDATE.py", help="build one candidate and exit (0 built, 3 failed)")
    ap.add_argument("--build-dir", metavar="DIR", help="TORCH_EXTENSIONS_DIR for --compile")
    ap.add_argument("--candidate-process", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--control", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.device != "cpu":
        try:
            if int(args.device) < 0:
                raise ValueError
        except ValueError:
            ap.error("--device must be a non-negative integer")
    if args.candidate_process:
        candidate_process(args)
    elif args.compile:
        compile_one(args)
    else:
        serve(args)


if __name__ == "__main__":
    main()
