"""Inputs, outputs and their comparison: trees of tensors, the named tolerance policies, the
comparison of a candidate's outputs with the reference's (and with an fp64 run of it), and
the digests that tie inputs and outputs to the trial they belong to. torch.Tensor, captured
when torch is first used for an evaluation, is this module's state: kb_compare._TensorType."""

import json
import math

import kb_device
from kb_protocol import _json_clean


_TensorType = None  # torch.Tensor, captured when torch is first used for an evaluation


def tree_map(fn, x):
    if isinstance(x, (list, tuple)):
        return type(x)(tree_map(fn, v) for v in x) if type(x) in (list, tuple) else [tree_map(fn, v) for v in x]
    if isinstance(x, dict):
        return {k: tree_map(fn, v) for k, v in x.items()}
    return fn(x)


def tree_leaves(x, path="", out=None):
    out = [] if out is None else out
    if isinstance(x, (list, tuple)):
        for i, v in enumerate(x):
            tree_leaves(v, "%s[%d]" % (path, i), out)
    elif isinstance(x, dict):
        for k, v in x.items():
            tree_leaves(v, "%s[%r]" % (path, k), out)
    else:
        out.append((path, x))
    return out


def is_tensor(x):
    return kb_device._torch is not None and isinstance(x, kb_device._torch.Tensor)


def to_device(x, dev):
    """Tensors to the device, keeping their dtype (integer inputs stay integers)."""
    return tree_map(lambda v: v.to(dev) if is_tensor(v) else v, x)


def clone_tree(x):
    return tree_map(lambda v: v.clone() if is_tensor(v) else v, x)


def tensor_bytes(x):
    return sum(v.numel() * v.element_size() for _p, v in tree_leaves(x) if is_tensor(v))


def describe(t):
    return "%s %s" % (str(t.dtype).replace("torch.", ""), "x".join(str(s) for s in t.shape) or "scalar")


def same_values(a, b):
    """Bitwise-equal tensors (NaN equal to NaN at the same place)."""
    torch = kb_device._torch
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if torch.equal(a, b):
        return True
    if a.is_floating_point() or a.is_complex():
        return bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())
    return False


# Named tolerance policies, so that a report can be compared with published numbers:
# `current` is KernelBench today (fp32 atol = rtol = 1e-4, fp16/bf16 1e-2), `v0` is
# KernelBench v0/v0.1, which most published results used (1e-2 for every float dtype), and
# `strict` takes `current`'s tolerance and the fp64 rule together. With `current` and `v0`
# an output also passes when it is no further from an fp64 run of the reference than the
# fp32 reference is, within `fp64_factor` (honest kernels that reorder fp32 arithmetic).
TOLERANCE_POLICIES = {
    "current": {"fp32": 1e-4, "half": 1e-2, "fp64_rule": "or",
                "summary": "KernelBench today: fp32 atol = rtol = 1e-4, fp16/bf16 1e-2; or within the fp64 rule"},
    "v0": {"fp32": 1e-2, "half": 1e-2, "fp64_rule": "or",
           "summary": "KernelBench v0/v0.1 (published results): atol = rtol = 1e-2; or within the fp64 rule"},
    "strict": {"fp32": 1e-4, "half": 1e-2, "fp64_rule": "and",
               "summary": "fp32 atol = rtol = 1e-4, fp16/bf16 1e-2, and within the fp64 rule"},
}


def default_tolerance(dtype, policy="current"):
    torch = kb_device._torch
    pol = TOLERANCE_POLICIES[policy]
    if dtype in (torch.float16, torch.bfloat16):
        return pol["half"]
    if dtype.is_floating_point or dtype.is_complex:
        return pol["fp32"]
    return 0.0


def tolerance_record(opts):
    """The tolerance a result was judged by, as reported with it."""
    pol = TOLERANCE_POLICIES[opts["tolerance"]]
    return {"policy": opts["tolerance"], "fp32_atol": pol["fp32"] if opts["atol"] is None else opts["atol"],
            "fp32_rtol": pol["fp32"] if opts["rtol"] is None else opts["rtol"], "half_atol": pol["half"],
            "fp64_rule": pol["fp64_rule"] if opts["fp64_reference"] else "off", "fp64_factor": opts["fp64_factor"],
            "summary": pol["summary"]}


