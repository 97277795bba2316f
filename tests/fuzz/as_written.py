"""Statement families of NumPy programs as people write them (issue 31), for ``tests/fuzz/program.py``'s
``programs``: helpers that write into the caller's temporaries, one array passed as two arguments or as
overlapping views, ``assert`` on traced values, ``math`` and Python's scalar functions on traced scalars,
``nonzero``/``where`` results as indices, and ``and``/``or``/ternaries/``if``/``while`` whose untaken side
would index out of bounds. Each statement carries its family's tag (a key of ``FAMILIES``).

>>> from hypothesis import given, settings
>>> from tests.fuzz.program import numpy_accepts, programs
>>> @settings(max_examples=5, deadline=None)
... @given(programs(exclude=frozenset()))
... def check(program):
...     assert numpy_accepts(program) is not None
>>> check()
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.fuzz.program import RAISING, Program, Raised, Statement, numpy_accepts

FAMILIES = {
    "helper_fills_temporary": "def fill(b, x): b[...] = ... called on b = np.zeros/empty_like/copy/... of the "
                              "program (or a slice of one)",
    "helper_returns_allocated": "def make(x): b = np.zeros_like(x); b[...] = ...; return b",
    "argument_passed_twice": "program(a0, a0), one parameter read and one written",
    "argument_views_overlap": "program(a0[1:], a0[:-1]) and other views of one array, one read and one written",
    "assert_traced": "assert on traced values that holds",
    "assert_fails": "assert on traced values that fails: AssertionError",
    "math_scalar": "math.sqrt/floor/exp/isnan, float(), int(), round(), abs(), divmod() of traced scalars",
    "math_domain_error": "math.sqrt/log/acos outside their domain: ValueError('math domain error')",
    "nonzero_index": "nonzero(m)/where(m)/flatnonzero/argwhere and x[m] as indices, indexed, reduced, written",
    "predicated_check": "and/or, ternaries, if and while whose untaken side would index out of bounds",
}
CALL_FAMILIES = frozenset({"argument_passed_twice", "argument_views_overlap"})
# Families whose statements loop bodies of ``loop_programs`` hold too (their statements define no helper).
LOOP_BODY_FAMILIES = frozenset({"math_scalar", "assert_traced", "predicated_check", "nonzero_index"})
STATEMENT_KINDS = {"helper_fill": "helper_fills_temporary", "nonzero": "nonzero_index", "math": "math_scalar",
                   "predicated": "predicated_check", "helper_make": "helper_returns_allocated",
                   "assert": "assert_traced"}
BUFFERS = {                                  # kind -> a new array to write, made from the array named x
    "zeros": "np.zeros({x}.shape)", "zeros_like": "np.zeros_like({x})", "empty_like": "np.empty_like({x})",
    "copy": "{x}.copy()", "ones": "np.ones({x}.shape, {x}.dtype)", "full": "np.full({x}.shape, 2.0)",
    "array": "np.array({x})", "arange": "np.arange({x}.size).reshape({x}.shape)",
    "concatenate": "np.concatenate([{x}, {x}])[:{x}.shape[0]]", "slice": "np.zeros((2,) + {x}.shape)[1]",
}
FILLS = {                                    # how a helper writes b from x ("full": it writes every element)
    "full": "b[...] = x * 2", "full_sin": "b[...] = np.sin(x)", "stencil": "b[1:-1] = x[2:] - x[:-2]",
    "augmented": "b += x", "element": "b[0] = x.sum()", "reversed": "b[::-1] = x",
}
VIEW_CALLS = {                               # the shape of the array behind the views -> pairs of views
    (5,): (("a0[1:]", "a0[:-1]"), ("a0[::-1]", "a0"), ("a0[:-2]", "a0[2:]"), ("a0[:3]", "a0[2:]")),
    (4,): (("a0[1:]", "a0[:-1]"), ("a0[::2]", "a0[1::2]"), ("a0[::-1]", "a0")),
    (3, 4): (("a0[:, 1:]", "a0[:, :-1]"), ("a0[1:]", "a0[:-1]"), ("a0[0]", "a0[-1]"), ("a0[:, ::-1]", "a0")),
    (3, 3): (("a0.T", "a0"), ("a0[1:, 1:]", "a0[:-1, :-1]")),
}
CALL_DTYPES = ("int32", "int64", "float32", "float64", "complex128")


def statement(draw, env: dict, temp: str, families: frozenset) -> Statement:
    """A statement of one of ``families`` (its statement kinds) over the arrays of ``env``, binding ``temp``."""
    kind = _pick(draw, [k for k, family in STATEMENT_KINDS.items() if family in families])
    names = sorted(name for name, value in env.items() if np.size(value) > 0)
    x = draw(st.sampled_from(names))
    return {"helper_fill": _helper_fill, "helper_make": _helper_make, "assert": _assert, "math": _math,
            "nonzero": _nonzero, "predicated": _predicated}[kind](draw, env, x, temp)


def _pick(draw, options: list):
    """One of ``options``, each as often (``st.sampled_from`` draws the first ones more often)."""
    return options[draw(st.integers(0, 59)) % len(options)]


def _helper_fill(draw, env: dict, x: str, temp: str) -> Statement:
    """``fill(b, x)`` on a buffer ``b`` the program allocates, read after the call (maybe filled twice)."""
    buffer = draw(st.sampled_from(sorted(BUFFERS)))
    fill = draw(st.sampled_from(sorted(FILLS) if buffer != "empty_like" else ["full", "full_sin"]))
    helper = f"fill{temp[1:]}"
    lines = [f"{temp} = {BUFFERS[buffer].format(x=x)}", f"{helper}({temp}, {x})"]
    if draw(st.booleans()):
        lines.append(f"{helper}({temp}, {temp})" if draw(st.booleans()) else
                     f"{temp} = {temp}.copy()\n{helper}({temp}, {x})")
    return Statement("\n".join(lines), ("helper_fills_temporary", f"buffer:{buffer}", f"fill:{fill}"),
                     helper=f"def {helper}(b, x):\n    {FILLS[fill]}")


def _helper_make(draw, env: dict, x: str, temp: str) -> Statement:
    """``make(x)``: a helper that allocates an array, writes it and returns it (called once or twice)."""
    buffer = draw(st.sampled_from(sorted(BUFFERS)))
    fill = draw(st.sampled_from(sorted(FILLS) if buffer != "empty_like" else ["full", "full_sin"]))
    helper = f"make{temp[1:]}"
    code = f"{temp} = {helper}({x})" if draw(st.booleans()) else f"{temp} = {helper}({x}) - 2 * {helper}({x})"
    return Statement(code, ("helper_returns_allocated", f"buffer:{buffer}", f"fill:{fill}"),
                     helper=f"def {helper}(x):\n    b = {BUFFERS[buffer].format(x='x')}\n    {FILLS[fill]}\n"
                            f"    return b")


def _assert(draw, env: dict, x: str, temp: str) -> Statement:
    """An ``assert`` on ``x``'s values that holds in NumPy (statements that fail it are dropped)."""
    real = f"{x}.real" if np.iscomplexobj(env[x]) else x       # complex max/min: UnsupportedError in xlac
    test = draw(st.sampled_from((f"np.all(np.isfinite({x}))", f"np.abs({x}).sum() < 1e6",
                                 f"{real}.max() >= {real}.min()", f"not np.any(np.isnan({x}))",
                                 f"({x} == {x}).all()")))
    message = draw(st.sampled_from(("", ', "values out of range"')))
    return Statement(f"assert {test}{message}", ("assert_traced",))


