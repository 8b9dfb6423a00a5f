"""Splits a load_inline CUDA source into its kernels and its PyTorch host code.

A candidate's CUDA source usually holds two kinds of code: the kernels (``__global__`` and
``__device__`` functions, constants, macros) and the host wrappers that take ``torch::Tensor``
arguments and launch the kernels. Compiled as one file, nvcc's front end, its device pass and
the host compiler each parse PyTorch's headers for the wrappers' sake: most of a cold build.

``split(source)`` returns the two halves as separate sources:

- **kernels** (compiled by nvcc with the candidate's own CUDA flags, without PyTorch's
  headers): the source's items that use nothing of PyTorch, and for every kernel a launcher,
  ``void kf_launch_<kernel>(dim3 grid, dim3 block, size_t shared, cudaStream_t stream,
  <the kernel's parameters>)``, that launches it with ``<<<...>>>``;
- **host** (compiled by the host C++ compiler, with PyTorch's precompiled header): the items
  that use PyTorch and the plain host functions, each launch ``k<<<g, b, s, st>>>(args)``
  rewritten to ``kf_launch_k(g, b, s, st, args)``, and each kernel's definition replaced by
  its launcher's declaration (same place, so every type it names is declared before it).

A kernel template's launcher is a template of the same parameters; the kernels' half
instantiates it for every launch of the host code: for each type an enclosing
``AT_DISPATCH_FLOATING_TYPES``, ``_INTEGRAL_TYPES`` or ``_ALL_TYPES`` (or their ``_AND``
forms with ``Half`` and ``BFloat16``, and ``_FLOATING_TYPES_AND_HALF``) gives ``scalar_t``,
or with the template arguments as written. Device code may use ``at::Half`` and
``at::BFloat16``; the kernels' half then includes their c10 headers alone.

Items are the source's top-level declarations: functions, structs, variables, namespaces,
preprocessor lines. Every item of either half keeps its line number (``#line``), so compiler
messages point into the source as written. A source is not split, and ``split`` says why,
wherever the halves could differ from the whole: a kernel template launched with arguments
the kernels' half cannot name (types that need PyTorch, a local variable) or without any, a
kernel inside a namespace, a device function or ``__constant__`` that host code names
(``cudaMemcpyToSymbol``, ``cudaFuncSetAttribute``), a device item that uses PyTorch beyond
its half types,
conditional compilation at top level, separate compilation (``-rdc``).
"""

import bisect
import re

# Tokens that only compile with PyTorch's headers.
_TORCH = re.compile(r"\btorch\b|\bat::|\bc10::|\bTensor\b|\bTORCH_\w+|\bAT_\w+|\bC10_\w+|\bpybind11\b|\bpy::|"
                    r"\bTHC\w*|\bTHP\w*|\bcaffe2\b")
# Tokens that only compile as CUDA device code.
_DEVICE = re.compile(r"\b__global__\b|\b__device__\b|\b__shared__\b|\b__constant__\b|\b__managed__\b|"
                     r"\bthreadIdx\b|\bblockIdx\b|\bblockDim\b|\bgridDim\b|\b__syncthreads\w*|\b__shfl\w*|"
                     r"\batomic[A-Z]\w*|\b__ldg\b|\bwarpSize\b|\b__forceinline__\b|\b__noinline__\b|"
                     r"\bcooperative_groups\b|\bnvcuda\b|\b__nanosleep\b|\basm\s+volatile\b|\basm\s*\(")
_TORCH_INCLUDE = re.compile(r"^\s*#\s*include\s*[<\"](torch|ATen|c10|pybind11|THC|caffe2|Python)\b")
# Headers only a CUDA compiler reads: the kernels' half alone includes them.
_DEVICE_INCLUDE = re.compile(r"^\s*#\s*include\s*[<\"](cub/|cooperative_groups|mma\.h|cuda/|cuda_pipeline|"
                             r"cuda_awbarrier|cute/|cutlass/|sm_\d+_intrinsics)")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_TYPE_WORDS = {"int", "float", "double", "char", "long", "short", "unsigned", "signed", "bool", "void", "const",
               "volatile", "size_t", "int64_t", "int32_t", "uint32_t", "uint64_t", "half", "__half"}

# Headers PyTorch's would have brought to the kernels; cheap next to PyTorch's own.
KERNEL_PRELUDE = ("#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
                  "#include <cstdint>\n#include <cstddef>\n#include <cmath>\n#include <cfloat>\n#include <climits>\n"
                  "#include <algorithm>\n#include <type_traits>\n#include <utility>\n")


