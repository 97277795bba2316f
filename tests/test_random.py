"""xlac.random: bit-exact agreement with jax.random (threefry, partitionable counters), determinism eager
and compiled, vmap over keys, distribution checks with fixed keys (they cannot flake), bounds, errors."""
import jax
import numpy as np
import pytest
import scipy.stats

import xlac
import xlac.random as xr
from xlac.ir import dtypes

BF16 = dtypes.bfloat16
pytestmark = pytest.mark.usefixtures("xla_defaults")   # bit-exact against jax.jit: compiled as it compiles

FLOATS = [np.dtype("float16"), BF16, np.dtype("float32")]
INTS = [np.dtype(d) for d in ("int8", "uint8", "int16", "uint16", "int32", "uint32")]


def same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    np.testing.assert_array_equal(got.reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8))


# ---------------------------------------------------------------- keys against JAX


@pytest.mark.parametrize("seed", [0, 1, 42, 2 ** 31 - 1, np.int32(-7), np.uint32(2 ** 32 - 1)])
def test_key_matches_jax(seed):
    same_bits(xr.key(seed), jax.random.PRNGKey(seed))
    assert xr.PRNGKey is xr.key


@pytest.mark.parametrize("seed", [-1, 2 ** 32 + 5, 2 ** 63 - 1, -2 ** 63])
def test_key_of_64_bit_seeds_matches_jax_x64(seed):
    with jax.enable_x64(True):
        same_bits(xr.key(seed), jax.random.key_data(jax.random.key(seed)))


def test_traced_seed_gives_the_eager_key():
    make = xlac.compile(lambda s: xr.key(s))
    for seed in (np.int64(-2 ** 40 - 3), np.int16(-1), np.uint64(2 ** 64 - 3)):
        same_bits(make(seed), xr.key(seed))


def matches_jax(program, seed=0, x64=False):
    """``program(r, key)`` run with ``r = xlac.random`` (compiled) and ``r = jax.random`` (jitted): every
    result equal bit for bit."""
    got = xlac.compile(lambda k: program(xr, k))(xr.key(seed))
    with jax.enable_x64(x64):
        want = jax.jit(lambda k: program(jax.random, k))(jax.random.PRNGKey(seed))
    got, want = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        same_bits(g, w)


def test_split_fold_in_and_bits_match_jax():
    k, jk = xr.key(7), jax.random.PRNGKey(7)
    same_bits(xr.split(k, 5), jax.random.split(jk, 5))            # eagerly, too
    matches_jax(lambda r, k: (r.split(k), r.split(k, (2, 3)), r.fold_in(k, 0), r.fold_in(k, 2 ** 32 - 1),
                              r.fold_in(k, np.int32(-2)), r.bits(k), r.bits(k, (4, 5), "uint8"),
                              r.bits(k, (3,), "uint16"), r.bits(k, (2, 3), "uint32")), seed=7)
    matches_jax(lambda r, k: r.bits(k, (6,), np.uint64), x64=True)


def test_uniform_and_normal_match_jax():
    k, jk = xr.key(11), jax.random.PRNGKey(11)
    same_bits(xr.uniform(k, (64,)), jax.random.uniform(jk, (64,)))                 # eagerly, too
    same_bits(xr.normal(k, (64,), BF16), jax.random.normal(jk, (64,), BF16))
    lo, hi = np.array([0.0, 1.0, -5.0], np.float32), np.array([[2.0], [4.0]], np.float32)
    matches_jax(lambda r, k: [(r.uniform(k, (64,), d), r.uniform(k, (3, 5), d, -2.0, 3.5), r.normal(k, (256,), d))
                              for d in FLOATS] + [r.uniform(k, (2, 3), minval=lo, maxval=hi)], seed=11)


def test_float64_draws_match_jax_x64():
    matches_jax(lambda r, k: (r.uniform(k, (100,), np.float64), r.normal(k, (500,), np.float64),
                              r.randint(k, (50,), -3, 2 ** 40, np.int64),
                              r.randint(k, (50,), 5, 2 ** 62, np.uint64),
                              r.truncated_normal(k, -1.5, 0.5, (50,), np.float64)), seed=12, x64=True)


