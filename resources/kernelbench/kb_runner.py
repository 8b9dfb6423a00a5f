"""The candidate's process: CandidateRunner, which runs in it (started as
``kb_worker.py --candidate-process``), and CandidateProcess, the harness's end of it, with the
process table that finds and kills what a candidate started."""

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

import kb_compare
from kb_protocol import _json_clean, format_exception_tail, one_line
from kb_device import Device
from kb_timing import fmt_ms
from kb_build import import_candidate, is_compile_failure
from kb_compare import clone_tree, describe, input_digest, is_tensor, same_values, tensor_bytes, tree_leaves, tree_map
from kb_guards import (
    ProcessWatch, ThreadWatch, _FRAMEWORK_KERNEL, harness_originals, is_transfer_event, make_op_recorder, op_is_glue,
    precision_state, restore_precision, screen_symbols)
from kb_options import parse_options
from kb_session import CANDIDATE_SIDE_CHECKS, CandidateError, Session


# The worker's entry point beside this file, started again with --candidate-process for every
# evaluation.
WORKER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kb_worker.py")


_STICKY = re.compile(r"illegal memory access|illegal address|device-side assert|unspecified launch failure|"
                     r"misaligned address|illegal instruction|an illegal|invalid program counter|"
                     r"uncorrectable ECC|launch timed out|hardware stack error", re.I)