# AT_DISPATCH_* macros whose types the kernels' half can name without PyTorch, in the order
# c10 lists them (scalar_t is each in turn).
_INTEGRAL = ["uint8_t", "int8_t", "int", "int64_t", "int16_t"]
_DISPATCH_TYPES = {"AT_DISPATCH_FLOATING_TYPES": ["double", "float"],
                   "AT_DISPATCH_INTEGRAL_TYPES": _INTEGRAL,
                   "AT_DISPATCH_ALL_TYPES": _INTEGRAL + ["double", "float"]}
_DISPATCH = re.compile(r"\b(AT_DISPATCH_\w+)\s*\(")
# PyTorch's half and bfloat16 types: device code may use them, and the kernels' half then
# includes their headers alone (light next to PyTorch's others), as KERNEL_SCALARS.
_TORCH_SCALARS = re.compile(r"\b(?:at|c10)::(?:Half|BFloat16)\b")
KERNEL_SCALARS = ("#include <c10/util/Half.h>\n#include <c10/util/BFloat16.h>\n"
                  "namespace at { using ::c10::Half; using ::c10::BFloat16; }\n")
# The ScalarType names an AT_DISPATCH_*_AND* macro may add, as the kernels' half names them.
_EXTRA_DISPATCH_TYPES = {"Half": "at::Half", "BFloat16": "at::BFloat16"}
# A template argument the kernels' half can name: a built-in or <cstdint> type, a number, a
# truth value.
_PLAIN_TARG = re.compile(r"^(?:(?:const|unsigned|signed|short|long|int|char|float|double|bool|size_t|"
                         r"u?int(?:8|16|32|64)_t|half|__half|__nv_bfloat16)\b\s*)+\**$|^-?\d+[uUlL]*$|^true$|^false$|"
                         r"^(?:at|c10)::(?:Half|BFloat16)$")


class Item:
    __slots__ = ("text", "code", "line", "kind", "name", "params", "template", "thead", "tparams")

    def __init__(self, text, code, line):
        self.text, self.code, self.line = text, code, line
        self.kind = self.name = self.params = None
        self.template = False
        self.thead = None     # a kernel template's "template <...>", as written
        self.tparams = None   # and its parameters' names


