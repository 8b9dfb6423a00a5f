"""Faster builds of load_inline candidates, with the build torch would have made.

torch.utils.cpp_extension.load_inline writes main.cpp (``#include <torch/extension.h>``, the
candidate's C++ and its pybind11 bindings), cuda.cu (the candidate's CUDA source) and a
build.ninja, then runs ninja. Nearly all of a cold build is spent parsing PyTorch's headers:
main.cpp parses torch/extension.h (all of libtorch's C++ API and pybind11), and cuda.cu
parses it again wherever the candidate's CUDA source includes it.

Two changes, made to the generated build just before ninja runs, make that cost once per
PyTorch installation, compiler and flags instead of once per candidate:

1. **A precompiled header** of torch/extension.h, built with main.cpp's own flags into a cache
   folder shared by all candidates (``KF_KB_PCH_DIR``; by default ``pch/`` beside the
   candidates' build folders), and given to the compiler with ``-include``. GCC uses it only
   where it is valid for the compilation (otherwise it parses the header as before, and
   ``-Winvalid-pch`` says so in the build log), so the result is the same object either way.
2. **A lighter header for the CUDA source**: a CUDA source that includes torch/extension.h
   but uses nothing of pybind11 or the Python bindings is compiled with torch/types.h in its
   place (the header load_inline itself puts at the top of every CUDA source). The rewritten
   source is a separate file (``kf/cuda.cu``) with the same lines, so compiler messages keep
   their line numbers. If that source fails to compile, the build is run again unchanged,
   so a candidate is never rejected for the change.

Both are edits of build.ninja's compile lines only; the link line, the flags the candidate
asked for, and the extension's name are untouched. A source built before is not rebuilt:
the edits are the same every time, so ninja finds the same commands and the same inputs.

``install()`` wraps torch's private ``_run_ninja_build``; where that function does not exist
(another PyTorch), nothing is changed and candidates build as before. ``KF_KB_FASTBUILD=0``
turns it off; ``KF_KB_FASTBUILD=pch`` keeps only the precompiled header.
"""

import fcntl
import functools
import hashlib
import os
import re
import shlex
import subprocess
import time

PCH_HEADER = "kf_torch_extension.h"
_EXT_NAME = re.compile(r"\s*-DTORCH_EXTENSION_NAME=\S+")
_EXTENSION_INCLUDE = re.compile(r'^(\s*#\s*include\s*)[<"]torch/extension\.h[>"]', re.M)
# What of torch/extension.h beyond torch/types.h a CUDA source may use: pybind11, the
# Python bindings, the module macro, the C++ frontend's modules and functionals.
_NEEDS_EXTENSION = re.compile(r"\bpybind11\b|\bpy::|PYBIND11_|\bTORCH_LIBRARY|torch::python|\bTHP\w+|"
                              r"torch::nn\b|torch::optim\b|torch::data\b|torch::autograd\b|torch::jit\b|"
                              r"torch::serialize\b|torch::(save|load)\b|\bat::Dispatch|torch::Library\b")

stats = {"pch": None, "cuda_header": None, "retried_plain": False, "pch_seconds": 0.0}


def enabled():
    return os.environ.get("KF_KB_FASTBUILD", "1") not in ("0", "off", "no", "false")


def lighter_cuda_enabled():
    """KF_KB_FASTBUILD=pch keeps the precompiled header only (for measurements)."""
    return os.environ.get("KF_KB_FASTBUILD", "1") != "pch"


def _read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def _write_if_changed(path, text):
    """Writes only a changed file, so that ninja sees an unchanged input as up to date."""
    try:
        if _read(path) == text:
            return
    except OSError:
        pass
    tmp = path + ".tmp%d" % os.getpid()
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def ninja_variable(text, name):
    m = re.search(r"^%s = (.*)$" % re.escape(name), text, re.M)
    return m.group(1) if m else None


def set_ninja_variable(text, name, value):
    return re.sub(r"^%s = .*$" % re.escape(name), lambda _m: "%s = %s" % (name, value), text, count=1, flags=re.M)


def _unescape(ninja_value):
    return ninja_value.replace("$$", "\x00").replace("$ ", " ").replace("$:", ":").replace("\x00", "$")


def pch_dir_for(build_directory):
    root = os.environ.get("KF_KB_PCH_DIR")
    if not root:
        # build_directory is TORCH_EXTENSIONS_DIR/<name>; the cache sits beside the build folders
        # of all candidates (one per source hash) when there is such a parent.
        parent = os.path.dirname(os.path.dirname(os.path.abspath(build_directory)))
        root = os.path.join(parent, "pch")
    return root