class CandidateRunner(Session):
    """Runs in a process of its own, started for one evaluation: imports the candidate, builds
    ModelNew, calls it on inputs it draws itself and hands the outputs over as files. It never
    sees the reference's outputs: the harness compares them after each call returns. Checks
    that watch the candidate's own process (threads, processes, harness changes, aten ops,
    kernels, streams, inputs written, output types) are made here and reported with every
    reply."""

    def __init__(self, dev, req):
        super().__init__(dev, parse_options(req.get("options")))
        self.req = req
        self.out_dir = req["out_dir"]
        self.checks = {name: ("skipped", "not reached") for name in CANDIDATE_SIDE_CHECKS}
        self.threads = ThreadWatch()
        self.procs = ProcessWatch()  # installed once PyTorch is imported
        self.kernel_launches = -1
        self.new = None
        self.n_out = 0

    # -- plumbing ----------------------------------------------------------------------

    def check(self, name, outcome, detail):
        self.checks[name] = (outcome, detail)

    def fail_once(self, name, detail):
        if self.checks[name][0] != "fail":
            self.checks[name] = ("fail", detail)

    def state(self, reply):
        self.processes_verdict()
        reply["checks"] = {n: list(v) for n, v in self.checks.items()}
        reply["kernel_launches"] = self.kernel_launches
        return reply

    def processes_verdict(self):
        if self.procs.started:
            self.fail_once("processes", "the candidate started process(es): %s" % ", ".join(self.procs.started[:4]))

    def guard_harness(self, when):
        changed = self.orig.changed()
        if changed:
            self.fail_once("monkey_patch", "%s replaced %s" % (when, ", ".join(changed[:8])))
            self.orig.restore()
        now = precision_state(self.torch)
        diff = ["%s %s -> %s" % (k, self.precision[k], now.get(k)) for k in self.precision
                if now.get(k) != self.precision[k]]
        if diff:
            self.fail_once("precision", "%s changed %s" % (when, "; ".join(diff[:6])))
            restore_precision(self.torch, self.precision)

    def forward(self, inputs, where):
        try:
            with self.threads:
                out = self.new(*inputs)
                self.sync()
            return out
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            raise CandidateError(where, e)

    def save_outputs(self, out):
        """Writes the outputs for the harness (torch.save; read back with weights_only), after
        checking that every leaf is a plain tensor or a number: a tensor subclass could compute
        when first read. Returns (path, bad_type)."""
        for path, o in tree_leaves(out):
            if is_tensor(o):
                if type(o) is not kb_compare._TensorType:
                    return None, "output%s is a %s.%s, not a plain torch.Tensor" % (path, type(o).__module__,
                                                                                   type(o).__name__)
            elif not (o is None or isinstance(o, (bool, int, float, str))):
                return None, "output%s is a %s.%s, not a tensor" % (path, type(o).__module__, type(o).__name__)
        self.n_out += 1
        path = os.path.join(self.out_dir, "out_%d.pt" % self.n_out)
        self.torch.save(tree_map(lambda v: v.detach() if is_tensor(v) else v, out), path)
        return path, ""

    def checked_call(self, inputs, where, instrument=False):
        """One call on inputs: poisoned memory, the call, the output-type and input checks.
        Returns (file, bad_type)."""
        pristine = clone_tree(inputs)
        self.poison_free_memory()
        out = self.instrumented_forward(inputs, where) if instrument else self.forward(inputs, where)
        self.guard_harness("the candidate's forward (%s)" % where)
        path, bad = self.save_outputs(out)
        del out
        if bad:
            self.fail_once("output_type", bad + " (lazy or wrapped outputs are not accepted)")
        modified = [("input %s (%s)" % (p or "0", describe(a))) for (p, a), (_q, b) in
                    zip(tree_leaves(inputs), tree_leaves(pristine)) if is_tensor(a) and not same_values(a, b)]
        if modified:
            self.fail_once("inputs_unmodified", "the candidate wrote into %s (%s)" % (modified[0], where))
        return path, bad, modified[0] if modified else ""

    def write_fresh(self, target, seed, batch_size=None):
        """Fresh values written into the same input tensors, through .data so that their
        version counters stay as they were: a result cached by pointer is stale now."""
        fresh = self.draw_inputs(seed, batch_size)
        for (_p, t), (_q, f) in zip(tree_leaves(target), tree_leaves(fresh)):
            if is_tensor(t) and is_tensor(f) and t.shape == f.shape and t.dtype == f.dtype:
                t.data.copy_(f)
        del fresh
        self.sync()

    # -- requests ----------------------------------------------------------------------

    def handle(self, req):
        cmd = req.get("cmd")
        try:
            if cmd == "load":
                return self.state(self.load())
            if cmd == "call":
                return self.state(self.call(req))
            if cmd == "time":
                return self.state(self.time())
            if cmd == "finish":
                return self.state(self.finish())
        except CandidateError as ce:
            e = ce.exc
            info = {"where": ce.where, "type": type(e).__name__, "message": one_line(e, 300),
                    "log": format_exception_tail(e), "exit": e.code if isinstance(e, SystemExit) else None,
                    "compile_failure": is_compile_failure(e),
                    "sticky": bool(_STICKY.search(str(e))) or self.device_broken()}
            return self.state({"ok": False, "candidate_error": info})
        return {"ok": False, "error": "unknown command %r" % (cmd,)}

    def load(self):
        torch = self.dev.require()
        kb_compare._TensorType = torch.Tensor
        import torch._dynamo  # noqa: F401  (wraps torch.manual_seed when imported: before the snapshot)
        import torch.profiler  # noqa: F401
        import torch.utils._python_dispatch  # noqa: F401

        self.torch = torch
        self.dev.info()  # platform look-ups (uname) before the watch starts
        self.procs.install()
        self.orig = harness_originals(torch)
        self.precision = precision_state(torch)
        self.load_problem(self.req["problem"])
        self.orig.add_class_attr("the problem's Model.forward", self.problem.Model, "forward")
        self.orig.add_module_attr("the problem's get_inputs", self.problem, "get_inputs")
        path, build_dir = self.req["candidate"], self.req.get("build_dir")
        if not os.path.isfile(path):
            return {"ok": True, "failure": {"status": "load_error", "stage": "load",
                                            "message": "the candidate %s does not exist" % path},
                    "compile": {"ok": False, "cached": False, "seconds": 0.0, "compiler": "none", "log": "",
                                "diagnostics": []}}
        module, comp, failure = import_candidate(path, build_dir, watch=self.threads)
        extensions = comp.pop("_extensions", [])
        if failure is not None:
            failure["stage"] = "compile" if failure["status"] == "compile_error" else "load"
            return {"ok": True, "failure": failure, "compile": comp}
        self.procs.harness += 1
        try:
            self.check("forbidden_symbols", *screen_symbols(extensions))
        finally:
            self.procs.harness -= 1
        if self.checks["forbidden_symbols"][0] == "fail":
            return {"ok": True, "compile": comp, "stop": True}
        self.guard_harness("importing the candidate")
        if self.threads.started:
            self.fail_once("threads", "importing the candidate started thread(s): %s"
                           % ", ".join(self.threads.started[:5]))
        new_cls = getattr(module, "ModelNew", None)
        if new_cls is None:
            return {"ok": True, "compile": comp, "failure": {"status": "load_error", "stage": "load",
                                                            "message": "the candidate defines no ModelNew"}}
        try:
            with self.threads:
                with torch.no_grad():
                    self.new = self.build(new_cls)
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            raise CandidateError("ModelNew(*get_init_inputs())", e)
        self.guard_harness("constructing ModelNew")
        return {"ok": True, "compile": comp}

    def call(self, req):
        torch = self.torch
        where = str(req.get("where", "a trial"))
        batch_size = req.get("batch_size")
        with torch.no_grad():
            inputs = self.draw_inputs(int(req["seed"]), batch_size)
            digest = input_digest(inputs)
            first, bad, modified = self.checked_call(inputs, where, bool(req.get("instrument")))
            reply = {"ok": True, "digest": digest, "outputs": [first], "bad_type": bad, "modified_input": modified}
            if req.get("probe_seed") is not None and not bad and not modified:
                self.write_fresh(inputs, int(req["probe_seed"]), batch_size)
                reply["probe_digest"] = input_digest(inputs)
                second, bad2, _m = self.checked_call(inputs, where + ", called again on the same input tensors "
                                                     "holding fresh values")
                reply["outputs"].append(second)
                reply["bad_type"] = bad2
        self.threads_verdict()
        return reply

    def time(self):
        torch = self.torch
        with torch.no_grad():
            sets = self.timing_sets()
            self.guard_harness("before timing")
            try:
                with self.threads:
                    cand = self.time_calls(self.new, sets, "candidate")
            except BaseException as e:
                if isinstance(e, KeyboardInterrupt):
                    raise
                raise CandidateError("timing", e)
            self.threads_verdict()
            self.guard_harness("the candidate's forward while timing")
            # Work left on another stream or thread finishes inside the wall time, outside the events.
            if not self.dev.cpu:
                gap = cand["wall_median_ms"] - cand["median_ms"]
                if gap > max(0.2, 2.0 * cand["median_ms"]):
                    self.fail_once("side_stream", "wall time %s ms against event time %s ms: work outside the timed "
                                   "stream" % (fmt_ms(cand["wall_median_ms"]), fmt_ms(cand["median_ms"])))
                elif self.checks["side_stream"][0] == "skipped":
                    self.check("side_stream", "skipped", "launch accounting unavailable; event time (%s ms) agrees "
                               "with wall time (%s ms)" % (fmt_ms(cand["median_ms"]), fmt_ms(cand["wall_median_ms"])))
            input_bytes = tensor_bytes(sets[0])
            # After timing: fresh values in one timed input set's own tensors.
            target = sets[0]
            self.write_fresh(target, self.opts["seed"] + 7919)
            digest = input_digest(target)
            path, bad, _m = self.checked_call(target, "the fresh-values call after timing")
        return {"ok": True, "timing": cand, "input_bytes": input_bytes, "digest": digest, "outputs": [path],
                "bad_type": bad}

    def finish(self):
        self.threads_verdict()
        self.processes_verdict()
        if self.checks["processes"][0] != "fail":
            self.check("processes", "pass", "no process started during import, construction or forward" +
                       (" (compilers: %d)" % len(self.procs.internal) if self.procs.internal else ""))
        for name, detail in (("inputs_unmodified", "inputs bit-identical after every candidate call"),
                             ("output_type", "plain torch.Tensor outputs"),
                             ("monkey_patch", "%d harness functions unchanged after import, construction and forward"
                              % len(self.orig.entries)),
                             ("precision", "TF32, reduced-precision reductions, matmul precision and default dtype "
                              "unchanged")):
            if self.checks[name][0] != "fail":
                self.check(name, "pass", detail)
        return {"ok": True}

    def threads_verdict(self):
        if self.threads.started:
            self.fail_once("threads", "thread(s) started by the candidate: %s" % ", ".join(self.threads.started[:5]))
        elif self.threads.max_growth > 0 and not self.threads.internal:
            self.fail_once("threads", "%d more live thread(s) after the candidate's forward" % self.threads.max_growth)
        elif self.checks["threads"][0] != "fail":
            self.check("threads", "pass", "no thread started during import, construction or forward")

    def instrumented_forward(self, inputs, where):
        """The candidate's forward under an aten-op recorder and, on CUDA, the profiler:
        framework_compute, kernel_launch and side_stream."""
        torch = self.torch
        rec = make_op_recorder(torch)
        prof = None
        prof_error = ""
        use_prof = not self.dev.cpu
        out = None
        with contextlib.ExitStack() as stack:
            if use_prof:
                try:
                    from torch.profiler import ProfilerActivity, profile

                    prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
                    stack.enter_context(prof)
                except Exception as e:
                    prof, prof_error = None, one_line(e, 200)
            self.sync()
            sleep = getattr(torch.cuda, "_sleep", None) if not self.dev.cpu else None
            if sleep is not None:
                sleep(1000)
            try:
                with self.threads, rec:
                    out = self.new(*inputs)
                    self.sync()
            except BaseException as e:
                if isinstance(e, KeyboardInterrupt):
                    raise
                raise CandidateError(where, e)
            if sleep is not None:
                sleep(1000)
                self.sync()
        compute = sorted((n for n in rec.ops if not op_is_glue(n)), key=lambda n: -rec.ops[n])
        if compute:
            self.fail_once("framework_compute", "forward computes with %s" % ", ".join(compute[:8]))
        else:
            glue = sorted(rec.ops)
            self.check("framework_compute", "pass", "no PyTorch compute op in forward" +
                       (" (glue only: %s)" % ", ".join(glue[:8]) if glue else ""))
        if self.dev.cpu:
            self.check("kernel_launch", "skipped", "CPU testing mode: no device kernels")
            self.check("side_stream", "skipped", "CPU testing mode: no streams")
            return out
        if prof is None:
            self.check("kernel_launch", "skipped", "the profiler is unavailable: %s" % prof_error)
            return out
        self.read_profile(prof, sleep is not None)
        return out

    def read_profile(self, prof, have_markers):
        torch = self.torch
        try:
            events = prof.events()
        except Exception as e:
            self.check("kernel_launch", "skipped", "the profiler's events cannot be read: %s" % one_line(e, 200))
            return
        cuda_type = torch.autograd.DeviceType.CUDA
        gpu = []
        for e in events:
            if getattr(e, "device_type", None) != cuda_type:
                continue
            name = e.name or ""
            kind = getattr(e, "activity_type", None)
            if is_transfer_event(name) or (isinstance(kind, str) and kind and kind != "kernel"):
                continue  # copies, fills, synchronisation records
            stream = getattr(e, "device_resource_id", None)
            if stream is None:
                stream = getattr(e, "thread", None)
            start = getattr(getattr(e, "time_range", None), "start", 0)
            gpu.append((start, name, stream))
        if not gpu:  # older or newer profilers: the raw Kineto records
            try:
                for k in prof.profiler.kineto_results.events():
                    if k.device_type() == cuda_type and not is_transfer_event(k.name()):
                        gpu.append((k.start_ns(), k.name(), k.device_resource_id()))
            except Exception:
                pass
        gpu.sort(key=lambda x: x[0])
        if have_markers:
            markers = [g for g in gpu if "spin_kernel" in g[1]]
            kernels = [g for g in gpu if "spin_kernel" not in g[1]]
        else:
            markers, kernels = [], gpu
        if not gpu:
            self.check("kernel_launch", "skipped", "the profiler recorded no device activity (CUPTI unavailable?)")
            return
        own = [k for k in kernels if not _FRAMEWORK_KERNEL.search(k[1])]
        framework = [k for k in kernels if _FRAMEWORK_KERNEL.search(k[1])]
        self.kernel_launches = len(own)
        short = lambda ks: ", ".join(sorted(set(one_line(k[1], 80) for k in ks))[:4])
        if not own:
            self.fail_once("kernel_launch", "no kernel launched by the candidate" +
                           (" (only PyTorch's own: %s)" % short(framework) if framework else ""))
        else:
            self.check("kernel_launch", "pass", "%d kernel launch(es) per call: %s" % (len(own), short(own)))
        if markers:
            main = markers[0][2]
            other = [k for k in kernels if k[2] != main]
            if other:
                self.fail_once("side_stream", "%d kernel(s) on stream %s while the call's stream is %s: %s"
                               % (len(other), other[0][2], main, short(other)))
            else:
                self.check("side_stream", "pass", "all %d kernel(s) on the call's stream" % len(kernels))
        else:
            self.check("side_stream", "skipped", "no stream marker in the profile; checked by wall time while timing")