SCALARS = (                                  # Python scalar functions of a traced 0-d value {s}
    "math.sqrt(abs(float({s})))", "math.floor(float({s}))", "math.ceil(float({s}))", "math.exp(float({s}))",
    "float({s})", "int({s})", "round(float({s}), 1)", "round(float({s}))", "abs({s})", "math.isnan(float({s}))",
    "divmod(int({s}), 3)[1]", "divmod(float({s}), 0.75)[0]", "math.hypot(float({s}), 1.0)",
    "math.atan2(float({s}), 2.0)", "complex({s})", "math.trunc(float({s}))", "math.fabs(float({s}))",
)


def _math(draw, env: dict, x: str, temp: str) -> Statement:
    """A Python scalar function of a traced scalar of ``x`` (its sum, max or an element), alone or
    scaling ``x``."""
    element = ", ".join("0" for _ in np.shape(env[x]))
    real = f"{x}.real" if np.iscomplexobj(env[x]) else x
    scalar = draw(st.sampled_from((f"{real}.sum()", f"{real}.max()", f"{real}[{element}]" if element else real)))
    call = draw(st.sampled_from(SCALARS)).format(s=scalar)
    code = f"{temp} = {call}" if draw(st.booleans()) else f"{temp} = {x} * {call}"
    return Statement(code, ("math_scalar", call.split("(")[0]))


def scalar_write(draw, place: str, scalar: str) -> str:
    """``place = f(scalar)`` with ``f`` a Python scalar function (in a loop body: ``x[i] = math.sqrt(...)``)."""
    return f"{place} = {draw(st.sampled_from(SCALARS)).format(s=scalar)}"


def _mask(env: dict, x: str) -> str:
    value = np.asarray(env[x])
    return x if value.dtype == bool else f"{x}.real > 0" if value.dtype.kind == "c" else f"{x} > 0"


def _nonzero(draw, env: dict, x: str, temp: str) -> Statement:
    """Indices of the data's nonzero elements (``np.nonzero``, ``np.where`` of one argument, ``flatnonzero``,
    ``argwhere``, a mask selection) used to index, indexed, reduced, or written through."""
    m = _mask(env, x)
    code = draw(st.sampled_from((
        f"{temp} = {x}[np.nonzero({m})].sum()",
        f"{temp} = {x}[np.where({m})] * 2",
        f"{temp} = np.take({x}, np.flatnonzero({m})).sum()",
        f"{temp} = np.argwhere({m}).sum(axis=0)",
        f"{temp} = np.nonzero({m})[0][-1]",
        f"{temp} = {x}[np.nonzero({m})[0]].sum(axis=0)",
        f"{temp} = {x}[{m}][0]",
        f"{temp} = {x}[{m}][-1]",
        f"{temp} = np.linalg.norm({x}[np.nonzero({m})])",
        f"{x}[np.nonzero({m})] = 0",
        f"{x}[np.where({m})] *= 2",
        f"{temp} = np.flatnonzero({m})\n{temp} = {x}.ravel()[{temp}].sum()",
    )))
    write = ("setitem",) if code.startswith(x) else ()
    return Statement(code, ("nonzero_index",) + write)


