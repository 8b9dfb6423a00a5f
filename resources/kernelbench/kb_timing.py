"""Timing helpers of the KernelBench worker: statistics of timed calls, the device's measured
peaks (copy bandwidth and fp32 rate, cached per device) behind the physical floor, and the
time limit of the torch.compile baseline. The timing loop itself is Session.time_calls
(kb_session), the baselines are Evaluation's (kb_evaluation)."""

import contextlib
import json
import math
import os
import re
import signal
import tempfile

from kb_protocol import RequestError, _perf_counter, log


def median(xs):
    s = sorted(xs)
    n = len(s)
    if n == 0:
        return 0.0
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def percentile(xs, q):
    s = sorted(xs)
    if not s:
        return 0.0
    pos = (len(s) - 1) * q
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def summarize(ms, wall):
    med = median(ms)
    return {"median_ms": med, "min_ms": min(ms), "max_ms": max(ms), "mean_ms": sum(ms) / len(ms),
            "spread": (percentile(ms, 0.9) - percentile(ms, 0.1)) / med if med > 0 else 0.0,
            "reps": len(ms), "wall_median_ms": median(wall)}


def fmt_ms(x):
    if x is None:
        return "?"
    return ("%.4f" % x) if x < 0.1 else ("%.3f" % x)


def peaks_cache_file(info):
    explicit = os.environ.get("KF_CACHE_DIR")
    if explicit:
        d = os.path.join(os.path.dirname(os.path.normpath(explicit)), "devices")
    elif os.environ.get("XDG_CACHE_HOME"):
        d = os.path.join(os.environ["XDG_CACHE_HOME"], "kernel-foundry", "devices")
    elif os.environ.get("HOME"):
        d = os.path.join(os.environ["HOME"], ".cache", "kernel-foundry", "devices")
    else:
        d = os.path.join(tempfile.gettempdir(), "kernel-foundry-devices")
    ident = re.sub(r"[^A-Za-z0-9-]", "_", info.get("uuid", "unknown"))
    return os.path.join(d, "kb-" + ident + ".json")


def measure_peaks(dev):
    """Copy bandwidth (bytes read + written) and the fp32 matrix-product rate, with torch."""
    torch = dev.require()
    if dev.cpu:
        n = 64 << 20
        src = torch.ones(n // 4, dtype=torch.float32)
        dst = torch.empty_like(src)
        best = float("inf")
        for _ in range(7):
            t0 = _perf_counter()
            dst.copy_(src)
            best = min(best, _perf_counter() - t0)
        a = torch.rand(512, 512)
        t0 = _perf_counter()
        for _ in range(5):
            torch.mm(a, a)
        mm_s = (_perf_counter() - t0) / 5
        return {"bandwidth_gbps": 2.0 * n / best / 1e9, "fp32_gflops": 2.0 * 512 ** 3 / mm_s / 1e9,
                "method": "CPU testing mode: tensor copy of 64 MiB (read + write), best of 7; 512^3 torch.mm"}
    dev.synchronize()
    free_b, _ = torch.cuda.mem_get_info(dev.index)
    nbytes = min(1 << 30, free_b // 8) & ~((1 << 20) - 1)
    if nbytes < (16 << 20):
        raise RequestError("too little free device memory to measure peaks (%d bytes)" % free_b)
    src = torch.empty(nbytes // 4, dtype=torch.float32, device=dev.torch_device()).fill_(1.5)
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    times = []
    for _ in range(10):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        dev.synchronize()
        s.record()
        dst.copy_(src)
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    copy_ms = median(times)
    del src, dst
    # fp32 FMA rate through an 8192^3 fp32 matrix product with TF32 off (restored after).
    flags = (torch.backends.cuda.matmul.allow_tf32, torch.get_float32_matmul_precision())
    n = 8192
    try:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
        a = torch.rand(n, n, device=dev.torch_device())
        b = torch.rand(n, n, device=dev.torch_device())
        torch.mm(a, b)
        mm = []
        for _ in range(3):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            dev.synchronize()
            s.record()
            torch.mm(a, b)
            e.record()
            e.synchronize()
            mm.append(s.elapsed_time(e))
        mm_ms = median(mm)
        del a, b
    finally:
        torch.backends.cuda.matmul.allow_tf32 = flags[0]
        torch.set_float32_matmul_precision(flags[1])
    torch.cuda.empty_cache()
    return {"bandwidth_gbps": 2.0 * nbytes / (copy_ms * 1e-3) / 1e9 if copy_ms > 0 else 0.0,
            "fp32_gflops": 2.0 * n ** 3 / (mm_ms * 1e-3) / 1e9 if mm_ms > 0 else 0.0,
            "method": "copy: torch Tensor.copy_ between two %d MiB buffers, median of 10 after 3 warm-ups, CUDA events, "
                      "bytes read + written; fp32: torch.mm %d^3 with TF32 off, median of 3, 2 flops per FMA"
                      % (nbytes >> 20, n)}


def peaks_for(dev, remeasure=False):
    info = dev.info()
    path = peaks_cache_file(info)
    if not remeasure:
        try:
            with open(path) as f:
                cached = json.load(f)
            if isinstance(cached, dict) and float(cached.get("bandwidth_gbps", 0)) > 0:
                return cached
        except Exception:
            pass
    p = measure_peaks(dev)
    p["device"] = info["name"]
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = "%s.tmp%d" % (path, os.getpid())
        with open(tmp, "w") as f:
            json.dump(p, f, indent=2)
            f.write("\n")
        os.replace(tmp, path)
    except Exception as e:
        log("cannot write the peaks cache %s: %s" % (path, e))
    return p


class _CompileTimeout(Exception):
    pass


@contextlib.contextmanager
def alarm(seconds):
    def handler(signum, frame):
        raise _CompileTimeout("torch.compile took longer than %g s" % seconds)

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
