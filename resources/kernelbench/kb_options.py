"""The options of an evaluate request: their defaults and their validation."""

from kb_protocol import RequestError, log
from kb_compare import TOLERANCE_POLICIES


DEFAULT_OPTIONS = {
    "trials": 5,
    "time": True,
    "warmup": 3,
    "reps": 100,
    "min_reps": 10,
    "rotate_buffers": 3,
    "seed": 42,
    "atol": None,
    "rtol": None,
    "baselines": ["eager", "compile"],
    "compile_baseline_timeout_s": 300.0,
    "rel_l2_limit": 1e-2,
    "inputs_on_device": True,
    "tolerance": "current",
    "fp64_reference": True,
    "fp64_factor": 16.0,
    "reuse_probes": 2,
}
_INT_OPTIONS = {"trials": 1, "warmup": 0, "reps": 1, "min_reps": 1, "rotate_buffers": 1, "seed": None,
                "reuse_probes": 0}


def parse_options(raw):
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise RequestError("options must be a JSON object")
    opts = dict(DEFAULT_OPTIONS)
    for k, v in raw.items():
        if k not in DEFAULT_OPTIONS:
            log("ignoring unknown option %r" % k)
            continue
        if k in _INT_OPTIONS:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or int(v) != v:
                raise RequestError("option %s must be an integer" % k)
            v = int(v)
            lo = _INT_OPTIONS[k]
            if lo is not None and v < lo:
                raise RequestError("option %s must be at least %d" % (k, lo))
        elif k == "tolerance":
            if v not in TOLERANCE_POLICIES:
                raise RequestError("option tolerance must be one of %s" % ", ".join(sorted(TOLERANCE_POLICIES)))
        elif k in ("time", "inputs_on_device", "fp64_reference"):
            if not isinstance(v, bool):
                raise RequestError("option %s must be true or false" % k)
        elif k in ("atol", "rtol"):
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0):
                raise RequestError("option %s must be a non-negative number or null" % k)
        elif k in ("compile_baseline_timeout_s", "rel_l2_limit", "fp64_factor"):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
                raise RequestError("option %s must be a positive number" % k)
            v = float(v)
        elif k == "baselines":
            if not isinstance(v, list) or any(b not in ("eager", "compile") for b in v):
                raise RequestError('option baselines must be a list of "eager" and "compile"')
        opts[k] = v
    return opts