def test_randint_matches_jax():
    ranges = [(0, 10), (-5, 300), (7, 3), (-100, 100), (3, 2 ** 20), (1, 2)]
    full = [(int(np.iinfo(d).min), int(np.iinfo(d).max) + 1) for d in INTS]

    def program(r, k):
        out = [r.randint(k, (40,), lo, hi, d) for d, (lo, hi) in zip(INTS, ranges)]
        out += [r.randint(k, (40,), lo, hi, d) for d, (lo, hi) in zip(INTS[:2], full[:2])]
        return out + [r.randint(k, (4, 3), np.array([0, 10, -3], np.int32), 20)]
    matches_jax(program, seed=14)
    matches_jax(lambda r, k: [r.randint(k, (40,), lo, hi, d) for d, (lo, hi) in zip(INTS[4:], full[4:])],
                seed=14, x64=True)


def test_permutation_choice_and_other_distributions_match_jax():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    p = np.array([0.1, 0.0, 0.5, 0.4], np.float32)
    logits = np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], np.float32))
    same_bits(xr.permutation(xr.key(15), 10), jax.random.permutation(jax.random.PRNGKey(15), 10))   # eagerly
    matches_jax(lambda r, k: (
        r.permutation(k, x, axis=1), r.permutation(k, x, axis=1, independent=True),
        r.choice(k, 10, (2, 3), replace=False), r.choice(k, 4, (30,), p=p), r.choice(k, 4, (3,), replace=False, p=p),
        r.choice(k, x, (2,), axis=1), r.bernoulli(k, p), r.gumbel(k, (50,)), r.exponential(k, (50,)),
        r.categorical(k, logits, axis=0, shape=(5, 3)), r.categorical(k, logits, shape=(3, 2), replace=False)),
        seed=15)


def test_truncated_and_complex_normal_are_close_to_jax():
    k, jk = xr.key(17), jax.random.PRNGKey(17)
    np.testing.assert_allclose(np.asarray(xr.truncated_normal(k, -1.5, 0.5, (200,))),
                               jax.random.truncated_normal(jk, -1.5, 0.5, (200,)), rtol=1e-5, atol=1e-6)
    got = np.asarray(xr.normal(k, (200,), np.complex64))
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, jax.random.normal(jk, (200,), np.complex64), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- determinism, compile, vmap


def draws(k):
    k1, k2, k3 = xr.split(k, 3)
    return (xr.uniform(k1, (5,)), xr.normal(k2, (2, 3)), xr.randint(k3, (4,), 0, 100),
            xr.permutation(xr.fold_in(k, 3), 6), xr.bits(k, (3,)))


def test_same_key_same_numbers_eager_and_compiled():
    k = xr.key(18)
    eager_once, eager_from_numpy_key = draws(k), draws(np.asarray(k))
    compiled = xlac.compile(draws)(k)
    for a, b, c, d in zip(eager_once, eager_from_numpy_key, compiled, draws(k)):
        same_bits(a, b)
        same_bits(a, c)
        same_bits(a, d)
    other = draws(xr.key(19))
    assert not np.array_equal(np.asarray(eager_once[0]), np.asarray(other[0]))


def test_key_made_inside_a_compiled_function():
    f = xlac.compile(lambda s: xr.normal(xr.key(s), (4,)))
    same_bits(f(np.int32(5)), xr.normal(xr.key(5), (4,)))
    same_bits(xlac.compile(lambda: xr.uniform(xr.key(3), (2,)))(), xr.uniform(xr.key(3), (2,)))


def test_vmap_over_keys():
    keys = xr.split(xr.key(20), 8)
    got = xlac.vmap(lambda k: xr.normal(k, (3,)))(keys)
    for i in range(8):
        same_bits(np.asarray(got)[i], xr.normal(np.asarray(keys)[i], (3,)))
    same_bits(got, jax.vmap(lambda k: jax.random.normal(k, (3,)))(np.asarray(keys)))
    perms = np.asarray(xlac.vmap(lambda k: xr.permutation(k, 5))(keys))
    assert (np.sort(perms, axis=1) == np.arange(5)).all() and len({p.tobytes() for p in perms}) > 1
    folded = xlac.vmap(lambda i: xr.fold_in(xr.key(0), i))(np.arange(4, dtype=np.uint32))
    same_bits(folded, jax.vmap(lambda i: jax.random.fold_in(jax.random.PRNGKey(0), i))(np.arange(4, dtype=np.uint32)))
    seeds = xlac.vmap(xr.key)(np.arange(3))
    same_bits(seeds, np.stack([np.asarray(xr.key(i)) for i in range(3)]))


