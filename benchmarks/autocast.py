"""Autocast: the transformer block and a matmul chain in float32 and under ``xlac.autocast()`` (bfloat16).

Run: python benchmarks/autocast.py [--seq 256] [--d-model 256] [--matmul 1024] [--number 20]
xlac: the block of benchmarks/models.py compiled as written, and compiled with ``xlac.autocast()``.
Peer, in the same run: jax.jit of the same block with the bf16 casts written by hand (JAX has no autocast),
placed where xlac's default policy puts them. Printed: time per call (interleaved timer), the ratio
float32 / autocast (above 1: autocast is faster), and the bytes XLA reports for arguments and
temporaries (``memory_analysis()``).
Goal on a GPU: the block at least 1.8x faster under autocast. On a CPU without bfloat16 units no
speed-up is expected (XLA's CPU dot in bf16 converts to float32 internally): the figure to quote there
is the memory of the intermediates.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import xlac  # noqa: E402
import xlac.numpy as xnp  # noqa: E402
from benchmarks.models import make_transformer_block, transformer_params  # noqa: E402
from benchmarks.timing import interleaved  # noqa: E402

N_HEADS = 4


def make_jax_autocast_block(n_heads: int):
    """The block of benchmarks/models.py in JAX with the casts xlac's default autocast policy inserts:
    matmul operands in bf16, exp/sum/mean/var/pow in float32, binary ops promoting."""
    bf16, f32 = jnp.bfloat16, jnp.float32

    def mm(a, b):
        return jnp.matmul(a.astype(bf16), b.astype(bf16))

    def layer_norm(x, gain, bias):
        x = x.astype(f32)
        mean = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.var(x, axis=-1, keepdims=True)
        return (x - mean) / jnp.sqrt(var + 1e-5) * gain + bias

    def gelu(x):
        return 0.5 * x * (1.0 + jnp.tanh(0.7978845608 * (x + 0.044715 * x.astype(f32) ** 3)))

    def softmax(x):
        e = jnp.exp((x - jnp.max(x, axis=-1, keepdims=True)).astype(f32))
        return e / jnp.sum(e, axis=-1, keepdims=True)

    def attention(x, w_qkv, w_out):
        seq, d_model = x.shape
        head = d_model // n_heads
        q, k, v = jnp.split(mm(x, w_qkv), 3, axis=-1)
        q, k, v = (jnp.transpose(t.reshape(seq, n_heads, head), (1, 0, 2)) for t in (q, k, v))
        scores = mm(q, jnp.swapaxes(k, -1, -2)) / math.sqrt(head)
        scores = jnp.where(jnp.tri(seq, dtype=bool), scores, -1e9)
        out = mm(softmax(scores), v)
        return mm(jnp.transpose(out, (1, 0, 2)).reshape(seq, d_model), w_out)

    def block(x, p):
        x = x + attention(layer_norm(x, p["ln1_g"], p["ln1_b"]), p["w_qkv"], p["w_out"])
        h = layer_norm(x, p["ln2_g"], p["ln2_b"])
        return x + mm(gelu(mm(h, p["w_up"])), p["w_down"])
    return block


def matmul_chain(x, w1, w2, w3):
    return xnp.tanh(x @ w1) @ w2 @ w3


def _mib(n: int) -> str:
    return f"{n / 2 ** 20:8.2f}"


def _xlac_memory(fn, args) -> tuple[int, int]:
    m = xlac.compile(fn).lower(*args).compile().memory_analysis()
    return m["argument_size_in_bytes"], m["temp_size_in_bytes"]


def compare(name: str, fn, args, number: int, jax_fn=None) -> None:
    plain = xlac.compile(fn)
    cast = xlac.compile(xlac.autocast()(fn))
    xargs = jax.tree_util.tree_map(xlac.asarray, args)
    reference = np.asarray(plain(*xargs), np.float64)
    got = np.asarray(cast(*xargs)).astype(np.float64)
    scale = np.abs(reference).max()
    print(f"{name}: max |autocast - float32| / max |float32| = {np.abs(got - reference).max() / scale:.2e}")
    t_plain, t_cast = interleaved(lambda: plain(*xargs).block_until_ready(),
                                  lambda: cast(*xargs).block_until_ready(), number)
    (arg_p, tmp_p), (arg_c, tmp_c) = _xlac_memory(fn, args), _xlac_memory(xlac.autocast()(fn), args)
    print(f"  {'variant':24s} {'ms':>9s} {'args MiB':>9s} {'temps MiB':>9s}")
    print(f"  {'xlac float32':24s} {1e3 * t_plain:9.3f} {_mib(arg_p)} {_mib(tmp_p)}")
    print(f"  {'xlac autocast bf16':24s} {1e3 * t_cast:9.3f} {_mib(arg_c)} {_mib(tmp_c)}")
    print(f"  ratio float32 / autocast: {t_plain / t_cast:.2f}   temporaries autocast / float32: "
          f"{tmp_c / max(tmp_p, 1):.2f}")
    if jax_fn is None:
        return
    jitted = jax.jit(jax_fn)
    jargs = jax.tree_util.tree_map(jax.device_put, args)
    np.testing.assert_allclose(np.asarray(jitted(*jargs)).astype(np.float64), got, rtol=5e-2, atol=5e-2 * scale)
    t_cast, t_jax = interleaved(lambda: cast(*xargs).block_until_ready(),
                                lambda: jitted(*jargs).block_until_ready(), number)
    m = jitted.lower(*jargs).compile().memory_analysis()
    print(f"  {'jax.jit, bf16 casts':24s} {1e3 * t_jax:9.3f} {_mib(m.argument_size_in_bytes)} "
          f"{_mib(m.temp_size_in_bytes)}")
    print(f"  ratio xlac autocast / jax.jit bf16: {t_cast / t_jax:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    on_gpu = jax.default_backend() == "gpu"
    parser.add_argument("--seq", type=int, default=1024 if on_gpu else 256)
    parser.add_argument("--d-model", type=int, default=1024 if on_gpu else 256)
    parser.add_argument("--matmul", type=int, default=4096 if on_gpu else 1024, help="matmul chain size")
    parser.add_argument("--number", type=int, default=20)
    a = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"device: {jax.devices()[0].device_kind} ({jax.default_backend()})")
    x, params = transformer_params(rng, seq=a.seq, d_model=a.d_model)
    compare(f"transformer block (seq {a.seq}, d_model {a.d_model}, {N_HEADS} heads)",
            make_transformer_block(xnp, N_HEADS), (x, params), a.number, make_jax_autocast_block(N_HEADS))
    n = a.matmul
    chain = tuple((rng.standard_normal((n, n)) / math.sqrt(n)).astype(np.float32) for _ in range(4))
    compare(f"matmul chain tanh(x @ w1) @ w2 @ w3 ({n}x{n})", matmul_chain, chain, max(1, a.number // 10))


if __name__ == "__main__":
    main()
