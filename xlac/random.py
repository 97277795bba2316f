"""``xlac.random``: functional, key-based pseudo-random numbers with ``jax.random``'s API.

A key is a ``uint32[2]`` array (JAX's raw key data), made by :func:`key` and turned into new keys by
:func:`split` and :func:`fold_in`; the same key always gives the same numbers. Keys work eagerly,
inside ``xlac.compile`` and under ``xlac.vmap`` (a batch of keys is a ``uint32[n, 2]`` array).

Numbers come from the Threefry-2x32 hash (20 rounds) written with uint32 additions, rotations and
xors, with JAX's counter layout (``jax_threefry_partitionable``, JAX's default), so batching is free
and the results are ``jax.random``'s bit for bit: keys, split, fold_in, bits, uniform, normal (its
``erf_inv`` is XLA's polynomial, written with the same ops), randint, permutation, choice, bernoulli,
gumbel, categorical and exponential. truncated_normal and complex normal agree to rounding.

Deviation: Python int seeds are int64, as with ``jax_enable_x64``; JAX's default 32-bit mode agrees
only for seeds in [0, 2**31). Integer results (randint, permutation or choice of a count,
categorical) default to int32, JAX's default, not NumPy's int64.

>>> import numpy as np, xlac
>>> k = xlac.random.key(0)
>>> k1, k2 = xlac.random.split(k)
>>> np.asarray(xlac.random.uniform(k1, (3,))).shape
(3,)
"""
from __future__ import annotations

import math
import numbers
import operator

import ml_dtypes
import numpy as np

from xlac.errors import located
from xlac.ir import dtypes
from xlac.numpy._core import asarray, normalize_axis
from xlac.numpy._dispatch import numpy_function_with_static
from xlac.trace import ops
from xlac.trace.state import current_trace
from xlac.trace.tracer import Tracer
from xlac.array import asarray as device_array
from xlac.numpy.indexing import take

__all__ = ["key", "PRNGKey", "split", "fold_in", "bits", "uniform", "normal", "randint", "permutation",
           "choice", "bernoulli", "categorical", "gumbel", "truncated_normal", "exponential"]

U32 = np.dtype("uint32")
I32 = np.dtype("int32")
F32, F64 = np.dtype("float32"), np.dtype("float64")
HALF = (np.dtype("float16"), dtypes.bfloat16)
UNSIGNED = {8: np.dtype("uint8"), 16: np.dtype("uint16"), 32: U32, 64: np.dtype("uint64")}
KEY_HELP = "a key is a uint32[2] array from xlac.random.key, split or fold_in"


# ---------------------------------------------------------------- Threefry-2x32

ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
KEY_PARITY = 0x1BD11BDA


def threefry2x32(k0, k1, x0, x1):
    """The Threefry-2x32 hash of the counter words ``(x0, x1)`` under the key words ``(k0, k1)``
    (uint32 tracers of one shape); returns the two hashed words."""
    constants: dict[int, object] = {}

    def const(value):       # each constant broadcast once
        if value not in constants:
            constants[value] = ops.full_like(x0, value)
        return constants[value]

    def rotate_left(x, r):
        return ops.or_(ops.shift_left(x, const(r)),
                          ops.shift_right_logical(x, const(32 - r)))

    schedule = (k0, k1, ops.xor(ops.xor(k0, k1), const(KEY_PARITY)))
    x0, x1 = ops.add(x0, k0), ops.add(x1, k1)
    for group in range(5):
        for r in ROTATIONS[group % 2]:
            x0 = ops.add(x0, x1)
            x1 = ops.xor(x0, rotate_left(x1, r))
        x0 = ops.add(x0, schedule[(group + 1) % 3])
        x1 = ops.add(ops.add(x1, schedule[(group + 2) % 3]), const(group + 1))
    return x0, x1


def _key_word(k, i: int, shape):
    return ops.broadcast_in_dim(ops.reshape(ops.slice(k, (i,), (i + 1,)), ()), shape, ())


def _hash(k, counts):
    """Threefry of the 64-bit counters ``(0, counts)`` under key ``k``: two uint32 arrays like ``counts``."""
    return threefry2x32(_key_word(k, 0, counts.shape), _key_word(k, 1, counts.shape),
                        ops.full(counts.shape, 0, U32), counts)


def _counts(shape):
    """The flat index of each element of ``shape``, as uint32 (the low word of JAX's 64-bit counter)."""
    size = math.prod(shape)
    if size >= 2 ** 32:
        raise ValueError(located(f"xlac.random: cannot draw {size} numbers at once (at most 2**32 - 1)"))
    return ops.reshape(ops.iota((size,), U32, 0), shape)


