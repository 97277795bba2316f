"""Checks of programs split over 8 host devices, run in a child process (XLA's device count is fixed when
jax starts): ``python -m tests.sharding_checks`` prints one JSON object, check name -> "ok" or the failure.
tests/test_sharding.py runs it once and reports each check as a test."""
import os

if __name__ == "__main__":        # not when pytest imports this file looking for doctests
    os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"

import itertools  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import xlac  # noqa: E402
import xlac.numpy as xnp  # noqa: E402
from xlac.sharding import Mesh, NamedSharding, PartitionSpec as P, make_mesh  # noqa: E402

CHECKS = {}
MESH = None


def check(fn):
    CHECKS[fn.__name__] = fn
    return fn


def sharded(spec, mesh=None):
    return NamedSharding(mesh or MESH, spec)


def raises(error, pattern, fn):
    try:
        fn()
    except error as e:
        assert re.search(pattern, str(e)), f"{type(e).__name__}: {e!r} does not match {pattern!r}"
        return str(e)
    raise AssertionError(f"no {error.__name__} raised")


@check
def eight_devices():
    assert len(xlac.devices()) == 8 and MESH.size == 8


@check
def matmul_sharded_inputs_and_outputs():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((16, 64), np.float32), rng.standard_normal((64, 128), np.float32)
    f = xlac.compile(lambda a, b: a @ b, in_shardings=(sharded(P("x", None)), sharded(P(None, "y"))),
                     out_shardings=sharded(P("x", "y")))
    out = f(a, b)
    np.testing.assert_allclose(np.asarray(out), a @ b, rtol=1e-5, atol=1e-5)
    assert out.sharding == sharded(P("x", "y"))
    assert len(out.addressable_shards) == 8
    for shard in out.addressable_shards:
        np.testing.assert_allclose(np.asarray(shard.data), (a @ b)[shard.index], rtol=1e-5, atol=1e-5)
        assert shard.data.shape == (8, 32)
    hlo = f.lower(a, b).compile().as_text()
    entry = hlo[hlo.index("ENTRY"):]
    assert "f32[8,32]" in entry.splitlines()[0] or "f32[8,32]" in entry, "per-device (8 x 32) shape not in the HLO"
    assert "f32[8,64]" in entry     # a's shard: rows split over x


@check
def parameter_shard_of_8_by_32():
    w = np.arange(16 * 128, dtype=np.float32).reshape(16, 128)
    f = xlac.compile(lambda w: w * 2.0, in_shardings=sharded(P("x", "y")))
    hlo = f.lower(w).compile().as_text()
    params = [line for line in hlo.splitlines() if "parameter(0)" in line]
    assert any("f32[8,32]" in line for line in params), params
    np.testing.assert_array_equal(np.asarray(f(w)), w * 2)


@check
def jax_sharding_objects_accepted():
    jmesh = jax.sharding.Mesh(np.array(jax.devices()).reshape(2, 4), ("x", "y"))
    js = jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec("x", "y"))
    a = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
    f = xlac.compile(lambda a: a + 1, in_shardings=js, out_shardings=js)
    out = f(a)
    np.testing.assert_array_equal(np.asarray(out), a + 1)
    assert out.sharding == sharded(P("x", "y"))
    given = jax.device_put(a, js)                       # a sharded jax Array as the argument
    np.testing.assert_array_equal(np.asarray(xlac.compile(lambda a: a * 3)(given)), a * 3)
    moved = xlac.device_put(a, js)
    assert moved.sharding == sharded(P("x", "y"))


@check
def every_spec_round_trips():
    """Every partition spec of a 2-D array over the 2 x 4 mesh: device_put, a compiled elementwise op with
    that sharding in and out, values and each device's part."""
    a = np.arange(8 * 16, dtype=np.float64).reshape(8, 16)
    choices = [None, "x", "y", ("x", "y"), ("y", "x")]
    f_cache = {}
    for d0, d1 in itertools.product(choices, repeat=2):
        used = [n for d in (d0, d1) if d for n in ((d,) if isinstance(d, str) else d)]
        if len(used) != len(set(used)):
            continue
        s = sharded(P(d0, d1))
        arr = xlac.device_put(a, s)
        np.testing.assert_array_equal(np.asarray(arr), a)
        f = f_cache.setdefault(s, xlac.compile(lambda v: v * 2 + 1, out_shardings=s))
        out = f(arr)
        assert out.sharding == s, (s, out.sharding)
        for shard in out.addressable_shards:
            np.testing.assert_array_equal(np.asarray(shard.data), (a * 2 + 1)[shard.index])


