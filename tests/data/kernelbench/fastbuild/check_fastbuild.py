#!/usr/bin/env python3
"""Checks resources/kernelbench/kb_fastbuild.py without PyTorch: a stand-in torch include
tree, torch's build.ninja layout and a stand-in torch.utils.cpp_extension whose ninja step
really runs ninja with the host's C++ compiler. Exits 0 when every check holds; prints what
failed otherwise. Usage: check_fastbuild.py SOURCE_DIR WORK_DIR"""

import os
import re
import subprocess
import sys
import types

src, work = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(src, "resources", "kernelbench"))
import kb_fastbuild as fb  # noqa: E402

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


inc = os.path.join(work, "include")
os.makedirs(os.path.join(inc, "torch"), exist_ok=True)
with open(os.path.join(inc, "torch", "extension.h"), "w") as f:
    f.write("#pragma once\n#include <vector>\n#include <map>\n#include <string>\n"
            "inline int kf_only_in_extension() { return 42; }\n")
with open(os.path.join(inc, "torch", "types.h"), "w") as f:
    f.write("#pragma once\ninline int kf_in_types() { return 7; }\n")
ext_header = os.path.join(inc, "torch", "extension.h")

# 1. The lighter CUDA header.
plain = '#include <torch/extension.h>\n__global__ void k(float* x) { x[0] = 1; }\n'
check(fb.lighter_cuda_source(plain) == plain.replace("torch/extension.h", "torch/types.h"),
      "torch/extension.h becomes torch/types.h in a CUDA source that uses no binding")
check(fb.lighter_cuda_source(plain + "namespace py = pybind11;\n") is None, "a source using pybind11 keeps it")
check(fb.lighter_cuda_source(plain + "auto m = torch::nn::Linear(2, 2);\n") is None,
      "a source using torch::nn keeps it")
check(fb.lighter_cuda_source("__global__ void k() {}\n") is None, "a source without the include is left alone")

NINJA = """ninja_required_version = 1.3
cxx = c++

cflags = -DTORCH_EXTENSION_NAME={name} -DTORCH_API_INCLUDE_EXTENSION_H -isystem {inc} -fPIC -std=c++17
post_cflags = -H
cuda_cflags = -isystem {inc}

rule compile
  command = $cxx -MMD -MF $out.d $cflags -c $in -o $out $post_cflags
  depfile = $out.d
  deps = gcc

rule cuda_compile
  command = $cxx -x c++ -fsyntax-only -D__global__= $cuda_cflags $in && cp $in $out

rule link
  command = $cxx $in -shared -o $out

build main.o: compile {dir}/main.cpp
build cuda.cuda.o: cuda_compile {dir}/cuda.cu

build {name}.so: link main.o | cuda.cuda.o

default {name}.so
"""


def make_build(name, cuda_body):
    d = os.path.join(work, "ext", name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "main.cpp"), "w") as f:
        f.write("#include <torch/extension.h>\nint kf_entry() { return kf_only_in_extension(); }\n")
    with open(os.path.join(d, "cuda.cu"), "w") as f:
        f.write("#include <torch/types.h>\n" + cuda_body)
    with open(os.path.join(d, "build.ninja"), "w") as f:
        f.write(NINJA.format(name=name, inc=inc, dir=d))
    return d


