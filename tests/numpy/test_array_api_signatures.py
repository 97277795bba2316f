"""Every function and array method of the Array API standard (2024.12) has the standard's signature in xlac.

The standard's signatures are written below as data (from https://data-apis.org/array-api/2024.12/API_specification/).
xlac.numpy is first a NumPy implementation, so the comparison follows the rule of the standard's own test suite:
a positional-only parameter of the standard may be named anything and also be passable by keyword (NumPy's
``zeros(shape, dtype=None, ...)`` keeps its names); a positional-or-keyword one has the standard's name at the
standard's position; a keyword-only one exists under its name and may also be positional-or-keyword. On top of
the suite's rule, xlac requires no argument the standard does not.
"""
import inspect
import re

import pytest

import xlac
import xlac.numpy as xnp

# "namespace name(parameters)": xp is xlac.numpy, info is __array_namespace_info__(), Array the array object;
# "name=" marks a parameter with a default.
STANDARD = """
Array dtype()
Array device()
Array mT()
Array ndim()
Array shape()
Array size()
Array T()
Array __abs__()
Array __add__(other, /)
Array __and__(other, /)
Array __array_namespace__(*, api_version=)
Array __bool__()
Array __complex__()
Array __dlpack__(*, stream=, max_version=, dl_device=, copy=)
Array __dlpack_device__()
Array __eq__(other, /)
Array __float__()
Array __floordiv__(other, /)
Array __ge__(other, /)
Array __getitem__(key, /)
Array __gt__(other, /)
Array __index__()
Array __int__()
Array __invert__()
Array __le__(other, /)
Array __lshift__(other, /)
Array __lt__(other, /)
Array __matmul__(other, /)
Array __mod__(other, /)
Array __mul__(other, /)
Array __ne__(other, /)
Array __neg__()
Array __or__(other, /)
Array __pos__()
Array __pow__(other, /)
Array __rshift__(other, /)
Array __setitem__(key, value, /)
Array __sub__(other, /)
Array __truediv__(other, /)
Array __xor__(other, /)
Array to_device(device, /, *, stream=)
xp arange(start, /, stop=, step=, *, dtype=, device=)
xp asarray(obj, /, *, dtype=, device=, copy=)
xp empty(shape, *, dtype=, device=)
xp empty_like(x, /, *, dtype=, device=)
xp eye(n_rows, n_cols=, /, *, k=, dtype=, device=)
xp from_dlpack(x, /, *, device=, copy=)
xp full(shape, fill_value, *, dtype=, device=)
xp full_like(x, /, fill_value, *, dtype=, device=)
xp linspace(start, stop, /, num, *, dtype=, device=, endpoint=)
xp meshgrid(*arrays, indexing=)
xp ones(shape, *, dtype=, device=)
xp ones_like(x, /, *, dtype=, device=)
xp tril(x, /, *, k=)
xp triu(x, /, *, k=)
xp zeros(shape, *, dtype=, device=)
xp zeros_like(x, /, *, dtype=, device=)
xp astype(x, dtype, /, *, copy=, device=)
xp can_cast(from_, to, /)
xp finfo(type, /)
xp iinfo(type, /)
xp isdtype(dtype, kind)
xp result_type(*arrays_and_dtypes)
xp abs(x, /)
xp acos(x, /)
xp acosh(x, /)
xp add(x1, x2, /)
xp asin(x, /)
xp asinh(x, /)
xp atan(x, /)
xp atan2(x1, x2, /)
xp atanh(x, /)
xp bitwise_and(x1, x2, /)
xp bitwise_left_shift(x1, x2, /)
xp bitwise_invert(x, /)
xp bitwise_or(x1, x2, /)
xp bitwise_right_shift(x1, x2, /)
xp bitwise_xor(x1, x2, /)
xp ceil(x, /)
xp clip(x, /, min=, max=)
xp conj(x, /)
xp copysign(x1, x2, /)
xp cos(x, /)
xp cosh(x, /)
xp divide(x1, x2, /)
xp equal(x1, x2, /)
xp exp(x, /)
xp expm1(x, /)
xp floor(x, /)
xp floor_divide(x1, x2, /)
xp greater(x1, x2, /)
xp greater_equal(x1, x2, /)
xp hypot(x1, x2, /)
xp imag(x, /)
xp isfinite(x, /)
xp isinf(x, /)
xp isnan(x, /)
xp less(x1, x2, /)
xp less_equal(x1, x2, /)
xp log(x, /)
xp log1p(x, /)
xp log2(x, /)
xp log10(x, /)
xp logaddexp(x1, x2, /)
xp logical_and(x1, x2, /)
xp logical_not(x, /)
xp logical_or(x1, x2, /)
xp logical_xor(x1, x2, /)
xp maximum(x1, x2, /)
xp minimum(x1, x2, /)
xp multiply(x1, x2, /)
xp negative(x, /)
xp nextafter(x1, x2, /)
xp not_equal(x1, x2, /)
xp positive(x, /)
xp pow(x1, x2, /)
xp real(x, /)
xp reciprocal(x, /)
xp remainder(x1, x2, /)
xp round(x, /)
xp sign(x, /)
xp signbit(x, /)
xp sin(x, /)
xp sinh(x, /)
xp square(x, /)
xp sqrt(x, /)
xp subtract(x1, x2, /)
xp tan(x, /)
xp tanh(x, /)
xp trunc(x, /)
fft fft(x, /, *, n=, axis=, norm=)
fft ifft(x, /, *, n=, axis=, norm=)
fft fftn(x, /, *, s=, axes=, norm=)
fft ifftn(x, /, *, s=, axes=, norm=)
fft rfft(x, /, *, n=, axis=, norm=)
fft irfft(x, /, *, n=, axis=, norm=)
fft rfftn(x, /, *, s=, axes=, norm=)
fft irfftn(x, /, *, s=, axes=, norm=)
fft hfft(x, /, *, n=, axis=, norm=)
fft ihfft(x, /, *, n=, axis=, norm=)
fft fftfreq(n, /, *, d=, dtype=, device=)
fft rfftfreq(n, /, *, d=, dtype=, device=)
fft fftshift(x, /, *, axes=)
fft ifftshift(x, /, *, axes=)
xp take(x, indices, /, *, axis=)
xp take_along_axis(x, indices, /, *, axis=)
xp __array_namespace_info__()
info capabilities()
info default_device()
info default_dtypes(*, device=)
info dtypes(*, device=, kind=)
info devices()
linalg cholesky(x, /, *, upper=)
linalg cross(x1, x2, /, *, axis=)
linalg det(x, /)
linalg diagonal(x, /, *, offset=)
linalg eigh(x, /)
linalg eigvalsh(x, /)
linalg inv(x, /)
linalg matmul(x1, x2, /)
linalg matrix_norm(x, /, *, keepdims=, ord=)
linalg matrix_power(x, n, /)
linalg matrix_rank(x, /, *, rtol=)
linalg matrix_transpose(x, /)
linalg outer(x1, x2, /)
linalg pinv(x, /, *, rtol=)
linalg qr(x, /, *, mode=)
linalg slogdet(x, /)
linalg solve(x1, x2, /)
linalg svd(x, /, *, full_matrices=)
linalg svdvals(x, /)
linalg tensordot(x1, x2, /, *, axes=)
linalg trace(x, /, *, offset=, dtype=)
linalg vecdot(x1, x2, /, *, axis=)
linalg vector_norm(x, /, *, axis=, keepdims=, ord=)
xp broadcast_arrays(*arrays)
xp broadcast_to(x, /, shape)
xp concat(arrays, /, *, axis=)
xp expand_dims(x, /, axis)
xp flip(x, /, *, axis=)
xp moveaxis(x, source, destination, /)
xp permute_dims(x, /, axes)
xp repeat(x, repeats, /, *, axis=)
xp reshape(x, /, shape, *, copy=)
xp roll(x, /, shift, *, axis=)
xp squeeze(x, /, axis)
xp stack(arrays, /, *, axis=)
xp tile(x, repetitions, /)
xp unstack(x, /, *, axis=)
xp argmax(x, /, *, axis=, keepdims=)
xp argmin(x, /, *, axis=, keepdims=)
xp count_nonzero(x, /, *, axis=, keepdims=)
xp nonzero(x, /)
xp searchsorted(x1, x2, /, *, side=, sorter=)
xp where(condition, x1, x2, /)
xp unique_all(x, /)
xp unique_counts(x, /)
xp unique_inverse(x, /)
xp unique_values(x, /)
xp argsort(x, /, *, axis=, descending=, stable=)
xp sort(x, /, *, axis=, descending=, stable=)
xp cumulative_prod(x, /, *, axis=, dtype=, include_initial=)
xp cumulative_sum(x, /, *, axis=, dtype=, include_initial=)
xp max(x, /, *, axis=, keepdims=)
xp mean(x, /, *, axis=, keepdims=)
xp min(x, /, *, axis=, keepdims=)
xp prod(x, /, *, axis=, dtype=, keepdims=)
xp std(x, /, *, axis=, correction=, keepdims=)
xp sum(x, /, *, axis=, dtype=, keepdims=)
xp var(x, /, *, axis=, correction=, keepdims=)
xp all(x, /, *, axis=, keepdims=)
xp any(x, /, *, axis=, keepdims=)
xp diff(x, /, *, axis=, n=, prepend=, append=)
xp matmul(x1, x2, /)
xp matrix_transpose(x, /)
xp tensordot(x1, x2, /, *, axes=)
xp vecdot(x1, x2, /, *, axis=)
"""


