"""Faster builds of load_inline candidates, with the build torch would have made.

torch.utils.cpp_extension.load_inline writes main.cpp (``#include <torch/extension.h>``, the
candidate's C++ and its pybind11 bindings), cuda.cu (the candidate's CUDA source) and a
build.ninja, then runs ninja. Nearly all of a cold build is spent parsing PyTorch's headers:
main.cpp parses torch/extension.h (all of libtorch's C++ API and pybind11), and cuda.cu
parses it again wherever the candidate's CUDA source includes it.

Three changes, made to the generated build just before ninja runs, make that cost once per
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
3. **Kernels compiled apart** (tried before 2): a CUDA source whose kernels use nothing of
   PyTorch is split (kb_cudasplit) into its kernels, compiled by nvcc without PyTorch's
   headers (``kf/cuda.cu``), and its host code, compiled by the C++ compiler with a
   precompiled header (``kf/host.cpp``, with the host flags nvcc would have used: its ``-O``,
   ``-D``, ``-U`` and ``-Xcompiler`` options). Host code that uses nothing of pybind11 or the
   Python bindings gets torch/types.h in place of torch/extension.h, precompiled: what
   torch/extension.h adds costs every object that includes it seconds of code generation
   (its inline functions and vtables), so this makes the host half several times cheaper.
   The host code launches the kernels through
   launchers defined beside them. If the split source fails to build, the build runs again
   as written (most such sources have an error of their own, which the build as written
   reports), and the folder remembers it (``kf/no-split``).

All are edits of build.ninja's compile steps (the split adds one, whose object joins the
link); the link command, the flags the candidate asked for, and the extension's name are
untouched. A source built before is not rebuilt:
the edits are the same every time, so ninja finds the same commands and the same inputs.

``install()`` wraps torch's private ``_run_ninja_build``; where that function does not exist
(another PyTorch), nothing is changed and candidates build as before. ``KF_KB_FASTBUILD=0``
turns it off; ``KF_KB_FASTBUILD=pch`` keeps only the precompiled header;
``KF_KB_FASTBUILD=header`` keeps 1 and 2 (no split).
"""

import fcntl
import functools
import hashlib
import os
import re
import shlex
import subprocess
import time

import kb_cudasplit

PCH_HEADER = "kf_torch_extension.h"
# The host half's header where it needs nothing of torch/extension.h beyond torch/types.h (the
# header load_inline puts at the top of every CUDA source): torch/extension.h's pybind11 and
# Python bindings alone cost a C++ compilation several seconds of code generation, whatever
# the source (their inline functions and vtables are emitted in every object).
TYPES_PCH_HEADER = "kf_torch_types.h"
_PCH_INCLUDES = {PCH_HEADER: "torch/extension.h", TYPES_PCH_HEADER: "torch/types.h"}
_EXT_NAME = re.compile(r"\s*-DTORCH_EXTENSION_NAME=\S+")
_EXTENSION_INCLUDE = re.compile(r'^(\s*#\s*include\s*)[<"]torch/extension\.h[>"]', re.M)
# What of torch/extension.h beyond torch/types.h a CUDA source may use: pybind11, the
# Python bindings, the module macro, the C++ frontend's modules and functionals.
_NEEDS_EXTENSION = re.compile(r"\bpybind11\b|\bpy::|PYBIND11_|\bTORCH_LIBRARY|torch::python|\bTHP\w+|"
                              r"torch::nn\b|torch::optim\b|torch::data\b|torch::autograd\b|torch::jit\b|"
                              r"torch::serialize\b|torch::(save|load)\b|\bat::Dispatch|torch::Library\b")

stats = {"pch": None, "cuda_header": None, "retried_plain": False, "pch_seconds": 0.0, "split": None,
         "host_header": None}


def enabled():
    return os.environ.get("KF_KB_FASTBUILD", "1") not in ("0", "off", "no", "false")


def lighter_cuda_enabled():
    """KF_KB_FASTBUILD=pch keeps the precompiled header only (for measurements)."""
    return os.environ.get("KF_KB_FASTBUILD", "1") != "pch"


def split_enabled():
    """KF_KB_FASTBUILD=header or pch builds the CUDA source whole (for measurements)."""
    return os.environ.get("KF_KB_FASTBUILD", "1") not in ("pch", "header")


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


def _stamp(path):
    try:
        st = os.stat(path)
        return "%d:%d" % (st.st_size, int(st.st_mtime))
    except OSError:
        return "?"


