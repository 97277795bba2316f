"""Run a fuzz program under NumPy and under each xlac mode, and compare values, dtypes and mutated arguments.

>>> from tests.fuzz.program import Program, Statement
>>> program = Program((("a0", (3,), "float32"),), (Statement("t0 = a0 * 2"),), ("t0",), seed=0)
>>> [outcome.status for outcome in check_program(program, modes=("compiled",))]
['pass']
"""
from __future__ import annotations

import re
import traceback
from dataclasses import dataclass

import numpy as np

import xlac
import xlac.numpy as xnp
from tests.fuzz.as_written import FAMILIES
from tests.fuzz.program import Program, Raised, numpy_result, run_numpy

MODES = ("compiled", "eager", "xnp")
# Modes for programs with loops (tests/fuzz/program.py: loop_programs): compiled with every loop rolled into
# an XLA loop, compiled with every loop unrolled, and compiled with each loop written as xlac.fori_loop.
LOOP_MODES = ("roll", "unroll", "fori")
# Errors that say clearly that xlac does not do something NumPy does: "unsupported", not a failure.
UNSUPPORTED_ERRORS = (xlac.UnsupportedError, xlac.TracerConversionError)
# Clear errors for limits README.md documents: a fragment of the message -> the documented limit.
DOCUMENTED_LIMITS = {"traced boolean mask": "Boolean-mask indexing needs the mask at trace time"}
# Statement tags of deliberate deviations docs/numpy-coverage.md documents: a failure of a program carrying one
# counts as unsupported.
DOCUMENTED_DEVIATIONS: dict[str, str] = {}
# Refusals to roll a loop (loops="roll" raises where "auto" unrolls), each a fragment of the error's message
# -> why: a loop body's variable bound to a slice with traced bounds (``u = x[i:i + 1] * 2``, a value whose
# length is known only when the program runs) cannot be carried from one iteration to the next.
ROLL_REFUSALS = {"a rolled loop carries arrays and numbers": "a rolled loop carries arrays and numbers, not a "
                                                             "value of traced length (x[i:j] with traced i, j)"}
# Refusals that stay refusals in statements of issue 31's families (as_written.FAMILIES): what issue 31 does
# not ask for, each a fragment of the error's message -> why.
REFUSALS_OUTSIDE_ISSUE_31 = {"slices of step 1 per axis are supported": "writing with a step or an array index "
                                                                        "into a value of traced length (u = x[i:] * "
                                                                        "2; u[::-1] += 1), beside a family's "
                                                                        "statement in one loop body"}
ULPS_PER_STATEMENT = 4


@dataclass
class Outcome:
    """One mode's verdict on one program: "pass", "unsupported" or "fail" (with a one-line ``reason``)."""
    mode: str
    status: str
    reason: str = ""
    detail: str = ""
    families: str = ""      # of a failure: the as_written families it concerns ("+"-joined), where any


def run_mode(program: Program, mode: str):
    """``(outputs, arguments after the call)`` as NumPy arrays, running ``program`` in ``mode``."""
    arguments = program.inputs()
    if mode == "eager":
        arguments = [xlac.asarray(a) for a in arguments]
    call = program.call_arguments(arguments)
    if mode == "compiled":
        outputs = xlac.compile(program.function(np))(*call)
    elif mode == "eager":
        outputs = program.function(np)(*call)
    elif mode == "xnp":
        outputs = program.function(xnp)(*call)
    elif mode in ("roll", "unroll"):
        outputs = xlac.compile(program.function(np), loops=mode)(*call)
    elif mode == "fori":
        outputs = xlac.compile(program.function(np, fori=True))(*call)
    else:
        raise ValueError(f"unknown mode {mode!r}; modes: {MODES + LOOP_MODES}")
    return [np.asarray(o) for o in outputs], [np.asarray(a) for a in arguments]


def tolerance(dtype, statements: int, through=None) -> float:
    """Relative tolerance for a result of ``dtype`` after ``statements`` statements: a few ulps per statement,
    ulps of ``through`` where that float dtype is less precise (a value that passed through float32, then
    widened: ``float(np.arctan(x32))`` carries float32's rounding into a float64 result)."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "fc":
        return 0.0
    eps = float(np.finfo(dtype).eps)
    if through is not None:
        eps = max(eps, float(np.finfo(through).eps))
    return ULPS_PER_STATEMENT * max(statements, 1) * eps


def narrowest_float(dtypes) -> np.dtype | None:
    """The least precise floating-point (or complex) dtype among ``dtypes``, or None: the precision a
    program's values may have passed through."""
    floats = [np.dtype(d) for d in dtypes if np.dtype(d).kind in "fc"]
    return max(floats, key=lambda d: float(np.finfo(d).eps), default=None)