def _random_bits(k, shape, width: int):
    h0, h1 = _hash(k, _counts(shape))
    if width == 64:
        u64 = UNSIGNED[64]
        high = ops.shift_left(ops.convert(h0, u64), ops.full(shape, 32, u64))
        return ops.or_(high, ops.convert(h1, u64))
    return ops.convert(ops.xor(h0, h1), UNSIGNED[width])


def _split(k, shape):
    h0, h1 = _hash(k, _counts(shape))
    column = tuple(shape) + (1,)
    return ops.concatenate([ops.reshape(h0, column), ops.reshape(h1, column)], len(shape))


def _split_two(k):
    pair = _split(k, (2,))
    return ops.reshape(ops.slice(pair, (0, 0), (1, 2)), (2,)), ops.reshape(ops.slice(pair, (1, 0), (2, 2)), (2,))


# ---------------------------------------------------------------- arguments


def _key(k, op: str):
    """The traced key array of ``k``; a TypeError naming ``op`` for anything that is not one key."""
    if k is None or isinstance(k, (bool, int, float, complex, str)):
        raise TypeError(located(f"xlac.random.{op}: expected a key, got {type(k).__name__} {k!r}; {KEY_HELP} "
                                "(make one with xlac.random.key(seed))"))
    try:
        t = asarray(k)
    except TypeError as e:
        raise TypeError(located(f"xlac.random.{op}: expected a key; {KEY_HELP} ({e})")) from None
    if t.dtype != U32 or t.ndim < 1 or t.shape[-1] != 2:
        raise TypeError(located(f"xlac.random.{op}: expected a key, got an array {dtypes.short_name(t.dtype)}"
                                f"{list(t.shape)}; {KEY_HELP}"))
    if t.shape != (2,):
        raise TypeError(located(f"xlac.random.{op}: expected one key, got a batch of keys of shape {t.shape}; "
                                "use xlac.vmap to use several keys"))
    return t


def _shape(shape, op: str) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        dims = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(located(f"xlac.random.{op}: shape must be a tuple of Python ints, got {shape!r}")) from None
    if any(d < 0 for d in dims):
        raise ValueError(located(f"xlac.random.{op}: negative dimensions are not allowed, got shape {dims}"))
    return dims


def _float_dtype(dtype, op: str, complex_ok: bool = False) -> np.dtype:
    dtype = dtypes.canonical(dtype)
    if not (dtypes.is_float(dtype) or (complex_ok and dtype.kind == "c")):
        kinds = "a float or complex" if complex_ok else "a float"
        raise ValueError(located(f"xlac.random.{op}: dtype must be {kinds} dtype, got {dtype}"))
    return dtype


def _broadcasts_to(param_shape, shape) -> bool:
    lead = len(shape) - len(param_shape)
    return lead >= 0 and all(d in (1, shape[lead + i]) for i, d in enumerate(param_shape))


def _param(value, dtype, shape, op: str, name: str):
    """A distribution parameter as ``dtype``, broadcast to ``shape`` (which it must broadcast to)."""
    t = ops.convert(asarray(value), dtype)
    if not _broadcasts_to(t.shape, shape):
        raise ValueError(located(f"xlac.random.{op}: {name} of shape {t.shape} does not broadcast to the shape "
                                 f"argument {tuple(shape)}"))
    return ops.broadcast_to(t, shape)


def _check_shape(shape, param_shape, op: str) -> None:
    if not _broadcasts_to(param_shape, shape):
        raise ValueError(located(f"xlac.random.{op}: parameter shape {tuple(param_shape)} must broadcast to the "
                                 f"shape argument {tuple(shape)}"))


# ---------------------------------------------------------------- keys


def _seed_words_host(seed) -> np.ndarray:
    """The key of a concrete seed: 64-bit seeds give both words, narrower ones (sign-extended) the low one."""
    if isinstance(seed, int):
        if not -2 ** 63 <= seed < 2 ** 64:
            raise OverflowError(located(f"xlac.random.key: seed {seed} does not fit 64 bits"))
        wide, bits = seed % 2 ** 64, 64
    else:
        value = np.asarray(seed)
        if value.shape != () or value.dtype.kind not in "iu":
            raise TypeError(located(f"xlac.random.key: the seed must be an integer scalar, got {seed!r}"))
        wide, bits = int(value) % 2 ** 64, 8 * value.dtype.itemsize
    return np.array([wide >> 32 if bits == 64 else 0, wide & 0xFFFFFFFF], U32)


