"""One evaluate request on the harness's side: the reference, the candidate's process driven
through its trials, the comparisons, the integrity verdict, the baselines and the timing."""

import copy
import os

from kb_protocol import (
    BACKEND, RequestError, _json_clean, _perf_counter, format_exception_tail, log, one_line, send, tail)
from kb_timing import alarm, fmt_ms, peaks_for
from kb_compare import (
    clone_tree, compare_outputs, describe, fp64_note, input_digest, is_tensor, output_fingerprint, tensor_bytes,
    tolerance_record, tree_leaves, tree_map)
from kb_guards import restore_precision
from kb_session import CANDIDATE_SIDE_CHECKS, CHECK_ORDER, CandidateError, EARLY_CHECKS, Session
from kb_runner import CandidateProcess


class Evaluation(Session):
    """One evaluate request, on the harness's side. The reference (fp32, and fp64 beside it)
    runs here; the candidate runs in a CandidateProcess, which never holds the reference's
    outputs, and its outputs are compared here after each call returns."""

    def __init__(self, worker, req_id, problem_path, candidate_path, build_dir, opts):
        super().__init__(worker.dev, opts)
        self.w = worker
        self.req_id = req_id
        self.problem_path = problem_path
        self.candidate_path = candidate_path
        self.build_dir = build_dir
        self.t0 = _perf_counter()
        self.checks = {name: ("skipped", "not reached") for name in CHECK_ORDER}
        self.result = {"status": "ok", "stage": "load", "message": "", "backend": BACKEND,
                       "device": self.dev.info()["name"], "kernel_launches": -1, "fatal": False,
                       "tolerance": tolerance_record(opts)}
        self.model = None
        self.model64 = None
        self.fp64_error = "" if opts["fp64_reference"] else "the fp64 reference is turned off"
        self.output_bytes = 0
        self.orig = worker.originals
        self.child = None
        self.seen_outputs = {}  # fingerprint of an earlier output -> where it came from

    # -- plumbing ----------------------------------------------------------------------

    def progress(self, stage, what, trial=None):
        p = {"stage": stage, "what": what}
        if trial is not None:
            p["trial"] = trial
        send({"id": self.req_id, "progress": p})

    def check(self, name, outcome, detail):
        self.checks[name] = (outcome, detail)

    def fail_once(self, name, detail):
        if self.checks[name][0] != "fail":
            self.checks[name] = ("fail", detail)

    def ask(self, obj, where):
        """A request to the candidate's process; merges the checks it reports and looks for
        processes it left running."""
        reply = self.child.request(obj, where)
        for name, v in (reply.get("checks") or {}).items():
            if name in CANDIDATE_SIDE_CHECKS and isinstance(v, list) and len(v) == 2:
                if self.checks[name][0] != "fail":
                    self.checks[name] = (str(v[0]), str(v[1]))
        if isinstance(reply.get("kernel_launches"), int):
            self.result["kernel_launches"] = reply["kernel_launches"]
        beside = self.child.running_beside()
        if beside:
            self.fail_once("processes", "process(es) running beside the candidate after %s: %s" % (
                where, ", ".join("%d (%s)" % (pid, one_line(v[3], 60)) for pid, v in list(beside.items())[:4])))
        if "candidate_error" in reply:
            raise CandidateError(where, info=reply["candidate_error"])
        return reply

    def load_output(self, path):
        torch = self.torch
        if not isinstance(path, str) or os.path.dirname(os.path.abspath(path)) != os.path.abspath(self.child.out_dir):
            raise RuntimeError("the candidate's process named an output file outside its folder: %r" % (path,))
        try:
            out = torch.load(path, map_location=self.dev.torch_device(), weights_only=True)
        except Exception as e:
            return None, "its output cannot be read back as tensors: %s" % one_line(e, 200)
        finally:
            try:
                os.unlink(path)
            except OSError:
                pass
        return out, ""

    def reference(self, inputs):
        """The problem's Model on a copy of the inputs, and an fp64 copy of it on fp64 inputs."""
        ref = self.model(*clone_tree(inputs))
        self.sync()
        ref64 = None
        if not self.fp64_error:
            torch = self.torch
            try:
                if self.model64 is None:
                    self.model64 = copy.deepcopy(self.model).double()
                wide = tree_map(lambda v: v.to(torch.float64) if is_tensor(v) and v.is_floating_point() else
                                (v.clone() if is_tensor(v) else v), inputs)
                ref64 = self.model64(*wide)
                self.sync()
            except Exception as e:
                self.fp64_error = "the problem's Model does not run in fp64: %s: %s" % (type(e).__name__,
                                                                                      one_line(e, 200))
                self.model64 = None
                ref64 = None
        return ref, ref64

    def finish_common(self):
        self.result["integrity"] = [{"name": n, "outcome": self.checks[n][0], "detail": self.checks[n][1]}
                                    for n in CHECK_ORDER]
        self.result["eval_seconds"] = _perf_counter() - self.t0
        if self.orig is not None:
            self.orig.restore()
        if self.w.precision is not None:
            restore_precision(self.torch, self.w.precision)

    def runtime_error(self, ce):
        info = ce.info
        if ce.exc is not None:  # raised on this side (should not happen with a candidate process)
            info = {"type": type(ce.exc).__name__, "message": one_line(ce.exc, 300),
                    "log": format_exception_tail(ce.exc), "sticky": False}
        self.result["status"] = "runtime_error"
        if info.get("died"):
            what = info.get("message", "died")
            self.result["message"] = "%s (%s)" % (what, ce.where)
        else:
            if info.get("type") == "SystemExit":
                what = "called exit(%s)" % (info.get("exit"),)
            else:
                what = "raised %s: %s" % (info.get("type"), info.get("message"))
            self.result["message"] = "the candidate %s (%s)" % (what, ce.where)
        self.result["log"] = info.get("log", "")
        self.result["fatal"] = bool(info.get("sticky"))
        if info.get("compile_failure"):  # Triton compiles on the first call
            self.result["status"] = "compile_error"
            self.result["stage"] = "compile"
            self.result["message"] = "the candidate's kernel does not compile (%s): %s" % (ce.where,
                                                                                         info.get("message"))
            comp = self.result.setdefault("compile", {})
            comp["ok"] = False
            comp["log"] = tail(info.get("log", ""))

    # -- the request -------------------------------------------------------------------

    def run(self):
        torch = self.torch
        try:
            with torch.no_grad():
                if self.candidate_path is None:
                    return self.baselines_only()
                self.evaluate_candidate()
        except CandidateError as ce:
            self.runtime_error(ce)
        finally:
            self.stop_candidate()
            self.finish_common()
        return self.result

    def stop_candidate(self):
        if self.child is None:
            return
        killed = self.child.kill()
        if killed:
            self.fail_once("processes", "process(es) started by the candidate, killed with the evaluation: %s"
                           % ", ".join(killed[:4]))
            if self.result.get("status") in ("ok", "incorrect"):
                self.integrity_violation()
        self.child = None

    def evaluate_candidate(self):
        r = self.result
        self.load_problem(self.problem_path)
        try:
            self.model = self.build(self.problem.Model)
        except Exception as e:
            raise RequestError("the problem's Model(*get_init_inputs()) raised %s: %s" % (type(e).__name__,
                                                                                          one_line(e, 300)))
        self.progress("compile", "importing %s" % os.path.basename(self.candidate_path))
        r["stage"] = "compile"
        self.child = CandidateProcess(self.dev, self.build_dir)
        loaded = self.ask({"cmd": "load", "problem": self.problem_path, "candidate": self.candidate_path,
                           "build_dir": self.build_dir, "options": self.opts, "out_dir": self.child.out_dir},
                          "importing the candidate and constructing ModelNew")
        r["compile"] = loaded.get("compile") or {}
        failure = loaded.get("failure")
        if failure:
            r.update(status=failure.get("status", "load_error"), stage=failure.get("stage", "load"),
                     message=failure.get("message", ""))
            return
        r["stage"] = "load"
        if loaded.get("stop") or self.early_failure():
            return self.integrity_violation()
        r["stage"] = "correctness"
        primary = self.correctness_case()
        cases = [primary]
        if self.early_failure():
            self.finish_correctness(cases)
            return self.integrity_violation()
        if primary["passed"]:
            sb = self.smaller_batch_case()
            if sb is not None:
                cases.append(sb)
        else:
            self.check("shape_generality", "skipped", "the primary case failed")
        self.finish_correctness(cases)
        if self.early_failure():
            return self.integrity_violation()
        if not primary["passed"]:
            r["status"] = "incorrect"
            r["message"] = primary["first_problem"]
            return
        if self.checks["shape_generality"][0] == "fail":
            return self.integrity_violation()
        r["stage"] = "integrity"
        if not self.opts["time"]:
            self.ask({"cmd": "finish"}, "finishing")
            if self.early_failure():
                return self.integrity_violation()
            if self.checks["output_reuse"][0] != "fail":
                self.check("output_reuse", "pass", self.reuse_detail())
            self.check("physical_floor", "skipped", "timing was not asked for")
            r["stage"] = "done"
            r["message"] = "correct (%d trials)%s; not timed" % (self.opts["trials"], self.passed_by_note())
            return
        self.timing_stage()

    def early_failure(self):
        return any(self.checks[n][0] == "fail" for n in EARLY_CHECKS)

    def integrity_violation(self):
        r = self.result
        failed = [n for n in CHECK_ORDER if self.checks[n][0] == "fail"]
        r["status"] = "integrity_violation"
        r["stage"] = "integrity"
        r["message"] = "integrity check %s failed: %s" % (failed[0], self.checks[failed[0]][1]) if failed else \
            "integrity check failed"

    def finish_correctness(self, cases):
        prim = cases[0]
        keep = lambda c: {k: v for k, v in c.items() if k != "first_problem"}
        f_avail = [c for c in cases if c["fp64"]["available"]]
        passed_by = sorted(set(c["passed_by"] for c in cases if c["passed_by"]))
        self.result["correctness"] = {
            "passed": all(c["passed"] for c in cases),
            "trials": prim["trials"],
            "max_abs_error": max(c["max_abs_error"] for c in cases),
            "max_rel_error": max(c["max_rel_error"] for c in cases),
            "mismatches": sum(c["mismatches"] for c in cases),
            "rel_l2_error": max(c["rel_l2_error"] for c in cases),
            "tolerance": tolerance_record(self.opts),
            "passed_by": "fp64" if "fp64" in passed_by else ("tolerance" if passed_by else ""),
            "fp64_available": bool(f_avail),
            "fp64_note": "" if f_avail else (self.fp64_error or "no fp64 reference"),
            "candidate_error_fp64": max([c["fp64"]["candidate_max_abs_error"] for c in f_avail] or [0.0]),
            "reference_error_fp64": max([c["fp64"]["reference_max_abs_error"] for c in f_avail] or [0.0]),
            "fp64_ratio": max([c["fp64"]["ratio"] for c in f_avail] or [0.0]),
            "cases": [keep(c) for c in cases],
        }

    def new_case(self, name):
        return {"name": name, "passed": False, "trials": 0, "trials_passed": 0, "max_abs_error": 0.0,
                "max_rel_error": 0.0, "mismatches": 0, "elements": 0, "nan_count": 0, "inf_count": 0,
                "rel_l2_error": 0.0, "inputs_modified": False, "modified_input": "", "first_problem": "",
                "passed_by": "", "fp64": {"available": False, "candidate_max_abs_error": 0.0,
                                          "reference_max_abs_error": 0.0, "ratio": 0.0}}

    def judge(self, path, seed, where, batch_size, digest, bad_type, case=None):
        """Reads one output of the candidate, compares it with the reference for the inputs
        of `seed` and records it in `case`. Returns the comparison."""
        inputs = self.draw_inputs(seed, batch_size)
        if digest is not None and _json_clean(input_digest(inputs)) != _json_clean(digest):
            self.fail_once("monkey_patch", "the inputs drawn beside the candidate differ from the reference's "
                           "(%s): input generation was changed" % where)
        ref, ref64 = self.reference(inputs)
        del inputs
        self.output_bytes = tensor_bytes(ref)
        if bad_type or path is None:
            cmp = {"passed": False, "problem": bad_type or "no output", "bad_type": bad_type}
            out = None
        else:
            out, unreadable = self.load_output(path)
            if unreadable:
                cmp = {"passed": False, "problem": unreadable, "bad_type": ""}
            else:
                cmp = compare_outputs(out, ref, self.opts, ref64)
        if case is not None:
            case["trials"] += 1
            for k in ("max_abs_error", "max_rel_error", "rel_l2_error"):
                case[k] = max(case[k], cmp.get(k, 0.0))
            for k in ("mismatches", "nan_count", "inf_count"):
                case[k] += cmp.get(k, 0)
            case["elements"] = max(case["elements"], cmp.get("elements", 0))
            f = cmp.get("fp64") or {}
            if f.get("available"):
                cf = case["fp64"]
                cf["available"] = True
                for k in ("candidate_max_abs_error", "reference_max_abs_error", "ratio"):
                    cf[k] = max(cf[k], f[k])
            if cmp["passed"]:
                case["trials_passed"] += 1
                if cmp.get("passed_by") == "fp64" or not case["passed_by"]:
                    case["passed_by"] = cmp.get("passed_by", "")
            elif not case["first_problem"]:
                if cmp.get("problem"):
                    case["first_problem"] = "wrong output in %s: %s" % (where, cmp["problem"])
                else:
                    case["first_problem"] = ("wrong output in %s: %d of %d elements differ (max abs error %.3g, "
                                             "%d NaN)%s" % (where, cmp["mismatches"], cmp["elements"],
                                                            cmp["max_abs_error"], cmp["nan_count"], fp64_note(cmp)))
        if out is not None:
            # A wrong output equal to an earlier right one: a stale result (keyed on a
            # pointer the allocator handed out again, say), not a wrong computation.
            fp = output_fingerprint(out)
            if not cmp["passed"] and fp in self.seen_outputs:
                self.fail_once("output_reuse", "for fresh inputs in %s it returned the output of %s (a stale result "
                               "reused)" % (where, self.seen_outputs[fp]))
            elif cmp["passed"]:
                self.seen_outputs.setdefault(fp, where)
        del out, ref, ref64
        return cmp

    def trial(self, case, seed, where, instrument=False, batch_size=None, probe_seed=None):
        reply = self.ask({"cmd": "call", "seed": seed, "batch_size": batch_size, "instrument": instrument,
                          "probe_seed": probe_seed, "where": where}, where)
        if reply.get("modified_input"):
            case["inputs_modified"] = True
            case["modified_input"] = case["modified_input"] or reply["modified_input"]
        outputs = reply.get("outputs") or [None]
        cmp = self.judge(outputs[0], seed, where, batch_size, reply.get("digest"),
                         reply.get("bad_type") if len(outputs) == 1 else "", case)
        if len(outputs) > 1:
            again = where + ", called again on the same input tensors holding fresh values"
            pcmp = self.judge(outputs[1], probe_seed, again, batch_size, reply.get("probe_digest"),
                              reply.get("bad_type"))
            if cmp["passed"] and not pcmp["passed"]:
                self.fail_once("output_reuse", "wrong when fresh values are written into the same input tensors and "
                               "it is called again (%s): %s" % (where, pcmp.get("problem") or "%d of %d elements "
                                                                 "differ" % (pcmp["mismatches"], pcmp["elements"])))
        return cmp

    def correctness_case(self):
        case = self.new_case("primary")
        n = self.opts["trials"]
        # The second trial is the watched one: a first call may compile or autotune (Triton's
        # autotuner times its variants with PyTorch ops), which is not the steady forward.
        watched = min(1, n - 1)
        for k in range(n):
            self.progress("correctness", "primary trial %d of %d" % (k + 1, n), trial=k)
            probe = self.opts["seed"] + 50000 + k if k < self.opts["reuse_probes"] else None
            self.trial(case, self.opts["seed"] + k, "primary trial %d" % (k + 1), instrument=(k == watched),
                       probe_seed=probe)
            if self.checks["output_reuse"][0] == "fail":
                break
        case["passed"] = case["trials_passed"] == case["trials"]
        if self.checks["inputs_unmodified"][0] != "fail":
            self.check("inputs_unmodified", "pass", "inputs bit-identical after %d candidate calls" % case["trials"])
        return case

    def reuse_detail(self):
        probes = min(self.opts["reuse_probes"], self.opts["trials"])
        return ("right for fresh values in the same input tensors (%d trial(s)%s); no stale output for fresh inputs%s"
                % (probes, " and after timing" if self.opts["time"] else "",
                   "; free memory poisoned before every candidate call" if not self.dev.cpu else ""))

    def passed_by_note(self):
        c = self.result.get("correctness") or {}
        if c.get("passed_by") == "fp64":
            return (" by the fp64 rule: error against fp64 %.3g, the fp32 reference's %.3g"
                    % (c["candidate_error_fp64"], c["reference_error_fp64"]))
        return ""

    def smaller_batch_case(self):
        mod = self.problem
        bs = getattr(mod, "batch_size", None)
        if isinstance(bs, bool) or not isinstance(bs, int) or bs <= 1:
            self.check("shape_generality", "skipped", "the problem has no module-level int batch_size > 1")
            return None
        primary_shapes = [tuple(t.shape) for _p, t in tree_leaves(self.draw_inputs(self.opts["seed"]))
                          if is_tensor(t)]
        small = max(1, bs // 2)
        case = self.new_case("smaller-batch")
        self.progress("correctness", "smaller-batch (batch_size %d instead of %d)" % (small, bs), trial=0)
        shapes = [tuple(t.shape) for _p, t in tree_leaves(self.draw_inputs(self.opts["seed"] + 101, small))
                  if is_tensor(t)]
        if shapes == primary_shapes:
            self.check("shape_generality", "skipped", "get_inputs() does not follow the module's batch_size")
            return None
        try:
            saved = mod.batch_size
            mod.batch_size = small
            try:
                self.reference(self.draw_inputs(self.opts["seed"] + 101))
            finally:
                mod.batch_size = saved
        except Exception as e:  # the problem's own Model does not run at the smaller size
            self.check("shape_generality", "skipped", "the problem's Model fails with batch_size %d: %s: %s"
                       % (small, type(e).__name__, one_line(e, 200)))
            return None
        try:
            cmp = self.trial(case, self.opts["seed"] + 101, "smaller-batch trial (batch_size %d)" % small,
                             batch_size=small)
        except CandidateError as ce:
            if ce.info.get("died") or ce.info.get("sticky"):
                raise
            case["trials"] += 1
            self.fail_once("shape_generality", "hard-coded for the benchmarked shape: with batch_size %d the "
                           "candidate raised %s: %s" % (small, ce.info.get("type"), ce.info.get("message")))
            return case
        case["passed"] = case["trials_passed"] == case["trials"]
        if case["passed"]:
            self.check("shape_generality", "pass", "correct with batch_size %d as well as %d" % (small, bs))
        else:
            self.fail_once("shape_generality", "hard-coded for the benchmarked shape: with batch_size %d: %s"
                           % (small, cmp.get("problem") or "%d of %d elements differ" % (cmp["mismatches"],
                                                                                         cmp["elements"])))
        return case

    # -- timing --------------------------------------------------------------------------

    def baseline_key(self):
        st = os.stat(self.problem_path)
        o = self.opts
        return (os.path.realpath(self.problem_path), st.st_mtime_ns, st.st_size, self.dev.spec, o["warmup"],
                max(o["reps"], o["min_reps"]), o["rotate_buffers"], o["seed"], o["inputs_on_device"])

    def baselines(self, sets, need_eager=True):
        """Eager and torch.compile timings of the problem's Model, cached per problem file
        for the worker's lifetime."""
        key = self.baseline_key()
        cache = self.w.baseline_cache.setdefault(key, {})
        wanted = list(self.opts["baselines"])
        if need_eager and "eager" not in wanted:
            wanted.insert(0, "eager")
        out = {}
        for kind in wanted:
            if kind in cache:
                out[kind] = dict(cache[kind], cached=True)
                continue
            if sets is None:
                sets = self.timing_sets()
            self.progress("baseline", "timing the problem's Model (%s)" % kind)
            if kind == "eager":
                res = self.time_calls(self.model, sets, "eager")
            else:
                res = self.time_compiled(sets)
            cache[kind] = res
            out[kind] = dict(res, cached=False)
        return out, sets

    def time_compiled(self, sets):
        torch = self.torch
        try:
            compiled = torch.compile(self.model)
            t0 = _perf_counter()
            with alarm(self.opts["compile_baseline_timeout_s"]):
                out = compiled(*sets[0])
                self.sync()
            del out
            res = self.time_calls(compiled, sets, "compile")
            res["compile_seconds"] = _perf_counter() - t0
            return res
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            return {"error": "%s: %s" % (type(e).__name__, one_line(e, 300))}
        finally:
            try:
                torch._dynamo.reset()
            except Exception:
                pass
            # torch.compile is the harness's own doing: undo any change.
            changed = self.orig.changed()
            if changed:
                log("torch.compile changed %s; restored" % ", ".join(changed))
                self.orig.restore()
            restore_precision(torch, self.w.precision)

    def timing_stage(self):
        r = self.result
        r["stage"] = "timing"
        self.progress("timing", "timing the candidate")
        timed = self.ask({"cmd": "time"}, "timing")
        cand = timed["timing"]
        self.progress("integrity", "fresh values in a timed input set")
        outputs = timed.get("outputs") or [None]
        cmp = self.judge(outputs[0], self.opts["seed"] + 7919, "the fresh-values call after timing", None,
                         timed.get("digest"), timed.get("bad_type"))
        if not cmp["passed"]:
            self.fail_once("output_reuse", "wrong for fresh values in a timed input buffer (stale or cached results): "
                           + (cmp.get("problem") or "%d of %d elements differ" % (cmp["mismatches"],
                                                                                  cmp["elements"])))
        elif self.checks["output_reuse"][0] != "fail":
            self.check("output_reuse", "pass", self.reuse_detail())
        self.ask({"cmd": "finish"}, "finishing")
        base, _sets = self.baselines(None, need_eager=True)
        eager = base.get("eager", {})
        r["baselines"] = {k: {kk: vv for kk, vv in v.items() if kk in ("median_ms", "mean_ms", "min_ms", "max_ms",
                                                                      "reps", "spread", "error", "cached",
                                                                      "compile_seconds")}
                          for k, v in base.items() if k in self.opts["baselines"]}
        comp = base.get("compile", {})
        r["kernelbench_mean_ms"] = {"candidate": cand["mean_ms"], "eager": eager.get("mean_ms"),
                                    "compile": comp.get("mean_ms")}
        speedup = eager["median_ms"] / cand["median_ms"] if cand["median_ms"] > 0 else 0.0
        r["timing"] = {"case_name": "primary", "median_ms": cand["median_ms"], "min_ms": cand["min_ms"],
                       "max_ms": cand["max_ms"], "mean_ms": cand["mean_ms"], "spread": cand["spread"],
                       "reps": cand["reps"], "warmup": cand["warmup"], "wall_median_ms": cand["wall_median_ms"],
                       "reference_median_ms": eager["median_ms"], "reference_min_ms": eager["min_ms"],
                       "reference_spread": eager["spread"], "reference_reps": eager["reps"], "speedup": speedup}
        self.roofline(int(timed.get("input_bytes") or 0), cand["median_ms"])
        failed = [n for n in CHECK_ORDER if self.checks[n][0] == "fail"]
        if failed:
            return self.integrity_violation()
        r["stage"] = "done"
        msg = "correct%s; %.2fx eager (%s ms against %s ms)" % (self.passed_by_note(), speedup,
                                                               fmt_ms(cand["median_ms"]), fmt_ms(eager["median_ms"]))
        if "median_ms" in comp:
            msg += ", %.2fx torch.compile (%s ms)" % (comp["median_ms"] / cand["median_ms"]
                                                      if cand["median_ms"] > 0 else 0.0, fmt_ms(comp["median_ms"]))
        elif "error" in comp:
            msg += "; torch.compile baseline failed"
        r["message"] = msg

    def roofline(self, input_bytes, median_ms):
        nbytes = input_bytes + self.output_bytes
        rl = {"bytes": nbytes, "achieved_gbps": nbytes / median_ms / 1e6 if median_ms > 0 else 0.0,
              "peak_gbps": 0.0, "bandwidth_fraction": 0.0, "floor_ms": 0.0, "bound": ""}
        peaks = None
        if not self.dev.cpu:
            try:
                peaks = peaks_for(self.dev)
            except Exception as e:
                log("no peaks: %s" % one_line(e, 200))
        if peaks and float(peaks.get("bandwidth_gbps", 0)) > 0:
            bw = float(peaks["bandwidth_gbps"])
            rl["peak_gbps"] = bw
            rl["bandwidth_fraction"] = rl["achieved_gbps"] / bw
            rl["floor_ms"] = nbytes / (bw * 1e9) * 1e3
            if median_ms < 0.8 * rl["floor_ms"]:
                self.fail_once("physical_floor", "median %s ms is below 0.8 x the floor %s ms (%d bytes at %.0f GB/s)"
                               % (fmt_ms(median_ms), fmt_ms(rl["floor_ms"]), nbytes, bw))
            else:
                self.check("physical_floor", "pass", "median %s ms against the floor %s ms (%d bytes at %.0f GB/s)"
                           % (fmt_ms(median_ms), fmt_ms(rl["floor_ms"]), nbytes, bw))
        else:
            self.check("physical_floor", "skipped", "CPU testing mode" if self.dev.cpu else "no measured peaks")
        if median_ms < 0.01:
            rl["bound"] = "latency"
        elif rl["bandwidth_fraction"] >= 0.3:
            rl["bound"] = "memory"
        self.result["roofline"] = rl

    # -- baselines only ------------------------------------------------------------------

    def baselines_only(self):
        r = self.result
        self.load_problem(self.problem_path)
        r["stage"] = "timing"
        for n in CHECK_ORDER:
            self.check(n, "skipped", "no candidate")
        try:
            self.model = self.build(self.problem.Model)
        except Exception as e:
            raise RequestError("the problem's Model(*get_init_inputs()) raised %s: %s" % (type(e).__name__,
                                                                                          one_line(e, 300)))
        try:
            # The input list (dtype and shape of each tensor) for the prompts of the LLM experts.
            r["inputs"] = ["input%s: %s" % (path, describe(v)) for path, v in tree_leaves(self.draw_inputs(self.opts["seed"]))
                           if is_tensor(v)]
        except Exception:
            pass
        if not self.opts["time"]:
            r.update(stage="done", message="nothing to do: time is false and there is no candidate")
            return r
        try:
            base, _sets = self.baselines(None, need_eager=False)
        except Exception as e:
            raise RequestError("timing the problem's Model raised %s: %s" % (type(e).__name__, one_line(e, 300)))
        keep = ("median_ms", "mean_ms", "min_ms", "max_ms", "reps", "spread", "error", "cached", "compile_seconds",
                "wall_median_ms")
        r["baselines"] = {k: {kk: vv for kk, vv in v.items() if kk in keep} for k, v in base.items()}
        r["kernelbench_mean_ms"] = {"candidate": None, "eager": base.get("eager", {}).get("mean_ms"),
                                    "compile": base.get("compile", {}).get("mean_ms")}
        parts = []
        for k, v in base.items():
            parts.append("%s %s ms" % (k, fmt_ms(v["median_ms"])) if "median_ms" in v else "%s failed" % k)
        r.update(stage="done", message="baselines: " + ", ".join(parts))
        return r