@check
def output_sharding_chosen_by_the_partitioner():
    a = xlac.device_put(np.ones((8, 16), np.float32), sharded(P("x", "y")))
    out = xlac.compile(lambda v: xnp.exp(v))(a)
    assert out.sharding == sharded(P("x", "y")), out.sharding
    total = xlac.compile(lambda v: xnp.sum(v))(a)
    assert total.sharding == sharded(P()) and float(total) == 128.0


@check
def constraint_produces_a_collective():
    a = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)

    def f(v):
        w = xlac.with_sharding_constraint(v * 2, sharded(P(None, "y")))
        return w + 1
    g = xlac.compile(f, in_shardings=sharded(P("x", None)), out_shardings=sharded(P(None, "y")))
    np.testing.assert_array_equal(np.asarray(g(a)), a * 2 + 1)
    text = g.lower(a).as_text()
    assert "sdy.sharding_constraint" in text and "sdy.mesh @mesh" in text
    hlo = g.lower(a).compile().as_text()
    assert re.search(r"all-gather|all-to-all|collective-permute|all-reduce", hlo), "no collective"


@check
def inplace_update_keeps_sharding_and_donates():
    base = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
    arr = xlac.device_put(base, sharded(P("x", "y")))
    before = arr._buffer

    @xlac.compile
    def update(v):
        v[0] = -1.0
        v += 1

    update(arr)
    expected = base.copy()
    expected[0] = -1
    expected += 1
    np.testing.assert_array_equal(np.asarray(arr), expected)
    assert arr.sharding == sharded(P("x", "y"))
    assert before.is_deleted(), "the argument's buffer was not donated"
    memory = update.lower(arr).compile().memory_analysis()
    assert memory["alias_size_in_bytes"] > 0, memory


@check
def data_parallel_gradient_equals_unsharded():
    rng = np.random.default_rng(1)
    w, x = rng.standard_normal((16, 4)), rng.standard_normal((32, 16))

    def loss(w, x):
        return xnp.mean(xnp.tanh(x @ w) ** 2)
    data_parallel = xlac.compile(xlac.grad(loss), in_shardings=(sharded(P()), sharded(P(("x", "y"), None))),
                                 out_shardings=sharded(P()))
    reference = jax.grad(lambda w, x: jnp.mean(jnp.tanh(x @ w) ** 2))(jnp.asarray(w, jnp.float32),
                                                                      jnp.asarray(x, jnp.float32))
    unsharded = xlac.compile(xlac.grad(loss))(w, x)
    np.testing.assert_allclose(np.asarray(data_parallel(w, x)), np.asarray(unsharded), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.asarray(data_parallel(w, x)), reference, rtol=1e-5, atol=1e-6)
    assert "all-reduce" in data_parallel.lower(w, x).compile().as_text()


@check
def vmap_and_loops_with_constraints():
    a = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
    row = sharded(P("y"))
    vm = xlac.compile(xlac.vmap(lambda r: xlac.with_sharding_constraint(r * 2, row)), in_shardings=sharded(P("x")))
    expected = jax.vmap(lambda r: r * 2)(a)
    np.testing.assert_array_equal(np.asarray(vm(a)), expected)

    @xlac.compile
    def loop(v):
        return xlac.fori_loop(0, 3, lambda i, c: xlac.with_sharding_constraint(c * 1.5, sharded(P("x", "y"))), v)
    arr = xlac.device_put(a, sharded(P("x", None)))
    np.testing.assert_allclose(np.asarray(loop(arr)), jax.lax.fori_loop(0, 3, lambda i, c: c * 1.5, a))
    grad = xlac.compile(xlac.grad(lambda v: xnp.sum(xlac.with_sharding_constraint(v * v, sharded(P("x"))))))
    np.testing.assert_allclose(np.asarray(grad(arr)), 2 * a)


@check
def autocast_and_sharding_together():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((16, 64), np.float32), rng.standard_normal((64, 32), np.float32)
    with xlac.autocast(dtype="bfloat16"):
        f = xlac.compile(lambda a, b: a @ b, in_shardings=(sharded(P("x")), sharded(P(None, "y"))))
        out = f(a, b)
        assert "bf16" in f.lower(a, b).as_text()
    ref = (a.astype(jnp.bfloat16).astype(np.float32) @ b.astype(jnp.bfloat16).astype(np.float32))
    np.testing.assert_allclose(np.asarray(out).astype(np.float32), ref, rtol=2e-2, atol=2e-1)
    assert out.sharding == sharded(P("x", "y"))


@check
def eager_calls_keep_the_sharding():
    a = np.arange(8 * 16, dtype=np.float64).reshape(8, 16)
    arr = xlac.device_put(a, sharded(P("x", "y")))
    out = xnp.sqrt(arr) + arr
    np.testing.assert_allclose(np.asarray(out), np.sqrt(a) + a)
    assert out.sharding == sharded(P("x", "y"))


