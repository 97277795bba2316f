"""Straight-line NumPy kernels (issue 19): each written once against a NumPy-like module ``np``, run
unmodified as ``xlac.compile(partial(kernel, numpy))`` (plain NumPy inside the compiled function), as
``jax.jit(partial(kernel, jax.numpy))`` and as NumPy itself, in the same run.

Run: PYTHONPATH=. python benchmarks/kernels.py [--quick] [--only NAME[,NAME...]] [--hlo NAME] [--rounds N]
Per kernel, columns: best time per call of xlac, jax.jit and NumPy over N alternating rounds (30; NumPy in
the first 5; the arguments already on the device for xlac and jax, so neither pays a transfer); jax/xlac of
the best times (goal: geomean >= 1.0, every kernel >= 0.9) and the median over rounds of the same ratio
(these machines are shared and noisy: compare the two); xlac/NumPy; whether XLA's optimized programs are
the same but for names ("same"; "prec": and for xlac's dots asking operand_precision=highest), and the
bytes they access (XLA's cost analysis), xlac/jax. Every result is checked against NumPy's before timing.
``--hlo NAME`` prints both optimized HLOs, without metadata, of the first kernel whose name has NAME.
``--quick``: one round of one call each, a smoke run.
"""
from __future__ import annotations

import argparse
import functools
import math
import re
import sys
import timeit
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import xlac  # noqa: E402

jax.config.update("jax_enable_x64", True)        # xlac follows NumPy's dtypes (int64 indices, float64 scalars)


# ---------------------------------------------------------------- the kernels, each written once
# BLAS-2/3 with scalars


def gemm(np, a, b, c):
    return 1.5 * (a @ b) + 0.5 * c


def gemm_transposed(np, a, b):
    return 2.0 * (a.T @ b)


def gemv(np, a, x, y):
    return 0.5 * (a @ x) - 2.0 * y


def rank1_update(np, a, x, y):
    return a + 0.1 * np.outer(x, y)


def syrk(np, a, c):
    return 0.5 * (a @ a.T) + c


def covariance(np, x):
    xc = x - x.mean(axis=0)
    return (xc.T @ xc) / (x.shape[0] - 1)


def batched_matmul(np, a, b):
    return np.einsum("bij,bjk->bik", a, b) * 0.125


def dot_axpy(np, x, y):
    return np.dot(x, y) * x + y


# stencils


def laplacian_2d(np, u):
    return u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]


def sobel_magnitude(np, img):
    gx = (img[:-2, 2:] + 2.0 * img[1:-1, 2:] + img[2:, 2:]) - (img[:-2, :-2] + 2.0 * img[1:-1, :-2] + img[2:, :-2])
    gy = (img[2:, :-2] + 2.0 * img[2:, 1:-1] + img[2:, 2:]) - (img[:-2, :-2] + 2.0 * img[:-2, 1:-1] + img[:-2, 2:])
    return np.sqrt(gx * gx + gy * gy)


def smooth_1d(np, x):
    return 0.25 * x[:-2] + 0.5 * x[1:-1] + 0.25 * x[2:]


def box_blur_3x3(np, img):
    rows = img[:-2] + img[1:-1] + img[2:]
    return (rows[:, :-2] + rows[:, 1:-1] + rows[:, 2:]) / 9.0


def gradient_2d(np, u):
    gy, gx = np.gradient(u)
    return gx * gx + gy * gy


# reductions with axes


def zscore_columns(np, x):
    return (x - x.mean(axis=0)) / (x.std(axis=0) + 1e-6)


def sum_axes_0_2(np, x):
    return x.sum(axis=(0, 2))


def row_norms(np, x):
    return np.linalg.norm(x, axis=1)


def trapezoid_rows(np, y):
    return np.trapezoid(y, dx=0.01, axis=1)


def cumsum_rows(np, x):
    return np.cumsum(x, axis=1)


def cumprod_rows(np, x):
    return np.cumprod(x, axis=1)


def cummax_rows(np, x):
    return np.maximum.accumulate(x, axis=1)


def max_minus_min(np, x):
    return x.max(axis=1) - x.min(axis=1)


# softmax, log-sum-exp, normalisation, losses