def _seed_words_traced(seed):
    if seed.shape != () or not dtypes.is_int(seed.dtype):
        raise TypeError(located(f"xlac.random.key: the seed must be a 0-d integer, got "
                                f"{dtypes.short_name(seed.dtype)}{list(seed.shape)}"))
    if seed.dtype.itemsize == 8:
        high = ops.shift_right_logical(seed, ops.constant(32, seed.dtype))
        high = ops.convert(ops.bitcast_convert(high, UNSIGNED[64]), U32)
        low = ops.convert(ops.bitcast_convert(seed, UNSIGNED[64]), U32)
    else:
        high = ops.constant(0, U32)
        low = ops.convert(seed, U32)
    return ops.concatenate([ops.reshape(high, (1,)), ops.reshape(low, (1,))], 0)


def key(seed):
    """A new key from an integer ``seed`` (a Python int, a NumPy integer, or a traced 0-d integer):
    the seed's 64 bits (32-bit seeds: zero, then their bits) as two uint32 words.

    Deviation: Python int seeds are int64 (JAX's 32-bit mode agrees for seeds in [0, 2**31)).

    >>> import numpy as np, xlac
    >>> np.asarray(xlac.random.key(42))
    array([ 0, 42], dtype=uint32)
    """
    if isinstance(seed, Tracer):
        return _seed_words_traced(seed)
    if isinstance(seed, bool) or not isinstance(seed, (numbers.Integral, np.ndarray)) and \
            not hasattr(seed, "__array__"):
        raise TypeError(located(f"xlac.random.key: the seed must be an integer, got {type(seed).__name__}"))
    words = _seed_words_host(seed)
    if current_trace() is not None:
        return ops.constant(words)
    return device_array(words)


PRNGKey = key


@numpy_function_with_static("num")
def split(key, num=2):
    """``num`` new keys (a ``uint32[num, 2]`` array; ``num`` may be a shape tuple) from ``key``.

    >>> import numpy as np, xlac
    >>> np.asarray(xlac.random.split(xlac.random.key(0), 3)).shape
    (3, 2)
    """
    return _split(_key(key, "split"), _shape(num, "split"))


@numpy_function_with_static()
def fold_in(key, data):
    """A new key from ``key`` and a 32-bit integer ``data`` (as ``split(key, data + 1)[data]``).

    >>> import numpy as np, xlac
    >>> k = xlac.random.key(0)
    >>> bool((np.asarray(xlac.random.fold_in(k, 1)) == np.asarray(xlac.random.split(k, 2))[1]).all())
    True
    """
    k = _key(key, "fold_in")
    if isinstance(data, int) and not isinstance(data, bool):
        if not 0 <= data < 2 ** 32:
            raise OverflowError(located(f"xlac.random.fold_in: Python integer {data} out of bounds for uint32"))
        word = ops.constant(data, U32)
    else:
        word = asarray(data)
        if word.shape != () or not dtypes.is_int(word.dtype):
            raise TypeError(located(f"xlac.random.fold_in: data must be a 0-d integer, got "
                                    f"{dtypes.short_name(word.dtype)}{list(word.shape)}; use xlac.vmap for several"))
        word = ops.convert(word, U32)
    h0, h1 = _hash(k, ops.reshape(word, (1,)))
    return ops.concatenate([h0, h1], 0)


# ---------------------------------------------------------------- bits and floats


@numpy_function_with_static("shape")
def bits(key, shape=(), dtype=U32):
    """Uniformly random bits as unsigned integers of ``dtype`` (uint8, uint16, uint32 or uint64).

    >>> import numpy as np, xlac
    >>> np.asarray(xlac.random.bits(xlac.random.key(0), (2,))).dtype
    dtype('uint32')
    """
    dtype = dtypes.canonical(dtype)
    if not dtypes.is_unsigned_int(dtype):
        raise ValueError(located(f"xlac.random.bits: dtype must be an unsigned integer dtype, got {dtype}"))
    return _random_bits(_key(key, "bits"), _shape(shape, "bits"), 8 * dtype.itemsize)