def _unit_roundoff(dtype):
    torch = kb_device._torch
    return {torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8, torch.float64: 2.0 ** -53}.get(dtype, 2.0 ** -24)


def _fp64_leaf_errors(oc, rc, dc):
    """(candidate's max |out - fp64|, reference's max |ref - fp64|, max |fp64|) over one chunk;
    equal values (infinities included) count as no error, NaN in the output as infinite."""
    torch = kb_device._torch
    c, r, d = oc.to(torch.float64), rc.to(torch.float64), dc.to(torch.float64)
    dc_fin = torch.where(torch.isfinite(d), d.abs(), torch.zeros_like(d))
    ec = torch.where(c == d, torch.zeros_like(d), (c - d).abs())
    ec = torch.where(torch.isnan(ec), torch.full_like(ec, float("inf")), ec)
    er = torch.where(r == d, torch.zeros_like(d), (r - d).abs()).nan_to_num(0.0, 0.0, 0.0)
    if not c.numel():
        return 0.0, 0.0, 0.0
    return float(ec.max().item()), float(er.max().item()), float(dc_fin.max().item())


def compare_outputs(out, ref, opts, ref64=None):
    """Compares the candidate's output tree with the reference's (and, when given, with an
    fp64 run of the reference). Returns a dict with passed, passed_by (tolerance or fp64),
    elements, max_abs_error, max_rel_error, mismatches, nan_count, inf_count, rel_l2_error,
    fp64 (the errors of the candidate and of the fp32 reference against the fp64 result),
    problem (a sentence when something is wrong) and bad_type (a leaf that is not a plain
    torch.Tensor)."""
    torch = kb_device._torch
    res = {"passed": False, "passed_by": "", "elements": 0, "max_abs_error": 0.0, "max_rel_error": 0.0,
           "mismatches": 0, "nan_count": 0, "inf_count": 0, "rel_l2_error": 0.0, "problem": "", "bad_type": "",
           "small_outputs": False,
           "fp64": {"available": False, "passed": False, "candidate_max_abs_error": 0.0,
                    "reference_max_abs_error": 0.0, "ratio": 0.0, "reason": "no fp64 reference"}}
    ref_leaves = tree_leaves(ref)
    out_leaves = tree_leaves(out)
    # The type check comes before anything touches the outputs: a tensor subclass could
    # compute on first read.
    for path, o in out_leaves:
        if is_tensor(o) and type(o) is not _TensorType:
            res["bad_type"] = "output%s is a %s.%s, not a plain torch.Tensor" % (path, type(o).__module__,
                                                                                 type(o).__name__)
            res["problem"] = res["bad_type"]
            return res
    if len(ref_leaves) != len(out_leaves):
        res["problem"] = "the candidate returns %d output(s), the reference %d" % (len(out_leaves), len(ref_leaves))
        return res
    f64_leaves = tree_leaves(ref64) if ref64 is not None else None
    f64 = res["fp64"]
    if f64_leaves is not None and len(f64_leaves) == len(ref_leaves):
        f64.update(available=True, passed=True, reason="")
    elif f64_leaves is not None:
        f64["reason"] = "the fp64 reference has another structure"
        f64_leaves = None
    factor = float(opts["fp64_factor"])
    sq_diff = 0.0
    sq_ref = 0.0
    for i, ((path, r), (_p2, o)) in enumerate(zip(ref_leaves, out_leaves)):
        name = "output" + path
        if not is_tensor(r):
            if is_tensor(o) or not _scalar_close(o, r, opts):
                res["problem"] = "%s is %r, expected %r" % (name, o if not is_tensor(o) else describe(o), r)
                return res
            continue
        if not is_tensor(o):
            res["problem"] = "%s is a %s, expected a tensor (%s)" % (name, type(o).__name__, describe(r))
            return res
        if o.device != r.device:
            res["problem"] = "%s is on %s, expected %s" % (name, o.device, r.device)
            return res
        if tuple(o.shape) != tuple(r.shape):
            res["problem"] = "%s has shape (%s), expected (%s)" % (name, ", ".join(map(str, o.shape)),
                                                                  ", ".join(map(str, r.shape)))
            return res
        if o.dtype != r.dtype:
            res["problem"] = "%s has dtype %s, expected %s" % (name, str(o.dtype).replace("torch.", ""),
                                                              str(r.dtype).replace("torch.", ""))
            return res
        tol = default_tolerance(r.dtype, opts["tolerance"])
        atol = tol if opts["atol"] is None else float(opts["atol"])
        rtol = tol if opts["rtol"] is None else float(opts["rtol"])
        of = o.detach().reshape(-1)
        rf = r.detach().reshape(-1)
        df = None
        if f64_leaves is not None:
            d = f64_leaves[i][1]
            if is_tensor(d) and tuple(d.shape) == tuple(r.shape) and r.is_floating_point():
                df = d.detach().reshape(-1).to(r.device)
            elif r.is_floating_point():
                f64.update(available=False, passed=False, reason="the fp64 reference's %s does not match" % name)
                f64_leaves = None
        if of.is_complex():
            of, rf = torch.view_as_real(of).reshape(-1), torch.view_as_real(rf).reshape(-1)
        n = rf.numel()
        res["elements"] += n
        chunk = 1 << 26
        floating = rf.is_floating_point()
        leaf_c = leaf_r = leaf_mag = 0.0
        for s in range(0, n, chunk):
            oc, rc = of[s:s + chunk], rf[s:s + chunk]
            if floating:
                if df is not None:
                    ec, er, mag = _fp64_leaf_errors(oc, rc, df[s:s + chunk])
                    leaf_c, leaf_r, leaf_mag = max(leaf_c, ec), max(leaf_r, er), max(leaf_mag, mag)
                wide = torch.float64 if rc.dtype == torch.float64 else torch.float32
                oc, rc = oc.to(wide), rc.to(wide)
                res["nan_count"] += int(torch.isnan(oc).sum().item())
                res["inf_count"] += int(torch.isinf(oc).sum().item())
                close = torch.isclose(oc, rc, rtol=rtol, atol=atol, equal_nan=False)
                res["mismatches"] += int((~close).sum().item())
                diff = (oc - rc).abs()
                finite = torch.isfinite(diff)
                diff = torch.where(finite, diff, torch.zeros_like(diff))
                if diff.numel():
                    res["max_abs_error"] = max(res["max_abs_error"], float(diff.max().item()))
                    res["max_rel_error"] = max(res["max_rel_error"],
                                               float((diff / (rc.abs() + atol)).nan_to_num(0.0).max().item()))
                if not bool(finite.all()):
                    sq_diff = float("inf")
                else:
                    sq_diff += float((diff.double() ** 2).sum().item())
                sq_ref += float((rc.double().nan_to_num(0.0, 0.0, 0.0) ** 2).sum().item())
            else:
                oi, ri = oc.to(torch.int64), rc.to(torch.int64)
                diff = (oi - ri).abs()
                # integers and booleans: exact unless the options give a tolerance
                bad = diff.double() > (atol + rtol * ri.abs().double())
                res["mismatches"] += int(bad.sum().item())
                if diff.numel():
                    res["max_abs_error"] = max(res["max_abs_error"], float(diff.max().item()))
                sq_diff += float((diff.double() ** 2).sum().item())
                sq_ref += float((ri.double() ** 2).sum().item())
        if df is not None and f64["available"]:
            # The fp32 reference's own distance from fp64, floored at a few roundings of the
            # output (an exact reference, e.g. a ReLU, would otherwise allow nothing).
            allowed = max(leaf_r, 4.0 * _unit_roundoff(r.dtype) * leaf_mag)
            f64["candidate_max_abs_error"] = max(f64["candidate_max_abs_error"], leaf_c)
            f64["reference_max_abs_error"] = max(f64["reference_max_abs_error"], leaf_r)
            ratio = leaf_c / allowed if allowed > 0 else (0.0 if leaf_c == 0 else float("inf"))
            f64["ratio"] = max(f64["ratio"], ratio)
            if not leaf_c <= factor * allowed:
                f64["passed"] = False
    return _verdict(res, opts, f64, factor, sq_diff, sq_ref)