@functools.lru_cache(maxsize=None)
def compiler_identity(cxx):
    try:
        out = subprocess.run(shlex.split(cxx) + ["--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    return out.splitlines()[0] if out else cxx


def ensure_pch(root, cxx, cflags, post_cflags, extension_header):
    """The folder of a valid precompiled torch/extension.h for these flags, building it once
    (under a lock: parallel builds wait for the first). None where it cannot be built."""
    try:
        st = os.stat(extension_header)
        stamp = "%d:%d" % (st.st_size, int(st.st_mtime))
    except OSError:
        stamp = "?"
    key = hashlib.sha256("\n".join([compiler_identity(cxx), cflags, post_cflags, extension_header, stamp])
                         .encode()).hexdigest()[:20]
    folder = os.path.join(root, key)
    header = os.path.join(folder, PCH_HEADER)
    gch = header + ".gch"
    done = os.path.join(folder, "ok")
    if os.path.exists(done) and os.path.exists(gch):
        return folder
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(done) and os.path.exists(gch):
            return folder
        _write_if_changed(header, "#pragma once\n#include <torch/extension.h>\n")
        cmd = "%s -x c++-header %s %s -o %s %s" % (cxx, cflags, shlex.quote(header), shlex.quote(gch + ".part"),
                                                   post_cflags)
        t0 = time.perf_counter()
        p = subprocess.run(["/bin/sh", "-c", cmd], capture_output=True, text=True, timeout=900)
        stats["pch_seconds"] = time.perf_counter() - t0
        if p.returncode != 0:
            with open(os.path.join(folder, "failed.log"), "w") as f:
                f.write(cmd + "\n" + p.stdout + p.stderr)
            return None
        os.replace(gch + ".part", gch)
        with open(done, "w") as f:
            f.write(cmd + "\n")
    return folder


def lighter_cuda_source(source):
    """The CUDA source with torch/extension.h replaced by torch/types.h, or None where the
    source includes nothing to replace or uses what only torch/extension.h declares."""
    if not _EXTENSION_INCLUDE.search(source) or _NEEDS_EXTENSION.search(source):
        return None
    return _EXTENSION_INCLUDE.sub(lambda m: m.group(1) + "<torch/types.h>", source)


def rewrite_build(build_directory, extension_header, original=None):
    """Edits build.ninja (and writes kf/cuda.cu); returns the original build.ninja text, or
    None where nothing was changed. The CUDA source keeps torch/extension.h in a build folder
    where it failed with the lighter header once (kf/plain-cuda)."""
    ninja_file = os.path.join(build_directory, "build.ninja")
    try:
        text = original if original is not None else _read(ninja_file)
    except OSError:
        return None
    original = text
    plain_cuda = not lighter_cuda_enabled() or os.path.exists(os.path.join(build_directory, "kf", "plain-cuda"))
    cxx = ninja_variable(text, "cxx")
    cflags = ninja_variable(text, "cflags")
    post = ninja_variable(text, "post_cflags") or ""
    if not cxx or cflags is None:
        stats["pch"] = "no cxx or cflags in build.ninja"
    elif not re.search(r"^build \S+: compile ", text, re.M):
        stats["pch"] = "no C++ compile step in build.ninja"
    else:
        base = _EXT_NAME.sub("", _unescape(cflags)).strip()
        folder = ensure_pch(pch_dir_for(build_directory), _unescape(cxx), base, _unescape(post), extension_header)
        stats["pch"] = folder is not None
        if folder:
            inc = " -Winvalid-pch -include %s" % os.path.join(folder, PCH_HEADER).replace("$", "$$").replace(" ", "$ ")
            text = set_ninja_variable(text, "cflags", cflags + inc)
    m = re.search(r"^(build \S+: cuda_compile )(\S+)$", text, re.M)
    if m and os.path.basename(m.group(2)) == "cuda.cu" and not plain_cuda:
        try:
            lighter = lighter_cuda_source(_read(m.group(2)))
        except OSError:
            lighter = None
        stats["cuda_header"] = "torch/types.h" if lighter is not None else "unchanged"
        if lighter is not None:
            kf_dir = os.path.join(build_directory, "kf")
            os.makedirs(kf_dir, exist_ok=True)
            kf_cu = os.path.join(kf_dir, "cuda.cu")
            _write_if_changed(kf_cu, lighter)
            text = text[:m.start(2)] + kf_cu + text[m.end(2):]
    if text == original:
        return None
    _write_if_changed(ninja_file, text)
    return original


def install():
    """Wraps torch's ninja step; returns whether the wrap is in place."""
    if not enabled():
        return False
    try:
        from torch.utils import cpp_extension
    except Exception:
        return False
    run = getattr(cpp_extension, "_run_ninja_build", None)
    if run is None or getattr(run, "_kf_fastbuild", False):
        return run is not None
    try:
        extension_header = os.path.join(cpp_extension.include_paths()[0], "torch", "extension.h")
        if not os.path.exists(extension_header):
            extension_header = os.path.join(cpp_extension.include_paths()[1], "torch", "extension.h")
    except Exception:
        return False

    def fast_run(build_directory, *args, **kwargs):
        try:
            original = rewrite_build(build_directory, extension_header)
        except Exception:  # never worse than torch's own build
            original = None
        if original is None:
            return run(build_directory, *args, **kwargs)
        try:
            return run(build_directory, *args, **kwargs)
        except Exception as e:
            # Only the lighter CUDA header can make a source fail that builds unchanged.
            if stats["cuda_header"] != "torch/types.h" or "kf/cuda.cu" not in str(e):
                raise
            stats["retried_plain"] = True
            with open(os.path.join(build_directory, "kf", "plain-cuda"), "w") as f:
                f.write("the CUDA source did not compile with torch/types.h in place of torch/extension.h\n")
            stats["cuda_header"] = "unchanged"
            if rewrite_build(build_directory, extension_header, original) is None:
                _write_if_changed(os.path.join(build_directory, "build.ninja"), original)
            return run(build_directory, *args, **kwargs)

    fast_run._kf_fastbuild = True
    cpp_extension._run_ninja_build = fast_run
    return True


def ninja_times(build_directory):
    """Seconds per output of the last ninja run in build_directory (from .ninja_log)."""
    out = {}
    try:
        lines = _read(os.path.join(build_directory, ".ninja_log")).splitlines()
    except OSError:
        return out
    for ln in lines[1:]:
        parts = ln.split("\t")
        if len(parts) >= 4:
            out[parts[3]] = (int(parts[1]) - int(parts[0])) / 1000.0
    return out