def mismatch(got, expected, statements: int, through=None) -> str | None:
    """Why ``got`` differs from NumPy's ``expected`` (dtype, shape, nan/inf positions, values), or None;
    ``through``: the least precise float dtype the values passed through (see :func:`tolerance`)."""
    got, expected = np.asarray(got), np.asarray(expected)
    if got.dtype != expected.dtype:
        return f"dtype {got.dtype} != NumPy's {expected.dtype}"
    if got.shape != expected.shape:
        return f"shape {got.shape} != NumPy's {expected.shape}"
    rtol = tolerance(expected.dtype, statements, through)
    if rtol == 0.0:
        return None if np.array_equal(got, expected) else "values differ (exact dtype)"
    got64, expected64 = got.astype(np.complex128), expected.astype(np.complex128)
    for part in (np.real, np.imag):
        g, e = part(got64), part(expected64)
        if not all(np.array_equal(where(g), where(e)) for where in (np.isnan, np.isposinf, np.isneginf)):
            return "nan/inf positions differ"
    finite = np.isfinite(expected64)
    scale = np.max(np.abs(expected64[finite]), initial=0.0)     # cancellation is bounded by the array's scale
    error = np.abs(got64[finite] - expected64[finite])
    if np.any(error > rtol * (np.abs(expected64[finite]) + scale)):
        return f"values differ beyond {rtol:.1e} relative"
    return None


def check_program(program: Program, modes=MODES, expected=None) -> list[Outcome]:
    """Each mode's outcome against NumPy's run of ``program`` (its values, or the error it raises)."""
    expected = expected or numpy_result(program)
    deviations = [DOCUMENTED_DEVIATIONS[tag] for tag in program.tags if tag in DOCUMENTED_DEVIATIONS]
    outcomes = []
    for mode in modes:
        if mode == "fori" and not program.has_fori_form():
            outcomes.append(Outcome(mode, "unsupported", "a loop has no fori_loop form (a carry changes type)"))
        elif mode == "eager" and program.calls_with_views():
            outcomes.append(Outcome(mode, "unsupported", "documented: eager indexing gives a copy, not a view "
                                                         "(the program is called with views)"))
        elif isinstance(expected, Raised):
            outcomes.append(_check_raises(program, mode, expected, deviations))
        else:
            outcomes.append(_check_values(program, mode, expected, deviations))
    return outcomes


def _check_values(program: Program, mode: str, expected: tuple, deviations: list) -> Outcome:
    """``mode``'s outcome where NumPy returns ``expected`` = (outputs, arguments after the call)."""
    expected_outputs, expected_arguments = expected
    statements = program.steps()
    through = narrowest_float([dtype for _, _, dtype in program.args] + [np.asarray(o).dtype for o in expected_outputs])
    try:
        outputs, arguments = run_mode(program, mode)
    except Exception as e:      # noqa: BLE001  (any error is a refusal or a failure to report)
        refusal = _refusal(program, mode, e, deviations)
        if refusal:
            return Outcome(mode, "unsupported", refusal)
        return Outcome(mode, "fail", f"raises {type(e).__name__}: {str(e).splitlines()[0][:120]}",
                       traceback.format_exc(limit=-3), _families_at_fault(program, e, mode))
    reason = None
    for i, (got, want) in enumerate(zip(outputs, expected_outputs)):
        why = mismatch(got, want, statements, through)
        if why:
            reason, detail = f"output {program.outputs[i]}: {why}", f"got {got!r}\nNumPy {np.asarray(want)!r}"
            break
    for (name, _, _), got, want in zip(program.args, arguments, expected_arguments):
        why = reason is None and mismatch(got, want, statements, through)
        if why:
            reason, detail = f"argument {name} after the call: {why}", f"got {got!r}\nNumPy {want!r}"
            break
    if reason is not None and deviations:
        return Outcome(mode, "unsupported", f"documented: {deviations[0]}")
    if reason is not None and mode != "compiled" and _depends_on_views(program, expected_outputs,
                                                                         expected_arguments):
        return Outcome(mode, "unsupported", "documented: eager indexing gives a copy, not a view")
    if reason is None:
        return Outcome(mode, "pass")
    if "values differ beyond" in reason and _ill_conditioned(program, expected_outputs, statements, through):
        return Outcome(mode, "unsupported", "ill-conditioned: NumPy's own result changes when the inputs move by "
                                            "an ulp (a floor or // at an integer boundary after a sum)")
    return Outcome(mode, "fail", reason, detail, _families_at_fault(program))


def _check_raises(program: Program, mode: str, expected: Raised, deviations: list) -> Outcome:
    """``mode``'s outcome where NumPy raises ``expected``: the same class, with NumPy's message in its own."""
    wanted = f"{expected.error.__name__}: {expected.message}"
    try:
        run_mode(program, mode)
    except Exception as e:      # noqa: BLE001  (the error to compare)
        if isinstance(e, expected.error) and expected.message in str(e):
            return Outcome(mode, "pass")
        refusal = None if isinstance(e, expected.error) else _refusal(program, mode, e, deviations)
        if refusal:
            return Outcome(mode, "unsupported", refusal)
        raised = f"raises {type(e).__name__}: {str(e).splitlines()[0][:80]}"
        return Outcome(mode, "fail", f"{raised} where NumPy raises {wanted}", traceback.format_exc(limit=-3),
                       _families_at_fault(program, e, mode))
    return Outcome(mode, "fail", f"returns where NumPy raises {wanted}", "", _families_at_fault(program))