def _verdict(res, opts, f64, factor, sq_diff, sq_ref):
    """compare_outputs' verdict from what it gathered: the relative L2 error, passed and passed_by
    by the tolerance and the policy's fp64 rule, and the problem sentence. Returns res."""
    if sq_ref > 0:
        res["rel_l2_error"] = math.sqrt(sq_diff) / math.sqrt(sq_ref) if math.isfinite(sq_diff) else float("inf")
    elif sq_diff > 0:
        res["rel_l2_error"] = float("inf")
    tol_pass = res["mismatches"] == 0 and res["nan_count"] == 0
    if tol_pass and sq_ref > 0 and res["rel_l2_error"] > opts["rel_l2_limit"]:
        tol_pass = False
        res["small_outputs"] = True
        res["problem"] = ("passes the absolute tolerance only because the outputs are small: relative L2 error %.3g "
                          "> %.3g" % (res["rel_l2_error"], opts["rel_l2_limit"]))
    fp64_pass = f64["available"] and f64["passed"] and res["nan_count"] == 0
    rule = TOLERANCE_POLICIES[opts["tolerance"]]["fp64_rule"] if opts["fp64_reference"] else "off"
    if rule == "or":
        res["passed"] = tol_pass or fp64_pass
    elif rule == "and":
        res["passed"] = tol_pass and (fp64_pass or not f64["available"])
    else:
        res["passed"] = tol_pass
    if res["passed"]:
        res["passed_by"] = "tolerance" if tol_pass else "fp64"
        res["problem"] = ""
    elif f64["available"] and tol_pass and rule == "and":
        res["problem"] = ("within the tolerance but %.3g from the fp64 result, %.1f times the fp32 reference's %.3g "
                          "(at most %g allowed)" % (f64["candidate_max_abs_error"], f64["ratio"],
                                                    f64["reference_max_abs_error"], factor))
    return res