def blank_comments_and_strings(source):
    """The source with comments and the contents of string and character literals replaced
    by spaces (newlines kept), so that what is left is code at the same offsets."""
    out = list(source)
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if c == "/" and i + 1 < n and source[i + 1] == "/":
            j = source.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = " "
            i = j
        elif c == "/" and i + 1 < n and source[i + 1] == "*":
            j = source.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if source[k] != "\n":
                    out[k] = " "
            i = j
        elif c == "R" and source.startswith('R"', i) and (i == 0 or not (source[i - 1].isalnum() or source[i - 1] == "_")):
            m = re.match(r'R"([^()\\\s]{0,16})\(', source[i:])
            if not m:
                i += 1
                continue
            end = source.find(")" + m.group(1) + '"', i + m.end())
            end = n if end < 0 else end + len(m.group(1)) + 2
            for k in range(i + 2, end - 1):
                if source[k] != "\n":
                    out[k] = " "
            i = end
        elif c in "\"'":
            j = i + 1
            while j < n and source[j] != c and source[j] != "\n":
                j += 2 if source[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                out[k] = " "
            i = j + 1
        else:
            i += 1
    return "".join(out)


def top_level_items(source):
    """The source's top-level items, in order: preprocessor lines, and declarations that end
    with ';' or with the '}' of a function, namespace or linkage block."""
    code = blank_comments_and_strings(source)
    items = []
    n = len(code)
    i = 0
    start = None
    depth = 0
    at_line_start = True

    def push(a, b):
        text = source[a:b]
        lead = len(text) - len(text.lstrip())
        text_line = line_at(a + lead)
        items.append(Item(text[lead:].rstrip(), code[a + lead:b].rstrip(), text_line))

    newlines = [k for k, ch in enumerate(source) if ch == "\n"]

    def line_at(pos):
        return bisect.bisect_left(newlines, pos) + 1

    while i < n:
        c = code[i]
        if c == "\n":
            at_line_start = True
            i += 1
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if at_line_start and c == "#" and depth == 0 and start is None:
            j = i
            while True:
                e = code.find("\n", j)
                if e < 0:
                    e = n
                    break
                if code[e - 1] == "\\":
                    j = e + 1
                    continue
                break
            push(i, e)
            i = e
            continue
        at_line_start = False
        if start is None:
            start = i
        if c in "({[":
            depth += 1
        elif c in ")}]":
            depth -= 1
            if depth < 0:
                raise ValueError("unbalanced '%s' at line %d" % (c, line_at(i)))
            if c == "}" and depth == 0:
                head = code[start:i]
                brace = head.find("{")
                before = head[:brace] if brace >= 0 else head
                th = _template_head(before)
                if th:  # a template's head may hold '=' (default arguments) or 'class'
                    before = before[before.index(th[0]) + len(th[0]):]
                # A function, namespace or linkage block ends at its '}'; a class, an enum or
                # an initializer goes on to its ';'.
                aggregate = re.search(r"\b(struct|class|union|enum)\b|=", before)
                if not aggregate:
                    push(start, i + 1)
                    start = None
        elif c == ";" and depth == 0:
            push(start, i + 1)
            start = None
        i += 1
    if depth != 0:
        raise ValueError("unbalanced braces at the end of the source")
    if start is not None and code[start:].strip():
        push(start, n)
    return items


def _matching_open(code, close):
    depth = 0
    for k in range(close, -1, -1):
        if code[k] == ")":
            depth += 1
        elif code[k] == "(":
            depth -= 1
            if depth == 0:
                return k
    return -1


def _split_top_commas(text):
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def _function_head(item):
    """(name, parameter text, head code) of a function definition, or None."""
    code = item.code
    brace = code.find("{")
    if brace < 0:
        return None
    head = code[:brace].rstrip()
    head = re.sub(r"\s*(const|noexcept|override|final)\s*$", "", head)
    if not head.endswith(")"):
        return None
    op = _matching_open(head, len(head) - 1)
    if op <= 0:
        return None
    m = re.search(r"([A-Za-z_][\w:]*)\s*$", head[:op])
    if not m:
        return None
    return m.group(1), item.text[op + 1:len(head) - 1], head


def _template_head(text):
    """(head text, parameter names) of a leading "template <...>", or None where a parameter
    is a pack or a template template parameter, or has no name."""
    m = re.match(r"\s*template\s*<", text)
    if not m:
        return None
    depth, k = 1, m.end()
    while k < len(text) and depth:
        depth += {"<": 1, ">": -1}.get(text[k], 0)
        k += 1
    if depth:
        return None
    names = []
    for part in _split_top_commas(text[m.end():k - 1]):
        part = part.split("=")[0]
        if "..." in part or re.match(r"\s*template\b", part):
            return None
        words = _IDENT.findall(part)
        if len(words) < 2:
            return None
        names.append(words[-1])
    return text[:k].strip(), names


def classify(item):
    """Sets item.kind: 'include-torch', 'include-device' (a header only nvcc reads), 'pre'
    (another preprocessor line), 'kernel', 'device',
    'torch' (host code using PyTorch), 'function' (a plain host function), or 'shared' (types,
    constants, declarations both halves may need)."""
    code = item.code
    if code.startswith("#"):
        item.kind = ("include-torch" if _TORCH_INCLUDE.match(code)
                     else "include-device" if _DEVICE_INCLUDE.match(code) else "pre")
        return
    uses_torch = bool(_TORCH.search(code))
    uses_device = bool(_DEVICE.search(code))
    # Device code may use PyTorch's half and bfloat16 types (KERNEL_SCALARS), nothing else of it.
    device_torch = bool(_TORCH.search(_TORCH_SCALARS.sub(" ", code)))
    item.template = bool(re.match(r"\s*template\s*<", code))
    if re.match(r'\s*(inline\s+)?namespace\b|\s*extern\s*"[^"]*"\s*\{', code):
        # A namespace or a linkage block: one item, wherever its declarations go.
        item.kind = "block-device" if uses_device else ("torch" if uses_torch else "shared")
        return
    head = _function_head(item)
    if re.search(r"\b__global__\b", code):
        if device_torch:
            item.kind = "kernel-torch"
        elif head:
            item.kind = "kernel"
            item.name, item.params = head[0], head[1]
            if item.template:
                th = _template_head(item.text)
                if th:
                    item.thead, item.tparams = th
        else:  # a declaration: the definition comes later
            item.kind = "device"
            m = re.search(r"([A-Za-z_]\w*)\s*\([^;]*;\s*$", code)
            item.name = m.group(1) if m else None
        return
    if uses_device:
        item.kind = "device-torch" if device_torch else "device"
        if head:
            item.name = head[0]
        else:
            m = re.search(r"([A-Za-z_]\w*)\s*(\[[^\]]*\]\s*)*(=[^;]*)?;\s*$", code)
            item.name = m.group(1) if m else None
        return
    if uses_torch:
        item.kind = "torch"
        return
    if head and not re.match(r'\s*namespace\b|\s*extern\b(?!\s*"[^"]*"\s*[^{\s])', code):
        # A host function, with C linkage or not: device code cannot call it unless it is
        # constexpr, and a definition in both halves would not link.
        item.kind = "shared" if re.search(r"\bconstexpr\b", head[2]) else "function"
        item.name = head[0]
        return
    if (not re.match(r"\s*(typedef|using|template|struct|class|union|enum|namespace|extern|static_assert)\b", code)
            and not re.search(r"\b(const|constexpr)\b", code) and "(" not in code.split("=")[0]):
        # A variable that can change: device code cannot read a host variable, and two
        # definitions of it would not link.
        item.kind = "function"
        return
    item.kind = "shared"


def _launches(code):
    """Each ``k<<<`` or ``k<args><<<`` of the code: (start, name, template arguments or None,
    the offsets of their '<' and '>' or None, offset just past '<<<')."""
    out, pos = [], 0
    while True:
        at = code.find("<<<", pos)
        if at < 0:
            return out
        pos = at + 3
        k, targs, span = at, None, None
        while k > 0 and code[k - 1] in " \t\r\n":
            k -= 1
        if k > 0 and code[k - 1] == ">":
            depth, j = 0, k - 1
            while j >= 0:
                depth += {">": 1, "<": -1}.get(code[j], 0)
                if depth == 0:
                    break
                j -= 1
            if j < 0:
                out.append((at, None, None, None, pos))
                continue
            targs, span, k = code[j + 1:k - 1], (j, k - 1), j
            while k > 0 and code[k - 1] in " \t\r\n":
                k -= 1
        m = re.search(r"[A-Za-z_]\w*$", code[:k])
        out.append((m.start() if m else at, m.group(0) if m else None, targs, span, pos))


def _dispatch_around(code, at):
    """(name, arguments) of the innermost AT_DISPATCH_* call whose parentheses hold offset
    `at`, or (None, None)."""
    best = (None, None)
    for m in _DISPATCH.finditer(code[:at]):
        depth, k = 1, m.end()
        while k < len(code) and depth:
            depth += {"(": 1, ")": -1}.get(code[k], 0)
            k += 1
        if k > at:
            best = (m.group(1), code[m.end():k - 1])
    return best


def _dispatch_types(macro, args):
    """The types an AT_DISPATCH_* macro gives scalar_t, as the kernels' half names them, or
    None where it gives one that needs PyTorch's headers: the floating, integral or all types,
    and with _AND_HALF or _AND, _AND2, _AND3 of Half and BFloat16."""
    if macro in _DISPATCH_TYPES:
        return list(_DISPATCH_TYPES[macro])
    if macro == "AT_DISPATCH_FLOATING_TYPES_AND_HALF":
        return _DISPATCH_TYPES["AT_DISPATCH_FLOATING_TYPES"] + ["at::Half"]
    m = re.match(r"(AT_DISPATCH_(?:FLOATING|INTEGRAL|ALL)_TYPES)_AND(\d?)$", macro or "")
    if not m:
        return None
    count = int(m.group(2) or 1)
    extra = _split_top_commas(args)[:count]
    names = [re.sub(r"^(?:(?:at|c10)::)?(?:ScalarType::|k)", "", e.strip()) for e in extra]
    if len(names) != count or any(n not in _EXTRA_DISPATCH_TYPES for n in names):
        return None
    return _DISPATCH_TYPES[m.group(1)] + [_EXTRA_DISPATCH_TYPES[n] for n in names]


def _instances(targs, code, at, known, line):
    """The concrete template arguments a launch ``k<targs>`` at offset `at` stands for: one
    list per type that an enclosing AT_DISPATCH_* gives scalar_t, or the arguments as they
    are. Raises ValueError for arguments the kernels' half cannot name."""
    parts = _split_top_commas(targs)
    if any("scalar_t" in _IDENT.findall(p) for p in parts):
        macro, args = _dispatch_around(code, at)
        types = _dispatch_types(macro, args) if macro else None
        if types is None:
            raise ValueError("a kernel template launched with scalar_t at line %d %s" % (
                line, "in %s, whose types need PyTorch's headers" % macro if macro else "outside an AT_DISPATCH_*"))
        choices = [[re.sub(r"\bscalar_t\b", t, p) for p in parts] for t in types]
    else:
        choices = [parts]
    for p in parts:
        if not (_PLAIN_TARG.match(p) or p == "scalar_t" or p in known):
            raise ValueError("a kernel template launched at line %d with '%s', which the kernels' half cannot name"
                             % (line, p))
    return [", ".join(c) for c in choices]


def _rewrite_launches(text, code, kernels, known, instances, line):
    """Host text with every ``k<<<cfg>>>(args)`` of a known kernel made a launcher call, and
    a kernel template's launch ``k<T><<<cfg>>>(args)`` made ``kf_launch_k<T>(cfg, args)``,
    its concrete arguments added to instances[k]. Raises ValueError for a launch it cannot
    rewrite."""
    out, pos = [], 0
    for start, name, targs, span, after in _launches(code):
        if start < pos:
            continue
        if name is None or name not in kernels:
            raise ValueError("a launch of '%s', which is not a kernel of this source" % (name or "?"))
        kernel = kernels[name]
        if kernel.template and targs is None:
            raise ValueError("a launch of the kernel template '%s' without its template arguments" % name)
        if not kernel.template and targs is not None:
            raise ValueError("a launch of '%s' with template arguments" % name)
        close = code.find(">>>", after)
        if close < 0:
            raise ValueError("a launch of '%s' without '>>>'" % name)
        cfg = _split_top_commas(code[after:close])
        if not 2 <= len(cfg) <= 4:
            raise ValueError("a launch of '%s' with %d configuration values" % (name, len(cfg)))
        k = close + 3
        while k < len(code) and code[k] in " \t\r\n":
            k += 1
        if k >= len(code) or code[k] != "(":
            raise ValueError("a launch of '%s' without its arguments" % name)
        # The configuration as written (its strings kept), by the offsets found in the code.
        cfg_text, off = [], after
        for part in cfg:
            at = code.find(part, off)
            cfg_text.append(text[at:at + len(part)])
            off = at + len(part)
        cfg_text += ["0"] * (4 - len(cfg_text))
        rest = code[k + 1:].lstrip()
        sep = "" if rest.startswith(")") else ", "
        targ_text = ""
        if targs is not None:
            targ_text = text[span[0]:span[1] + 1]
            for inst in _instances(targs, code, start, known, line + code.count("\n", 0, start)):
                if inst not in instances.setdefault(name, []):
                    instances[name].append(inst)
        out.append(text[pos:start])
        out.append("kf_launch_%s%s(%s%s" % (name, targ_text, ", ".join(cfg_text), sep))
        pos = k + 1
    out.append(text[pos:])
    return "".join(out)


def _parameters(params):
    """Each parameter's (text, name); raises ValueError where a name cannot be found."""
    parts = _split_top_commas(blank_comments_and_strings(params))
    if parts == ["void"]:
        return []
    out = []
    for p in parts:
        if "=" in p or "[" in p or "..." in p or "(" in p:
            raise ValueError("a kernel parameter '%s' (default value, array, pack or function)" % p.strip())
        words = _IDENT.findall(p)
        if len(words) < 2 or words[-1] in _TYPE_WORDS:
            raise ValueError("a kernel parameter without a name: '%s'" % p.strip())
        out.append((" ".join(p.split()), words[-1]))
    return out


def kernel_launcher(kernel, head, decl, targs, names):
    return "%svoid kf_launch_%s(%s) {\n    %s%s<<<kf_grid, kf_block, kf_shared, kf_stream>>>(%s);\n}\n" % (
        head, kernel.name, decl, kernel.name, targs, ", ".join(names))


def split(source, filename="cuda.cu"):
    """(kernels, host, None) or (None, None, why not)."""
    try:
        items = top_level_items(source)
    except ValueError as e:
        return None, None, "cannot read the source's structure: %s" % e
    for it in items:
        classify(it)
    for it in items:
        if it.kind == "pre" and re.match(r"#\s*(if|ifdef|ifndef|elif|else|endif)\b", it.code):
            return None, None, "conditional compilation at top level (line %d)" % it.line
        if it.kind in ("kernel-torch", "device-torch"):
            return None, None, "device code that uses PyTorch (line %d)" % it.line
        if it.kind == "kernel" and it.template and it.thead is None:
            return None, None, "a kernel template with a parameter pack or an unnamed parameter (line %d)" % it.line
        if it.kind == "kernel" and (not it.name or it.params is None or "::" in it.name):
            return None, None, "a kernel that is not a plain definition (line %d)" % it.line
        if it.kind == "block-device":
            return None, None, "device code inside a namespace or a linkage block (line %d)" % it.line
    kernels = {}
    for it in items:
        if it.kind == "kernel":
            if it.name in kernels:
                return None, None, "two kernels named '%s' (overloads)" % it.name
            kernels[it.name] = it
    if not kernels:
        return None, None, "no kernel to compile apart"
    if not any(it.kind == "torch" for it in items):
        return None, None, "no host code that uses PyTorch"
    device_names = {it.name for it in items if it.kind in ("kernel", "device") and it.name}
    # Names both halves declare (macros, constants, types): template arguments may use them.
    known = set()
    for it in items:
        if it.kind == "pre":
            m = re.match(r"#\s*define\s+([A-Za-z_]\w*)", it.code)
            if m:
                known.add(m.group(1))
        elif it.kind == "shared":
            m = re.search(r"([A-Za-z_]\w*)\s*(\[[^\]]*\]\s*)*(=[^;]*|\{[^;]*\})?;\s*$", it.code)
            if m and re.search(r"\b(constexpr|const)\b", it.code):
                known.add(m.group(1))
            m = re.match(r"\s*(?:typedef\b.*?([A-Za-z_]\w*)\s*;|using\s+([A-Za-z_]\w*)\s*=|(?:struct|class|enum(?:\s+class)?)\s+([A-Za-z_]\w*))",
                         it.code, re.S)
            if m:
                known.add(next(g for g in m.groups() if g))
    instances = {}

    kern, host = [KERNEL_PRELUDE], []
    launchers = []

    def place(part, it, text):
        part.append('#line %d "%s"\n%s\n' % (it.line, filename, text))

    try:
        for it in items:
            if it.kind == "include-torch":
                place(host, it, it.text)
            elif it.kind == "include-device":
                place(kern, it, it.text)
            elif it.kind in ("pre", "shared"):
                place(kern, it, it.text)
                place(host, it, it.text)
            elif it.kind == "kernel":
                params = _parameters(it.params)
                names = [p[1] for p in params]
                decl = ", ".join(["dim3 kf_grid", "dim3 kf_block", "size_t kf_shared", "cudaStream_t kf_stream"]
                                 + [p[0] for p in params])
                place(kern, it, it.text)
                # A kernel template's launcher is a template of the same parameters; the
                # kernels' half instantiates it for every launch of the host code (below).
                head = it.thead + "\n" if it.template else ""
                targs = "<%s>" % ", ".join(it.tparams) if it.template else ""
                launchers.append(kernel_launcher(it, head, decl, targs, names))
                place(host, it, "%svoid kf_launch_%s(%s);" % (head, it.name, decl))
            elif it.kind == "device":
                place(kern, it, it.text)
            else:  # torch, function: host code
                text = _rewrite_launches(it.text, it.code, kernels, known, instances, it.line) \
                    if "<<<" in it.code else it.text
                code = blank_comments_and_strings(text)
                if "<<<" in code:
                    raise ValueError("a launch at line %d that cannot be rewritten (a template argument?)" % it.line)
                used = set(_IDENT.findall(code)) & device_names
                if used:
                    raise ValueError("host code at line %d names device code other than by a launch: %s"
                                     % (it.line, ", ".join(sorted(used))))
                place(host, it, text)
    except ValueError as e:
        return None, None, str(e)
    for name in kernels:
        for inst in instances.get(name, []):
            launchers.append("template decltype(kf_launch_%s<%s>) kf_launch_%s<%s>;\n" % (name, inst, name, inst))
    if any(_TORCH_SCALARS.search(it.code) for it in items if it.kind in ("kernel", "device")) \
            or any(_TORCH_SCALARS.search(i) for insts in instances.values() for i in insts):
        kern[0] = KERNEL_PRELUDE + KERNEL_SCALARS
    kern.append("\n// Launchers for the host code, compiled apart.\n" + "\n".join(launchers))
    host.insert(0, "#include <cuda_runtime.h>\n")
    return "".join(kern), "".join(host), None
