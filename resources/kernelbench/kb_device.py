"""The device candidates run on (a CUDA ordinal, or the CPU in the testing mode) and PyTorch,
imported on first use so that ``hello`` can say when it is missing. The imported module and
the reason it is missing are this module's state: read them as kb_device._torch and
kb_device._torch_error."""

import importlib.metadata
import os
import platform
import re
import sys

from kb_protocol import BACKEND, RequestError, one_line


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