def _uniform(k, shape, dtype, minval, maxval):
    """Floats in [minval, maxval): random mantissa bits under the exponent of 1.0, minus 1, scaled."""
    info = ml_dtypes.finfo(dtype)
    nbits, nmant = info.bits, info.nmant
    rng_bits = nbits if nmant >= 8 else 8
    uint = UNSIGNED[nbits]
    raw = ops.convert(_random_bits(k, shape, rng_bits), uint)
    one_bits = np.array(1.0, dtype).view(uint)
    mantissa = ops.shift_right_logical(raw, ops.full(shape, rng_bits - nmant, uint))
    floats = ops.bitcast_convert(ops.or_(mantissa, ops.full(shape, one_bits, uint)), dtype)
    floats = ops.sub(floats, ops.full(shape, 1.0, dtype))
    scaled = ops.add(ops.mul(floats, ops.sub(maxval, minval)), minval)
    return ops.max(minval, scaled)


@numpy_function_with_static("shape")
def uniform(key, shape=(), dtype=F32, minval=0.0, maxval=1.0):
    """Floats uniformly distributed in ``[minval, maxval)`` (bounds broadcast to ``shape``).

    >>> import numpy as np, xlac
    >>> u = np.asarray(xlac.random.uniform(xlac.random.key(0), (1000,)))
    >>> bool(((0 <= u) & (u < 1)).all()), u.dtype
    (True, dtype('float32'))
    """
    k = _key(key, "uniform")
    shape = _shape(shape, "uniform")
    dtype = _float_dtype(dtype, "uniform")
    lo, hi = (_param(v, dtype, shape, "uniform", name) for v, name in ((minval, "minval"), (maxval, "maxval")))
    return _uniform(k, shape, dtype, lo, hi)


# ---------------------------------------------------------------- erf_inv, as XLA computes it

_ERFINV_F32 = (  # Giles (2010), single precision: (w < 5, w >= 5) coefficients, highest degree first
    (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
     -0.00417768164, 0.246640727, 1.50140941),
    (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
     0.00943887047, 1.00167406, 2.83297682))
_ERFINV_F64 = (  # Giles (2010), double precision: w < 6.25, w < 16, w >= 16
    (-3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
     1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
     6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
     2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
     1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
     4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
     0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
     0.24015818242558961693, 1.6536545626831027356),
    (2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
     1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
     2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
     6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
     0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
     -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334, 3.0838856104922207635),
    (-2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
     -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
     2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
     -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
     7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
     1.0103004648645343977, 4.8499064014085844221))


def _erf_inv(x):
    """The inverse error function of float32 or float64 ``x``, with XLA's polynomial and op order."""
    mul, sub = (lambda a, b: ops.mul(a, b)), (lambda a, b: ops.sub(a, b))
    c = lambda v: ops.full_like(x, v)
    w = ops.neg(ops.log1p(mul(ops.neg(x), x)))
    if x.dtype == F32:
        small, large = _ERFINV_F32
        below = ops.compare(w, c(5.0), "LT")
        w = ops.select(below, sub(w, c(2.5)), sub(ops.sqrt(w), c(3.0)))
        p = ops.select(below, c(small[0]), c(large[0]))
        for a, b in zip(small[1:], large[1:]):
            p = ops.add(ops.select(below, c(a), c(b)), mul(p, w))
    else:
        small, middle, large = _ERFINV_F64
        below_6, below_16 = ops.compare(w, c(6.25), "LT"), ops.compare(w, c(16.0), "LT")

        def coefficient(i):
            value = c(small[i])
            if i < len(middle):
                value = ops.select(below_6, value, c(middle[i]))
            if i < len(large):
                value = ops.select(below_16, value, c(large[i]))
            return value
        w = ops.select(below_6, sub(w, c(3.125)),
                       sub(ops.sqrt(w), ops.select(below_16, c(3.25), c(5.0))))
        p = coefficient(0)
        for i in range(1, len(small)):
            step = ops.add(coefficient(i), mul(p, w))
            p = step if i < len(large) else ops.select(below_16 if i < len(middle) else below_6, step, p)
    edge = ops.compare(ops.abs(x), c(1.0), "EQ")
    return ops.select(edge, mul(x, c(np.finfo(x.dtype).max)), mul(p, x))


def _erf_inv_any(x):
    """erf_inv in x's dtype; half floats compute in float32, as XLA does."""
    if x.dtype in HALF:
        return ops.convert(_erf_inv(ops.convert(x, F32)), x.dtype)
    return _erf_inv(x)


def _normal_real(k, shape, dtype):
    lowest = -(1.0 - 2.0 ** -(ml_dtypes.finfo(dtype).nmant + 1))       # nextafter(-1, 0)
    u = _uniform(k, shape, dtype, ops.full(shape, lowest, dtype), ops.full(shape, 1.0, dtype))
    return ops.mul(ops.full(shape, math.sqrt(2), dtype), _erf_inv_any(u))


