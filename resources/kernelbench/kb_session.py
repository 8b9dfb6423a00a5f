"""What both sides of an evaluation share: the integrity checks and their order,
CandidateError, and Session (the device, the options, the problem module, input generation,
poisoned memory and the timing loop)."""

import kb_device
from kb_protocol import RequestError, _perf_counter, log, one_line
from kb_timing import summarize
from kb_build import load_module_from
from kb_compare import tensor_bytes, to_device


CHECK_ORDER = ["forbidden_symbols", "framework_compute", "kernel_launch", "side_stream", "threads", "processes",
               "monkey_patch", "precision", "inputs_unmodified", "output_type", "output_reuse", "shape_generality",
               "physical_floor"]
# Checks whose failure outranks wrong output (docs/diagnosis.md, status precedence).
EARLY_CHECKS = ["forbidden_symbols", "inputs_unmodified", "output_type", "kernel_launch", "side_stream", "threads",
                "processes", "monkey_patch", "precision", "framework_compute", "output_reuse"]
# Checks made in the candidate's process (the others are the harness's own).
CANDIDATE_SIDE_CHECKS = ["forbidden_symbols", "framework_compute", "kernel_launch", "side_stream", "threads",
                         "processes", "monkey_patch", "precision", "inputs_unmodified", "output_type"]


class CandidateError(Exception):
    """The candidate raised (or its process died) while running: status runtime_error."""

    def __init__(self, where, exc=None, info=None):
        super().__init__(where)
        self.where = where
        self.exc = exc
        # What the candidate's process reported: type, message, log, sticky, exit.
        self.info = info or {}


class Session:
    """What the harness and the candidate's process share: the device, the options, the
    problem module, input generation, poisoning and the timing loop."""

    def __init__(self, dev, opts):
        self.dev = dev
        self.torch = kb_device._torch
        self.opts = opts
        self.problem = None
        self.flush_buf = None

    def sync(self):
        self.dev.synchronize()

    def draw_inputs(self, seed, batch_size=None):
        torch = self.torch
        mod = self.problem
        saved = getattr(mod, "batch_size", None)
        if batch_size is not None:
            mod.batch_size = batch_size
        try:
            torch.manual_seed(seed)
            inputs = None
            if self.opts["inputs_on_device"] and not self.dev.cpu:
                try:
                    with torch.device(self.dev.torch_device()):
                        inputs = mod.get_inputs()
                except Exception:
                    torch.manual_seed(seed)
                    inputs = None
            if inputs is None:
                inputs = mod.get_inputs()
        finally:
            if batch_size is not None:
                mod.batch_size = saved
        inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        return to_device(inputs, self.dev.torch_device())

    def poison_free_memory(self):
        """Fills the memory a candidate's next allocations will get with NaN, so that an
        output left unwritten cannot hold a result an earlier call left there."""
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

    def load_problem(self, path):
        try:
            self.problem = load_module_from(path, "kb_problem")
        except BaseException as e:
            raise RequestError("the problem %s cannot be imported: %s: %s" % (path, type(e).__name__, one_line(e, 300)))
        missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if not hasattr(self.problem, n)]
        if missing:
            raise RequestError("the problem %s defines no %s" % (path, ", ".join(missing)))

    def build(self, cls):
        torch = self.torch
        torch.manual_seed(self.opts["seed"])
        init = self.problem.get_init_inputs()
        init = list(init) if isinstance(init, (list, tuple)) else [init]
        return cls(*init).to(self.dev.torch_device())