@check
def errors_name_the_argument_before_running():
    a = np.ones((8, 16), np.float32)
    raises(ValueError, "names mesh axis 'z', which the mesh lacks", lambda: sharded(P("z")))
    raises(ValueError, "uses a mesh axis for two dimensions", lambda: sharded(P("x", "x")))
    raises(ValueError, r"argument a: dimension 1 of shape \(8, 6\) .* does not divide into 4 parts",
           lambda: xlac.compile(lambda a: a, in_shardings=sharded(P(None, "y")))(np.ones((8, 6))))
    raises(ValueError, r"xlac.device_put: dimension 0 .* does not divide",
           lambda: xlac.device_put(np.ones((3, 4)), sharded(P("x"))))
    other = Mesh(np.array(xlac.devices()[4:]), ("x",))
    elsewhere = xlac.device_put(a, NamedSharding(other, P("x")))
    f = xlac.compile(lambda a: a * 2, in_shardings=NamedSharding(make_mesh((4,), ("x",)), P("x")))
    raises(ValueError, r"argument a: .*devices \[4, 5, 6, 7\]", lambda: f(elsewhere))
    split_otherwise = xlac.device_put(a, sharded(P(None, "y")))
    g = xlac.compile(lambda a: a + 1, in_shardings=sharded(P("x", None)))
    raises(ValueError, r"argument a: the compiled function expects it split as .*PartitionSpec\('x', None\)",
           lambda: g(split_otherwise))
    raises(ValueError, "different meshes", lambda: xlac.compile(lambda a, b: a + b)(elsewhere,
                                                                                   xlac.device_put(a, sharded(P("x")))))
    raises(ValueError, "not a prefix", lambda: xlac.compile(lambda a, b: a + b,
                                                            in_shardings=(sharded(P()),))(a, a))
    assert np.asarray(elsewhere).sum() == 128          # nothing above ran or broke the arrays


@check
def dumps_show_the_split():
    import tempfile
    from xlac.inspection.summary import format_summary, summarize
    a = np.ones((8, 32), np.float32)
    f = xlac.compile(lambda a: a * 2, in_shardings=sharded(P("x", "y")))
    compiled = f.lower(a).compile()
    summary = summarize("f", "a:f32[8,32]", "first call", compiled, {"trace": 0.0})
    assert summary["sharding"]["arguments"]["a"] == {"spec": "('x', 'y')", "per_device": "float32[4,8]"}
    assert "each device holds float32[4,8]" in format_summary(summary)
    with tempfile.TemporaryDirectory() as folder:
        g = xlac.compile(lambda a: a * 3, in_shardings=sharded(P("x", "y")), dump_dir=folder)
        g(a)
        texts = [open(os.path.join(root, name)).read() for root, _, names in os.walk(folder) for name in names
                 if name.endswith((".txt", ".hlo"))]
        assert any("f32[4,8]" in text for text in texts), "no per-device shapes in the dump"


@check
def cache_key_has_the_sharding():
    from xlac.runtime.cache_key import cache_key
    from xlac.runtime.client import compile_options
    a = np.ones((8, 16), np.float32)
    one = xlac.compile(lambda a: a * 2, in_shardings=sharded(P("x"))).lower(a).as_text()
    two = xlac.compile(lambda a: a * 2, in_shardings=sharded(P("y"))).lower(a).as_text()
    devices = MESH.device_list
    assert cache_key(one, devices, compile_options(devices)) != cache_key(two, devices, compile_options(devices))


@check
def persistent_cache_round_trips_a_sharded_executable():
    import tempfile
    a = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
    with tempfile.TemporaryDirectory() as folder:
        previous = xlac.config.cache_dir
        xlac.config.update("cache_dir", folder)
        try:
            outcomes = []
            for _ in range(2):
                f = xlac.compile(lambda v: xnp.sum(v * 2, axis=1), in_shardings=sharded(P("x", "y")))
                out = f(a)
                np.testing.assert_array_equal(np.asarray(out), (a * 2).sum(1))
                outcomes.append(f.lower(a).compile().executable.persistent_cache)
                assert out.sharding == f(a).sharding
        finally:
            xlac.config.update("cache_dir", previous)
    assert outcomes[1] == "hit", outcomes


def main():
    global MESH
    MESH = make_mesh((2, 4), ("x", "y"))
    results = {}
    for name, fn in CHECKS.items():
        try:
            fn()
            results[name] = "ok"
        except Exception:  # noqa: BLE001 - each failure is reported as its own test
            results[name] = traceback.format_exc()
    sys.stdout.write("\nRESULTS " + json.dumps(results) + "\n")


if __name__ == "__main__":
    main()
