"""The KernelBench worker's protocol channel: the JSON-lines replies on the worker's own
copy of stdout and the requests on its own copy of stdin, the log on stderr, the tails of
logs and tracebacks that replies carry, and RequestError (a request answered with ok false).
Standard library only; every other module of the worker imports this one."""

import json
import math
import os
import sys
import time
import traceback


PROTOCOL_VERSION = 1
BACKEND = "kernelbench"
LOG_TAIL_BYTES = 8192
_perf_counter = time.perf_counter  # captured before any candidate can replace it


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


class RequestError(Exception):
    """A request the worker cannot serve: answered with ok false."""


def format_exception_tail(exc, limit=LOG_TAIL_BYTES):
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return tail(text, limit)