def _pch_folder(root, cxx, cflags, post_cflags, extension_header, header=PCH_HEADER):
    parts = [compiler_identity(cxx), cflags, post_cflags, extension_header, _stamp(extension_header)]
    if header != PCH_HEADER:  # the extension header's folders keep their names
        parts += [header, _stamp(os.path.join(os.path.dirname(extension_header), "types.h"))]
    key = hashlib.sha256("\n".join(parts).encode()).hexdigest()[:20]
    return os.path.join(root, key)


def _pch_ready(folder, header=PCH_HEADER):
    return os.path.exists(os.path.join(folder, "ok")) and os.path.exists(os.path.join(folder, header + ".gch"))


def ensure_pchs(root, cxx, flag_sets, post_cflags, extension_header):
    """For each (flags, header) of flag_sets, header being PCH_HEADER (torch/extension.h) or
    TYPES_PCH_HEADER (torch/types.h), the folder of that header precompiled with those flags,
    or None where it cannot be built. Missing ones are built at once, side by side, each once:
    under a lock per folder (taken in one order), parallel builds wait for the first. A header
    that failed to build is not tried again (failed.log in its folder says why)."""
    folders = [_pch_folder(root, cxx, f, post_cflags, extension_header, h) for f, h in flag_sets]
    result = [f if _pch_ready(f, h) else None for f, (_, h) in zip(folders, flag_sets)]
    todo = sorted({(f, flags, h) for f, (flags, h), r in zip(folders, flag_sets, result)
                   if r is None and not os.path.exists(os.path.join(f, "failed.log"))})
    locks, running = [], []
    try:
        for folder, flags, name in todo:
            os.makedirs(folder, exist_ok=True)
            lock = open(os.path.join(folder, "lock"), "w")
            locks.append(lock)
            fcntl.flock(lock, fcntl.LOCK_EX)
            if _pch_ready(folder, name):
                continue
            header = os.path.join(folder, name)
            _write_if_changed(header, "#pragma once\n#include <%s>\n" % _PCH_INCLUDES[name])
            part = header + ".gch.part"
            cmd = "%s -x c++-header %s %s -o %s %s" % (cxx, flags, shlex.quote(header), shlex.quote(part), post_cflags)
            proc = subprocess.Popen(["/bin/sh", "-c", cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            running.append((folder, name, cmd, proc, time.perf_counter()))
        for folder, name, cmd, proc, t0 in running:
            try:
                log = proc.communicate(timeout=900)[0]
            except subprocess.TimeoutExpired:
                proc.kill()
                log = proc.communicate()[0] + "\n(killed after 900 s)"
            stats["pch_seconds"] = max(stats["pch_seconds"], time.perf_counter() - t0)
            if proc.returncode != 0:
                with open(os.path.join(folder, "failed.log"), "w") as f:
                    f.write(cmd + "\n" + log)
                continue
            header = os.path.join(folder, name)
            os.replace(header + ".gch.part", header + ".gch")
            with open(os.path.join(folder, "ok"), "w") as f:
                f.write(cmd + "\n")
    finally:
        for lock in locks:
            lock.close()
    return [f if _pch_ready(f, h) else None for f, (_, h) in zip(folders, flag_sets)]


def lighter_cuda_source(source):
    """The CUDA source with torch/extension.h replaced by torch/types.h, or None where the
    source includes nothing to replace or uses what only torch/extension.h declares."""
    if not _EXTENSION_INCLUDE.search(source) or _NEEDS_EXTENSION.search(source):
        return None
    return _types_for_extension(source)


def _types_for_extension(source):
    return _EXTENSION_INCLUDE.sub(lambda m: m.group(1) + "<torch/types.h>", source)


def lighter_host_half(host):
    """(host half, header to precompile for it): torch/types.h in place of torch/extension.h
    where the host code uses nothing that only torch/extension.h declares."""
    if _NEEDS_EXTENSION.search(host):
        return host, PCH_HEADER
    return _types_for_extension(host), TYPES_PCH_HEADER


_NVCC_HOST_FLAG = re.compile(r"(?:^|\s)(-O\S*|-[DU]\s*\S+|(?:-Xcompiler|--compiler-options)[=\s]\s*(\S+))")


def host_flags_of(cuda_cflags, cflags):
    """The flags nvcc would have given the host compiler for the CUDA source's host code,
    beyond main.cpp's: its -O level, its -D and -U, its -Xcompiler options (not -fPIC)."""
    out, have = [], set(shlex.split(cflags))
    for m in _NVCC_HOST_FLAG.finditer(cuda_cflags):
        if m.group(2) is not None:
            for opt in m.group(2).strip("'\"").split(","):
                if opt and opt != "-fPIC":
                    out.append(opt)
        else:
            flag = re.sub(r"^(-[DU])\s+", r"\1", m.group(1))
            if flag not in have:
                out.append(flag)
    return " ".join(out)


def _ninja_path(path):
    return path.replace("$", "$$").replace(" ", "$ ").replace(":", "$:")


def _pch_include(folder, header=PCH_HEADER):
    return " -Winvalid-pch -include %s" % os.path.join(folder, header).replace("$", "$$").replace(" ", "$ ")


# build.ninja's compile step of the CUDA source; group 2 is the source's path.
_CUDA_STEP = re.compile(r"^(build \S+: cuda_compile )(\S+)$", re.M)


def _set_cuda_source(text, path):
    """build.ninja's text with the CUDA compile step reading `path`."""
    cu = _CUDA_STEP.search(text)
    return text[:cu.start(2)] + _ninja_path(path) + text[cu.end(2):]


# A step of the split build: every launcher the host half calls (a kernel template's for each
# of its template arguments) must be defined by the kernels' object. A shared library links
# with symbols undefined, so without it a missing launcher would fail only at import; with
# it, the build fails and runs again as written (kf/no-split).
LAUNCHER_CHECK = "\n".join([
    "rule kf_launchers",
    "  command = nm -uP $host > $out.undefined && nm -P --defined-only $kernels > $out.defined && "
    "awk '$$1 ~ /kf_launch_/ {print $$1}' $out.undefined | sort -u > $out.need && "
    "awk '{print $$1}' $out.defined | sort -u > $out.have && comm -23 $out.need $out.have > $out.missing && "
    "if [ -s $out.missing ]; then echo \"launchers the kernels' object does not define:\"; cat $out.missing; exit 1; fi && "
    "touch $out",
    "build kf_launchers.ok: kf_launchers kf_host.o @KERNELS@",
    "  host = kf_host.o",
    "  kernels = @KERNELS@"])


def rewrite_build(build_directory, extension_header, original=None):
    """Edits build.ninja (and writes kf/cuda.cu, kf/host.cpp); returns the original
    build.ninja text, or None where nothing was changed. The CUDA source is not split in a
    build folder where the split failed once (kf/no-split), and keeps torch/extension.h where
    it failed with the lighter header once (kf/plain-cuda)."""
    ninja_file = os.path.join(build_directory, "build.ninja")
    try:
        text = original if original is not None else _read(ninja_file)
    except OSError:
        return None
    original = text
    kf_dir = os.path.join(build_directory, "kf")
    plain_cuda = not lighter_cuda_enabled() or os.path.exists(os.path.join(kf_dir, "plain-cuda"))
    try_split = split_enabled() and not plain_cuda and not os.path.exists(os.path.join(kf_dir, "no-split"))
    cxx = ninja_variable(text, "cxx")
    cflags = ninja_variable(text, "cflags")
    post = ninja_variable(text, "post_cflags") or ""
    cuda_cflags = ninja_variable(text, "cuda_cflags") or ""
    if try_split or not split_enabled():
        stats["split"] = None
    elif os.path.exists(os.path.join(kf_dir, "no-split")):
        stats["split"] = "did not build split in this folder before (kf/no-split)"
    else:
        stats["split"] = "the source is built as written (kf/plain-cuda)"
    cu = _CUDA_STEP.search(text)
    link = re.search(r"^build \S+: link .*$", text, re.M)
    have_compile = re.search(r"^build \S+: compile ", text, re.M) is not None

    halves = None
    stats["host_header"] = None
    if cu and os.path.basename(cu.group(2)) == "cuda.cu" and try_split:
        if not (cxx and cflags is not None and have_compile and link):
            stats["split"] = "no C++ compile or link step in build.ninja"
        elif (re.search(r"^build \S+: cuda_dlink ", text, re.M)
              or re.search(r"(^|\s)(-rdc|--relocatable-device-code)[=\s]*true\b|(^|\s)(-dc|--device-c)(\s|$)", cuda_cflags)):
            stats["split"] = "separate compilation (-rdc)"
        else:
            try:
                source = _read(_unescape(cu.group(2)))
                kernels, host, why = kb_cudasplit.split(source, _unescape(cu.group(2)))
            except (OSError, RecursionError) as e:
                kernels, host, why = None, None, str(e)
            stats["split"] = True if kernels is not None else why
            if kernels is not None:
                host, host_pch = lighter_host_half(host)
                halves = (kernels, host)
                stats["host_header"] = _PCH_INCLUDES[host_pch]

    # The precompiled headers: main.cpp's, and the host half's for its flags and header.
    host_cflags = None
    if not cxx or cflags is None:
        stats["pch"] = "no cxx or cflags in build.ninja"
    elif not have_compile:
        stats["pch"] = "no C++ compile step in build.ninja"
    else:
        base = _EXT_NAME.sub("", _unescape(cflags)).strip()
        extra = host_flags_of(_unescape(cuda_cflags), _unescape(cflags)) if halves else ""
        wanted = [(base, PCH_HEADER)] + ([((base + " " + extra).strip(), host_pch)] if halves else [])
        folders = ensure_pchs(pch_dir_for(build_directory), _unescape(cxx), wanted, _unescape(post), extension_header)
        stats["pch"] = folders[0] is not None
        if folders[0]:
            text = set_ninja_variable(text, "cflags", cflags + _pch_include(folders[0]))
        if halves:
            host_cflags = cflags + ((" " + extra.replace("$", "$$")) if extra else "")
            if folders[-1]:
                host_cflags += _pch_include(folders[-1], host_pch)

    if halves and host_cflags is not None:
        os.makedirs(kf_dir, exist_ok=True)
        kf_cu, kf_host = os.path.join(kf_dir, "cuda.cu"), os.path.join(kf_dir, "host.cpp")
        _write_if_changed(kf_cu, halves[0])
        _write_if_changed(kf_host, halves[1])
        text = _set_cuda_source(text, kf_cu)
        cu = _CUDA_STEP.search(text)
        kernels_object = re.match(r"build (\S+):", cu.group(1)).group(1)
        text = text[:cu.end()] + "\nbuild kf_host.o: compile %s\n  cflags = %s" % (_ninja_path(kf_host), host_cflags) \
            + "\n" + LAUNCHER_CHECK.replace("@KERNELS@", kernels_object) + text[cu.end():]
        link = re.search(r"^build \S+: link .*$", text, re.M)
        line = link.group(0)
        pipe = line.find(" |")
        line = line + " kf_host.o" if pipe < 0 else line[:pipe] + " kf_host.o" + line[pipe:]
        # The library is linked only once the check has passed.
        main, order, rest = line.partition(" ||")
        line = main + (" kf_launchers.ok" if " |" in main else " | kf_launchers.ok") + order + rest
        text = text[:link.start()] + line + text[link.end():]
        stats["cuda_header"] = "split"
    elif cu and os.path.basename(cu.group(2)) == "cuda.cu" and not plain_cuda:
        try:
            lighter = lighter_cuda_source(_read(_unescape(cu.group(2))))
        except OSError:
            lighter = None
        stats["cuda_header"] = "torch/types.h" if lighter is not None else "unchanged"
        if lighter is not None:
            os.makedirs(kf_dir, exist_ok=True)
            kf_cu = os.path.join(kf_dir, "cuda.cu")
            _write_if_changed(kf_cu, lighter)
            text = _set_cuda_source(text, kf_cu)
    else:
        stats["cuda_header"] = "unchanged" if cu else None
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
        while True:
            try:
                return run(build_directory, *args, **kwargs)
            except Exception as e:
                # Only the split or the lighter CUDA header can make a source fail that builds
                # unchanged: build again without it, and remember that in the folder.
                if stats["cuda_header"] == "split":
                    # Straight to the source as written: most sources that fail split have an
                    # error of their own, which the lighter header would only report later.
                    marker, why = "no-split", "the CUDA source did not build split into kernels and host code"
                    with open(os.path.join(build_directory, "kf", "plain-cuda"), "w") as f:
                        f.write("after the split failed\n")
                elif stats["cuda_header"] == "torch/types.h" and "kf/cuda.cu" in str(e):
                    marker, why = "plain-cuda", "the CUDA source did not compile with torch/types.h in place of torch/extension.h"
                else:
                    raise
                stats["retried_plain"] = True
                with open(os.path.join(build_directory, "kf", marker), "w") as f:
                    f.write(why + "\n" + str(e)[-4000:] + "\n")
                stats["cuda_header"] = "unchanged"
                if rewrite_build(build_directory, extension_header, original) is None:
                    _write_if_changed(os.path.join(build_directory, "build.ninja"), original)

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
