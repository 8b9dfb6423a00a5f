#!/usr/bin/env python3
"""context_probe.py BIN [OUT.json]: what a runner's CUDA context costs under driver settings
(hardware queues, launch queue size, copy queues, the driver API), with the processors busy,
how much contexts made back to back stall another process's driver calls, and, where
nvidia-cuda-mps-control is installed, a context made through MPS, whether it stalls a process
outside MPS, whether memory made outside MPS (cuMemCreate, a POSIX descriptor) maps in an MPS
client, and what a faulting MPS client does to another. BIN is scripts/bench/context_probe.cu built with nvcc -lcuda."""
import os, subprocess, sys, time, statistics, shutil, json
B = sys.argv[1]
BASE = dict(os.environ)
out = {}

def env(**kw):
    e = dict(BASE); e.update({k: str(v) for k, v in kw.items()}); return e

def pairs(text):
    """'k v k v ... err message' -> dict (the message may hold spaces)."""
    head, _, err = text.strip().partition(" err ")
    f = head.split()
    d = {f[i]: f[i + 1] for i in range(0, len(f) - 1, 2)}
    d["err"] = err
    return d

def probe(e, mode="probe"):
    t0 = time.monotonic_ns()
    r = subprocess.run([B, mode], env=e, capture_output=True, text=True, timeout=60)
    t1 = time.monotonic_ns()
    d = pairs(r.stdout)
    d["wall"] = (t1 - t0) / 1e6
    if "end_ns" in d: d["exit"] = (t1 - int(d["end_ns"])) / 1e6
    return d

def series(label, e, n=7, mode="probe"):
    rows = [probe(e, mode) for _ in range(n)]
    for r in rows: print(label, json.dumps(r), flush=True)
    med = lambda k: statistics.median(float(r[k]) for r in rows if k in r)
    s = {k: med(k) for k in ("init", "ctx", "objs", "exit", "wall", "free_mib")}
    s["err"] = rows[-1].get("err", "?")
    out[label] = s
    print("SUM", label, json.dumps(s), flush=True)

C1 = dict(CUDA_DEVICE_MAX_CONNECTIONS=1)
variants = [
    ("conn1", C1, "probe"),
    ("conn8", dict(CUDA_DEVICE_MAX_CONNECTIONS=8), "probe"),
    ("conn1_q025", dict(C1, CUDA_SCALE_LAUNCH_QUEUES="0.25x"), "probe"),
    ("conn1_copy1", dict(C1, CUDA_DEVICE_MAX_COPY_CONNECTIONS=1), "probe"),
    ("conn1_q025_copy1", dict(C1, CUDA_SCALE_LAUNCH_QUEUES="0.25x", CUDA_DEVICE_MAX_COPY_CONNECTIONS=1), "probe"),
    ("conn1_drv", C1, "drv"),
]
load = subprocess.Popen([B, "load", "600"], env=env(**C1), stdout=subprocess.DEVNULL)
time.sleep(2)
base = probe(env(**C1))
print("baseline free with load + probe", base.get("free_mib"))
for label, kw, mode in variants:
    series(label, env(**kw), mode=mode)
# Busy processors: 16 spinning processes, at normal priority and at nice 10.
for nice in (0, 10):
    hogs = [subprocess.Popen(["nice", "-n", str(nice), "python3", "-c", "while True: pass"]) for _ in range(os.cpu_count() or 16)]
    time.sleep(1)
    series(f"conn1_cpuhogs_nice{nice}", env(**C1))
    for h in hogs: h.kill()
    for h in hogs: h.wait()
load.kill(); load.wait()

# Stalls: a judge-like loop of memset + kernel + sync, alone and beside contexts made back to back.
def stall(label, e, secs=5, wait="spin"):
    calls = subprocess.Popen([B, "calls", str(secs + 1), wait], env=env(**C1), stdout=subprocess.PIPE, text=True)
    time.sleep(0.7)
    made = 0
    if e is not None:
        end = time.monotonic() + secs
        while time.monotonic() < end:
            probe(e); made += 1
    o = calls.communicate()[0].strip()
    print("STALL", label, "contexts", made, o, flush=True)
    d = pairs(o.partition(" ")[2])
    out["stall_" + label] = dict(contexts=made, **d)
stall("alone", None)
stall("conn1", env(**C1))
stall("conn1_q025", env(**dict(C1, CUDA_SCALE_LAUNCH_QUEUES="0.25x")))
stall("conn8", env(CUDA_DEVICE_MAX_CONNECTIONS=8))
stall("alone_block", None, wait="block")
stall("conn1_block", env(**C1), wait="block")
stall("alone2", None)

# Memory made by a process outside MPS (the judge), mapped and written by a child: the control here.
def share(label, pipe=""):
    r = subprocess.run([B, "share", pipe], env=env(**C1), capture_output=True, text=True, timeout=60)
    print("share", label, r.stdout.strip(), r.stderr.strip()[-500:], flush=True)
    out["share_" + label] = pairs(r.stdout)
share("plain")

# MPS, when its control program is here: a client's context, and what a faulting client does to another.
mps = shutil.which("nvidia-cuda-mps-control")
print("mps control:", mps, flush=True)
if mps:
    d = "/tmp/kf-mps"; os.makedirs(d + "/pipe", exist_ok=True); os.makedirs(d + "/log", exist_ok=True)
    me = env(CUDA_MPS_PIPE_DIRECTORY=d + "/pipe", CUDA_MPS_LOG_DIRECTORY=d + "/log")
    me1 = dict(me, **{k: str(v) for k, v in C1.items()})  # an MPS client with one hardware queue
    r = subprocess.run([mps, "-d"], env=me, capture_output=True, text=True, timeout=20)
    print("mps start", r.returncode, r.stdout, r.stderr, flush=True)
    if r.returncode == 0:
        try:
            load = subprocess.Popen([B, "load", "600"], env=env(**C1), stdout=subprocess.DEVNULL)
            time.sleep(1)
            first = probe(me1)
            print("mps first client", json.dumps(first), flush=True)
            series("mps_conn1", me1)
            series("mps_default", me)
            share("mps_client", d + "/pipe")
            load.kill(); load.wait()
            # Does a context made through MPS stall a process outside it, as the judge would be?
            stall("mps_conn1", me1)
            load = subprocess.Popen([B, "load", "600"], env=env(**C1), stdout=subprocess.DEVNULL)
            time.sleep(1)
            calls = subprocess.Popen([B, "calls", "4"], env=me, stdout=subprocess.PIPE, text=True)
            time.sleep(1)
            f = subprocess.run([B, "fault"], env=me, capture_output=True, text=True, timeout=30)
            print("mps fault client:", f.stdout.strip(), flush=True)
            print("mps other client:", calls.communicate(timeout=60)[0].strip(), flush=True)
            time.sleep(1)
            print("mps client after fault:", json.dumps(probe(me)), flush=True)
            load.kill(); o = load.wait()
            print("non-MPS load process exit", o, flush=True)
        finally:
            q = subprocess.run([mps], input="quit\n", env=me, capture_output=True, text=True, timeout=30)
            print("mps quit", q.returncode, flush=True)
            for fn in os.listdir(d + "/log"):
                print("--", fn); print(open(os.path.join(d, "log", fn)).read()[-3000:])
json.dump(out, open(sys.argv[2] if len(sys.argv) > 2 else "/dev/null", "w"), indent=1)
print(json.dumps(out, indent=1))
