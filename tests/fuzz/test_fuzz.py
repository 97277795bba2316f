"""Differential fuzzing in CI: random NumPy programs give NumPy's values, dtypes and mutated arguments
compiled, eagerly on xlac.Array and through xlac.numpy (a small example count; benchmarks/fuzz.py runs many)."""
import inspect
import warnings

import numpy as np
import pytest
from hypothesis import Phase, given, settings

from tests.fuzz import as_written
from tests.fuzz import program as program_module
import xlac
from tests.fuzz.compare import LOOP_MODES, _refusal, check_program, mismatch, tolerance
from tests.fuzz.program import (BEING_FIXED, OPEN, Program, Raised, Statement, loop_programs, numpy_accepts,
                                programs)


@settings(max_examples=20, deadline=None)
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
    source = inspect.getsource(program_module) + inspect.getsource(as_written)
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


# ---------------------------------------------------------------- NumPy as written (issue 31)


def _raising(code: str, tag: str) -> Program:
    return Program((("a0", (3,), "float64"),), (Statement(code, (tag,)),), (), seed=0, tags=frozenset({tag}))


def test_numpy_raising_a_raising_familys_error_is_the_expected_result():
    failing = _raising('assert np.abs(a0).sum() > 1e6, "a0 out of range"', "assert_fails")
    assert numpy_accepts(failing) == Raised(AssertionError, "a0 out of range")
    domain = _raising("_ = math.sqrt(-1.0 - float(np.abs(a0).sum()))", "math_domain_error")
    assert numpy_accepts(domain) == Raised(ValueError, "math domain error")
    assert numpy_accepts(_raising("_ = math.sqrt(-1.0)", "assert_fails")) is None      # not the family's error
    assert numpy_accepts(_raising('assert a0.sum() > 1e6', "assert_traced")) is None    # not a raising family


def test_errors_compare_by_class_and_numpys_message():
    failing = _raising('assert np.abs(a0).sum() > 1e6, "a0 out of range"', "assert_fails")
    assert [o.status for o in check_program(failing, ("eager", "xnp"))] == ["pass", "pass"]
    holding = _raising('assert np.abs(a0).sum() < 1e6, "a0 out of range"', "assert_fails")
    returns, = check_program(holding, ("eager",), Raised(AssertionError, "a0 out of range"))
    assert returns.status == "fail" and returns.reason == "returns where NumPy raises AssertionError: a0 out of range"
    other, = check_program(failing, ("eager",), Raised(ValueError, "math domain error"))
    assert other.status == "fail" and other.reason.startswith("raises AssertionError: a0 out of range where NumPy")
    message, = check_program(failing, ("eager",), Raised(AssertionError, "another message"))
    assert message.status == "fail"


def test_a_program_called_with_views_of_one_array_writes_through_them():
    stencil = Statement("p1[1:-1] = 0.5 * (p0[:-2] + p0[2:])", ("setitem", "shared_write"))
    program = Program((("a0", (5,), "float64"),), (stencil,), (), seed=0, call=(("p0", "a0[1:]"), ("p1", "a0[:-1]")))
    program = program.with_statements([stencil])
    assert program.tags == {"setitem", "shared_write", "argument_views_overlap"}
    assert program.source().startswith("def program(p0, p1):") and program.call_source() == "program(a0[1:], a0[:-1])"
    a0 = program.inputs()[0]
    expected = a0.copy()
    expected[1:-2] = 0.5 * (a0[1:-2] + a0[3:])
    _, (after,) = numpy_accepts(program)
    np.testing.assert_array_equal(after, expected)
    eager, xnp = check_program(program, ("eager", "xnp"))
    assert (eager.status, xnp.status) == ("unsupported", "pass") and "called with views" in eager.reason
    twice = Program(program.args, (), (), 0, call=(("p0", "a0"), ("p1", "a0"))).with_statements([stencil])
    assert "argument_passed_twice" in twice.tags and not twice.calls_with_views()


def test_statements_are_found_by_line_after_their_helpers():
    fill = Statement("t0 = np.zeros(3)\nfill0(t0, a0)", ("helper_fills_temporary",),
                     helper="def fill0(b, x):\n    b[...] = x")
    program = Program((("a0", (3,), "float64"),), (Statement("t1 = a0 * 2"), fill), ("t0",), seed=0)
    lines = program.source().splitlines()
    assert lines[:3] == ["def fill0(b, x):", "    b[...] = x", "def program(a0):"]
    assert [program.statement_at(line) for line in range(1, 8)] == [fill, fill, None, program.statements[0], fill,
                                                                     fill, None]
    assert numpy_accepts(program)[0][0].tolist() == program.inputs()[0].tolist()
    loop = Statement("for i in range(2):\n    a0[i] += 1", ("for_loop",), fori_code="def _body1(i, carry):\n"
                     "    a0[i] += 1\n    return carry\nxlac.fori_loop(0, 2, _body1, 0)")
    last = Statement("t1 = a0 * 2", ("math_scalar",))
    looped = Program((("a0", (3,), "float64"),), (loop, last), ("t1",), seed=0)
    assert looped.statement_at(4) is last and looped.statement_at(6, fori=True) is last