def standard_signatures():
    for line in STANDARD.strip().splitlines():
        namespace, call = line.split(" ", 1)
        name, params = re.fullmatch(r"(\w+)\((.*)\)", call).groups()
        scope = {}
        exec(f"def {name}({re.sub(r'=(?=,|$)', '=None', params)}): pass", scope)
        yield pytest.param(namespace, name, inspect.signature(scope[name]), id=f"{namespace}.{name}")


NAMESPACES = {"xp": xnp, "linalg": xnp.linalg, "fft": xnp.fft, "info": xnp.__array_namespace_info__(),
              "Array": xlac.Array}
POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
KEYWORD = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def signature_mismatch(ours: inspect.Signature, standard: inspect.Signature) -> str | None:
    """Why a function with signature ``ours`` cannot be called as the standard's ``standard``; None if it can."""
    params = [p for p in ours.parameters.values()]
    positional = [p for p in standard.parameters.values() if p.kind is not inspect.Parameter.KEYWORD_ONLY]
    for i, want in enumerate(positional):
        if i >= len(params):
            return f"argument {want.name!r} missing"
        have = params[i]
        if want.kind is inspect.Parameter.VAR_POSITIONAL:
            if have.kind is not want.kind:
                return f"expected *{want.name} at position {i}, got {have}"
            continue
        if have.kind not in POSITIONAL:
            return f"argument {i} ({want.name!r}) must be positional, got {have}"
        if want.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and (have.name, have.kind) != (want.name, want.kind):
            return f"argument {i} must be {want.name!r} (positional or keyword), got {have}"
        if want.default is not inspect.Parameter.empty and have.default is inspect.Parameter.empty:
            return f"argument {want.name!r} must be optional, got {have}"
    for want in standard.parameters.values():
        if want.kind is not inspect.Parameter.KEYWORD_ONLY:
            continue
        have = ours.parameters.get(want.name)
        if have is None or have.kind not in KEYWORD or have.default is inspect.Parameter.empty:
            return f"optional keyword {want.name!r} missing, got {have}"
    extra = [p for p in params[len(positional):] if p.default is inspect.Parameter.empty
             and p.kind in POSITIONAL + (inspect.Parameter.KEYWORD_ONLY,) and p.name not in standard.parameters]
    return f"required arguments beyond the standard's: {extra}" if extra else None


