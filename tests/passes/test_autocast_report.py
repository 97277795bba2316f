"""Contractions autocast leaves alone are counted and explained: NumPy 2 makes ``float32 / np.sqrt(d)``
float64 (a strong float64 scalar), xlac keeps that rule, and the report says where the float64 came in."""
import re

import numpy as np

import xlac
import xlac.numpy as xnp
from xlac.inspection import explain, format_summary, summarize

Q = np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8)


def attention(q, k, v):
    with xlac.autocast():
        d = q.shape[-1]
        scores = q @ k.T / np.sqrt(d)        # np.sqrt(d) is a NumPy float64: scores become float64
        return xnp.exp(scores) @ v, q @ k.T


SQRT_LINE = attention.__code__.co_firstlineno + 3


def attention_python_float(q, k, v):
    with xlac.autocast():
        scores = q @ k.T / q.shape[-1] ** 0.5     # a Python float is weak: scores stay float32
        return xnp.exp(scores) @ v


def _report(fn, *args):
    return xlac.compile(fn).trace(*args).ir("autocast").report


def test_a_strong_float64_scalar_keeps_numpys_dtype_and_is_reported():
    out, lowered = xlac.compile(attention)(Q, Q, Q)
    # NumPy's own result dtypes (without autocast): the float64 scalar promotes.
    expected = np.exp(Q @ Q.T / np.sqrt(8)) @ Q
    assert out.dtype == expected.dtype == np.float64 and lowered.dtype == xlac.numpy.bfloat16
    report = _report(attention, Q, Q, Q)
    assert report["contractions_not_lowered"] == 1 and report["ops_lowered"] == 2
    assert report["not_lowered_because"] == (
        f"float64 operands from divide at test_autocast_report.py:{SQRT_LINE}: NumPy 2 promotes float32 with a "
        "float64 scalar such as np.sqrt(d); use a Python float or np.float32")


def test_a_python_float_scalar_lets_every_contraction_lower():
    report = _report(attention_python_float, Q, Q, Q)
    assert report["contractions_not_lowered"] == 0 and "not_lowered_because" not in report
    assert report["ops_lowered"] == 2
    assert xlac.compile(attention_python_float)(Q, Q, Q).dtype == xlac.numpy.bfloat16


def test_a_float64_argument_is_named():
    def f(x, w):
        with xlac.autocast():
            return x @ w, x @ w.astype(np.float32)
    report = _report(f, Q, Q.T.astype(np.float64))
    assert report["contractions_not_lowered"] == 1
    assert report["not_lowered_because"] == (
        "float64 operands from argument w: pass it as float32 for autocast to lower it")


def test_several_contractions_with_one_cause_are_counted_once():
    def f(x, w):
        with xlac.autocast():
            return x @ w @ w.T @ w
    report = _report(f, Q, Q.T.astype(np.float64))
    assert report["contractions_not_lowered"] == 3
    assert report["not_lowered_because"].endswith("[3 contractions]")
    assert report["not_lowered_because"].count("float64 operands") == 1


def test_an_integer_contraction_is_reported_with_its_dtype():
    def f(x):
        with xlac.autocast():
            return x @ x.T
    report = _report(f, np.arange(6, dtype=np.int32).reshape(2, 3))
    assert report == {**report, "contractions_not_lowered": 1,
                      "not_lowered_because": "i32 operands: autocast lowers only float16, bfloat16 and float32"}


def test_explain_and_the_summary_show_it():
    compiled = xlac.compile(attention).lower(Q, Q, Q).compile()
    text = explain(compiled.lowered.traced.stages)
    header = next(line for line in text.splitlines() if line.startswith("autocast:"))
    assert "contractions_not_lowered: 1" in header
    assert re.search(rf"not_lowered_because: float64 operands from divide at test_autocast_report.py:{SQRT_LINE}",
                     header)
    summary = format_summary(summarize("attention", "q:f32[4,8]", "first call", compiled, {}))
    assert re.search(rf"autocast: .*contractions_not_lowered 1, not_lowered_because float64 operands from divide at "
                     rf"test_autocast_report.py:{SQRT_LINE}: .*use a Python float or np.float32$", summary, re.M)