@numpy_function_with_static("shape")
def normal(key, shape=(), dtype=F32):
    """Standard normal samples (complex dtypes: real and imaginary parts each of variance 1/2).

    >>> import numpy as np, xlac
    >>> z = np.asarray(xlac.random.normal(xlac.random.key(0), (10000,)))
    >>> bool(abs(z.mean()) < 0.05 and abs(z.std() - 1) < 0.05)
    True
    """
    k = _key(key, "normal")
    shape = _shape(shape, "normal")
    dtype = _float_dtype(dtype, "normal", complex_ok=True)
    if dtype.kind != "c":
        return _normal_real(k, shape, dtype)
    part = F32 if dtype == np.complex64 else F64
    k_re, k_im = _split_two(k)
    half = ops.full(shape, 1 / math.sqrt(2), part)
    re, im = (ops.mul(_normal_real(kk, shape, part), half) for kk in (k_re, k_im))
    return ops.complex(re, im)


# ---------------------------------------------------------------- integers


def _clip_convert(value, dtype):
    """An integer array converted to ``dtype``, clipped to its range instead of wrapping."""
    if value.dtype == dtype:
        return value
    src, dst = np.iinfo(value.dtype), np.iinfo(dtype)
    lo, hi = max(src.min, dst.min), min(src.max, dst.max)
    clipped = ops.clamp(ops.constant(lo, value.dtype), value, ops.constant(hi, value.dtype))
    return ops.convert(clipped, dtype)


def _as_int(value):
    t = asarray(value)
    if not dtypes.is_int(t.dtype):
        t = ops.convert(t, np.int64)
    return t


