"""What tracing knows of a traced scalar's value (xlac/trace/facts.py): kept by the trace per value, carried
through ``+``/``-``/``*`` by a Python int, forgotten on an in-place write, not seen by an inner trace."""
import numpy as np

import xlac.numpy as xnp  # noqa: F401  (installs the operators on traced values)
from xlac.ir.types import TensorType
from xlac.trace import ops
from xlac.trace.context import Trace
from xlac.trace.facts import known_range, offset_form, set_known_range
from xlac.trace.tracer import Tracer

INT64 = np.dtype("int64")


def scalar_input(trace: Trace) -> Tracer:
    return trace.add_input(TensorType((), INT64))


def test_arithmetic_by_python_ints_carries_the_range_and_the_offset_form():
    with Trace() as t:
        i = scalar_input(t)
        set_known_range(i, (0, 9))
        shifted, again, back = i + 1, i + 1, 3 - i
        scaled = (i + 1) * 4
        assert known_range(shifted) == (1, 10)
        assert known_range(back) == (-6, 3)
        assert known_range(scaled) == (4, 40)
        assert offset_form(shifted) == offset_form(again) == (i.value.id, 1)     # a[i + 1:] and b[i + 1:] alike
        assert offset_form(scaled) == (("times", i.value.id, 4), 4)
        assert offset_form(back) == (back.value.id, 0)         # -i + 3 is no offset of i


def test_facts_belong_to_the_value_and_to_its_trace():
    with Trace() as t:
        i = scalar_input(t)
        set_known_range(i, (2, 5))
        assert known_range(Tracer(i.value, t)) == (2, 5)       # another tracer of the same value
        assert i.value.id in t.scalar_facts and not hasattr(i, "known_range")
        with Trace() as inner:
            inner.writes_enclosing = True
            assert known_range(inner.lift(i)) is None           # the inner trace's stand-in: a value of its own
    assert known_range(3) is None and known_range(np.int64(3)) is None


def test_an_in_place_write_forgets_what_was_known():
    with Trace() as t:
        i = scalar_input(t)
        set_known_range(i, (0, 3))
        shifted = i + 1
        shifted._store(ops.constant(100, INT64))
        assert known_range(shifted) is None
        assert offset_form(shifted) == (shifted.value.id, 0)
        assert known_range(i) == (0, 3)
