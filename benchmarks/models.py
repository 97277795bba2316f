"""Small models written once against an array namespace ``xp`` (numpy, xlac.numpy or jax.numpy).

The tests run them with NumPy and with xlac and compare; the benchmarks time them against jax.jit.
"""
from __future__ import annotations

import math

import numpy as np


def make_mlp(xp):
    """A 2-layer MLP with a tanh-approximated GELU."""
    def mlp(x, w1, b1, w2, b2):
        h = x @ w1 + b1
        h = 0.5 * h * (1.0 + xp.tanh(0.7978845608 * (h + 0.044715 * h ** 3)))
        return h @ w2 + b2
    return mlp


def mlp_params(rng, batch=32, d_in=256, d_hidden=512, d_out=128, dtype=np.float32):
    return (rng.standard_normal((batch, d_in)).astype(dtype),
            (rng.standard_normal((d_in, d_hidden)) / np.sqrt(d_in)).astype(dtype),
            np.zeros(d_hidden, dtype),
            (rng.standard_normal((d_hidden, d_out)) / np.sqrt(d_hidden)).astype(dtype),
            np.zeros(d_out, dtype))


def make_transformer_block(xp, n_heads: int):
    """A pre-norm transformer block: causal multi-head attention and a GELU MLP, each with a residual."""
    def layer_norm(x, gain, bias):
        mean = xp.mean(x, axis=-1, keepdims=True)
        var = xp.var(x, axis=-1, keepdims=True)
        return (x - mean) / xp.sqrt(var + 1e-5) * gain + bias

    def gelu(x):
        return 0.5 * x * (1.0 + xp.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))

    def softmax(x):
        e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
        return e / xp.sum(e, axis=-1, keepdims=True)

    def attention(x, w_qkv, w_out):
        seq, d_model = x.shape
        head = d_model // n_heads
        qkv = x @ w_qkv                                        # (seq, 3 * d_model)
        q, k, v = xp.split(qkv, 3, axis=-1)
        q = xp.transpose(q.reshape(seq, n_heads, head), (1, 0, 2))
        k = xp.transpose(k.reshape(seq, n_heads, head), (1, 0, 2))
        v = xp.transpose(v.reshape(seq, n_heads, head), (1, 0, 2))
        scores = q @ xp.swapaxes(k, -1, -2) / math.sqrt(head)     # (heads, seq, seq)
        causal = xp.tri(seq, dtype=bool)
        scores = xp.where(causal, scores, -1e9)
        out = softmax(scores) @ v                              # (heads, seq, head)
        return xp.transpose(out, (1, 0, 2)).reshape(seq, d_model) @ w_out

    def block(x, p):
        x = x + attention(layer_norm(x, p["ln1_g"], p["ln1_b"]), p["w_qkv"], p["w_out"])
        h = layer_norm(x, p["ln2_g"], p["ln2_b"])
        return x + gelu(h @ p["w_up"]) @ p["w_down"]
    return block


def transformer_params(rng, seq=64, d_model=128, dtype=np.float32):
    def w(*shape):
        return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(dtype)
    x = rng.standard_normal((seq, d_model)).astype(dtype)
    params = {"ln1_g": np.ones(d_model, dtype), "ln1_b": np.zeros(d_model, dtype),
              "ln2_g": np.ones(d_model, dtype), "ln2_b": np.zeros(d_model, dtype),
              "w_qkv": w(d_model, 3 * d_model), "w_out": w(d_model, d_model),
              "w_up": w(d_model, 4 * d_model), "w_down": w(4 * d_model, d_model)}
    return x, params
