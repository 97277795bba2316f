"""A Llama-style decoder written against NumPy only, as NumPy users write one: weights and KV caches are
NumPy attributes of nested layer objects, and attention writes the new keys and values into the caches
in place. tests/convert/test_convert.py compiles it unmodified."""
import numpy as np


class RMSNorm:
    def __init__(self, dim, eps=1e-6):
        self.eps = eps
        self.weight = np.ones(dim)

    def __call__(self, x):
        rms = np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + self.eps)
        return x / rms * self.weight


def rotary_tables(head_dim, max_seq_len, theta=10000.0):
    freqs = 1.0 / theta ** (np.arange(0, head_dim, 2) / head_dim)
    angles = np.outer(np.arange(max_seq_len), freqs)
    return np.cos(angles), np.sin(angles)


def apply_rotary(x, cos, sin):
    # x: (batch, seq, heads, head_dim); cos, sin: (seq, head_dim // 2)
    pairs = x.reshape(x.shape[:-1] + (x.shape[-1] // 2, 2))
    x0, x1 = pairs[..., 0], pairs[..., 1]
    cos, sin = cos[None, :, None, :], sin[None, :, None, :]
    rotated = np.stack([x0 * cos - x1 * sin, x0 * sin + x1 * cos], axis=-1)
    return rotated.reshape(x.shape)


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


class Attention:
    def __init__(self, rng, dim, n_heads, n_kv_heads, max_batch, max_seq_len):
        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads
        self.head_dim = dim // n_heads
        scale = dim ** -0.5
        self.wq = rng.standard_normal((dim, n_heads * self.head_dim)) * scale
        self.wk = rng.standard_normal((dim, n_kv_heads * self.head_dim)) * scale
        self.wv = rng.standard_normal((dim, n_kv_heads * self.head_dim)) * scale
        self.wo = rng.standard_normal((n_heads * self.head_dim, dim)) * scale
        self.cache_k = np.zeros((max_batch, max_seq_len, n_kv_heads, self.head_dim))
        self.cache_v = np.zeros((max_batch, max_seq_len, n_kv_heads, self.head_dim))

    def __call__(self, x, start_pos, cos, sin, mask):
        B, L, _ = x.shape
        xq = (x @ self.wq).reshape(B, L, self.n_heads, self.head_dim)
        xk = (x @ self.wk).reshape(B, L, self.n_kv_heads, self.head_dim)
        xv = (x @ self.wv).reshape(B, L, self.n_kv_heads, self.head_dim)
        xq, xk = apply_rotary(xq, cos, sin), apply_rotary(xk, cos, sin)

        self.cache_k[:B, start_pos:start_pos + L] = xk
        self.cache_v[:B, start_pos:start_pos + L] = xv
        keys = self.cache_k[:B, :start_pos + L]
        values = self.cache_v[:B, :start_pos + L]
        n_rep = self.n_heads // self.n_kv_heads
        keys = np.repeat(keys, n_rep, axis=2)
        values = np.repeat(values, n_rep, axis=2)

        q = xq.transpose(0, 2, 1, 3)                          # (B, heads, L, head_dim)
        k = keys.transpose(0, 2, 3, 1)                        # (B, heads, head_dim, T)
        scores = q @ k / np.sqrt(self.head_dim)
        if mask is not None:
            scores = scores + mask
        out = softmax(scores) @ values.transpose(0, 2, 1, 3)  # (B, heads, L, head_dim)
        out = out.transpose(0, 2, 1, 3).reshape(B, L, -1)
        return out @ self.wo


class FeedForward:
    def __init__(self, rng, dim, hidden):
        self.w1 = rng.standard_normal((dim, hidden)) * dim ** -0.5
        self.w3 = rng.standard_normal((dim, hidden)) * dim ** -0.5
        self.w2 = rng.standard_normal((hidden, dim)) * hidden ** -0.5

    def __call__(self, x):
        a = x @ self.w1
        silu = a / (1.0 + np.exp(-a))
        return (silu * (x @ self.w3)) @ self.w2


class Block:
    def __init__(self, rng, dim, n_heads, n_kv_heads, hidden, max_batch, max_seq_len):
        self.attention_norm = RMSNorm(dim)
        self.attention = Attention(rng, dim, n_heads, n_kv_heads, max_batch, max_seq_len)
        self.ffn_norm = RMSNorm(dim)
        self.feed_forward = FeedForward(rng, dim, hidden)

    def __call__(self, x, start_pos, cos, sin, mask):
        h = x + self.attention(self.attention_norm(x), start_pos, cos, sin, mask)
        return h + self.feed_forward(self.ffn_norm(h))


class Llama:
    def __init__(self, seed=0, vocab=32, dim=16, n_layers=2, n_heads=4, n_kv_heads=2, hidden=32,
                 max_batch=2, max_seq_len=16):
        rng = np.random.default_rng(seed)
        self.tok_embeddings = rng.standard_normal((vocab, dim))
        self.layers = [Block(rng, dim, n_heads, n_kv_heads, hidden, max_batch, max_seq_len)
                       for _ in range(n_layers)]
        self.norm = RMSNorm(dim)
        self.output = rng.standard_normal((dim, vocab)) * dim ** -0.5
        self.cos, self.sin = rotary_tables(dim // n_heads, max_seq_len)

    def __call__(self, tokens, start_pos):
        B, L = tokens.shape
        h = self.tok_embeddings[tokens]
        cos, sin = self.cos[start_pos:start_pos + L], self.sin[start_pos:start_pos + L]
        mask = None
        if L > 1:
            mask = np.full((L, L), -np.inf)
            mask = np.triu(mask, k=1)
            mask = np.hstack([np.zeros((L, start_pos)), mask])
        for layer in self.layers:
            h = layer(h, start_pos, cos, sin, mask)
        h = self.norm(h)
        return h[:, -1] @ self.output


def greedy_decode(step, prompt, n_new):
    """Prefill with ``prompt`` (batch, length), then ``n_new`` greedy steps; the generated tokens."""
    logits = step(prompt, 0)
    tokens = [np.argmax(np.asarray(logits), axis=-1)]
    position = prompt.shape[1]
    for _ in range(n_new - 1):
        logits = step(tokens[-1][:, None], position)
        tokens.append(np.argmax(np.asarray(logits), axis=-1))
        position += 1
    return np.stack(tokens, axis=1)