def fp64_note(cmp):
    """'; error against fp64 X (the fp32 reference's: Y)' for messages."""
    f = cmp.get("fp64") or {}
    if not f.get("available"):
        return ""
    return "; error against fp64 %.3g (the fp32 reference's: %.3g)" % (f["candidate_max_abs_error"],
                                                                    f["reference_max_abs_error"])


def _scalar_close(o, r, opts):
    if isinstance(r, bool) or not isinstance(r, (int, float)):
        return o == r
    if not isinstance(o, (int, float)) or isinstance(o, bool):
        return False
    tol = TOLERANCE_POLICIES[opts["tolerance"]]["fp32"]
    tol = tol if opts["atol"] is None else float(opts["atol"])
    return math.isclose(o, r, rel_tol=tol if opts["rtol"] is None else float(opts["rtol"]), abs_tol=tol)


def input_digest(inputs):
    """Per input: dtype, shape and float64 sum and sum of squares, so that the harness can
    check that the candidate's process drew the very inputs the reference ran on."""
    torch = kb_device._torch
    out = []
    for path, v in tree_leaves(inputs):
        if not is_tensor(v):
            out.append([path, repr(v)[:200]])
            continue
        t = v.detach().reshape(-1)
        if t.is_complex():
            t = torch.view_as_real(t).reshape(-1)
        s = q = 0.0
        for k in range(0, t.numel(), 1 << 26):
            c = t[k:k + (1 << 26)].to(torch.float64)
            s += float(c.sum().item())
            q += float((c * c).sum().item())
        out.append([path, str(v.dtype), list(v.shape), s, q])
    return out


def output_fingerprint(out):
    return json.dumps(_json_clean(input_digest(out)), sort_keys=True)