def candidate_process(args):
    """--candidate-process: serves one evaluation's candidate over the control pipes the
    harness passed (JSON lines), then exits; the harness kills it and everything it started."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    r_fd, w_fd = (int(x) for x in args.control.split(","))
    os.set_inheritable(r_fd, False)
    os.set_inheritable(w_fd, False)
    ctl_in = os.fdopen(r_fd, "rb", buffering=0)
    ctl_out = os.fdopen(w_fd, "w", encoding="utf-8", buffering=1)
    sys.stdout = sys.stderr
    dev = Device(args.device)
    runner = None
    while True:
        raw = ctl_in.readline()
        if not raw:
            os._exit(0)
        try:
            req = json.loads(raw.decode("utf-8", "replace"))
            if runner is None:
                runner = CandidateRunner(dev, req)
            reply = runner.handle(req)
        except BaseException as e:  # a failure of this side of the harness
            reply = {"ok": False, "error": "%s: %s" % (type(e).__name__, one_line(e, 300)),
                     "log": format_exception_tail(e)}
        ctl_out.write(json.dumps(_json_clean(reply), allow_nan=False) + "\n")
        ctl_out.flush()
        if req.get("cmd") == "finish":
            os._exit(0)


def _prctl(option, value):
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0) == 0
    except Exception:
        return False


PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER = 1, 4, 36


def proc_table():
    """{pid: (ppid, session, state, command line)} of the processes visible in /proc."""
    table = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                stat = f.read().decode("utf-8", "replace")
            rest = stat[stat.rindex(")") + 2:].split()
            state, ppid, session = rest[0], int(rest[1]), int(rest[3])
            try:
                with open("/proc/%s/cmdline" % name, "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
            except OSError:
                cmd = ""
            table[int(name)] = (ppid, session, state, cmd or stat[stat.index("(") + 1:stat.rindex(")")])
        except (OSError, ValueError, IndexError):
            continue
    return table


def descendants(root, table=None, session=None):
    """Processes below root (by parent), and those still in root's session (a process
    started below root whose parent died is adopted by the worker, a subreaper)."""
    table = proc_table() if table is None else table
    kids = {}
    for pid, (ppid, _s, _st, _c) in table.items():
        kids.setdefault(ppid, []).append(pid)
    found, todo = set(), [root]
    while todo:
        for k in kids.get(todo.pop(), []):
            if k not in found and k != root:
                found.add(k)
                todo.append(k)
    if session is not None:
        found.update(pid for pid, (_p, s, _st, _c) in table.items() if s == session and pid != root)
    return {pid: table[pid] for pid in found if pid in table}


class CandidateProcess:
    """The harness's end of a candidate's process: started per evaluation in a session of its
    own, driven over two pipes, killed with every process it started when the evaluation
    ends."""

    def __init__(self, dev, build_dir):
        r1, w1 = os.pipe()  # harness -> candidate
        r2, w2 = os.pipe()  # candidate -> harness
        env = dict(os.environ)
        if build_dir:
            os.makedirs(build_dir, exist_ok=True)
            env["TORCH_EXTENSIONS_DIR"] = build_dir
        self.out_dir = tempfile.mkdtemp(prefix="kb_outputs_", dir=_output_dir_root())
        self.children_before = set(pid for pid, v in proc_table().items() if v[0] == os.getpid())
        self.p = subprocess.Popen([sys.executable, "-u", WORKER_SCRIPT, "--candidate-process", "--device",
                                   dev.spec, "--control", "%d,%d" % (r1, w2)], pass_fds=(r1, w2),
                                  stdin=subprocess.DEVNULL, stdout=2, start_new_session=True, env=env)
        os.close(r1)
        os.close(w2)
        self.w = os.fdopen(w1, "w", encoding="utf-8", buffering=1)
        self.r = os.fdopen(r2, "rb", buffering=0)
        self.killed = []

    def request(self, obj, where):
        try:
            self.w.write(json.dumps(obj) + "\n")
            self.w.flush()
            line = self.r.readline()
        except (BrokenPipeError, OSError):
            line = b""
        if not line:
            code = self.p.wait()
            how = ("was killed by signal %d" % -code) if code < 0 else ("exited with code %d" % code)
            raise CandidateError(where, info={"type": "ProcessExit", "message": "the candidate's process %s" % how,
                                              "log": "", "exit": code, "died": True})
        try:
            reply = json.loads(line.decode("utf-8", "replace"))
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            raise RuntimeError("the candidate's process answered %r" % line[:200])
        if "error" in reply and not reply.get("ok", False) and "candidate_error" not in reply:
            raise RuntimeError("the candidate's process failed: %s\n%s" % (reply["error"], reply.get("log", "")))
        return reply

    def running_beside(self):
        """Processes started below the candidate's process that are alive (or unreaped) now."""
        return descendants(self.p.pid, session=self.p.pid)

    def kill(self):
        """Kills the candidate's process, its process group and every process it started."""
        table = proc_table()
        doomed = descendants(self.p.pid, table, session=self.p.pid)
        # Processes adopted by the worker (a subreaper) after their parent died.
        me = os.getpid()
        for pid, (ppid, _s, _st, cmd) in table.items():
            if ppid == me and pid != self.p.pid and pid not in self.children_before and "_inductor" not in cmd:
                doomed[pid] = table[pid]
        try:
            os.killpg(self.p.pid, signal.SIGKILL)
        except OSError:
            pass
        for pid in doomed:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            self.p.kill()
        except OSError:
            pass
        try:
            self.p.wait(timeout=30)
        except Exception:
            pass
        for pid in doomed:
            try:
                os.waitpid(pid, os.WNOHANG)  # adopted ones are the worker's to reap
            except (ChildProcessError, OSError):
                pass
        for f in (self.w, self.r):
            try:
                f.close()
            except Exception:
                pass
        shutil.rmtree(self.out_dir, ignore_errors=True)
        self.killed = ["%d (%s)" % (pid, one_line(v[3], 60)) for pid, v in doomed.items()]
        return self.killed


def _output_dir_root():
    """Where outputs travel from the candidate's process to the harness: /dev/shm when it has
    room (1 GiB free at least), else the temporary folder."""
    try:
        st = os.statvfs("/dev/shm")
        if st.f_bavail * st.f_frsize >= (1 << 30) and os.access("/dev/shm", os.W_OK):
            return "/dev/shm"
    except OSError:
        pass
    return None