def _predicated(draw, env: dict, x: str, temp: str) -> Statement:
    """A read ``x.ravel()[k]`` with a traced ``k`` up to past the end, which Python evaluates only where
    ``k`` is in bounds: under ``and``/``or``, a ternary, an ``if``, or a ``while`` test."""
    m = _mask(env, x)
    offset = draw(st.integers(0, 3))
    count = f"{temp} = np.count_nonzero({m}) + {offset}"
    form = draw(st.sampled_from(("ternary", "and", "or", "if", "while")))
    if form == "ternary":
        code = f"{count}\n{temp} = {x}.ravel()[{temp}] if {temp} < {x}.size else {x}.ravel()[-1]"
    elif form == "and":
        code = f"{count}\n{temp} = {temp} < {x}.size and {x}.ravel()[{temp}] > 0"
    elif form == "or":
        code = f"{count}\n{temp} = {temp} >= {x}.size or {x}.ravel()[{temp}] <= 0"
    elif form == "if":
        code = (f"{count}\nif {temp} < {x}.size:\n    {temp} = {x}.ravel()[{temp}]\nelse:\n"
                f"    {temp} = {x}.ravel()[0]")
    else:                                    # issue 31's bin_of: Python never reads past the end
        limit = draw(st.sampled_from(("0.5", "10.0", f"{x}.ravel()[0]")))
        code = (f"{temp} = 0\nwhile {temp} < {x}.size - 1 and {x}.ravel()[{temp} + 1] <= {limit}:\n"
                f"    {temp} += 1")
    return Statement(code, ("predicated_check", f"predicated:{form}"))


def shared_call(draw, families: frozenset) -> tuple[tuple, tuple]:
    """``(args, call)``: one array passed as two parameters, or two views of it (``a0[1:]``, ``a0[:-1]``)."""
    family = _pick(draw, [f for f in ("argument_views_overlap", "argument_passed_twice") if f in families])
    dtype = draw(st.sampled_from(CALL_DTYPES))
    if family == "argument_passed_twice":
        shape = draw(st.sampled_from(((4,), (2, 3), (), (3, 1))))
        pair = ("a0", "a0")
    else:
        shape = draw(st.sampled_from(sorted(VIEW_CALLS)))
        pair = draw(st.sampled_from(VIEW_CALLS[shape]))
    if draw(st.booleans()):
        pair = pair[::-1]
    args = (("a0", shape, dtype),)
    call = (("p0", pair[0]), ("p1", pair[1]))
    if draw(st.booleans()):
        args += (("a1", draw(st.sampled_from(((3,), (), (1,)))), draw(st.sampled_from(CALL_DTYPES))),)
        call += (("a1", "a1"),)
    return args, call


def shared_write(draw, env: dict, call: tuple) -> Statement:
    """The first statement of a program called with shared arrays: one parameter written from the other."""
    read, written = ("p0", "p1") if draw(st.booleans()) else ("p1", "p0")
    code = draw(st.sampled_from((
        f"{written}[...] = np.sin({read})", f"{written} += {read}", f"{written} *= {read}",
        f"{written}[1:-1] = 0.5 * ({read}[:-2] + {read}[2:])", f"{written}[...] = {read}[::-1]",
        f"np.multiply({read}, 2, out={written})", f"{written}[...] = {read} - {read}.sum()",
    )))
    return Statement(code, ("setitem", "shared_write"))


def with_raising_statement(draw, program: Program, env: dict, families: frozenset) -> Program:
    """``program`` ending with a statement that raises (a failing ``assert``, ``math.sqrt`` of a negative
    number), where NumPy's run raises that family's error there; else ``program`` unchanged."""
    family = _pick(draw, sorted(families & set(RAISING)))
    names = sorted(name for name, value in env.items() if np.size(value) > 0)
    if not names:
        return program
    x = draw(st.sampled_from(names))
    if family == "assert_fails":
        test = draw(st.sampled_from((f"np.abs({x}).sum() > 1e6", f"np.all(np.abs({x}) > 100)",
                                     f"np.isnan({x}).any()")))
        code = f"assert {test}, \"{x} out of range\""
    else:
        code = "_ = " + draw(st.sampled_from((
            f"math.sqrt(-1.0 - float(np.abs({x}).sum()))", f"math.log(-float(np.abs({x}).max()) - 0.5)",
            f"math.acos(2.0 + float(np.abs({x}).min()))", f"{x} * math.sqrt(float(np.abs({x}).sum()) - 1e6)")))
    candidate = program.with_statements(program.statements + (Statement(code, (family,)),))
    return candidate if isinstance(numpy_accepts(candidate), Raised) else program
