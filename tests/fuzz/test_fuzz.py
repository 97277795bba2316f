"""Differential fuzzing in CI: random NumPy programs give NumPy's values, dtypes and mutated arguments
compiled, eagerly on xlac.Array and through xlac.numpy (a small example count; benchmarks/fuzz.py runs many)."""
import inspect
import warnings

import numpy as np
from hypothesis import Phase, given, settings

from tests.fuzz import program as program_module
from tests.fuzz.compare import check_program, mismatch, tolerance
from tests.fuzz.program import BEING_FIXED, OPEN, Program, Statement, numpy_accepts, programs


@settings(max_examples=60, deadline=None)
@given(programs(max_statements=5))
def test_programs_match_numpy(program):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        failures = [o for o in check_program(program) if o.status == "fail"]
    assert not failures, program.source() + "".join(f"\n{o.mode}: {o.reason}\n{o.detail}" for o in failures)


@settings(max_examples=10, deadline=None)
@given(programs(exclude=frozenset(), max_statements=4))
def test_generated_programs_run_cleanly_in_numpy(program):
    assert numpy_accepts(program) is not None, program.source()


def test_known_bug_lists_name_generated_statement_tags():
    """Each name is a tag some statement of the generator carries (its key plus at least one use)."""
    assert set(BEING_FIXED).isdisjoint(OPEN)
    assert all(isinstance(text, str) and text for text in list(BEING_FIXED.values()) + list(OPEN.values()))
    source = inspect.getsource(program_module)
    never_tagged = [name for name in list(BEING_FIXED) + list(OPEN) if source.count(f'"{name}') < 2]
    assert not never_tagged, f"{never_tagged}: names no generated statement carries"


@settings(max_examples=30, deadline=None, phases=[Phase.generate])
@given(programs(max_statements=6))
def test_excluded_families_are_not_generated(program):
    assert not program.tags & (set(BEING_FIXED) | set(OPEN)), program.source()


def test_comparison_catches_each_kind_of_difference():
    expected = np.array([1.0, np.nan, np.inf], np.float32)
    assert mismatch(expected.copy(), expected, 1) is None
    assert "dtype" in mismatch(expected.astype(np.float64), expected, 1)
    assert "shape" in mismatch(expected[:2], expected, 1)
    assert "nan/inf" in mismatch(np.array([1.0, 2.0, np.inf], np.float32), expected, 1)
    assert "values" in mismatch(np.array([1.001, np.nan, np.inf], np.float32), expected, 1)
    one_ulp = np.array([np.nextafter(np.float32(1), np.float32(2)), np.nan, np.inf], np.float32)
    assert mismatch(one_ulp, expected, 1) is None
    assert "values" in mismatch(np.array([1, 2]), np.array([1, 3]), 1)
    assert tolerance(np.int8, 3) == 0.0 and tolerance(np.float16, 1) > tolerance(np.float32, 1)


def test_a_wrong_mutated_argument_is_a_failure():
    program = Program((("a0", (3,), "float64"),), (Statement("a0[0] = 5"),), (), seed=0)
    assert [o.status for o in check_program(program, ("compiled", "eager"))] == ["pass", "pass"]
    expected_outputs, expected_arguments = numpy_accepts(program)
    expected_arguments[0][0] = 6.0
    outcome, = check_program(program, ("compiled",), (expected_outputs, expected_arguments))
    assert outcome.status == "fail" and "argument a0" in outcome.reason
