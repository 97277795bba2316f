"""A GPT-2-style forward pass written with plain NumPy (as in picoGPT); tests compile it unchanged.

Nothing here imports xlac: the functions see xlac's tracers only through NumPy's dispatch protocols.
"""
import numpy as np


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def softmax(x):
    exp_x = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return exp_x / np.sum(exp_x, axis=-1, keepdims=True)


def layer_norm(x, g, b, eps: float = 1e-5):
    mean = np.mean(x, axis=-1, keepdims=True)
    variance = np.var(x, axis=-1, keepdims=True)
    x = (x - mean) / np.sqrt(variance + eps)
    return g * x + b


def linear(x, w, b):
    return x @ w + b


def ffn(x, c_fc, c_proj):
    return linear(gelu(linear(x, **c_fc)), **c_proj)


def attention(q, k, v, mask):
    return softmax(q @ k.T / np.sqrt(q.shape[-1]) + mask) @ v


def mha(x, c_attn, c_proj, n_head):
    x = linear(x, **c_attn)
    qkv = np.split(x, 3, axis=-1)
    qkv_heads = list(map(lambda x: np.split(x, n_head, axis=-1), qkv))
    causal_mask = (1 - np.tri(x.shape[0], dtype=x.dtype)) * -1e10
    out_heads = [attention(q, k, v, causal_mask) for q, k, v in zip(*qkv_heads)]
    x = np.hstack(out_heads)
    return linear(x, **c_proj)


def transformer_block(x, mlp, attn, ln_1, ln_2, n_head):
    x = x + mha(layer_norm(x, **ln_1), **attn, n_head=n_head)
    x = x + ffn(layer_norm(x, **ln_2), **mlp)
    return x


def gpt2(inputs, wte, wpe, blocks, ln_f, n_head):
    x = wte[inputs] + wpe[range(len(inputs))]
    for block in blocks:
        x = transformer_block(x, **block, n_head=n_head)
    return layer_norm(x, **ln_f) @ wte.T


def init_params(rng, n_vocab=50, n_ctx=16, n_embd=32, n_layer=2):
    """Random float32 parameters in picoGPT's layout."""
    def dense(n_in, n_out):
        return {"w": (rng.standard_normal((n_in, n_out)) * 0.1).astype(np.float32),
                "b": (rng.standard_normal(n_out) * 0.1).astype(np.float32)}

    def norm():
        return {"g": (1 + 0.1 * rng.standard_normal(n_embd)).astype(np.float32),
                "b": (0.1 * rng.standard_normal(n_embd)).astype(np.float32)}
    blocks = [{"mlp": {"c_fc": dense(n_embd, 4 * n_embd), "c_proj": dense(4 * n_embd, n_embd)},
               "attn": {"c_attn": dense(n_embd, 3 * n_embd), "c_proj": dense(n_embd, n_embd)},
               "ln_1": norm(), "ln_2": norm()} for _ in range(n_layer)]
    return {"wte": (rng.standard_normal((n_vocab, n_embd)) * 0.1).astype(np.float32),
            "wpe": (rng.standard_normal((n_ctx, n_embd)) * 0.1).astype(np.float32),
            "blocks": blocks, "ln_f": norm()}
