"""Several processes (issue 20): two processes on 127.0.0.1, each with 4 host devices, run one partitioned
program over the 8 global devices; the all-reduce in it crosses the processes (Gloo on CPU)."""
import os
import pathlib
import socket
import subprocess
import sys
import tempfile
import time

import pytest

import xlac
from xlac.runtime import distributed as runtime_distributed

REPO = pathlib.Path(xlac.__file__).resolve().parent.parent
TIMEOUT_S = 90  # both children together; each normally takes a few seconds

CHILD_CODE = r'''
import sys
import numpy as np
import xlac
import xlac.numpy as xnp
from xlac.sharding import NamedSharding, PartitionSpec as P, make_array_from_callback, make_mesh

address, pid = sys.argv[1], int(sys.argv[2])
xlac.distributed.initialize(address, 2, pid, initialization_timeout=60)
assert xlac.distributed.process_count() == 2, xlac.distributed.process_count()
assert xlac.distributed.process_index() == pid, xlac.distributed.process_index()
devices = xlac.devices()
local = [d for d in devices if d.process_index == pid]
assert len(devices) == 8 and len(local) == 4, devices

mesh = make_mesh((8,), ("x",))
rows, replicated = NamedSharding(mesh, P("x", None)), NamedSharding(mesh, P())
full = np.arange(24, dtype=np.float32).reshape(8, 3)
seen = []
def block(index):  # called for this process's 4 devices only: it never sees the other half of full
    seen.append(index)
    return full[index]
x = make_array_from_callback((8, 3), rows, block)
assert len(seen) == 4 and x.shape == (8, 3) and x.sharding == rows

f = xlac.compile(lambda a: (xnp.sum(a, axis=0), a * 2), out_shardings=(replicated, rows))
assert "all-reduce" in f.lower(x).compile().as_text()
for _ in range(3):  # back to back: each call waits for its results
    total, doubled = f(x)
    assert np.array_equal(np.asarray(total), full.sum(0)), np.asarray(total)   # replicated: this process's copy
    parts = doubled.addressable_shards
    assert len(parts) == 4 and all(np.array_equal(np.asarray(p.data), 2 * full[p.index]) for p in parts)
    assert {p.index[0].start for p in parts} == set(range(4 * pid, 4 * pid + 4)), parts
    try:
        np.asarray(doubled)
        raise AssertionError("read a whole array that other processes hold parts of")
    except ValueError as e:
        assert "addressable_shards" in str(e)

# data-parallel gradient over both processes equals the one computed whole in this process
w = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
loss = lambda w, x: xnp.mean(xnp.tanh(x @ w) ** 2)
grad = xlac.compile(xlac.grad(loss), in_shardings=(replicated, rows), out_shardings=replicated)
whole = xlac.compile(xlac.grad(loss), device=local[0])(w, full)
np.testing.assert_allclose(np.asarray(grad(w, x)), np.asarray(whole), rtol=1e-5, atol=1e-6)
print("child", pid, "ok", flush=True)
xlac.distributed.shutdown()
'''


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _child_env() -> dict:
    env = dict(os.environ)
    flags = [f for f in env.get("XLA_FLAGS", "").split() if not f.startswith("--xla_force_host_platform_device_count")]
    env["XLA_FLAGS"] = " ".join(flags + ["--xla_force_host_platform_device_count=4"])
    env["JAX_PLATFORMS"] = "cpu"
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


def test_two_processes_all_reduce_over_eight_devices():
    address = f"127.0.0.1:{_free_port()}"
    env = _child_env()
    with tempfile.TemporaryDirectory() as tmp:
        logs = [(open(os.path.join(tmp, f"out{i}"), "w+"), open(os.path.join(tmp, f"err{i}"), "w+")) for i in range(2)]
        children = [subprocess.Popen([sys.executable, "-c", CHILD_CODE, address, str(i)], env=env, cwd=tmp,
                                     stdout=out, stderr=err) for i, (out, err) in enumerate(logs)]
        deadline = time.monotonic() + TIMEOUT_S
        timed_out = False
        try:
            for child in children:
                child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            for child in children:
                if child.poll() is None:
                    child.kill()
                    child.wait()
        report = []
        for i, (child, (out, err)) in enumerate(zip(children, logs)):
            out.seek(0)
            err.seek(0)
            report.append(f"--- process {i}: exit {child.returncode}\n{out.read()}\n{err.read()[-4000:]}")
            out.close()
            err.close()
    report = "\n".join(report)
    assert not timed_out, f"the two processes did not finish in {TIMEOUT_S} s (killed)\n{report}"
    assert [c.returncode for c in children] == [0, 0], report
    assert "child 0 ok" in report and "child 1 ok" in report, report


def test_one_process_without_initialize():
    assert xlac.distributed.process_index() == 0
    assert xlac.distributed.process_count() == 1
    xlac.distributed.shutdown()  # a no-op


def test_initialize_after_the_backend_exists_says_what_to_do():
    xlac.runtime.get_device("cpu")  # this process's backend now exists
    assert runtime_distributed.backend_created()
    with pytest.raises(RuntimeError, match=r"must run before anything creates the XLA backend.*Call it first"):
        xlac.distributed.initialize(f"127.0.0.1:{_free_port()}", 2, 0)
    assert xlac.distributed.process_count() == 1


@pytest.mark.parametrize("args, message", [
    (("127.0.0.1", 2, 0), "host:port"),
    (("127.0.0.1:1234", 0, 0), "num_processes"),
    (("127.0.0.1:1234", 2, 2), r"range\(2\)"),
])
def test_initialize_checks_its_arguments(args, message):
    with pytest.raises(ValueError, match=message):
        xlac.distributed.initialize(*args)
