"""Differential fuzzing in CI: random NumPy programs give NumPy's values, dtypes and mutated arguments
compiled, eagerly on xlac.Array and through xlac.numpy (a small example count; benchmarks/fuzz.py runs many)."""
import inspect
import warnings

import numpy as np
from hypothesis import Phase, given, settings

from tests.fuzz import program as program_module
import xlac
from tests.fuzz.compare import LOOP_MODES, check_program, mismatch, tolerance
from tests.fuzz.program import BEING_FIXED, OPEN, Program, Statement, loop_programs, numpy_accepts, programs


@settings(max_examples=40, deadline=None)
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


# ---------------------------------------------------------------- loops and branches


@settings(max_examples=12, deadline=None)
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
    carried_extent = Statement("for i in range(3):\n    u1 = a0[i:i + 1] * 2\n    a0[i % 4] += 1",
                               ("for_loop",), steps=6, fori_code=None)
    program = Program((("a0", (4,), "float64"),), (carried_extent,), (), seed=0, tags=frozenset({"for_loop"}))
    roll, unroll = check_program(program, ("roll", "unroll"))
    assert (roll.status, unroll.status) == ("unsupported", "pass") and "traced length" in roll.reason


@settings(max_examples=10, deadline=None, phases=[Phase.generate])
@given(loop_programs())
def test_loop_programs_leave_out_the_known_bug_families(program):
    assert not program.tags & (set(BEING_FIXED) | set(OPEN)), program.source()