def _refusal(program: Program, mode: str, error: Exception, deviations: list) -> str | None:
    """Why ``error`` is a refusal ("unsupported": a clear error for what xlac does not do, or a documented
    limit), or None where it is a failure. Refusing a form of issue 31 (``as_written.FAMILIES``), which xlac
    must run as NumPy does, is a failure: where the statement on the line ``error`` names has one, or it names no
    statement in a program that does."""
    if isinstance(error, UNSUPPORTED_ERRORS):
        reason = f"{type(error).__name__}: {str(error).splitlines()[0]}"
    else:
        limit = next((text for fragment, text in DOCUMENTED_LIMITS.items() if fragment in str(error)),
                     deviations[0] if deviations else None)
        roll_limit = None
        if mode == "roll" and isinstance(error, TypeError) and "DynamicExtent(" in str(error):
            roll_limit = next((text for fragment, text in ROLL_REFUSALS.items() if fragment in str(error)), None)
        if roll_limit:         # a loop forced to roll that "auto" unrolls: whichever family its body holds
            return f"documented: {roll_limit}"
        if not limit:
            return None
        reason = f"documented: {limit}"
    if any(fragment in str(error) for fragment in REFUSALS_OUTSIDE_ISSUE_31):
        return reason
    return None if _families_at_fault(program, error, mode) else reason


def _families_at_fault(program: Program, error: Exception | None = None, mode: str = "compiled") -> str:
    """The ``as_written`` families of the statements on the lines ``error`` names (in the source ``mode`` runs),
    or where it names none, the program's: "+"-joined, "" for none."""
    lines = re.findall(r"<fuzz program \w+>:(\d+)", str(error or ""))
    statements = [s for s in (program.statement_at(int(line), mode == "fori") for line in lines) if s is not None]
    tags = set().union(*(s.tags for s in statements)) if statements else program.tags
    return "+".join(family for family in FAMILIES if family in tags)


def _ill_conditioned(program: Program, expected_outputs, statements: int, through, trials: int = 8) -> bool:
    """Whether NumPy's outputs move beyond the tolerance when each float input moves by an ulp or two: then
    a rounding difference (another summation order) legitimately changes the result, as ``s // d`` does
    where ``s / d`` is an integer (seed 492 of ``benchmarks/fuzz.py --programs 2000 --seed 0``)."""
    rng = np.random.default_rng(0)
    for _ in range(trials):
        inputs = [a + np.abs(a) * rng.integers(-2, 3, a.shape) * np.finfo(a.dtype).eps if a.dtype.kind == "f"
                  else a for a in (np.asarray(a) for a in program.inputs())]
        try:
            with np.errstate(all="ignore"):
                outputs = program.function(np)(*program.call_arguments([a.copy() for a in inputs]))
        except Exception:       # noqa: BLE001  (an error is no evidence)
            continue
        if any(mismatch(o, e, statements, through) for o, e in zip(outputs, expected_outputs)):
            return True
    return False


def _depends_on_views(program: Program, expected_outputs, expected_arguments) -> bool:
    """Whether NumPy's results change when the program's index reads are copies instead of views."""
    try:
        copied_outputs, copied_arguments = run_numpy(program, copied_views=True)
    except Exception:       # noqa: BLE001  (a copy NumPy rejects differs too)
        return True
    pairs = list(zip(copied_outputs, expected_outputs)) + list(zip(copied_arguments, expected_arguments))
    return any(mismatch(a, b, 0) for a, b in pairs)


def shrink(program: Program, mode: str, reason: str) -> Program:
    """A smaller program (fewer statements) that NumPy still accepts and that still fails in ``mode`` the same way."""
    from tests.fuzz.program import numpy_accepts
    statements = list(program.statements)
    changed = True
    while changed:
        changed = False
        for i in range(len(statements)):
            candidate = program.with_statements(statements[:i] + statements[i + 1:])
            expected = numpy_accepts(candidate)
            if expected is None:
                continue
            outcome = check_program(candidate, (mode,), expected)[0]
            if outcome.status == "fail" and _kind(outcome.reason) == _kind(reason):
                statements, program, changed = statements[:i] + statements[i + 1:], candidate, True
                break
    return program


def _kind(reason: str) -> str:
    """A failure's kind without the variable names: "raises TypeError", "dtype", "values differ"..."""
    if reason.startswith("raises"):
        return reason.split(":")[0]
    return reason.split(": ", 1)[-1].split(" != ")[0].split(" beyond")[0]
