"""Loading problems and candidates: modules imported under fresh names, a candidate's import
with its module-level load_inline build (kb_fastbuild), the build's output, compiler
diagnostics and timings, and the --compile mode that builds one candidate and exits."""

import contextlib
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

import kb_fastbuild
import kb_protocol
import kb_device
from kb_protocol import _perf_counter, _setup_private_streams, format_exception_tail, one_line, send, tail
from kb_device import torch_or_none


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


def extension_files(module, built):
    """The shared objects a candidate's import loaded or built: extension modules among its
    globals, and .so files that appeared under the build folder."""
    files = set(built)
    for v in list(vars(module).values()) if module is not None else []:
        f = getattr(v, "__file__", None) if type(v).__name__ == "module" else None
        if isinstance(f, str) and f.endswith(".so") and os.path.isfile(f):
            files.add(os.path.abspath(f))
    return sorted(files)


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


def build_details(module, built_files):
    """How a load_inline build was made: the precompiled header, the CUDA source's header,
    and the seconds of each compile step (ninja's log)."""
    out = {"fast": kb_fastbuild.enabled(), "pch": kb_fastbuild.stats["pch"],
           "cuda_header": kb_fastbuild.stats["cuda_header"], "retried_plain": kb_fastbuild.stats["retried_plain"],
           "split": kb_fastbuild.stats["split"], "host_header": kb_fastbuild.stats["host_header"]}
    if kb_fastbuild.stats["pch_seconds"]:
        out["pch_build_seconds"] = round(kb_fastbuild.stats["pch_seconds"], 3)
    dirs = {os.path.dirname(p) for p in built_files if p.endswith(".so")}
    steps = {}
    for d in dirs:
        steps.update(kb_fastbuild.ninja_times(d))
    if steps:
        out["steps"] = steps
    return out


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
        kb_fastbuild.install()
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
            "diagnostics": [], "build": build_details(module, built_files)}
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
        send({"ok": False, "status": "load_error", "message": kb_device._torch_error, "log": ""})
        os._exit(3)
    _module, info, failure = import_candidate(os.path.abspath(args.compile), build_dir)
    info.pop("_extensions", None)
    if failure is None:
        send({"ok": True, "seconds": info["seconds"], "cached": info["cached"], "compiler": info["compiler"],
              "diagnostics": info["diagnostics"], "build": info["build"]})
        code = 0
    else:
        send({"ok": False, "status": failure["status"], "message": failure["message"], "log": failure["log"],
              "seconds": info["seconds"], "diagnostics": info["diagnostics"]})
        code = 3
    try:
        kb_protocol._proto_out.flush()
    except Exception:
        pass
    os._exit(code)
