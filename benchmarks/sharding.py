"""Programs split over 8 CPU host devices: xlac against jax.jit with the same shardings, in one run.

Run: python benchmarks/sharding.py   (sets XLA_FLAGS for 8 host devices itself)

1. A data-parallel MLP training step (batch split over all 8 devices, parameters replicated; the step
   returns the updated parameters): ms per step for both, their ratio, and the collectives in each
   optimized HLO (the same kinds and counts are the goal).
2. A transformer block with Megatron-style tensor-parallel weights over 4 devices (QKV and up-projection
   split by columns, output and down-projection by rows): its result against the unsharded block, and the
   communication ops XLA inserted, for both.
Each call waits for its result (on a 2-core machine, back-to-back calls with collectives can deadlock).
"""
from __future__ import annotations

import os

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"

import collections  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import xlac  # noqa: E402
import xlac.numpy as xnp  # noqa: E402
from benchmarks.models import make_mlp, make_transformer_block, mlp_params, transformer_params  # noqa: E402
from benchmarks.timing import interleaved  # noqa: E402
from xlac.sharding import NamedSharding, PartitionSpec as P, make_mesh  # noqa: E402

COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")


def collectives(hlo: str) -> dict:
    """Collective ops in an optimized HLO module, by kind (their -start/-done halves counted once)."""
    found = re.findall(r" (" + "|".join(COLLECTIVES) + r")(?:-start)?\(", hlo)
    return dict(sorted(collections.Counter(found).items()))


def training_step(xp, grad):
    mlp = make_mlp(xp)

    def loss(params, x, y):
        return xp.mean((mlp(x, *params) - y) ** 2)

    def step(params, x, y):
        grads = grad(loss)(params, x, y)
        return tuple(p - 0.01 * g for p, g in zip(params, grads))
    return step


def data_parallel_mlp(number: int) -> None:
    mesh = make_mesh((8,), ("data",))
    jmesh = jax.sharding.Mesh(np.array(mesh.device_list), ("data",))
    rng = np.random.default_rng(0)
    x, *params = mlp_params(rng, batch=256, d_in=256, d_hidden=512, d_out=128)
    y = rng.standard_normal((256, 128)).astype(np.float32)
    params = tuple(params)

    replicated, batch = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    step = xlac.compile(training_step(xnp, xlac.grad), in_shardings=(replicated, batch, batch),
                        out_shardings=replicated)
    jreplicated = jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec())
    jbatch = jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec("data"))
    jstep = jax.jit(training_step(jnp, jax.grad), in_shardings=(jreplicated, jbatch, jbatch),
                    out_shardings=jreplicated)

    xs = (tuple(xlac.device_put(p, replicated) for p in params), xlac.device_put(x, batch), xlac.device_put(y, batch))
    js = (tuple(jax.device_put(p, jreplicated) for p in params), jax.device_put(x, jbatch), jax.device_put(y, jbatch))
    ours, theirs = step(*xs), jstep(*js)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-5, atol=2e-6)

    def run_xlac():
        for p in step(*xs):
            p.block_until_ready()

    def run_jax():
        jax.block_until_ready(jstep(*js))
    t_xlac, t_jax = (1e3 * t for t in interleaved(run_xlac, run_jax, number))
    print("data-parallel MLP training step (batch 256 split over 8 devices; 256 -> 512 -> 128, float32)")
    print(f"  xlac {t_xlac:.3f} ms, jax.jit {t_jax:.3f} ms, ratio {t_xlac / t_jax:.2f}")
    print(f"  collectives xlac: {collectives(step.lower(*xs).compile().as_text())}")
    print(f"  collectives jax:  {collectives(jstep.lower(*js).compile().as_text())}")


def tensor_parallel_block(number: int) -> None:
    mesh = make_mesh((4,), ("model",))
    jmesh = jax.sharding.Mesh(np.array(mesh.device_list), ("model",))
    x, params = transformer_params(np.random.default_rng(1), seq=64, d_model=128)
    specs = {"w_qkv": P(None, "model"), "w_up": P(None, "model"), "w_out": P("model", None),
             "w_down": P("model", None)}
    shardings = {k: NamedSharding(mesh, specs.get(k, P())) for k in params}
    jshardings = {k: jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec(*specs.get(k, P())))
                  for k in params}
    replicated = NamedSharding(mesh, P())
    jreplicated = jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec())

    block = xlac.compile(make_transformer_block(xnp, n_heads=4), in_shardings=(replicated, shardings),
                         out_shardings=replicated)
    jblock = jax.jit(make_transformer_block(jnp, n_heads=4), in_shardings=(jreplicated, jshardings),
                     out_shardings=jreplicated)
    whole = xlac.compile(make_transformer_block(xnp, n_heads=4))(x, params)
    xs = (xlac.device_put(x, replicated), {k: xlac.device_put(v, shardings[k]) for k, v in params.items()})
    js = (jax.device_put(x, jreplicated), {k: jax.device_put(v, jshardings[k]) for k, v in params.items()})
    out = block(*xs)
    difference = float(np.max(np.abs(np.asarray(out) - np.asarray(whole))))
    np.testing.assert_allclose(np.asarray(out), np.asarray(whole), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(out), np.asarray(jblock(*js)), rtol=1e-4, atol=1e-4)

    t_xlac, t_jax = (1e3 * t for t in interleaved(lambda: block(*xs).block_until_ready(),
                                                  lambda: jblock(*js).block_until_ready(), number))
    print("tensor-parallel transformer block (seq 64, d_model 128, 4 heads; weights split over 4 devices)")
    print(f"  largest difference from the unsharded block: {difference:.2e}")
    print(f"  xlac {t_xlac:.3f} ms, jax.jit {t_jax:.3f} ms, ratio {t_xlac / t_jax:.2f}")
    print(f"  communication xlac: {collectives(block.lower(*xs).compile().as_text())}")
    print(f"  communication jax:  {collectives(jblock.lower(*js).compile().as_text())}")


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    data_parallel_mlp(3 if quick else 50)
    tensor_parallel_block(3 if quick else 50)