# ---------------------------------------------------------------- distributions (fixed keys: deterministic)

N = 20000


@pytest.fixture(scope="module")
def samples():
    def draw(k):
        ks = xr.split(k, 8)
        return dict(uniform=xr.uniform(ks[0], (N,)), normal=xr.normal(ks[1], (N,)),
                    exponential=xr.exponential(ks[2], (N,)), gumbel=xr.gumbel(ks[3], (N,)),
                    bernoulli=xr.bernoulli(ks[4], 0.3, (N,)), randint=xr.randint(ks[5], (N,), -3, 7),
                    uniform2=xr.uniform(ks[6], (N,)), truncated=xr.truncated_normal(ks[7], -0.5, 2.0, (N,)))
    return {name: np.asarray(v) for name, v in xlac.compile(draw)(xr.key(21)).items()}


def test_moments(samples):
    u, z = samples["uniform"].astype(np.float64), samples["normal"].astype(np.float64)
    assert abs(u.mean() - 0.5) < 0.01 and abs(u.var() - 1 / 12) < 0.005
    assert abs(z.mean()) < 0.03 and abs(z.var() - 1) < 0.04
    assert abs(samples["exponential"].mean() - 1) < 0.03
    assert abs(samples["gumbel"].mean() - np.euler_gamma) < 0.03
    assert abs(samples["bernoulli"].mean() - 0.3) < 0.015


def test_kolmogorov_smirnov(samples):
    assert scipy.stats.kstest(samples["uniform"], "uniform").pvalue > 1e-3
    assert scipy.stats.kstest(samples["normal"], "norm").pvalue > 1e-3
    assert scipy.stats.kstest(samples["exponential"], "expon").pvalue > 1e-3
    assert scipy.stats.kstest(samples["gumbel"], "gumbel_r").pvalue > 1e-3
    assert scipy.stats.kstest(samples["truncated"], scipy.stats.truncnorm(-0.5, 2.0).cdf).pvalue > 1e-3


def test_randint_counts_are_uniform(samples):
    counts = np.bincount(samples["randint"] + 3, minlength=10)
    assert counts.sum() == N and len(counts) == 10
    assert scipy.stats.chisquare(counts).pvalue > 1e-3


def test_split_keys_are_independent(samples):
    assert abs(np.corrcoef(samples["uniform"], samples["uniform2"])[0, 1]) < 0.03
    streams = np.asarray(xlac.vmap(lambda k: xr.bits(k, (64,)))(xr.split(xr.key(22), 16)))
    assert len({row.tobytes() for row in streams}) == 16


# ---------------------------------------------------------------- bounds and permutations


def test_uniform_bounds_for_every_float_dtype():
    def draw(k):
        return tuple(xr.uniform(k, (4096,), dtype, -1.5, 2.0) for dtype in FLOATS + [np.float64])
    for u, dtype in zip(xlac.compile(draw)(xr.key(23)), FLOATS + [np.dtype("float64")]):
        u = np.asarray(u)
        assert u.dtype == dtype
        assert (u.astype(np.float64) >= -1.5).all() and (u.astype(np.float64) < 2.0).all()


def test_randint_bounds_for_every_integer_dtype():
    def draw(k):
        return tuple(xr.randint(k, (4096,), int(np.iinfo(d).min), int(np.iinfo(d).max) + 1, d) for d in INTS[:4]) + \
            tuple(xr.randint(k, (512,), 5, 9, d) for d in INTS) + (xr.randint(k, (8,), 9, 5),)
    results = [np.asarray(r) for r in xlac.compile(draw)(xr.key(24))]
    for r, d in zip(results[:4], INTS[:4]):
        assert r.dtype == d and len(np.unique(r)) > (200 if d.itemsize == 1 else 2000)
    for r, d in zip(results[4:10], INTS):
        assert r.dtype == d and set(r.tolist()) == {5, 6, 7, 8}
    assert results[-1].tolist() == [9] * 8                # maxval <= minval gives minval, as in JAX


