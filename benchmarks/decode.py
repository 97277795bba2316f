"""A NumPy language model's decode loop (issue 34): the Llama-style decoder of tests/numpy_llama.py, its KV
caches written in place at a traced position, against NumPy running it and the same model written by hand
in JAX, in one run.

Run: python benchmarks/decode.py [--small]
(full size: dim 512, 8 layers, 8 heads, 2 KV heads, FFN 1536, vocab 1024, 512 positions, float64 as NumPy;
--small: dim 128, 2 layers, 128 positions.)

Each case prefills a 16-token prompt, then decodes 64 tokens greedily (batch 1; the argmax on the host after
every step, as a NumPy user's loop does). Time per token is that of the 64 decode steps, best of the rounds:
- NumPy: the model itself;
- xlac: the same object after ``xlac.to_device(model)`` (weights and caches resident, the caches written in
  place), its ``__call__`` compiled with no static argument: the prompt per length (its mask is ``np.zeros((L,
  start_pos))``, a shape from the Python int ``start_pos``, whose value is then taken), every decode step one
  program whatever the position;
- JAX by hand: the model written functionally: ``lax.dynamic_slice`` of the rotary tables,
  ``lax.dynamic_update_slice`` into the caches (donated), attention over the whole cache with a mask of the
  positions so far; ``jax.jit`` once per prompt length and once for the decode steps.
Also xlac's compile count and total compile time over the first round, whether the three generate the same
tokens, and one decode step of xlac and of JAX (then of NumPy) timed alternately (the loops above run one after
the other, so a shared machine's load can favour any of them).
"""
from __future__ import annotations

import argparse
import copy
import logging
import re
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

import xlac  # noqa: E402
from xlac.config import config  # noqa: E402
from benchmarks.timing import interleaved  # noqa: E402
from tests.numpy_llama import Llama  # noqa: E402

jax.config.update("jax_enable_x64", True)
PROMPT, STEPS, ROUNDS = 16, 64, 3
SIZES = {"full": dict(vocab=1024, dim=512, n_layers=8, n_heads=8, n_kv_heads=2, hidden=1536, max_seq_len=512),
         "small": dict(vocab=256, dim=128, n_layers=2, n_heads=8, n_kv_heads=2, hidden=384, max_seq_len=128)}


def greedy(step, prompt) -> tuple[np.ndarray, float]:
    """The prompt's next token and ``STEPS`` more, greedily; and the seconds the decode steps took."""
    token = np.argmax(np.asarray(step(prompt, 0)), axis=-1)
    tokens, position = [token], prompt.shape[1]
    start = time.perf_counter()
    for _ in range(STEPS):
        token = np.argmax(np.asarray(step(token[:, None], position)), axis=-1)
        tokens.append(token)
        position += 1
    return np.stack(tokens, axis=1), time.perf_counter() - start


# ---------------------------------------------------------------- xlac


class CompileTimes(logging.Handler):
    """Collects the milliseconds of each compile from xlac's compile log."""

    def __init__(self):
        super().__init__()
        self.ms = []

    def emit(self, record):
        found = re.search(r" in ([0-9.]+) ms \(", record.getMessage())
        if found:
            self.ms.append(float(found.group(1)))


# ---------------------------------------------------------------- JAX by hand


def jax_parameters(model: Llama) -> dict:
    layers = [dict(attention_norm=l.attention_norm.weight, ffn_norm=l.ffn_norm.weight, wq=l.attention.wq,
                   wk=l.attention.wk, wv=l.attention.wv, wo=l.attention.wo, w1=l.feed_forward.w1,
                   w2=l.feed_forward.w2, w3=l.feed_forward.w3) for l in model.layers]
    return jax.tree_util.tree_map(jnp.asarray, dict(tok_embeddings=model.tok_embeddings, norm=model.norm.weight,
                                                    output=model.output, cos=model.cos, sin=model.sin,
                                                    layers=layers))


