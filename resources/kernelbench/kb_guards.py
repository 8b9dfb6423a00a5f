"""Guards against candidates that change the harness around them: the originals a candidate
must leave alone, numeric-precision settings, the thread and process watches, the aten-op
recorder and the kernels PyTorch launches itself, and the screen of a built extension's
undefined symbols."""

import os
import re
import subprocess
import sys
import threading
import _thread
import time

from kb_protocol import log, one_line


def _entry_point_name():
    """The name kb_worker.py runs under: __main__ when it was started as a script (the worker
    and a candidate's process), kb_worker when a test imports it."""
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kb_worker.py")
    return "__main__" if main and os.path.realpath(main) == os.path.realpath(here) else "kb_worker"


# The worker's own modules: a thread or process started from one of their frames is the
# harness's, not the candidate's (ThreadWatch, ProcessWatch).
WORKER_MODULES = (_entry_point_name(), "kb_protocol", "kb_device", "kb_timing", "kb_build", "kb_compare",
                  "kb_guards", "kb_options", "kb_session", "kb_runner", "kb_evaluation")


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
    _PLUMBING = ("threading", "_thread", "concurrent.futures", *WORKER_MODULES)

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


class ProcessWatch:
    """Process starts in the candidate's process, seen by an audit hook (subprocess.Popen,
    os.fork, os.system, os.posix_spawn, os.exec*, ...). The caller is the first frame outside
    the process plumbing (subprocess, os, multiprocessing, torch.multiprocessing...): PyTorch,
    Triton and their libraries (ninja and nvcc builds, ldconfig look-ups) and the worker's
    fast build (kb_fastbuild: the compiler's version, the precompiled header) are not the
    candidate; the candidate's module or any other module is. The harness's own tools (nm)
    run with `harness` raised."""

    EVENTS = frozenset(["subprocess.Popen", "os.fork", "os.forkpty", "os.system", "os.posix_spawn", "os.exec",
                        "os.spawn", "pty.spawn", "os.startfile"])
    _PLUMBING = ("subprocess", "os", "posix", "multiprocessing", "ctypes", "platform", "shutil", "concurrent",
                 "threading", "pty", "asyncio", "_posixsubprocess", "functools", "torch.multiprocessing",
                 "torch.distributed")
    _LIBRARIES = ("torch", "triton", "cuda", "nvidia", "numpy", "setuptools", "distutils", "_distutils_hack",
                  "pkg_resources", "importlib", "sympy", "packaging", "filelock", "sysconfig", "jinja2",
                  *WORKER_MODULES, "kb_fastbuild")

    def __init__(self):
        self.started = []
        self.internal = []
        self.harness = 0  # > 0 while the harness itself runs a tool (nm)

    def install(self):
        sys.addaudithook(self._hook)

    @staticmethod
    def _under(mod, prefixes):
        return any(mod == p or mod.startswith(p + ".") for p in prefixes)

    def _hook(self, event, args):
        if event not in self.EVENTS or self.harness:
            return
        try:
            f = sys._getframe(1)
            while f is not None and self._under(f.f_globals.get("__name__") or "", self._PLUMBING):
                f = f.f_back
            mod = (f.f_globals.get("__name__") or "") if f is not None else ""
            what = event
            if args and event in ("subprocess.Popen", "os.system", "os.posix_spawn", "os.exec"):
                what += " " + one_line(repr(args[0] if event == "os.system" else args[1] if len(args) > 1 and
                                            event == "subprocess.Popen" else args[0]), 80)
            entry = "%s (from %s)" % (what, mod or "?")
            (self.internal if self._under(mod, self._LIBRARIES) else self.started).append(entry)
        except Exception:
            pass


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


# Undefined dynamic symbols a candidate's extension must not use: vendor libraries that
# would do the work, loading code at run time, threads and processes.
_FORBIDDEN_SYMBOL = re.compile(r"^(cublas|cudnn|cufft|cusparse|cusolver|nccl)\w*$|"
                               r"^(fork|vfork|execv\w*|execl\w*|system|popen|posix_spawn\w*)$|^_ZNSt6thread")
# Also used by a statically linked CUDA runtime, so only screened where the runtime is the
# shared libcudart (or absent).
_LOADER_SYMBOL = re.compile(r"^(dlopen|dlmopen|dlsym|dlvsym|pthread_create|cuModuleLoad\w*|cuLibraryLoad\w*)$")


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