def ninja(d):
    p = subprocess.run(["ninja", "-C", d], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("Error building extension: " + p.stdout + p.stderr)
    return p.stdout + p.stderr


# 2. Stand-in torch: install() wraps its ninja step.
torch = types.ModuleType("torch")
torch.utils = types.ModuleType("torch.utils")
cpp = types.ModuleType("torch.utils.cpp_extension")
cpp._run_ninja_build = lambda build_directory, verbose, error_prefix: ninja(build_directory)
cpp.include_paths = lambda *a, **k: [inc]
torch.utils.cpp_extension = cpp
sys.modules.update({"torch": torch, "torch.utils": torch.utils, "torch.utils.cpp_extension": cpp})
os.environ["KF_KB_PCH_DIR"] = os.path.join(work, "pch")
check(fb.install(), "install() wraps torch's ninja step")

a = make_build("ext_a", "#include <torch/extension.h>\n__global__ void k(float* x) { x[0] = 1; }\n")
out = cpp._run_ninja_build(a, False, "Error building extension")
text = open(os.path.join(a, "build.ninja")).read()
m = re.search(r"-include (\S+)", text)
check(m is not None and m.group(1).endswith(fb.PCH_HEADER) and os.path.exists(m.group(1) + ".gch"),
      "main.cpp is compiled with -include of a built precompiled header")
check(re.search(r"^! .*%s\.gch" % re.escape(fb.PCH_HEADER), out, re.M) is not None,
      "the compiler used the precompiled header (-H marks it with '!')")
done = open(os.path.join(os.path.dirname(m.group(1)), "ok")).read() if m else ""
check("TORCH_EXTENSION_NAME" not in done, "the header is built without the extension's name")
check("kf/cuda.cu" in text and "torch/types.h" in open(os.path.join(a, "kf", "cuda.cu")).read()
      and "torch/extension.h" not in open(os.path.join(a, "kf", "cuda.cu")).read(),
      "the CUDA source is compiled from kf/cuda.cu with torch/types.h")
check(fb.stats["cuda_header"] == "torch/types.h" and fb.stats["pch"] is True, "stats say what was done")

# Same source again: nothing rebuilt (torch rewrites its own build.ninja each time).
with open(os.path.join(a, "build.ninja"), "w") as f:
    f.write(NINJA.format(name="ext_a", inc=inc, dir=a))
again = cpp._run_ninja_build(a, False, "Error building extension")
check("no work to do" in again, "the same source is not rebuilt: " + again.strip().splitlines()[-1])

# Another extension shares the header.
b = make_build("ext_b", "__global__ void k(float* x) { x[0] = 2; }\n")
cpp._run_ninja_build(b, False, "Error building extension")
tb = open(os.path.join(b, "build.ninja")).read()
mb = re.search(r"-include (\S+)", tb)
check(mb is not None and m is not None and mb.group(1) == m.group(1), "another extension uses the same header")
check("kf/cuda.cu" not in tb, "a CUDA source without torch/extension.h is compiled as written")

# 3. A CUDA source that needs torch/extension.h for something unlisted builds after a retry.
c = make_build("ext_c", "#include <torch/extension.h>\nint f() { return kf_only_in_extension(); }\n")
fb.stats["retried_plain"] = False
try:
    cpp._run_ninja_build(c, False, "Error building extension")
    built = True
except RuntimeError as e:
    built = False
    print(e)
check(built and fb.stats["retried_plain"], "a source failing with torch/types.h is built again as written")
check(os.path.exists(os.path.join(c, "kf", "plain-cuda")), "and its folder remembers it")
tc = open(os.path.join(c, "build.ninja")).read()
check("kf/cuda.cu" not in tc and "-include" in tc, "the retry keeps the precompiled header")

# 4. A real compile error is reported, not hidden.
d = make_build("ext_d", "int g() { return undeclared_name; }\n")
try:
    cpp._run_ninja_build(d, False, "Error building extension")
    check(False, "a compile error raises")
except RuntimeError as e:
    check("undeclared_name" in str(e), "a compile error raises with the compiler's message")

# 5. The worker's process watch does not blame a candidate for the fast build's own
# processes (the compiler's version, the precompiled header), which run during its import.
import kb_worker  # noqa: E402

watch = kb_worker.ProcessWatch()
watch.install()
fb.compiler_identity.cache_clear()
fb.compiler_identity("c++")
check(not watch.started and any("kb_fastbuild" in e for e in watch.internal),
      "the fast build's processes are the harness's, not the candidate's: started=%s" % watch.started)
subprocess.run(["true"])
check(any("true" in e for e in watch.started), "a process started here (the test) is still seen")

# 6. Turned off: nothing changes.
os.environ["KF_KB_FASTBUILD"] = "0"
check(not fb.enabled(), "KF_KB_FASTBUILD=0 turns it off")
sys.exit(1 if failures else 0)