def test_a_refusal_of_a_statement_of_an_issue_31_family_is_a_failure():
    program = Program((("a0", (3,), "float64"),), (Statement("t0 = a0 * 2"), Statement(
        "t1 = float(a0.sum())", ("math_scalar",))), ("t1",), seed=0, tags=frozenset({"math_scalar"}))
    error = xlac.TracerConversionError("float() needs a concrete value\n  at <fuzz program 0abc>:{} (in program)")
    assert _refusal(program, "compiled", type(error)(str(error).format(3)), []) is None
    assert _refusal(program, "compiled", type(error)(str(error).format(2)), []).startswith("TracerConversionError")
    assert _refusal(program, "compiled", ValueError("share memory"), []) is None


# ---------------------------------------------------------------- loops and branches


@settings(max_examples=6, deadline=None)
@given(loop_programs())
def test_loop_programs_match_numpy_rolled_unrolled_and_as_fori_loop(program):
    """Each program NumPy runs as Python loops and ifs: compiled with every loop rolled into an XLA loop,
    with every loop unrolled, and with each loop an xlac.fori_loop writing through its closure."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        failures = [o for o in check_program(program, LOOP_MODES) if o.status == "fail"]
    assert not failures, "\n\n".join(f"{program.source(fori=o.mode == 'fori')}\n{o.mode}: {o.reason}\n{o.detail}"
                                     for o in failures)


_BODY = ("acc1 = acc1 + a1[(i + 1) % 3]\n"
         "a0[i % 4] += acc1.sum()\n"
         "u2 = a1[i % 3, ::-1]\n"
         "u2 *= 0.5\n"
         "if a0[i % 4] > 0.5:\n"
         "    a1[:, i % 2] -= i\n"
         "else:\n"
         "    a0[i:i + 1] = 2")


def _loop_program() -> Program:
    from tests.fuzz.program import _fori_form, _indent, _Names, _run_body
    args = (("a0", (4,), "float64"), ("a1", (3, 2), "float32"))
    init = Statement("acc1 = np.zeros_like(a1[0])")
    loop = Statement("for i in range(5):\n" + _indent(_BODY), ("for_loop",), steps=40)
    before, after = (_run_body(Program(args, statements, (), seed=3)) for statements in ([init], [init, loop]))
    loop = Statement(loop.code, loop.tags, steps=loop.steps, fori_code=_fori_form("i", 5, _BODY, before, after,
                                                                                   _Names()))
    return Program(args, (init, loop), ("acc1",), seed=3, tags=frozenset({"for_loop"}))


def test_a_loop_program_rolls_and_matches_numpy_in_every_loop_mode():
    program = _loop_program()
    assert numpy_accepts(program) is not None and "xlac.fori_loop(0, 5, _body1, (acc1, ))" in program.source(fori=True)
    decisions = xlac.compile(program.function(np), loops="roll").trace(*program.inputs()).loop_decisions
    assert [d.decision for d in decisions] == ["rolled"], decisions
    assert [o.status for o in check_program(program, LOOP_MODES)] == ["pass", "pass", "pass"]


def test_the_fori_loop_form_carries_rebound_names_and_writes_arrays_through_the_closure():
    from tests.fuzz.program import _fori_form, _Names
    env = {"acc1": np.zeros(2, np.float32), "a0": np.zeros(3), "u2": np.zeros(2)}
    fori = _fori_form("i", 3, "acc1 = acc1 + a0[i % 3]\na0 += 1\nu2 = a0[1:]\nu2 += 1", env, env, _Names())
    assert fori == ("def _body1(i, carry):\n    (acc1, ) = carry\n    acc1 = acc1 + a0[i % 3]\n    a0[...] += 1\n"
                    "    u2 = a0[1:]\n    u2 += 1\n    return (acc1, )\n"
                    "(acc1, ) = xlac.fori_loop(0, 3, _body1, (acc1, ))")
    changes_type = {"acc1": np.zeros(2, np.float64), "a0": np.zeros(3)}
    assert _fori_form("i", 3, "acc1 = acc1 + a0[i % 3]", env, changes_type, _Names()) is None
    assert _fori_form("i", 3, "acc1 = acc1 + 1\nacc1[0] = 2", env, env, _Names()) is None


def test_a_roll_refusal_counts_as_unsupported_only_for_its_documented_message():
    # u1 is read after the loop, so it is carried: a value of traced length cannot be
    carried_extent = Statement("for i in range(3):\n    u1 = a0[:i + 1] * 2\n    a0[i % 4] += 1\nu2 = u1.sum()",
                               ("for_loop",), steps=6, fori_code=None)
    program = Program((("a0", (4,), "float64"),), (carried_extent,), (), seed=0, tags=frozenset({"for_loop"}))
    roll, unroll = check_program(program, ("roll", "unroll"))
    assert (roll.status, unroll.status) == ("unsupported", "pass") and "traced length" in roll.reason


@settings(max_examples=10, deadline=None, phases=[Phase.generate])
@given(loop_programs())
def test_loop_programs_leave_out_the_known_bug_families(program):
    assert not program.tags & (set(BEING_FIXED) | set(OPEN)), program.source()