def _randint(k, shape, minval, maxval, dtype):
    """Integers in [minval, maxval): 2 * nbits random bits reduced modulo the span (JAX's algorithm)."""
    nbits = 8 * dtype.itemsize
    unsigned = UNSIGNED[nbits]
    maxval_out_of_range = ops.compare(
        maxval, _clip_convert(ops.constant(np.iinfo(dtype).max, dtype), maxval.dtype), "GT")
    maxval_out_of_range = ops.broadcast_to(maxval_out_of_range, shape)
    lo = ops.broadcast_to(_clip_convert(minval, dtype), shape)
    hi = ops.broadcast_to(_clip_convert(maxval, dtype), shape)
    k1, k2 = _split_two(k)
    higher, lower = _random_bits(k1, shape, nbits), _random_bits(k2, shape, nbits)
    one = ops.full(shape, 1, unsigned)
    span = ops.convert(ops.sub(hi, lo), unsigned)
    span = ops.select(ops.compare(hi, lo, "LE"), one, span)
    grow = ops.and_(maxval_out_of_range, ops.compare(hi, lo, "GT"))
    span = ops.select(grow, ops.add(span, one), span)
    wrapped = ops.compare(span, ops.full(shape, 0, unsigned), "EQ")      # the span of the whole dtype
    divisor = ops.select(wrapped, one, span)

    def rem(a, b):      # XLA's a % 0 == a, spelled out: XLA's constant folder traps on a division by zero
        return ops.select(wrapped, a, ops.rem(a, divisor))
    mul = lambda a, b: ops.mul(a, b)
    multiplier = rem(ops.full(shape, 2 ** (nbits // 2), unsigned), span)
    multiplier = rem(mul(multiplier, multiplier), span)
    offset = rem(ops.add(mul(rem(higher, span), multiplier), rem(lower, span)), span)
    return ops.add(lo, ops.convert(offset, dtype))


@numpy_function_with_static("shape")
def randint(key, shape, minval, maxval, dtype=I32):
    """Integers uniformly distributed in ``[minval, maxval)``; ``minval`` where ``maxval <= minval``.
    Bounds are clipped to the dtype's range (``maxval`` one past it), so ``randint(k, s, 0, 256, uint8)``
    covers every uint8.

    Deviation: the default dtype is int32 (JAX's), not NumPy's int64.

    >>> import numpy as np, xlac
    >>> r = np.asarray(xlac.random.randint(xlac.random.key(0), (100,), 3, 7))
    >>> sorted(set(r.tolist())), r.dtype
    ([3, 4, 5, 6], dtype('int32'))
    """
    k = _key(key, "randint")
    shape = _shape(shape, "randint")
    dtype = dtypes.canonical(dtype)
    if not dtypes.is_int(dtype):
        raise TypeError(located(f"xlac.random.randint: dtype must be an integer dtype, got {dtype}"))
    lo, hi = _as_int(minval), _as_int(maxval)
    for bound in (lo, hi):
        _check_shape(shape, bound.shape, "randint")
    info = np.iinfo(dtype)
    if info.bits >= 32:
        return _randint(k, shape, lo, hi, dtype)
    lo, hi = _clip_convert(lo, I32), _clip_convert(hi, I32)     # narrow dtypes sample in 32 bits
    lo = ops.clamp(ops.constant(int(info.min), I32), lo, ops.constant(int(info.max), I32))
    hi = ops.clamp(ops.constant(int(info.min), I32), hi, ops.constant(int(info.max) + 1, I32))
    return ops.convert(_randint(k, shape, lo, hi, I32), dtype)


# ---------------------------------------------------------------- permutations and choices


def _shuffle(k, x, axis: int):
    """``x`` sorted along ``axis`` by random 32-bit keys, in enough rounds that ties are unlikely."""
    rounds = math.ceil(3 * math.log(max(1, math.prod(x.shape))) / math.log(2 ** 32 - 1))
    for _ in range(rounds):
        k, sub = _split_two(k)
        _, x = ops.sort([_random_bits(sub, x.shape, 32), x], axis, is_stable=True, num_keys=1)
    return x


def _count_of(a, op: str) -> int:
    """A static population size: a Python int or a concrete 0-d integer array."""
    if isinstance(a, Tracer):
        raise TypeError(located(f"xlac.random.{op}: a count must be a concrete integer, got a traced "
                                f"{dtypes.short_name(a.dtype)}[]; pass it as a static argument"))
    value = np.asarray(a)
    if value.dtype.kind not in "iu":
        raise TypeError(located(f"xlac.random.{op}: x must be an integer or at least one-dimensional, got {a!r}"))
    return int(value)


def _take(x, indices, axis: int):
    return take(x, indices, axis=axis)


@numpy_function_with_static("axis")
def permutation(key, x, axis=0, independent=False):
    """A random permutation of ``arange(x)`` (an int ``x``) or of ``x`` along ``axis``; with
    ``independent=True`` each slice along ``axis`` is shuffled on its own.

    Deviation: ``permutation(key, n)`` is int32 (JAX's default integer), not NumPy's int64.

    >>> import numpy as np, xlac
    >>> sorted(np.asarray(xlac.random.permutation(xlac.random.key(0), 5)).tolist())
    [0, 1, 2, 3, 4]
    """
    k = _key(key, "permutation")
    if not isinstance(x, Tracer) and np.ndim(x) == 0:
        n = _count_of(x, "permutation")
        return _shuffle(k, ops.iota((max(n, 0),), I32, 0), 0)
    x = asarray(x)
    if x.ndim == 0:
        _count_of(x, "permutation")
    axis = normalize_axis(axis, x.ndim, "xlac.random.permutation")
    if independent or x.ndim == 1:
        return _shuffle(k, x, axis)
    order = _shuffle(k, ops.iota((x.shape[axis],), I32, 0), 0)
    return _take(x, order, axis)


def _cumsum(p):
    return ops.cumulative(p, "sum", 0)


def _top_k_indices(scores, k: int):
    """Indices of the ``k`` largest scores of a 1-d array, largest first (lower index first on ties)."""
    n = scores.shape[0]
    _, order = ops.sort([ops.neg(scores), ops.iota((n,), I32, 0)], 0, is_stable=True, num_keys=1)
    return ops.slice(order, (0,), (k,))


def _gumbel(k, shape, dtype):
    tiny = ops.full(shape, float(ml_dtypes.finfo(dtype).tiny), dtype)
    u = _uniform(k, shape, dtype, tiny, ops.full(shape, 1.0, dtype))
    return ops.neg(ops.log(ops.neg(ops.log(u))))


@numpy_function_with_static("shape", "axis")
def choice(key, a, shape=(), replace=True, p=None, axis=0):
    """Samples of ``arange(a)`` (an int ``a``) or of ``a`` along ``axis``, with or without replacement,
    uniformly or with probabilities ``p``.

    >>> import numpy as np, xlac
    >>> sorted(np.asarray(xlac.random.choice(xlac.random.key(0), 5, (5,), replace=False)).tolist())
    [0, 1, 2, 3, 4]
    """
    k = _key(key, "choice")
    shape = _shape(shape, "choice")
    scalar = not isinstance(a, Tracer) and np.ndim(a) == 0
    if scalar:
        n_inputs = _count_of(a, "choice")
        arr = None
    else:
        arr = asarray(a)
        if arr.ndim == 0:
            _count_of(arr, "choice")
        axis = normalize_axis(axis, arr.ndim, "xlac.random.choice")
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return ops.full(shape, 0, I32 if arr is None else arr.dtype)
    if n_inputs <= 0:
        raise ValueError(located("xlac.random.choice: a must be greater than 0 unless no samples are taken"))
    if not replace and n_draws > n_inputs:
        raise ValueError(located(f"xlac.random.choice: cannot take a larger sample (size {n_draws}) than the "
                                 f"population (size {n_inputs}) when replace=False"))
    if p is None:
        if replace:
            ind = randint(k, shape, 0, n_inputs)
        else:
            ind = ops.reshape(ops.slice(permutation(k, n_inputs), (0,), (n_draws,)), shape)
    else:
        probs = asarray(p)
        if probs.dtype.kind not in "fc":
            probs = ops.convert(probs, dtypes.result_type(probs.dtype, 1.0))
        if probs.shape != (n_inputs,):
            raise ValueError(located(f"xlac.random.choice: p must be None or a 1-d vector of size {n_inputs} "
                                     f"(a.shape[axis]), got shape {probs.shape}"))
        if replace:
            cumulative = _cumsum(probs)
            total = ops.reshape(ops.slice(cumulative, (n_inputs - 1,), (n_inputs,)), ())
            u = _uniform(k, shape, probs.dtype, ops.full(shape, 0.0, probs.dtype), ops.full(shape, 1.0, probs.dtype))
            r = ops.mul(ops.broadcast_to(total, shape),
                           ops.sub(ops.full(shape, 1.0, probs.dtype), u))
            below = ops.compare(ops.broadcast_in_dim(cumulative, shape + (n_inputs,), (len(shape),)),
                                ops.broadcast_in_dim(r, shape + (n_inputs,), tuple(range(len(shape)))), "LT")
            ind = ops.reduce(ops.convert(below, I32), "sum", (len(shape),))
        else:
            scores = ops.add(_gumbel(k, (n_inputs,), probs.dtype), ops.log(probs))
            ind = ops.reshape(_top_k_indices(scores, n_draws), shape)
    if arr is None:
        return ind
    return _take(arr, ind, axis)


# ---------------------------------------------------------------- other distributions


@numpy_function_with_static("shape")
def bernoulli(key, p=0.5, shape=None):
    """Booleans that are True with probability ``p`` (of ``p``'s shape unless ``shape`` is given).

    >>> import numpy as np, xlac
    >>> np.asarray(xlac.random.bernoulli(xlac.random.key(0), 0.0, (3,))).tolist()
    [False, False, False]
    """
    k = _key(key, "bernoulli")
    prob = asarray(p)
    if isinstance(p, float):
        prob = ops.convert(prob, F32)
    if not dtypes.is_float(prob.dtype):
        raise TypeError(located(f"xlac.random.bernoulli: probability p must have a floating dtype, got {prob.dtype}"))
    shape = prob.shape if shape is None else _shape(shape, "bernoulli")
    _check_shape(shape, prob.shape, "bernoulli")
    zeros, ones = ops.full(shape, 0.0, prob.dtype), ops.full(shape, 1.0, prob.dtype)
    return ops.compare(_uniform(k, shape, prob.dtype, zeros, ones), ops.broadcast_to(prob, shape), "LT")


@numpy_function_with_static("shape")
def gumbel(key, shape=(), dtype=F32):
    """Standard Gumbel samples: ``-log(-log(u))``.

    >>> import numpy as np, xlac
    >>> np.asarray(xlac.random.gumbel(xlac.random.key(0), (2,))).shape
    (2,)
    """
    return _gumbel(_key(key, "gumbel"), _shape(shape, "gumbel"), _float_dtype(dtype, "gumbel"))


@numpy_function_with_static("axis", "shape")
def categorical(key, logits, axis=-1, shape=None, replace=True):
    """Indices drawn from the categorical distributions ``softmax(logits, axis)`` (the Gumbel-max trick;
    without replacement the Gumbel-top-k trick).

    >>> import numpy as np, xlac
    >>> np.asarray(xlac.random.categorical(xlac.random.key(0), np.array([-np.inf, 0.0]), shape=(3,))).tolist()
    [1, 1, 1]
    """
    k = _key(key, "categorical")
    logits = asarray(logits)
    if not dtypes.is_float(logits.dtype):
        logits = ops.convert(logits, dtypes.result_type(logits.dtype, 1.0))
    axis = normalize_axis(axis, logits.ndim, "xlac.random.categorical")
    batch_shape = tuple(d for i, d in enumerate(logits.shape) if i != axis)
    shape = batch_shape if shape is None else _shape(shape, "categorical")
    _check_shape(shape, batch_shape, "categorical")
    prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        sample_shape = prefix + logits.shape
        full_axis = len(prefix) + axis
        noisy = ops.add(_gumbel(k, sample_shape, logits.dtype),
                     ops.broadcast_in_dim(logits, sample_shape, tuple(range(len(prefix), len(sample_shape)))))
        return ops.argmax(noisy, full_axis, I32)
    count = math.prod(prefix)
    n = logits.shape[axis]
    if count > n:
        raise ValueError(located(f"xlac.random.categorical: number of samples without replacement ({count}) "
                                 f"cannot exceed the number of categories ({n})"))
    noisy = ops.add(logits, _gumbel(k, logits.shape, logits.dtype))
    moved = ops.transpose(noisy, [i for i in range(logits.ndim) if i != axis] + [axis])
    last = moved.ndim - 1
    iota = ops.iota(moved.shape, I32, last)
    _, order = ops.sort([ops.neg(moved), iota], last, is_stable=True, num_keys=1)
    top = ops.slice(order, (0,) * moved.ndim, moved.shape[:-1] + (count,))
    top = ops.transpose(top, (last,) + tuple(range(last)))
    return ops.reshape(top, shape)


def _next_toward(x, direction: float):
    """NumPy's nextafter(x, direction * inf) of a float array, through its bits."""
    uint = UNSIGNED[8 * x.dtype.itemsize]
    raw = ops.bitcast_convert(x, uint)
    one = ops.full_like(raw, 1)
    positive = ops.compare(x, ops.full_like(x, 0.0), "GT")
    away_from_zero = positive if direction > 0 else ops.not_(positive)
    stepped = ops.select(away_from_zero, ops.add(raw, one), ops.sub(raw, one))
    sign_bit = 1 << (8 * x.dtype.itemsize - 1)
    smallest = ops.full_like(raw, 1 if direction > 0 else sign_bit | 1)
    stepped = ops.select(ops.compare(x, ops.full_like(x, 0.0), "EQ"), smallest, stepped)
    result = ops.bitcast_convert(stepped, x.dtype)
    at_end = ops.compare(x, ops.full_like(x, direction * np.inf), "EQ")
    return ops.select(ops.or_(at_end, ops.compare(x, x, "NE")), x, result)


@numpy_function_with_static("shape")
def truncated_normal(key, lower, upper, shape=None, dtype=F32):
    """Standard normal samples truncated to the open interval ``(lower, upper)``.

    >>> import numpy as np, xlac
    >>> t = np.asarray(xlac.random.truncated_normal(xlac.random.key(0), -1.0, 1.0, (1000,)))
    >>> bool(((-1 < t) & (t < 1)).all())
    True
    """
    k = _key(key, "truncated_normal")
    dtype = _float_dtype(dtype, "truncated_normal")
    lo, hi = ops.convert(asarray(lower), dtype), ops.convert(asarray(upper), dtype)
    if shape is None:
        shape = ops.broadcast_shapes(lo.shape, hi.shape, op="xlac.random.truncated_normal")
    else:
        shape = _shape(shape, "truncated_normal")
        for bound in (lo, hi):
            _check_shape(shape, bound.shape, "truncated_normal")
    lo, hi = ops.broadcast_to(lo, shape), ops.broadcast_to(hi, shape)
    sqrt2 = ops.full(shape, math.sqrt(2), dtype)
    a, b = (_erf_of(ops.div(v, sqrt2)) for v in (lo, hi))
    u = _uniform(k, shape, dtype, a, b)
    out = ops.mul(sqrt2, _erf_inv_any(u))
    return ops.clamp(_next_toward(lo, 1.0), out, _next_toward(hi, -1.0))


def _erf_of(x):
    if x.dtype in HALF:
        return ops.convert(ops.erf(ops.convert(x, F32)), x.dtype)
    return ops.erf(x)


@numpy_function_with_static("shape")
def exponential(key, shape=(), dtype=F32):
    """Exponential samples of rate 1: ``-log1p(-u)``.

    >>> import numpy as np, xlac
    >>> bool((np.asarray(xlac.random.exponential(xlac.random.key(0), (100,))) >= 0).all())
    True
    """
    k = _key(key, "exponential")
    shape = _shape(shape, "exponential")
    dtype = _float_dtype(dtype, "exponential")
    u = _uniform(k, shape, dtype, ops.full(shape, 0.0, dtype), ops.full(shape, 1.0, dtype))
    return ops.neg(ops.log1p(ops.neg(u)))