@pytest.mark.parametrize("namespace, name, standard", list(standard_signatures()))
def test_signature_matches_the_standard(namespace, name, standard):
    owner = NAMESPACES[namespace]
    assert hasattr(owner, name), f"{namespace}.{name} missing"
    member = inspect.getattr_static(owner, name) if namespace == "Array" else getattr(owner, name)
    if isinstance(member, property):
        return
    ours = inspect.signature(getattr(owner, name))
    if namespace == "Array":
        ours = ours.replace(parameters=list(ours.parameters.values())[1:])     # drop self
    assert signature_mismatch(ours, standard) is None, f"{namespace}.{name}{ours}: {signature_mismatch(ours, standard)}"


@pytest.mark.parametrize("ours, standard, reason", [
    ("(a, dtype=None)", "(x, /, *, dtype=None, device=None)", "optional keyword 'device' missing"),
    ("(x, /, n=None)", "(x, /, *, n=None, axis=None)", "optional keyword 'axis' missing"),
    ("(a, a_min, a_max)", "(x, /, min=None, max=None)", "argument 1 must be 'min'"),
    ("(*args, **kwargs)", "(x, /, shift, *, axis=None)", "argument 0 ('x') must be positional"),
    ("(x, /, *, axis)", "(x, /, *, axis=None)", "optional keyword 'axis' missing"),
    ("(x, y)", "(x, /)", "required arguments beyond the standard's"),
    ("(x, /)", "(*arrays)", "expected *arrays at position 0"),
])
def test_mismatches_are_found(ours, standard, reason):
    def signature(params):
        scope = {}
        exec(f"def f{params}: pass", scope)
        return inspect.signature(scope["f"])
    assert reason in signature_mismatch(signature(ours), signature(standard))
