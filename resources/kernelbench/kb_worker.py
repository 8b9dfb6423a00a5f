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

import argparse
import contextlib
import gc
import importlib.metadata
import importlib.util
import json
import math
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import threading
import _thread
import time
import traceback

PROTOCOL_VERSION = 1
BACKEND = "kernelbench"
LOG_TAIL_BYTES = 8192

_perf_counter = time.perf_counter  # captured before any candidate can replace it

# --------------------------------------------------------------------------------------
# Protocol channel
# --------------------------------------------------------------------------------------

_proto_out = None
_proto_in = None


def _setup_private_streams():
    """Keeps stdin/stdout for the protocol only.

    fd 1 is duplicated for the replies, then fd 2 is copied onto fd 1, so anything a
    candidate, nvcc or ninja prints goes to stderr. stdin is duplicated and fd 0 points at
    /dev/null, so no child process can read the requests.
    """
    global _proto_out, _proto_in
    sys.stdout.flush()
    out_fd = os.dup(1)
    os.dup2(2, 1)
    _proto_out = os.fdopen(out_fd, "w", encoding="utf-8", buffering=1)
    sys.stdout = sys.stderr
    in_fd = os.dup(0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    _proto_in = os.fdopen(in_fd, "rb", buffering=0)


def _json_clean(v):
    """JSON has no NaN or infinity: those become null."""
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {str(k): _json_clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_clean(x) for x in v]
    if isinstance(v, (str, int, bool)) or v is None:
        return v
    try:  # numpy / torch scalars
        return _json_clean(v.item())
    except Exception:
        return str(v)


def send(obj):
    line = json.dumps(_json_clean(obj), allow_nan=False, ensure_ascii=False)
    _proto_out.write(line + "\n")
    _proto_out.flush()


def log(msg):
    try:
        sys.stderr.write("kb_worker: " + msg + "\n")
        sys.stderr.flush()
    except Exception:
        pass


def tail(text, limit=LOG_TAIL_BYTES):
    if text is None:
        return ""
    b = text.encode("utf-8", "replace")
    if len(b) <= limit:
        return text
    return "...\n" + b[-limit:].decode("utf-8", "replace")


def one_line(text, limit=400):
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


# --------------------------------------------------------------------------------------
# PyTorch, loaded lazily
# --------------------------------------------------------------------------------------

_torch = None
_torch_error = None


def torch_or_none():
    global _torch, _torch_error
    if _torch is None and _torch_error is None:
        try:
            import torch  # noqa: F401

            _torch = torch
        except ModuleNotFoundError as e:
            _torch_error = "PyTorch is not installed for %s" % sys.executable
            if e.name not in (None, "torch"):  # torch is there but one of its dependencies is not
                _torch_error += " (importing torch failed: %s)" % one_line(e, 200)
        except Exception as e:  # a broken install
            _torch_error = "PyTorch is not installed for %s (importing torch failed: %s)" % (
                sys.executable, one_line(e, 200))
    return _torch


def package_version(name):
    try:
        return importlib.metadata.version(name)
    except Exception:
        return None


class RequestError(Exception):
    """A request the worker cannot serve: answered with ok false."""


class Device:
    """The device candidates run on: a CUDA ordinal, or the CPU in the testing mode."""

    def __init__(self, spec):
        self.spec = spec
        self.cpu = spec == "cpu"
        self.index = 0 if self.cpu else int(spec)
        self._info = None
        self._l2 = None

    def torch_device(self):
        torch = _torch
        return torch.device("cpu") if self.cpu else torch.device("cuda", self.index)

    def available(self):
        torch = torch_or_none()
        if torch is None:
            return False
        if self.cpu:
            return True
        try:
            return torch.cuda.is_available() and self.index < torch.cuda.device_count()
        except Exception:
            return False

    def require(self):
        torch = torch_or_none()
        if torch is None:
            raise RequestError(_torch_error)
        if not self.available():
            raise RequestError("no CUDA device %s visible to PyTorch %s (torch.cuda.is_available() is %s)"
                               % (self.spec, torch.__version__, torch.cuda.is_available()))
        if not self.cpu:
            torch.cuda.set_device(self.index)
        elif torch.get_num_threads() != 1:
            # Testing mode: one intra-op thread, so that times on a shared machine are not
            # dominated by waking a thread pool.
            torch.set_num_threads(1)
        return torch

    def info(self):
        if self._info is not None:
            return self._info
        torch = self.require()
        if self.cpu:
            mem = 0
            try:
                mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
            except Exception:
                pass
            name = platform.processor() or platform.machine() or "cpu"
            self._info = {"backend": BACKEND, "name": "CPU (%s, testing mode)" % name, "uuid": "cpu-" + platform.node(),
                          "arch": platform.machine(), "sm_count": os.cpu_count() or 0, "cc_major": 0, "cc_minor": 0,
                          "memory_bytes": mem, "l2_bytes": 32 << 20, "driver": "torch " + torch.__version__}
            return self._info
        p = torch.cuda.get_device_properties(self.index)
        uuid = ""
        try:
            uuid = re.sub(r"[^0-9a-fA-F]", "", str(p.uuid).replace("GPU-", "")).lower()
        except Exception:
            pass
        if not uuid:
            uuid = "%s-%d" % (re.sub(r"\W", "_", p.name), self.index)
        l2 = int(getattr(p, "L2_cache_size", 0) or 0)
        self._info = {"backend": BACKEND, "name": p.name, "uuid": uuid, "arch": "sm_%d%d" % (p.major, p.minor),
                      "sm_count": int(p.multi_processor_count), "cc_major": int(p.major), "cc_minor": int(p.minor),
                      "memory_bytes": int(p.total_memory), "l2_bytes": l2, "driver": driver_string(torch)}
        return self._info

    def l2_bytes(self):
        l2 = self.info().get("l2_bytes") or 0
        return l2 if l2 > 0 else 64 << 20

    def synchronize(self):
        if not self.cpu:
            _torch.cuda.synchronize(self.index)


def driver_string(torch):
    drv = ""
    try:
        with open("/proc/driver/nvidia/version") as f:
            line = f.readline()
        pos = line.find("Kernel Module")
        if pos >= 0:
            for w in line[pos + 13:].split():
                if w[:1].isdigit() and "." in w and re.fullmatch(r"[0-9.]+", w):
                    drv = w
                    break
    except Exception:
        pass
    cuda = ""
    try:
        import ctypes

        lib = ctypes.CDLL("libcuda.so.1")
        v = ctypes.c_int(0)
        if lib.cuDriverGetVersion(ctypes.byref(v)) == 0 and v.value > 0:
            cuda = "CUDA %d.%d" % (v.value // 1000, (v.value % 1000) // 10)
    except Exception:
        pass
    if not drv:
        return cuda or ("CUDA runtime " + str(torch.version.cuda))
    return drv + (" (" + cuda + ")" if cuda else "")


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


# --------------------------------------------------------------------------------------
# Small numeric helpers
# --------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------
# Loading problems and candidates
# --------------------------------------------------------------------------------------

_module_counter = [0]


def load_module_from(path, prefix):
    """Imports a file under a fresh module name (never reused, so two versions of one file
    never share a module)."""
    _module_counter[0] += 1
    name = "%s_%d_%s" % (prefix, _module_counter[0], re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0]))
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError("cannot import %s" % path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        # Compiled from the source every time, never from a cached .pyc: a candidate rewritten
        # within the same second at the same size (a tuned constant) would otherwise run stale.
        with open(path, "rb") as f:
            code = compile(f.read(), path, "exec", dont_inherit=True)
        exec(code, mod.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return mod


@contextlib.contextmanager
def captured_fds(box):
    """Sends fds 1 and 2 to a temporary file (nvcc, ninja and candidate prints), puts the
    text in box["text"] and copies its tail to the real stderr afterwards."""
    for s in (sys.stdout, sys.stderr):
        try:
            s.flush()
        except Exception:
            pass
    tmp = tempfile.TemporaryFile()
    saved1, saved2 = os.dup(1), os.dup(2)
    os.dup2(tmp.fileno(), 1)
    os.dup2(tmp.fileno(), 2)
    try:
        yield box
    finally:
        for s in (sys.stdout, sys.stderr):
            try:
                s.flush()
            except Exception:
                pass
        os.dup2(saved1, 1)
        os.dup2(saved2, 2)
        os.close(saved1)
        os.close(saved2)
        try:
            tmp.seek(0)
            data = tmp.read()
        finally:
            tmp.close()
        box["text"] = data.decode("utf-8", "replace")
        if data:
            try:
                os.write(2, data[-65536:])
            except OSError:
                pass


def so_snapshot(build_dir):
    snap = {}
    if not build_dir or not os.path.isdir(build_dir):
        return snap
    for root, _dirs, files in os.walk(build_dir):
        for f in files:
            if f.endswith(".so"):
                p = os.path.join(root, f)
                try:
                    snap[p] = os.stat(p).st_mtime_ns
                except OSError:
                    pass
    return snap


def compiler_of(source):
    if re.search(r"\bload_inline\b|\bcpp_extension\b", source):
        return "torch.utils.cpp_extension"
    if re.search(r"^\s*(import triton|from triton\b)", source, re.M) or "@triton.jit" in source:
        return "triton"
    return "none"


def exception_chain(exc):
    seen = []
    e = exc
    while e is not None and e not in seen and len(seen) < 20:
        seen.append(e)
        e = e.__cause__ or e.__context__
    return seen


def is_compile_failure(exc):
    for e in exception_chain(exc):
        if isinstance(e, subprocess.CalledProcessError):
            return True
        name = type(e).__name__
        mod = type(e).__module__ or ""
        if "Error building extension" in str(e):
            return True
        if name == "CompilationError" and mod.startswith("triton"):
            return True
    return False


def format_exception_tail(exc, limit=LOG_TAIL_BYTES):
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return tail(text, limit)


_NVCC_DIAG = re.compile(r"^(?P<file>[^\s(][^()]*?)\((?P<line>\d+)\): (?P<sev>catastrophic error|error|warning|remark)"
                        r"(?: #[\w-]+)?: (?P<msg>.*)$")
_GCC_DIAG = re.compile(r"^(?P<file>[^\s:][^:]*?):(?P<line>\d+):(?P<col>\d+): (?P<sev>fatal error|error|warning|note): "
                       r"(?P<msg>.*)$")


def parse_diagnostics(log_text, candidate_path=None):
    """Compiler messages of a load_inline build. Lines of the generated main.cpp / cuda.cu are
    mapped back to the candidate's file when the line's text occurs there exactly once."""
    cand_lines = []
    if candidate_path:
        try:
            with open(candidate_path, encoding="utf-8", errors="replace") as f:
                cand_lines = [ln.strip() for ln in f.read().splitlines()]
        except Exception:
            pass
    out = []
    seen = set()
    for raw in (log_text or "").splitlines():
        line = raw.strip()
        line = re.sub(r"^FAILED: \S+\s*", "", line)
        m = _NVCC_DIAG.match(line)
        tool = "nvcc"
        col = 0
        if not m:
            m = _GCC_DIAG.match(line)
            if not m:
                continue
            col = int(m.group("col"))
            tool = "nvcc" if m.group("file").endswith((".cu", ".cuh")) else "g++"
        sev = m.group("sev")
        sev = "error" if "error" in sev else sev
        file, lineno = m.group("file"), int(m.group("line"))
        shown_file, shown_line = os.path.basename(file), lineno
        try:
            with open(file, encoding="utf-8", errors="replace") as f:
                gen = f.read().splitlines()
            text = gen[lineno - 1].strip() if 0 < lineno <= len(gen) else ""
            if text and cand_lines.count(text) == 1:
                shown_file, shown_line = os.path.basename(candidate_path), cand_lines.index(text) + 1
        except Exception:
            pass
        key = (shown_file, shown_line, col, sev, m.group("msg"))
        if key in seen:
            continue
        seen.add(key)
        out.append({"file": shown_file, "line": shown_line, "column": col, "severity": sev,
                    "message": m.group("msg").strip(), "tool": tool})
        if len(out) >= 50:
            break
    return out


# Undefined dynamic symbols a candidate's extension must not use: vendor libraries that
# would do the work, loading code at run time, threads and processes.
_FORBIDDEN_SYMBOL = re.compile(r"^(cublas|cudnn|cufft|cusparse|cusolver|nccl)\w*$|"
                               r"^(fork|vfork|execv\w*|execl\w*|system|popen|posix_spawn\w*)$|^_ZNSt6thread")
# Also used by a statically linked CUDA runtime, so only screened where the runtime is the
# shared libcudart (or absent).
_LOADER_SYMBOL = re.compile(r"^(dlopen|dlmopen|dlsym|dlvsym|pthread_create|cuModuleLoad\w*|cuLibraryLoad\w*)$")


def extension_files(module, built):
    """The shared objects a candidate's import loaded or built: extension modules among its
    globals, and .so files that appeared under the build folder."""
    files = set(built)
    for v in list(vars(module).values()) if module is not None else []:
        f = getattr(v, "__file__", None) if type(v).__name__ == "module" else None
        if isinstance(f, str) and f.endswith(".so") and os.path.isfile(f):
            files.add(os.path.abspath(f))
    return sorted(files)


def screen_symbols(files):
    """(outcome, detail) of the forbidden-symbol screen over the files' undefined symbols."""
    if not files:
        return "skipped", "no compiled extension to screen"
    bad = {}
    count = 0
    for path in files:
        try:
            p = subprocess.run(["nm", "-D", "--undefined-only", path], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.SubprocessError) as e:
            return "skipped", "cannot run nm: %s" % one_line(e, 200)
        if p.returncode != 0:
            return "skipped", "nm failed on %s: %s" % (os.path.basename(path), one_line(p.stderr, 200))
        syms = [ln.split()[-1].split("@", 1)[0] for ln in p.stdout.splitlines() if ln.split()]
        count += len(syms)
        static_cudart = False
        if not any(x.startswith(("cuda", "__cuda")) for x in syms):
            try:
                full = subprocess.run(["nm", path], capture_output=True, text=True, timeout=60).stdout
                static_cudart = "cudart" in full
            except (OSError, subprocess.SubprocessError):
                static_cudart = True
        for sym in syms:
            if _FORBIDDEN_SYMBOL.search(sym) or (not static_cudart and _LOADER_SYMBOL.search(sym)):
                bad.setdefault(os.path.basename(path), []).append(sym)
    if bad:
        return "fail", "; ".join("%s uses %s" % (f, ", ".join(sorted(set(s))[:6])) for f, s in bad.items())
    return "pass", "%d undefined symbols of %d extension(s) screened" % (count, len(files))


def reset_extension_versions(torch):
    """torch renames a load_inline extension name_v1, name_v2... when one process builds the
    same name from other sources; every candidate here starts from version 0 in its own
    build folder, so a build made by --compile is found again."""
    try:
        from torch.utils import cpp_extension

        entries = getattr(cpp_extension.JIT_EXTENSION_VERSIONER, "entries", None)
        if isinstance(entries, dict):
            entries.clear()
    except Exception:
        pass


def default_extensions_dir():
    try:
        from torch.utils.cpp_extension import get_default_build_root

        return get_default_build_root()
    except Exception:
        return None


def set_build_dir(build_dir):
    if build_dir:
        os.makedirs(build_dir, exist_ok=True)
        os.environ["TORCH_EXTENSIONS_DIR"] = build_dir


def import_candidate(path, build_dir, watch=None):
    """Imports a candidate, its module-level load_inline building into build_dir.

    Returns (module, compile_info, failure) where failure is None or a dict with status,
    message and log."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            source = f.read()
    except OSError as e:
        return None, {"ok": False, "cached": False, "seconds": 0.0, "compiler": "none", "log": "",
                      "diagnostics": []}, {"status": "load_error", "message": "cannot read the candidate: %s" % e,
                                           "log": ""}
    compiler = compiler_of(source)
    set_build_dir(build_dir)
    torch = torch_or_none()
    if torch is not None:
        reset_extension_versions(torch)
    watched_dir = build_dir or os.environ.get("TORCH_EXTENSIONS_DIR") or default_extensions_dir()
    before = so_snapshot(watched_dir)
    box = {}
    module, exc = None, None
    t0 = _perf_counter()
    try:
        with captured_fds(box):
            if watch is not None:
                with watch:
                    module = load_module_from(path, "kb_candidate")
            else:
                module = load_module_from(path, "kb_candidate")
    except BaseException as e:  # SystemExit and KeyboardInterrupt from a candidate too
        exc = e
    seconds = _perf_counter() - t0
    after = so_snapshot(watched_dir)
    built_files = [p for p, m in after.items() if before.get(p) != m]
    built = bool(built_files)
    text = box.get("text", "")
    info = {"ok": exc is None, "cached": not built, "seconds": seconds, "compiler": compiler, "log": tail(text),
            "diagnostics": []}
    if exc is None:
        info["diagnostics"] = parse_diagnostics(text, path)
        info["_extensions"] = extension_files(module, built_files)
        return module, info, None
    if is_compile_failure(exc):
        info["cached"] = False
        log_text = (text + "\n" + str(exc)).strip()
        info["log"] = tail(log_text)
        info["diagnostics"] = parse_diagnostics(log_text, path)
        errors = [d for d in info["diagnostics"] if d["severity"] == "error"]
        first = ("%s:%d: %s" % (errors[0]["file"], errors[0]["line"], errors[0]["message"])) if errors else one_line(exc, 200)
        return None, info, {"status": "compile_error", "message": "the candidate does not compile: " + one_line(first),
                            "log": info["log"]}
    info["ok"] = True  # whatever was built, built; the import failed for another reason
    tb = format_exception_tail(exc)
    info["log"] = tail((text + "\n" + tb).strip())
    return None, info, {"status": "load_error",
                        "message": "importing the candidate raised %s: %s" % (type(exc).__name__, one_line(exc, 300)),
                        "log": info["log"]}


# --------------------------------------------------------------------------------------
# Guards against candidates that change the harness around them
# --------------------------------------------------------------------------------------


def _static_lookup(cls, name):
    """(owner class, raw attribute) along the MRO, without triggering descriptors, so that
    identity comparisons are stable."""
    for k in cls.__mro__:
        if name in k.__dict__:
            return k, k.__dict__[name]
    return None, None


class Originals:
    """Objects a candidate must leave alone (timers, synchronisation, comparisons, input
    generators, threads, the problem's Model). Taken before any candidate is imported;
    any change is reported and undone."""

    def __init__(self):
        self.entries = []  # (label, owner, attr, value, is_class)

    def add_module_attr(self, label, module, attr):
        if module is not None and hasattr(module, attr):
            self.entries.append((label, module, attr, getattr(module, attr), False))

    def add_class_attr(self, label, cls, attr):
        if cls is None:
            return
        owner, value = _static_lookup(cls, attr)
        if owner is not None:
            self.entries.append((label, cls, attr, (owner, value), True))

    def changed(self):
        out = []
        for label, holder, attr, value, is_class in self.entries:
            if is_class:
                owner, cur = _static_lookup(holder, attr)
                if (owner, cur) != value or cur is not value[1]:
                    out.append(label)
            else:
                if getattr(holder, attr, None) is not value:
                    out.append(label)
        return out

    def restore(self):
        for label, holder, attr, value, is_class in self.entries:
            try:
                if is_class:
                    owner, orig = value
                    cur_owner, cur = _static_lookup(holder, attr)
                    if cur_owner is owner and cur is orig:
                        continue
                    for k in holder.__mro__:
                        if k is owner:
                            break
                        if attr in k.__dict__:
                            delattr(k, attr)
                    if owner.__dict__.get(attr) is not orig:
                        setattr(owner, attr, orig)
                elif getattr(holder, attr, None) is not value:
                    setattr(holder, attr, value)
            except Exception as e:
                log("cannot restore %s: %s" % (label, e))


def harness_originals(torch):
    o = Originals()
    cuda = torch.cuda
    o.add_module_attr("torch.Tensor", torch, "Tensor")
    o.add_module_attr("torch.cuda.Event", cuda, "Event")
    for m in ("record", "elapsed_time", "synchronize", "query", "wait"):
        o.add_class_attr("torch.cuda.Event.%s" % m, cuda.Event, m)
    for f in ("synchronize", "current_stream", "default_stream", "set_stream", "stream", "manual_seed",
              "manual_seed_all", "empty_cache", "mem_get_info"):
        o.add_module_attr("torch.cuda.%s" % f, cuda, f)
    for f in ("allclose", "isclose", "equal", "manual_seed", "rand", "randn", "randint", "rand_like", "randn_like",
              "randperm", "empty", "zeros", "ones", "full", "tensor", "isnan", "isfinite", "where", "abs", "max",
              "set_default_dtype", "get_default_dtype", "set_float32_matmul_precision", "compile"):
        o.add_module_attr("torch.%s" % f, torch, f)
    for m in ("__eq__", "__ne__", "__sub__", "__getitem__", "allclose", "isclose", "equal", "abs", "max", "sum",
              "clone", "copy_", "to", "cpu", "cuda", "float", "double", "item", "isnan", "isinf", "numel", "reshape",
              "view", "detach", "data_ptr", "__torch_function__", "__torch_dispatch__"):
        o.add_class_attr("torch.Tensor.%s" % m, torch.Tensor, m)
    o.add_class_attr("torch.nn.Module.__call__", torch.nn.Module, "__call__")
    o.add_class_attr("torch.nn.Module._call_impl", torch.nn.Module, "_call_impl")
    o.add_class_attr("torch.nn.Module.to", torch.nn.Module, "to")
    o.add_class_attr("threading.Thread.start", threading.Thread, "start")
    o.add_module_attr("threading.active_count", threading, "active_count")
    o.add_module_attr("_thread.start_new_thread", _thread, "start_new_thread")
    o.add_module_attr("time.perf_counter", time, "perf_counter")
    o.add_module_attr("time.time", time, "time")
    try:
        import torch.profiler as tp

        o.add_module_attr("torch.profiler.profile", tp, "profile")
    except Exception:
        pass
    try:
        import torch.utils._python_dispatch as pd

        o.add_module_attr("TorchDispatchMode", pd, "TorchDispatchMode")
    except Exception:
        pass
    return o


_PRECISION_FLAGS = [
    ("torch.backends.cuda.matmul.allow_tf32", "backends.cuda.matmul", "allow_tf32"),
    ("torch.backends.cudnn.allow_tf32", "backends.cudnn", "allow_tf32"),
    ("torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction", "backends.cuda.matmul",
     "allow_fp16_reduced_precision_reduction"),
    ("torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction", "backends.cuda.matmul",
     "allow_bf16_reduced_precision_reduction"),
    ("torch.backends.fp32_precision", "backends", "fp32_precision"),
    ("torch.backends.cuda.matmul.fp32_precision", "backends.cuda.matmul", "fp32_precision"),
    ("torch.backends.cudnn.fp32_precision", "backends.cudnn", "fp32_precision"),
    ("torch.backends.cudnn.conv.fp32_precision", "backends.cudnn.conv", "fp32_precision"),
]


def _resolve(torch, dotted):
    obj = torch
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def precision_state(torch):
    """Numeric-precision settings a candidate could lower for the reference too."""
    import warnings

    state = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for label, holder, attr in _PRECISION_FLAGS:
            try:
                state[label] = getattr(_resolve(torch, holder), attr)
            except Exception:
                pass
        try:
            state["torch.get_float32_matmul_precision()"] = torch.get_float32_matmul_precision()
        except Exception:
            pass
        state["torch.get_default_dtype()"] = str(torch.get_default_dtype())
    return state


def restore_precision(torch, saved):
    import warnings

    now = precision_state(torch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if now.get("torch.get_default_dtype()") != saved.get("torch.get_default_dtype()"):
            torch.set_default_dtype(getattr(torch, saved["torch.get_default_dtype()"].replace("torch.", "")))
        if now.get("torch.get_float32_matmul_precision()") != saved.get("torch.get_float32_matmul_precision()"):
            try:
                torch.set_float32_matmul_precision(saved["torch.get_float32_matmul_precision()"])
            except Exception:
                pass
        for label, holder, attr in _PRECISION_FLAGS:
            if label in saved and precision_state(torch).get(label) != saved[label]:
                try:
                    setattr(_resolve(torch, holder), attr, saved[label])
                except Exception:
                    pass


class ThreadWatch:
    """Records threads started (threading.Thread.start, _thread.start_new_thread) while
    active, and the live thread count before and after."""

    def __init__(self):
        self.started = []
        self.internal = []
        self.before = 0
        self.after = 0
        self.max_growth = 0

    def __enter__(self):
        self.before = threading.active_count()
        watch = self
        self._orig_start = threading.Thread.__dict__.get("start")
        self._orig_new = _thread.start_new_thread
        orig_start, orig_new = self._orig_start, self._orig_new

        def start(th, *a, **k):
            watch.note(getattr(th, "name", "thread"))
            return orig_start(th, *a, **k)

        def start_new_thread(fn, *a, **k):
            watch.note(getattr(fn, "__name__", "function"))
            return orig_new(fn, *a, **k)

        threading.Thread.start = start
        _thread.start_new_thread = start_new_thread
        return self

    # Compilers that PyTorch or Triton run on a first call may use thread pools of their own.
    _INTERNAL = ("triton", "torch._inductor", "torch._dynamo", "torch.utils.cpp_extension")
    _PLUMBING = ("threading", "_thread", "concurrent.futures", __name__)

    def note(self, what):
        """Records a thread start unless the first caller outside the threading machinery is
        PyTorch's or Triton's compiler."""
        f = sys._getframe(2)
        while f is not None and (f.f_globals.get("__name__") or "").startswith(self._PLUMBING):
            f = f.f_back
        mod = (f.f_globals.get("__name__") or "") if f is not None else ""
        if mod.startswith(self._INTERNAL):
            self.internal.append("%s (from %s)" % (what, mod))
        else:
            self.started.append("%s (from %s)" % (what, mod or "?"))

    def __exit__(self, *exc):
        threading.Thread.start = self._orig_start
        _thread.start_new_thread = self._orig_new
        self.after = threading.active_count()
        self.max_growth = max(self.max_growth, self.after - self.before)
        return False


# Aten ops that do not compute values: allocation and constant fills, views and metadata,
# copies and dtype/device conversions. Any other aten op in ModelNew.forward is the
# framework doing the work (docs/kernelbench-worker.md).
GLUE_OPS = frozenset("""
empty empty_like empty_strided empty_permuted new_empty new_empty_strided
zeros zeros_like new_zeros zero_ ones ones_like new_ones full full_like new_full fill_ resize_ resize_as_
view _unsafe_view view_as reshape _reshape_alias flatten unflatten unsqueeze squeeze permute transpose t
expand expand_as as_strided alias detach slice select split split_with_sizes chunk unbind narrow movedim
diagonal unfold lift_fresh lift_fresh_copy sym_size sym_stride sym_numel sym_storage_offset size stride
numel dim is_contiguous is_same_size _local_scalar_dense contiguous clone copy_ _to_copy to _copy_from
_copy_from_and_resize record_stream
""".split())


def aten_name(func):
    try:
        return str(func._schema.name)
    except Exception:
        s = str(func)
        parts = s.split(".")
        return ("%s::%s" % (parts[0], parts[1])) if len(parts) >= 2 else s


def op_is_glue(name):
    base = name.split("::", 1)[-1]
    return base in GLUE_OPS


def make_op_recorder(torch):
    from torch.utils._python_dispatch import TorchDispatchMode

    class OpRecorder(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = {}

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = aten_name(func)
            self.ops[name] = self.ops.get(name, 0) + 1
            return func(*args, **(kwargs or {}))

    return OpRecorder()


# Kernels PyTorch itself launches (its own kernels, and Inductor's generated Triton): not
# the candidate's kernels.
_FRAMEWORK_KERNEL = re.compile(r"at::native::|at::cuda::|at_cuda_detail|\bc10::|^triton_(poi|per|red|tem)_fused")


def is_transfer_event(name):
    n = name.lower()
    return n.startswith("memcpy") or n.startswith("memset") or "cudamemcpy" in n or "cudamemset" in n


# --------------------------------------------------------------------------------------
# Inputs, outputs and their comparison
# --------------------------------------------------------------------------------------


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
    return _torch is not None and isinstance(x, _torch.Tensor)


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
    torch = _torch
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if torch.equal(a, b):
        return True
    if a.is_floating_point() or a.is_complex():
        return bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())
    return False


def default_tolerance(dtype):
    torch = _torch
    if dtype in (torch.float16, torch.bfloat16):
        return 1e-2
    if dtype.is_floating_point or dtype.is_complex:
        return 1e-4
    return 0.0


def compare_outputs(out, ref, opts):
    """Compares the candidate's output tree with the reference's. Returns a dict with
    passed, elements, max_abs_error, max_rel_error, mismatches, nan_count, inf_count,
    rel_l2_error, problem (a sentence when something other than values is wrong) and
    bad_type (a leaf that is not a plain torch.Tensor)."""
    torch = _torch
    res = {"passed": False, "elements": 0, "max_abs_error": 0.0, "max_rel_error": 0.0, "mismatches": 0,
           "nan_count": 0, "inf_count": 0, "rel_l2_error": 0.0, "problem": "", "bad_type": "", "small_outputs": False}
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
    sq_diff = 0.0
    sq_ref = 0.0
    for (path, r), (_p2, o) in zip(ref_leaves, out_leaves):
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
        tol = default_tolerance(r.dtype)
        atol = tol if opts["atol"] is None else float(opts["atol"])
        rtol = tol if opts["rtol"] is None else float(opts["rtol"])
        of = o.detach().reshape(-1)
        rf = r.detach().reshape(-1)
        if of.is_complex():
            of, rf = torch.view_as_real(of).reshape(-1), torch.view_as_real(rf).reshape(-1)
        n = rf.numel()
        res["elements"] += n
        chunk = 1 << 26
        floating = rf.is_floating_point()
        for s in range(0, n, chunk):
            oc, rc = of[s:s + chunk], rf[s:s + chunk]
            if floating:
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
    if sq_ref > 0:
        res["rel_l2_error"] = math.sqrt(sq_diff) / math.sqrt(sq_ref) if math.isfinite(sq_diff) else float("inf")
    elif sq_diff > 0:
        res["rel_l2_error"] = float("inf")
    res["passed"] = res["mismatches"] == 0 and res["nan_count"] == 0
    if res["passed"] and sq_ref > 0 and res["rel_l2_error"] > opts["rel_l2_limit"]:
        res["passed"] = False
        res["small_outputs"] = True
        res["problem"] = ("passes the absolute tolerance only because the outputs are small: relative L2 error %.3g "
                          "> %.3g" % (res["rel_l2_error"], opts["rel_l2_limit"]))
    return res


def _scalar_close(o, r, opts):
    if isinstance(r, bool) or not isinstance(r, (int, float)):
        return o == r
    if not isinstance(o, (int, float)) or isinstance(o, bool):
        return False
    tol = 1e-4 if opts["atol"] is None else float(opts["atol"])
    return math.isclose(o, r, rel_tol=tol if opts["rtol"] is None else float(opts["rtol"]), abs_tol=tol)


_TensorType = None  # torch.Tensor, captured when torch is first used for an evaluation


# --------------------------------------------------------------------------------------
# Options
# --------------------------------------------------------------------------------------

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
}

_INT_OPTIONS = {"trials": 1, "warmup": 0, "reps": 1, "min_reps": 1, "rotate_buffers": 1, "seed": None}


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
        elif k in ("time", "inputs_on_device"):
            if not isinstance(v, bool):
                raise RequestError("option %s must be true or false" % k)
        elif k in ("atol", "rtol"):
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0):
                raise RequestError("option %s must be a non-negative number or null" % k)
        elif k in ("compile_baseline_timeout_s", "rel_l2_limit"):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
                raise RequestError("option %s must be a positive number" % k)
            v = float(v)
        elif k == "baselines":
            if not isinstance(v, list) or any(b not in ("eager", "compile") for b in v):
                raise RequestError('option baselines must be a list of "eager" and "compile"')
        opts[k] = v
    return opts


# --------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------

CHECK_ORDER = ["forbidden_symbols", "framework_compute", "kernel_launch", "side_stream", "threads", "monkey_patch", "precision",
               "inputs_unmodified", "output_type", "shape_generality", "output_reuse", "physical_floor"]
# Checks whose failure outranks wrong output (docs/diagnosis.md, status precedence).
EARLY_CHECKS = ["forbidden_symbols", "inputs_unmodified", "output_type", "kernel_launch", "side_stream", "threads", "monkey_patch",
                "precision", "framework_compute"]

_STICKY = re.compile(r"illegal memory access|illegal address|device-side assert|unspecified launch failure|"
                     r"misaligned address|illegal instruction|an illegal|invalid program counter|"
                     r"uncorrectable ECC|launch timed out|hardware stack error", re.I)


class CandidateError(Exception):
    """The candidate raised while running: status runtime_error."""

    def __init__(self, where, exc):
        super().__init__(where)
        self.where = where
        self.exc = exc


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


class Evaluation:
    """One evaluate request."""

    def __init__(self, worker, req_id, problem_path, candidate_path, build_dir, opts):
        self.w = worker
        self.dev = worker.dev
        self.torch = _torch
        self.req_id = req_id
        self.problem_path = problem_path
        self.candidate_path = candidate_path
        self.build_dir = build_dir
        self.opts = opts
        self.t0 = _perf_counter()
        self.checks = {name: ("skipped", "not reached") for name in CHECK_ORDER}
        self.result = {"status": "ok", "stage": "load", "message": "", "backend": BACKEND,
                       "device": self.dev.info()["name"], "kernel_launches": -1, "fatal": False}
        self.problem = None
        self.model = None
        self.new = None
        self.threads = ThreadWatch()
        self.flush_buf = None
        self.output_bytes = 0
        self.orig = worker.originals  # extended with the problem's Model once it is loaded

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

    def sync(self):
        self.dev.synchronize()

    def guard_harness(self, when):
        """Reports and undoes changes to the harness's functions and precision settings."""
        changed = self.orig.changed()
        if changed:
            self.fail_once("monkey_patch", "%s replaced %s" % (when, ", ".join(changed[:8])))
            self.orig.restore()
        now = precision_state(self.torch)
        diff = ["%s %s -> %s" % (k, self.w.precision[k], now.get(k)) for k in self.w.precision
                if now.get(k) != self.w.precision[k]]
        if diff:
            self.fail_once("precision", "%s changed %s" % (when, "; ".join(diff[:6])))
            restore_precision(self.torch, self.w.precision)

    def draw_inputs(self, seed):
        torch = self.torch
        torch.manual_seed(seed)
        inputs = None
        if self.opts["inputs_on_device"] and not self.dev.cpu:
            try:
                with torch.device(self.dev.torch_device()):
                    inputs = self.problem.get_inputs()
            except Exception:
                torch.manual_seed(seed)
                inputs = None
        if inputs is None:
            inputs = self.problem.get_inputs()
        inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        return to_device(inputs, self.dev.torch_device())

    def poison_free_memory(self):
        """Fills the memory a candidate's next allocations will get with NaN, so that an
        output left unwritten cannot hold a result the reference just computed there."""
        if self.dev.cpu:
            return
        torch = self.torch
        self.sync()
        released = max(0, torch.cuda.memory_reserved(self.dev.index) - torch.cuda.memory_allocated(self.dev.index))
        torch.cuda.empty_cache()
        try:
            free_b, _ = torch.cuda.mem_get_info(self.dev.index)
            n = min(released + (64 << 20), int(free_b * 0.6)) // 4
            if n > 0:
                big = torch.empty(n, dtype=torch.float32, device=self.dev.torch_device())
                big.fill_(float("nan"))
                del big
            small = [torch.full((64 << 10,), float("nan"), device=self.dev.torch_device()) for _ in range(16)]
            del small
            self.sync()
        except Exception as e:  # out of memory: go on unpoisoned
            log("poisoning skipped: %s" % one_line(e, 200))

    def device_broken(self):
        if self.dev.cpu:
            return False
        try:
            self.torch.cuda.synchronize(self.dev.index)
            x = self.torch.ones(4, device=self.dev.torch_device())
            return float((x + 1).sum().item()) != 8.0
        except Exception:
            return True

    def forward(self, model, inputs, where, candidate=True):
        try:
            if candidate:
                with self.threads:
                    out = model(*inputs)
                    self.sync()
            else:
                out = model(*inputs)
                self.sync()
            return out
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            raise CandidateError(where, e) if candidate else e

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
            self.finish_common()
        return self.result

    def finish_common(self):
        self.result["integrity"] = [{"name": n, "outcome": self.checks[n][0], "detail": self.checks[n][1]}
                                    for n in CHECK_ORDER]
        self.result["eval_seconds"] = _perf_counter() - self.t0
        self.orig.restore()
        restore_precision(self.torch, self.w.precision)

    def runtime_error(self, ce):
        e = ce.exc
        sticky = bool(_STICKY.search(str(e))) or self.device_broken()
        self.result["status"] = "runtime_error"
        if isinstance(e, SystemExit):
            what = "called exit(%s)" % (e.code,)
        else:
            what = "raised %s: %s" % (type(e).__name__, one_line(e, 300))
        self.result["message"] = "the candidate %s (%s)" % (what, ce.where)
        self.result["log"] = format_exception_tail(e)
        self.result["fatal"] = sticky
        if is_compile_failure(e):  # Triton compiles on the first call
            self.result["status"] = "compile_error"
            self.result["stage"] = "compile"
            self.result["message"] = "the candidate's kernel does not compile (%s): %s" % (ce.where, one_line(e, 300))
            comp = self.result.setdefault("compile", {})
            comp["ok"] = False
            comp["log"] = tail(str(e))

    def load_problem(self):
        try:
            self.problem = load_module_from(self.problem_path, "kb_problem")
        except BaseException as e:
            raise RequestError("the problem %s cannot be imported: %s: %s"
                               % (self.problem_path, type(e).__name__, one_line(e, 300)))
        missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if not hasattr(self.problem, n)]
        if missing:
            raise RequestError("the problem %s defines no %s" % (self.problem_path, ", ".join(missing)))
        # The problem's own Model is part of the harness from here on.
        self.orig = Originals()
        self.orig.entries = list(self.w.originals.entries)
        self.orig.add_class_attr("the problem's Model.forward", self.problem.Model, "forward")
        self.orig.add_module_attr("the problem's Model", self.problem, "Model")
        self.orig.add_module_attr("the problem's get_inputs", self.problem, "get_inputs")

    def build(self, cls, label):
        torch = self.torch
        torch.manual_seed(self.opts["seed"])
        init = self.problem.get_init_inputs()
        init = list(init) if isinstance(init, (list, tuple)) else [init]
        return cls(*init).to(self.dev.torch_device())

    # -- candidate evaluation ------------------------------------------------------------

    def evaluate_candidate(self):
        r = self.result
        self.load_problem()
        self.progress("compile", "importing %s" % os.path.basename(self.candidate_path))
        r["stage"] = "compile"
        if not os.path.isfile(self.candidate_path):
            r.update(status="load_error", stage="load", message="the candidate %s does not exist" % self.candidate_path,
                     compile={"ok": False, "cached": False, "seconds": 0.0, "compiler": "none", "log": "",
                              "diagnostics": []})
            return
        module, comp, failure = import_candidate(self.candidate_path, self.build_dir, watch=self.threads)
        extensions = comp.pop("_extensions", [])
        r["compile"] = comp
        if failure is not None:
            r["status"] = failure["status"]
            r["stage"] = "compile" if failure["status"] == "compile_error" else "load"
            r["message"] = failure["message"]
            return
        r["stage"] = "load"
        self.check("forbidden_symbols", *screen_symbols(extensions))
        if self.checks["forbidden_symbols"][0] == "fail":
            return self.integrity_violation()
        self.progress("load", "building Model and ModelNew")
        self.guard_harness("importing the candidate")
        if self.threads.started:
            self.fail_once("threads", "importing the candidate started thread(s): %s"
                           % ", ".join(self.threads.started[:5]))
        new_cls = getattr(module, "ModelNew", None)
        if new_cls is None:
            r.update(status="load_error", message="the candidate defines no ModelNew")
            return
        try:
            self.model = self.build(self.problem.Model, "Model")
        except Exception as e:
            raise RequestError("the problem's Model(*get_init_inputs()) raised %s: %s" % (type(e).__name__,
                                                                                          one_line(e, 300)))
        try:
            with self.threads:
                self.new = self.build(new_cls, "ModelNew")
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            raise CandidateError("ModelNew(*get_init_inputs())", e)
        self.guard_harness("constructing ModelNew")

        r["stage"] = "correctness"
        primary = self.correctness_case("primary", None)
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
            for n in ("output_reuse", "physical_floor"):
                self.check(n, "skipped", "timing was not asked for")
            r["stage"] = "done"
            r["message"] = "correct (%d trials); not timed" % self.opts["trials"]
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
        for c in cases:
            c.pop("first_problem", None) if c is not cases[0] else None
        prim = cases[0]
        self.result["correctness"] = {
            "passed": all(c["passed"] for c in cases),
            "trials": prim["trials"],
            "max_abs_error": max(c["max_abs_error"] for c in cases),
            "max_rel_error": max(c["max_rel_error"] for c in cases),
            "mismatches": sum(c["mismatches"] for c in cases),
            "rel_l2_error": max(c["rel_l2_error"] for c in cases),
            "cases": [{k: v for k, v in c.items() if k != "first_problem"} for c in cases],
        }

    def new_case(self, name):
        return {"name": name, "passed": False, "trials": 0, "trials_passed": 0, "max_abs_error": 0.0,
                "max_rel_error": 0.0, "mismatches": 0, "elements": 0, "nan_count": 0, "inf_count": 0,
                "rel_l2_error": 0.0, "inputs_modified": False, "modified_input": "", "first_problem": ""}

    def run_trial(self, case, seed, where, instrument=False, inputs=None):
        """Reference, then candidate on the same fresh inputs; compares and checks the inputs.
        Returns the comparison."""
        if inputs is None:
            inputs = self.draw_inputs(seed)
        pristine = clone_tree(inputs)
        ref = self.forward(self.model, clone_tree(inputs), where, candidate=False)
        self.output_bytes = tensor_bytes(ref)
        self.poison_free_memory()
        if instrument:
            out = self.instrumented_forward(inputs, where)
        else:
            out = self.forward(self.new, inputs, where)
        self.guard_harness("the candidate's forward (%s)" % where)
        cmp = compare_outputs(out, ref, self.opts)
        modified = [("input %s (%s)" % (p or "0", describe(a))) for (p, a), (_q, b) in
                    zip(tree_leaves(inputs), tree_leaves(pristine)) if is_tensor(a) and not same_values(a, b)]
        case["trials"] += 1
        if modified:
            case["inputs_modified"] = True
            case["modified_input"] = case["modified_input"] or modified[0]
            self.fail_once("inputs_unmodified", "the candidate wrote into %s (%s)" % (modified[0], where))
        if cmp["bad_type"]:
            self.fail_once("output_type", cmp["bad_type"] + " (lazy or wrapped outputs are not accepted)")
        for k in ("max_abs_error", "max_rel_error", "rel_l2_error"):
            case[k] = max(case[k], cmp[k])
        for k in ("mismatches", "nan_count", "inf_count"):
            case[k] += cmp[k]
        case["elements"] = max(case["elements"], cmp["elements"])
        if cmp["passed"]:
            case["trials_passed"] += 1
        elif not case["first_problem"]:
            if cmp["problem"]:
                case["first_problem"] = "wrong output in %s: %s" % (where, cmp["problem"])
            else:
                case["first_problem"] = ("wrong output in %s: %d of %d elements differ (max abs error %.3g, %d NaN)"
                                         % (where, cmp["mismatches"], cmp["elements"], cmp["max_abs_error"],
                                            cmp["nan_count"]))
        del out, ref, pristine
        return cmp

    def correctness_case(self, name, _unused):
        case = self.new_case(name)
        n = self.opts["trials"]
        # The second trial is the watched one: a first call may compile or autotune (Triton's
        # autotuner times its variants with PyTorch ops), which is not the steady forward.
        watched = min(1, n - 1)
        for k in range(n):
            self.progress("correctness", "%s trial %d of %d" % (name, k + 1, n), trial=k)
            self.run_trial(case, self.opts["seed"] + k, "%s trial %d" % (name, k + 1), instrument=(k == watched))
        case["passed"] = case["trials_passed"] == case["trials"]
        self.threads_verdict()
        for n_ in ("inputs_unmodified",):
            if self.checks[n_][0] != "fail":
                self.check(n_, "pass", "inputs bit-identical after %d candidate calls" % case["trials"])
        if self.checks["output_type"][0] != "fail":
            self.check("output_type", "pass", "plain torch.Tensor outputs")
        if self.checks["monkey_patch"][0] != "fail":
            self.check("monkey_patch", "pass", "%d harness functions unchanged after import, construction and forward"
                       % len(self.orig.entries))
        if self.checks["precision"][0] != "fail":
            self.check("precision", "pass", "TF32, reduced-precision reductions, matmul precision and default dtype "
                       "unchanged")
        return case

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
                    out = self.model_call(inputs)
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

    def model_call(self, inputs):
        return self.new(*inputs)

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
        self.result["kernel_launches"] = len(own)
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
        try:
            mod.batch_size = small
            inputs = self.draw_inputs(self.opts["seed"] + 101)
            shapes = [tuple(t.shape) for _p, t in tree_leaves(inputs) if is_tensor(t)]
            if shapes == primary_shapes:
                self.check("shape_generality", "skipped", "get_inputs() does not follow the module's batch_size")
                return None
            try:
                cmp = self.run_trial(case, 0, "smaller-batch trial (batch_size %d)" % small, inputs=inputs)
            except CandidateError as ce:
                if self.device_broken():
                    raise
                case["trials"] += 1
                self.fail_once("shape_generality", "hard-coded for the benchmarked shape: with batch_size %d the "
                               "candidate raised %s: %s" % (small, type(ce.exc).__name__, one_line(ce.exc, 200)))
                return case
            except Exception as e:  # the problem's own Model does not run at the smaller size
                if self.device_broken():
                    raise
                self.check("shape_generality", "skipped", "the problem's Model fails with batch_size %d: %s: %s"
                           % (small, type(e).__name__, one_line(e, 200)))
                return None
        finally:
            mod.batch_size = bs
        case["passed"] = case["trials_passed"] == case["trials"]
        if case["passed"]:
            self.check("shape_generality", "pass", "correct with batch_size %d as well as %d" % (small, bs))
        else:
            self.fail_once("shape_generality", "hard-coded for the benchmarked shape: with batch_size %d: %s"
                           % (small, cmp["problem"] or "%d of %d elements differ" % (cmp["mismatches"],
                                                                                     cmp["elements"])))
        return case

    # -- timing --------------------------------------------------------------------------

    def timing_sets(self):
        """Input sets rotated between repetitions (fewer when device memory is short)."""
        want = self.opts["rotate_buffers"]
        first = self.draw_inputs(self.opts["seed"] + 1000)
        sets = [first]
        nbytes = max(1, tensor_bytes(first))
        if not self.dev.cpu:
            free_b, _ = self.torch.cuda.mem_get_info(self.dev.index)
            want = max(1, min(want, int(0.4 * free_b // nbytes) + 1))
        for i in range(1, want):
            sets.append(self.draw_inputs(self.opts["seed"] + 1000 + i))
        return sets

    def flush_buffer(self):
        if self.flush_buf is None:
            n = 2 * self.dev.l2_bytes()
            if self.dev.cpu:
                n = min(n, 64 << 20)
            self.flush_buf = self.torch.empty(n // 4, dtype=self.torch.float32, device=self.dev.torch_device())
        return self.flush_buf

    def time_calls(self, fn, sets, what):
        """warmup calls, then reps calls each after an L2 flush, between device-wide
        synchronisations, timed with CUDA events on the current stream (CPU: the clock)."""
        torch = self.torch
        opts = self.opts
        reps = max(opts["reps"], opts["min_reps"])
        flush = self.flush_buffer()
        n = len(sets)
        for i in range(opts["warmup"]):
            out = fn(*sets[i % n])
            del out
        self.sync()
        ms, wall = [], []
        if self.dev.cpu:
            for i in range(reps):
                flush.zero_()
                w0 = _perf_counter()
                out = fn(*sets[i % n])
                w1 = _perf_counter()
                del out
                ms.append((w1 - w0) * 1e3)
                wall.append((w1 - w0) * 1e3)
        else:
            stream = torch.cuda.current_stream(self.dev.index)
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            for i in range(reps):
                flush.zero_()
                torch.cuda.synchronize(self.dev.index)
                w0 = _perf_counter()
                start.record(stream)
                out = fn(*sets[i % n])
                end.record(stream)
                torch.cuda.synchronize(self.dev.index)
                w1 = _perf_counter()
                ms.append(start.elapsed_time(end))
                wall.append((w1 - w0) * 1e3)
                del out
        s = summarize(ms, wall)
        s["warmup"] = opts["warmup"]
        return s

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
            # torch.compile is the harness's own doing: undo any change without blaming a candidate.
            changed = self.orig.changed()
            if changed:
                log("torch.compile changed %s; restored" % ", ".join(changed))
                self.orig.restore()
            restore_precision(torch, self.w.precision)

    def timing_stage(self):
        r = self.result
        r["stage"] = "timing"
        self.progress("timing", "timing the candidate")
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
        base, sets = self.baselines(sets, need_eager=True)
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
        # Work left on another stream or thread finishes inside the wall time, outside the events.
        if not self.dev.cpu:
            gap = cand["wall_median_ms"] - cand["median_ms"]
            if gap > max(0.2, 2.0 * cand["median_ms"]):
                self.fail_once("side_stream", "wall time %s ms against event time %s ms: work outside the timed "
                               "stream" % (fmt_ms(cand["wall_median_ms"]), fmt_ms(cand["median_ms"])))
            elif self.checks["side_stream"][0] == "skipped":
                self.check("side_stream", "skipped", "launch accounting unavailable; event time (%s ms) agrees with "
                           "wall time (%s ms)" % (fmt_ms(cand["median_ms"]), fmt_ms(cand["wall_median_ms"])))
        self.output_reuse_check(sets)
        self.roofline(sets, cand["median_ms"])
        failed = [n for n in CHECK_ORDER if self.checks[n][0] == "fail"]
        if failed:
            return self.integrity_violation()
        r["stage"] = "done"
        msg = "correct; %.2fx eager (%s ms against %s ms)" % (speedup, fmt_ms(cand["median_ms"]),
                                                             fmt_ms(eager["median_ms"]))
        if "median_ms" in comp:
            msg += ", %.2fx torch.compile (%s ms)" % (comp["median_ms"] / cand["median_ms"]
                                                      if cand["median_ms"] > 0 else 0.0, fmt_ms(comp["median_ms"]))
        elif "error" in comp:
            msg += "; torch.compile baseline failed"
        r["message"] = msg

    def output_reuse_check(self, sets):
        """Fresh values written into a rotated input set (same tensors, same pointers): a
        result cached by input pointer or left from the timed calls shows here."""
        self.progress("integrity", "fresh values in a timed input set")
        fresh = self.draw_inputs(self.opts["seed"] + 7919)
        target = sets[0]
        for (_p, t), (_q, f) in zip(tree_leaves(target), tree_leaves(fresh)):
            if is_tensor(t) and is_tensor(f) and t.shape == f.shape:
                t.data.copy_(f)  # through .data: the tensor's version counter stays as it was
        del fresh
        case = self.new_case("after-timing")
        cmp = self.run_trial(case, 0, "the fresh-values call after timing", inputs=target)
        if cmp["passed"]:
            self.check("output_reuse", "pass", "right for fresh values in a timed input buffer; free memory poisoned "
                       "before every candidate call" if not self.dev.cpu else
                       "right for fresh values in a timed input buffer")
        else:
            self.fail_once("output_reuse", "wrong for fresh values in a timed input buffer (stale or cached results): "
                           + (cmp["problem"] or "%d of %d elements differ" % (cmp["mismatches"], cmp["elements"])))

    def roofline(self, sets, median_ms):
        nbytes = tensor_bytes(sets[0]) + self.output_bytes
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
        self.load_problem()
        r["stage"] = "timing"
        for n in CHECK_ORDER:
            self.check(n, "skipped", "no candidate")
        try:
            self.model = self.build(self.problem.Model, "Model")
        except Exception as e:
            raise RequestError("the problem's Model(*get_init_inputs()) raised %s: %s" % (type(e).__name__,
                                                                                          one_line(e, 300)))
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
        global _TensorType
        torch = self.dev.require()
        if self.originals is None:
            _TensorType = torch.Tensor
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
            r["error"] = _torch_error
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
            ev.model = ev.new = ev.flush_buf = None
            ev.problem = None
            for name in [m for m in sys.modules if m.startswith(("kb_candidate_", "kb_problem_"))]:
                sys.modules.pop(name, None)
            gc.collect()
            if not self.dev.cpu and not (result or {}).get("fatal"):
                try:
                    _torch.cuda.empty_cache()
                except Exception:
                    pass
        send({"id": rid, "ok": True, "result": result})
        return not result.get("fatal", False)


def serve(args):
    _setup_private_streams()
    worker = Worker(args.device)
    while True:
        raw = _proto_in.readline()
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
        _proto_out.flush()
    except Exception:
        pass
    os._exit(0)


def compile_one(args):
    """--compile: builds (imports) one candidate into its build folder and exits 0 or 3."""
    _setup_private_streams()
    if not args.build_dir:
        send({"ok": False, "status": "load_error", "message": "--compile needs --build-dir", "log": ""})
        os._exit(2)
    if not os.path.isfile(args.compile):
        send({"ok": False, "status": "load_error", "message": "the candidate %s does not exist" % args.compile,
              "log": ""})
        os._exit(3)
    build_dir = os.path.abspath(args.build_dir)
    set_build_dir(build_dir)
    if torch_or_none() is None:
        send({"ok": False, "status": "load_error", "message": _torch_error, "log": ""})
        os._exit(3)
    _module, info, failure = import_candidate(os.path.abspath(args.compile), build_dir)
    info.pop("_extensions", None)
    if failure is None:
        send({"ok": True, "seconds": info["seconds"], "cached": info["cached"], "compiler": info["compiler"],
              "diagnostics": info["diagnostics"]})
        code = 0
    else:
        send({"ok": False, "status": failure["status"], "message": failure["message"], "log": failure["log"],
              "seconds": info["seconds"], "diagnostics": info["diagnostics"]})
        code = 3
    try:
        _proto_out.flush()
    except Exception:
        pass
    os._exit(code)


def main(argv=None):
    sys.dont_write_bytecode = True  # no __pycache__ beside problems and candidates
    ap = argparse.ArgumentParser(description="Kernel Foundry's KernelBench worker (JSON lines on stdin/stdout; "
                                             "docs/kernelbench-worker.md)")
    ap.add_argument("--device", default="0", help="CUDA device ordinal (default 0)")
    ap.add_argument("--compile", metavar="CANDIDATE.py", help="build one candidate and exit (0 built, 3 failed)")
    ap.add_argument("--build-dir", metavar="DIR", help="TORCH_EXTENSIONS_DIR for --compile")
    args = ap.parse_args(argv)
    if args.device != "cpu":
        try:
            if int(args.device) < 0:
                raise ValueError
        except ValueError:
            ap.error("--device must be a non-negative integer")
    if args.compile:
        compile_one(args)
    else:
        serve(args)


if __name__ == "__main__":
    main()