def rms_norm(x, weight, eps=1e-6):
    return x / jnp.sqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def rotary(x, cos, sin):
    pairs = x.reshape(x.shape[:-1] + (x.shape[-1] // 2, 2))
    x0, x1 = pairs[..., 0], pairs[..., 1]
    cos, sin = cos[None, :, None, :], sin[None, :, None, :]
    return jnp.stack([x0 * cos - x1 * sin, x0 * sin + x1 * cos], axis=-1).reshape(x.shape)


def jax_forward(params, caches, tokens, position, n_heads, n_kv_heads):
    """One step of the model at ``position`` (traced): the logits of the last token, the new caches."""
    B, L = tokens.shape
    h = params["tok_embeddings"][tokens]
    half = params["cos"].shape[1]
    cos = lax.dynamic_slice(params["cos"], (position, 0), (L, half))
    sin = lax.dynamic_slice(params["sin"], (position, 0), (L, half))
    T = caches[0][0].shape[1]
    visible = jnp.arange(T)[None, :] <= position + jnp.arange(L)[:, None]          # (L, T): causal, so far
    new_caches = []
    for layer, (cache_k, cache_v) in zip(params["layers"], caches):
        x = rms_norm(h, layer["attention_norm"])
        head_dim = layer["wq"].shape[1] // n_heads
        xq = (x @ layer["wq"]).reshape(B, L, n_heads, head_dim)
        xk = (x @ layer["wk"]).reshape(B, L, n_kv_heads, head_dim)
        xv = (x @ layer["wv"]).reshape(B, L, n_kv_heads, head_dim)
        xq, xk = rotary(xq, cos, sin), rotary(xk, cos, sin)
        cache_k = lax.dynamic_update_slice(cache_k, xk, (0, position, 0, 0))
        cache_v = lax.dynamic_update_slice(cache_v, xv, (0, position, 0, 0))
        new_caches.append((cache_k, cache_v))
        keys = jnp.repeat(cache_k[:B], n_heads // n_kv_heads, axis=2).transpose(0, 2, 3, 1)
        values = jnp.repeat(cache_v[:B], n_heads // n_kv_heads, axis=2).transpose(0, 2, 1, 3)
        scores = jnp.where(visible, xq.transpose(0, 2, 1, 3) @ keys / np.sqrt(head_dim), -jnp.inf)
        out = jax.nn.softmax(scores, axis=-1) @ values
        h = h + out.transpose(0, 2, 1, 3).reshape(B, L, -1) @ layer["wo"]
        x = rms_norm(h, layer["ffn_norm"])
        a = x @ layer["w1"]
        h = h + (a / (1.0 + jnp.exp(-a)) * (x @ layer["w3"])) @ layer["w2"]
    return rms_norm(h, params["norm"])[:, -1] @ params["output"], new_caches


def jax_step(model: Llama):
    params = jax_parameters(model)
    caches = [[jnp.zeros_like(jnp.asarray(l.attention.cache_k)), jnp.zeros_like(jnp.asarray(l.attention.cache_v))]
              for l in model.layers]
    forward = jax.jit(jax_forward, static_argnums=(4, 5), donate_argnums=1)
    n_heads, n_kv_heads = model.layers[0].attention.n_heads, model.layers[0].attention.n_kv_heads

    def step(tokens, position):
        nonlocal caches
        logits, caches = forward(params, caches, jnp.asarray(tokens), jnp.int64(position), n_heads, n_kv_heads)
        return logits
    return step


# ---------------------------------------------------------------- the run


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--small", action="store_true", help="dim 128, 2 layers, 128 positions")
    args = parser.parse_args()
    size = SIZES["small" if args.small else "full"]
    reference = Llama(seed=0, max_batch=1, **size)
    weights = sum(a.nbytes for a in jax.tree_util.tree_leaves(jax_parameters(reference)))
    print(f"model: {size}, {weights / 2**20:.0f} MiB of float64 weights; prompt {PROMPT}, {STEPS} decode steps; "
          f"jax {jax.__version__}, device {jax.devices()[0].platform}")
    prompt = (np.arange(PROMPT)[None] * 7) % size["vocab"]

    compile_times = CompileTimes()
    logging.getLogger("xlac").addHandler(compile_times)
    config.log_compiles, config.compile_notice = True, False
    numpy_model, device_model = copy.deepcopy(reference), xlac.to_device(copy.deepcopy(reference))
    steps = {"NumPy": numpy_model, "xlac": xlac.compile(device_model), "JAX by hand": jax_step(reference)}
    tokens, best = {}, {}
    for round_ in range(ROUNDS):
        for name, step in steps.items():
            start = time.perf_counter()
            tokens[name], seconds = greedy(step, prompt)
            if round_ == 0:
                print(f"{name:12s} first round (compiles included): {time.perf_counter() - start:7.2f} s")
            best[name] = min(best.get(name, np.inf), seconds / STEPS)
        if round_ == 0:
            info = steps["xlac"].cache_info()
            print(f"xlac: {info.compiles} compiles and {info.traces} traces in the first round (the prompt and "
                  f"{STEPS} decode steps), total compile time {sum(compile_times.ms) / 1e3:.2f} s")
    for name in steps:
        same = "same tokens as NumPy" if np.array_equal(tokens[name], tokens["NumPy"]) else "TOKENS DIFFER"
        print(f"{name:12s} {best[name] * 1e3:8.3f} ms per token   ({same})")
    print(f"ratio xlac / JAX by hand: {best['xlac'] / best['JAX by hand']:.2f}   "
          f"xlac / NumPy: {best['xlac'] / best['NumPy']:.2f}")
    token, position = np.array([[3]]), PROMPT + STEPS // 2
    xlac_call = lambda: np.asarray(steps["xlac"](token, position))                   # noqa: E731
    for other in ("JAX by hand", "NumPy"):
        xlac_time, other_time = interleaved(xlac_call, lambda: np.asarray(steps[other](token, position)), number=10,
                                            rounds=5)
        print(f"one decode step at position {position}, xlac and {other} alternating (best of 5 rounds of 10): "
              f"xlac {xlac_time * 1e3:.3f} ms, {other} {other_time * 1e3:.3f} ms, ratio {xlac_time / other_time:.2f}")


if __name__ == "__main__":
    main()