def softmax(np, x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def logsumexp(np, x):
    m = x.max(axis=1, keepdims=True)
    return np.log(np.exp(x - m).sum(axis=1)) + m[:, 0]


def layer_norm(np, x, gamma, beta):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * gamma + beta


def logistic_loss(np, z, y):
    return np.mean(np.maximum(z, 0.0) - z * y + np.log1p(np.exp(-np.abs(z))))


# distance matrices and kernels


def distances_expanded(np, a, b):
    sq = (a * a).sum(axis=1)[:, None] + (b * b).sum(axis=1)[None, :] - 2.0 * (a @ b.T)
    return np.sqrt(np.maximum(sq, 0.0))


def distances_broadcast(np, a, b):
    d = a[:, None, :] - b[None, :, :]
    return np.sqrt((d * d).sum(axis=-1))


def rbf_kernel(np, a, b):
    sq = (a * a).sum(axis=1)[:, None] + (b * b).sum(axis=1)[None, :] - 2.0 * (a @ b.T)
    return np.exp(-0.5 * sq)


def cosine_similarity(np, a, b):
    an = a / np.sqrt((a * a).sum(axis=1, keepdims=True))
    bn = b / np.sqrt((b * b).sum(axis=1, keepdims=True))
    return an @ bn.T


def kmeans_step(np, x, centroids):
    d = (x * x).sum(axis=1)[:, None] - 2.0 * (x @ centroids.T) + (centroids * centroids).sum(axis=1)[None, :]
    labels = np.argmin(d, axis=1)
    onehot = (labels[:, None] == np.arange(centroids.shape[0])[None, :]).astype(x.dtype)
    return (onehot.T @ x) / np.maximum(onehot.sum(axis=0), 1.0)[:, None]


# histograms


def histogram(np, x):
    return np.histogram(x, bins=64, range=(0.0, 1.0))[0]


def histogram_2d(np, x, y):
    return np.histogram2d(x, y, bins=32, range=[[0.0, 1.0], [0.0, 1.0]])[0]


# networks, attention, FFT


def mlp(np, x, w1, b1, w2, b2, w3, b3):
    h = np.maximum(x @ w1 + b1, 0.0)
    h = np.maximum(h @ w2 + b2, 0.0)
    return h @ w3 + b3


def attention(np, q, k, v):
    # q.shape[1] ** 0.5, a Python float: np.sqrt(q.shape[1]) is a NumPy float64 scalar, which makes NumPy
    # (and xlac, which follows it) compute the scores in float64, where jax keeps float32 (README).
    s = (q @ k.T) / q.shape[1] ** 0.5
    s = np.where(np.tril(np.ones((q.shape[0], k.shape[0]), dtype=bool)), s, -1e9)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ v


def fft_convolve(np, x, k):
    n = x.shape[0] + k.shape[0] - 1
    return np.fft.irfft(np.fft.rfft(x, n) * np.fft.rfft(k, n), n)


def leaky_relu_clip(np, x):
    return np.clip(np.where(x > 0, x, 0.01 * x), -0.5, 0.5)


def polynomial(np, x):
    return ((((0.1 * x - 0.3) * x + 0.5) * x - 0.7) * x + 0.9) * x - 1.1


def transpose_copy(np, x):
    return x.reshape(64, 128, 128).transpose(0, 2, 1).reshape(64, 128 * 128) + 1.0


def accuracy(np, logits, labels):
    return (np.argmax(logits, axis=1) == labels).mean()


# ---------------------------------------------------------------- inputs


def cases() -> list:
    """(name, kernel, arguments) per kernel; float32 arguments of realistic sizes."""
    rng = numpy.random.default_rng(0)

    def f32(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(numpy.float32)

    def u32(*shape):
        return rng.random(shape, dtype=numpy.float32)
    return [
        ("gemm 512, alpha/beta", gemm, (f32(512, 512), f32(512, 512), f32(512, 512))),
        ("gemm A.T @ B 512, alpha", gemm_transposed, (f32(512, 512), f32(512, 512))),
        ("gemv 2048, alpha/beta", gemv, (f32(2048, 2048), f32(2048), f32(2048))),
        ("rank-1 update 2048", rank1_update, (f32(2048, 2048), f32(2048), f32(2048))),
        ("syrk 512x256 + C", syrk, (f32(512, 256), f32(512, 512))),
        ("covariance 4096x256", covariance, (f32(4096, 256),)),
        ("batched matmul 64x128^3", batched_matmul, (f32(64, 128, 128), f32(64, 128, 128))),
        ("dot then axpy 1M", dot_axpy, (f32(1 << 20, scale=1e-3), f32(1 << 20))),
        ("laplacian 2-D 1024^2", laplacian_2d, (f32(1024, 1024),)),
        ("sobel magnitude 1024^2", sobel_magnitude, (f32(1024, 1024),)),
        ("smooth 1-D 4M", smooth_1d, (f32(1 << 22),)),
        ("box blur 3x3 1024^2", box_blur_3x3, (f32(1024, 1024),)),
        ("np.gradient 2-D 1024^2", gradient_2d, (f32(1024, 1024),)),
        ("z-score columns 4096x256", zscore_columns, (f32(4096, 256),)),
        ("sum axes (0,2) 64x256x256", sum_axes_0_2, (f32(64, 256, 256),)),
        ("row norms 4096x512", row_norms, (f32(4096, 512),)),
        ("trapezoid rows 2048^2", trapezoid_rows, (f32(2048, 1024),)),
        ("cumsum rows 1024^2", cumsum_rows, (f32(1024, 1024),)),
        ("max - min rows 2048x1024", max_minus_min, (f32(2048, 1024),)),
        ("softmax 2048x1024", softmax, (f32(2048, 1024),)),
        ("log-sum-exp 2048x1024", logsumexp, (f32(2048, 1024),)),
        ("layer norm 2048x1024", layer_norm, (f32(2048, 1024), f32(1024), f32(1024))),
        ("logistic loss 4M", logistic_loss, (f32(1 << 22), (u32(1 << 22) > 0.5).astype(numpy.float32))),
        ("distances |a|^2+|b|^2-2ab 1024x64", distances_expanded, (f32(1024, 64), f32(1024, 64))),
        ("distances broadcast 256x256x32", distances_broadcast, (f32(256, 32), f32(256, 32))),
        ("RBF kernel 1024x64", rbf_kernel, (f32(1024, 64, scale=0.3), f32(1024, 64, scale=0.3))),
        ("cosine similarity 1024x128", cosine_similarity, (f32(1024, 128), f32(1024, 128))),
        ("k-means step 8192x32, k=16", kmeans_step, (f32(8192, 32), f32(16, 32))),
        ("histogram 1M, 64 bins", histogram, (u32(1 << 20),)),
        ("histogram2d 256k, 32^2", histogram_2d, (u32(1 << 18), u32(1 << 18))),
        ("MLP 256x512-1024-1024-10", mlp, (f32(256, 512), f32(512, 1024, scale=0.04), f32(1024),
                                           f32(1024, 1024, scale=0.03), f32(1024), f32(1024, 10, scale=0.03),
                                           f32(10))),
        ("causal attention 512x64", attention, (f32(512, 64), f32(512, 64), f32(512, 64))),
        ("FFT convolution 64k * 4k", fft_convolve, (f32(1 << 16), f32(1 << 12))),
        ("leaky relu + clip 4M", leaky_relu_clip, (f32(1 << 22),)),
        ("polynomial (Horner) 4M", polynomial, (f32(1 << 22),)),
        ("transpose copy 64x128x128", transpose_copy, (f32(64, 128 * 128),)),
        ("accuracy (argmax) 8192x1000", accuracy, (f32(8192, 1000), rng.integers(0, 1000, 8192))),
        ("cumprod rows 1024^2", cumprod_rows, (1 + f32(1024, 1024, scale=1e-3),)),
        ("cummax rows 1024^2", cummax_rows, (f32(1024, 1024),)),
    ]


# ---------------------------------------------------------------- measuring


def _close(got, want, same_dtype: bool = True) -> None:
    """A result against NumPy's: its dtype (for xlac, which follows NumPy's), shape and values, loosely
    (float32 sums in another order)."""
    got, want = numpy.asarray(got), numpy.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype or not same_dtype, (got.dtype, want.dtype)
    scale = max(1.0, float(numpy.max(numpy.abs(want))) if want.size else 1.0)
    error = float(numpy.max(numpy.abs(got.astype(numpy.float64) - want.astype(numpy.float64)))) if want.size else 0.0
    assert error <= 2e-3 * scale, f"max error {error} (scale {scale})"


def _measure(calls: list, rounds: int, quick: bool, numpy_rounds: int = 5) -> tuple[list[float], float]:
    """Best seconds per call of xlac, jax and NumPy (``calls`` in that order), measured in alternating
    rounds (these machines are shared and noisy; xlac and jax take turns to run first), and the median over
    rounds of jax's time over xlac's in the same round. NumPy, the slowest, runs in the first
    ``numpy_rounds`` rounds only."""
    for call in calls:
        call()
    numbers = [1] * len(calls)
    if not quick:       # about 5 ms per measurement, at least one call
        numbers = [max(1, min(500, int(0.005 / max(timeit.timeit(call, number=1), 1e-6)))) for call in calls]
    best = [math.inf] * len(calls)
    paired = []
    for r in range(rounds):
        times = [math.inf] * len(calls)
        order = [0, 1, 2] if r % 2 == 0 else [1, 0, 2]        # neither peer always runs first
        for i in order:
            if i < 2 or r < numpy_rounds:
                times[i] = timeit.timeit(calls[i], number=numbers[i]) / numbers[i]
        best = [min(b, t) for b, t in zip(best, times)]
        paired.append(times[1] / times[0])
    return best, sorted(paired)[len(paired) // 2]


def _programs(kernel, args):
    """The compiled xlac and jax programs of ``kernel`` (for their optimized HLO and cost analysis)."""
    return (xlac.compile(functools.partial(kernel, numpy)).trace(*args).lower().compile(),
            jax.jit(functools.partial(kernel, jnp)).lower(*args).compile())


def _readable(text: str) -> str:
    """The HLO computations without metadata and the file/stack tables."""
    text = re.sub(r",? metadata=\{[^}]*\}", "", text)
    text = re.sub(r"\n(FileNames|FunctionNames|FileLocations|StackFrames)\n(\d+ .*\n)*", "\n", text)
    return "\n".join(line for line in text.splitlines() if line.strip())


def _shape_of_program(text: str) -> list[str]:
    """The instructions of an optimized HLO module without names: two programs alike here differ only in
    how XLA and the front ends named things."""
    lines = []
    for line in _readable(text).splitlines():
        if line.startswith("HloModule") or line.rstrip().endswith("{") or line.strip() == "}":
            continue
        line = re.sub(r"%[\w.\-]+", "%", line)
        line = re.sub(r", backend_config=\{.*\}$", "", line)      # the same keys, in another order
        line = re.sub(r"/\*index=\d+\*/", "", line)
        lines.append(line.strip())
    return sorted(lines)


def _likeness(xlac_text: str, jax_text: str) -> str:
    """"same" when the optimized programs differ only in names; "prec" when, besides, only in xlac's dots
    asking for operand_precision={highest,highest} (NumPy's float32 products; jax's default leaves it unset);
    "differs" otherwise."""
    xlac_lines, jax_lines = _shape_of_program(xlac_text), _shape_of_program(jax_text)
    if xlac_lines == jax_lines:
        return "same"
    unprecise = sorted(line.replace(", operand_precision={highest,highest}", "") for line in xlac_lines)
    return "prec" if unprecise == jax_lines else "differs"


def _bytes_accessed(program) -> float:
    cost = program.cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    return float(cost.get("bytes accessed", float("nan")))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="one round of one call: a smoke run")
    parser.add_argument("--only", default="", help="comma-separated substrings of kernel names")
    parser.add_argument("--hlo", default="", help="print both optimized HLOs of the kernel whose name has this")
    parser.add_argument("--rounds", type=int, default=30)
    options = parser.parse_args()
    selected = cases()
    if options.hlo:
        name, kernel, args = next(c for c in selected if options.hlo in c[0])
        xlac_program, jax_program = _programs(kernel, args)
        print(f"==== xlac: {name}\n{_readable(xlac_program.as_text())}\n==== jax\n{_readable(jax_program.as_text())}")
        return
    if options.only:
        selected = [c for c in selected if any(s in c[0] for s in options.only.split(","))]
    rounds = 1 if options.quick else options.rounds
    print(f"{'kernel':34s} {'xlac ms':>8s} {'jax ms':>8s} {'NumPy ms':>9s} {'jax/xlac':>8s} {'median':>6s} "
          f"{'xlac/NumPy':>10s} {'HLO':>6s} {'bytes x/j':>9s}")
    ratios, medians = [], []
    for name, kernel, args in selected:
        compiled = xlac.compile(functools.partial(kernel, numpy))
        jitted = jax.jit(functools.partial(kernel, jnp))
        xlac_args = tuple(xlac.asarray(a) for a in args)
        jax_args = tuple(jax.device_put(a) for a in args)
        want = kernel(numpy, *args)
        _close(compiled(*xlac_args), want)
        _close(jitted(*jax_args), want, same_dtype=False)      # jax's histogram counts are float
        xlac_program, jax_program = _programs(kernel, args)
        same = _likeness(xlac_program.as_text(), jax_program.as_text())
        bytes_ratio = _bytes_accessed(xlac_program) / _bytes_accessed(jax_program)
        (t_xlac, t_jax, t_numpy), median = _measure([lambda: compiled(*xlac_args).block_until_ready(),
                                                     lambda: jitted(*jax_args).block_until_ready(),
                                                     lambda: kernel(numpy, *args)], rounds, options.quick)
        ratios.append(t_jax / t_xlac)
        medians.append(median)
        flag = "  <0.9" if t_jax / t_xlac < 0.9 else ""
        print(f"{name:34s} {t_xlac * 1e3:8.3f} {t_jax * 1e3:8.3f} {t_numpy * 1e3:9.3f} {t_jax / t_xlac:8.2f} "
              f"{median:6.2f} {t_xlac / t_numpy:10.2f} {same:>6s} {bytes_ratio:9.2f}{flag}",
              flush=True)

    def geomean(values):
        return math.exp(sum(math.log(v) for v in values) / len(values))
    print(f"{len(ratios)} kernels; geomean jax/xlac {geomean(ratios):.3f} (of the medians {geomean(medians):.3f}); "
          f"below 0.9: {sum(r < 0.9 for r in ratios)}")


if __name__ == "__main__":
    main()