def test_permutation_is_a_permutation():
    k = xr.key(25)
    x = np.arange(30).reshape(5, 6)
    p = np.asarray(xr.permutation(k, 50))
    assert p.dtype == np.int32 and sorted(p.tolist()) == list(range(50))
    rows = np.asarray(xr.permutation(k, x))
    assert sorted(rows[:, 0].tolist()) == list(range(0, 30, 6)) and (np.diff(rows, axis=1) == 1).all()
    cols = np.asarray(xr.permutation(k, x, axis=-1, independent=True))
    assert (np.sort(cols, axis=1) == x).all() and not (cols == x).all()
    assert np.asarray(xr.permutation(k, np.array([7.0]))).tolist() == [7.0]


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize("call, error, match", [
    (lambda: xr.normal(0, (3,)), TypeError, "normal: expected a key, got int 0"),
    (lambda: xr.uniform(np.zeros(2, np.float32)), TypeError, r"uniform: expected a key, got an array f32\[2\]"),
    (lambda: xr.split(np.zeros(3, np.uint32)), TypeError, r"split: expected a key, got an array u32\[3\]"),
    (lambda: xr.normal(xr.split(xr.key(0), 4)), TypeError, "batch of keys of shape \\(4, 2\\); use xlac.vmap"),
    (lambda: xr.key(1.5), TypeError, "seed must be an integer"),
    (lambda: xr.key(np.zeros(2, np.int32)), TypeError, "seed must be an integer scalar"),
    (lambda: xr.uniform(xr.key(0), (2, -1)), ValueError, "negative dimensions"),
    (lambda: xr.uniform(xr.key(0), (2.5,)), TypeError, "shape must be a tuple of Python ints"),
    (lambda: xr.uniform(xr.key(0), (2,), np.int32), ValueError, "uniform: dtype must be a float dtype, got int32"),
    (lambda: xr.normal(xr.key(0), (2,), np.int32), ValueError, "float or complex dtype"),
    (lambda: xr.uniform(xr.key(0), (2,), minval=np.zeros(3)), ValueError, "minval of shape \\(3,\\) does not"),
    (lambda: xr.bits(xr.key(0), (2,), np.int32), ValueError, "unsigned integer dtype"),
    (lambda: xr.randint(xr.key(0), (2,), 0, 5, np.float32), TypeError, "randint: dtype must be an integer"),
    (lambda: xr.randint(xr.key(0), (2,), np.zeros(3, np.int32), 5), ValueError, "must broadcast to the shape"),
    (lambda: xr.fold_in(xr.key(0), np.arange(2)), TypeError, "data must be a 0-d integer"),
    (lambda: xr.fold_in(xr.key(0), -1), OverflowError, "out of bounds for uint32"),
    (lambda: xr.choice(xr.key(0), 3, (4,), replace=False), ValueError, "larger sample \\(size 4\\)"),
    (lambda: xr.choice(xr.key(0), 0, (2,)), ValueError, "a must be greater than 0"),
    (lambda: xr.choice(xr.key(0), 3, (2,), p=np.ones(4)), ValueError, "p must be None or a 1-d vector of size 3"),
    (lambda: xr.permutation(xr.key(0), 2.5), TypeError, "x must be an integer or at least one-dimensional"),
    (lambda: xr.bernoulli(xr.key(0), 1), TypeError, "must have a floating dtype"),
    (lambda: xr.categorical(xr.key(0), np.zeros(3), shape=(2, 2), replace=False), ValueError, "cannot exceed"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_traced_count_needs_a_static_value():
    with pytest.raises(TypeError, match="a count must be a concrete integer"):
        xlac.compile(lambda k, n: xr.permutation(k, n))(xr.key(0), np.int32(3))


def test_empty_draws():
    assert np.asarray(xr.uniform(xr.key(0), (0, 3))).shape == (0, 3)
    assert np.asarray(xr.choice(xr.key(0), 5, (0,))).shape == (0,)
