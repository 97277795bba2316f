"""Random NumPy programs for differential fuzzing: statements over named arrays, rendered to Python source.

A program runs unchanged with NumPy, inside ``xlac.compile``, eagerly on ``xlac.Array`` arguments, and with
``xlac.numpy`` as its ``np`` module, so the four runs can be compared (see ``tests/fuzz/compare.py``).

>>> program = Program(args=(("a0", (3,), "float32"),), statements=(Statement("t0 = a0 * 2", ("binary",)),),
...                   outputs=("t0",), seed=0)
>>> print(program.source())
def program(a0):
    t0 = a0 * 2
    return (t0,)
"""
from __future__ import annotations

import ast
import linecache
import math
import re
import warnings
import zlib
from dataclasses import dataclass, field, replace

import numpy as np
from hypothesis import strategies as st

DTYPES = ("bool", "int8", "uint8", "int32", "int64", "float16", "float32", "float64", "complex64", "complex128")
SHAPES = ((), (3,), (2, 3), (3, 1), (1, 3), (2, 1, 3))

# Families of generated statements whose xlac bugs other work is fixing: name -> what is wrong.
# The generator leaves out statements tagged with these names; the merger deletes an entry once its fix is in.
BEING_FIXED: dict[str, str] = {
}
# Bugs this fuzzer found that no one is fixing yet: name -> minimal reproducer. Left out of CI.
OPEN: dict[str, str] = {}

WRITES = {"setitem", "augmented", "ufunc_at", "view_write"}    # tags of statements that write into an array
UNARY = ("negative", "absolute", "sqrt", "exp", "log", "sin", "cos", "tanh", "square", "floor", "ceil", "sign",
         "logical_not", "invert", "conjugate", "reciprocal", "positive", "rint", "expm1", "log1p", "arctan")
BINARY_OPERATORS = ("+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<", "<=", "==", "!=", ">", ">=")
BINARY_UFUNCS = ("add", "subtract", "multiply", "true_divide", "maximum", "minimum", "fmax", "fmin", "arctan2",
                 "hypot", "logical_and", "logical_or", "logical_xor", "bitwise_and", "left_shift", "copysign")
AUGMENTED = ("+=", "-=", "*=", "/=", "//=", "%=", "&=", "|=", "^=")
REDUCTIONS = ("sum", "prod", "max", "min", "mean", "any", "all", "argmax", "argmin", "cumsum", "std", "var")
UFUNC_METHODS = ("add.reduce", "multiply.reduce", "maximum.reduce", "logical_or.reduce", "add.accumulate",
                 "multiply.accumulate", "add.outer", "multiply.outer", "subtract.outer")
AT_UFUNCS = ("add", "multiply", "maximum", "subtract")
# Python's scalar functions of one element ({e}): Python numbers (weak) that the array then meets
PYTHON_SCALAR_CALLS = ("math.sqrt(abs(float({e})))", "math.exp(float({e}))", "math.sin({e})", "math.floor({e})",
                       "math.ceil({e})", "math.trunc({e})", "math.atan({e})", "math.fabs({e})", "float({e})",
                       "int({e})", "round(float({e}), 1)", "round({e})", "math.log1p(abs(float({e})))",
                       "math.hypot({e}, 2.0)", "math.copysign(1.5, {e})", "math.isfinite({e})", "complex({e})")


@dataclass(frozen=True)
class Statement:
    """One line (or a small block) of a program and the tags naming what it exercises.

    ``copied_code`` is the statement with its basic-index read copied: what it means eagerly on an
    ``xlac.Array``, where indexing gives a copy, not a view (a deviation README.md documents).
    """
    code: str
    tags: tuple = ()
    copied_code: str | None = None
    steps: int = 1                      # statements it runs (a loop's: its trip count times its body's)
    fori_code: str | None = None        # a loop written with ``xlac.fori_loop`` (see ``loop_programs``)
    helper: str | None = None           # a module-level function the statement calls, defined before the program

    def written(self, copied_views: bool = False, fori: bool = False) -> str:
        """Its code as ``Program.source`` writes it (with ``copied_views`` or ``fori``, see there)."""
        return (copied_views and self.copied_code) or (fori and self.fori_code) or self.code


@dataclass(frozen=True)
class Program:
    """A function of named array arguments: ``args`` are (name, shape, dtype); inputs come from ``seed``.

    ``call``, when given, is how the program is called: (parameter, expression over ``args``) pairs, as
    ``(("p0", "a0"), ("p1", "a0"))`` for ``program(a0, a0)`` or ``(("p0", "a0[1:]"), ("p1", "a0[:-1]"))``
    for two overlapping views; ``args`` are then the arrays behind the parameters.
    """
    args: tuple
    statements: tuple
    outputs: tuple
    seed: int
    tags: frozenset = field(default_factory=frozenset)
    call: tuple = ()

    def parameters(self) -> list:
        return [name for name, _ in self.call] or [name for name, _, _ in self.args]

    def call_source(self) -> str:
        """How the program is called, as source: ``program(a0[1:], a0[:-1])``."""
        return f"program({', '.join(e for _, e in self.call) or ', '.join(self.parameters())})"

    def call_arguments(self, inputs) -> list:
        """The values the program is called with, given its ``inputs`` (NumPy arrays or ``xlac.Array``)."""
        if not self.call:
            return list(inputs)
        named = dict(zip((name for name, _, _ in self.args), inputs))
        return [eval(expression, {}, named) for _, expression in self.call]

    def calls_with_views(self) -> bool:
        """Whether a parameter is a view of an argument (``a0[1:]``) rather than the argument itself."""
        return any(not expression.isidentifier() for _, expression in self.call)

    def source(self, copied_views: bool = False, fori: bool = False) -> str:
        """The program as the source of ``def program(<args>)`` after its statements' helpers; with
        ``copied_views``, index reads copy; with ``fori``, its ``for`` loops are ``xlac.fori_loop`` calls (where
        a loop has that form)."""
        lines = [line for statement in self.statements if statement.helper for line in statement.helper.split("\n")]
        lines.append(f"def program({', '.join(self.parameters())}):")
        for statement in self.statements:
            lines += ["    " + line for line in statement.written(copied_views, fori).split("\n")]
        lines.append(f"    return ({''.join(name + ', ' for name in self.outputs).rstrip()})")
        return "\n".join(lines)

    def statement_at(self, line: int, fori: bool = False) -> Statement | None:
        """The statement whose code (or helper) is on ``line`` (1-based) of ``source(fori=fori)``."""
        position = 1
        for statement in self.statements:
            if statement.helper:
                if position <= line < position + statement.helper.count("\n") + 1:
                    return statement
                position += statement.helper.count("\n") + 1
        position += 1                   # def program(...):
        for statement in self.statements:
            length = statement.written(fori=fori).count("\n") + 1
            if position <= line < position + length:
                return statement
            position += length
        return None

    def function(self, np_module, copied_views: bool = False, fori: bool = False):
        """The program as a Python function whose ``np`` is ``np_module`` (with ``fori``, see ``source``)."""
        namespace = {"np": np_module, "math": math}
        if fori:
            import xlac
            namespace["xlac"] = xlac
        source = self.source(copied_views, fori)
        # Registered with linecache, as a file's lines are: xlac.compile converts the source it can read.
        filename = f"<fuzz program {zlib.crc32(source.encode()):08x}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        exec(compile(source, filename, "exec"), namespace)
        return namespace["program"]

    def inputs(self) -> list:
        """Fresh NumPy arguments (the same values on every call)."""
        rng = np.random.default_rng(self.seed)
        return [random_array(rng, shape, dtype) for _, shape, dtype in self.args]

    def steps(self) -> int:
        """The statements it runs: a loop's body counts once per iteration (for the float tolerance)."""
        return sum(statement.steps for statement in self.statements)

    def has_fori_form(self) -> bool:
        """Whether every ``for`` loop of the program has an ``xlac.fori_loop`` form."""
        return all(s.fori_code is not None for s in self.statements if "for_loop" in s.tags)

    def with_statements(self, statements) -> "Program":
        names = {name for name, _, _ in self.args} | {target_of(s) for s in statements}
        return Program(self.args, tuple(statements), tuple(o for o in self.outputs if o in names), self.seed,
                       frozenset(t for s in statements for t in s.tags) | call_tags(self.call), self.call)


def call_tags(call: tuple) -> frozenset:
    """The family of a program's ``call``: one array for two parameters, or views of one array."""
    expressions = [expression for _, expression in call]
    if any(not expression.isidentifier() for expression in expressions):
        return frozenset({"argument_views_overlap"})
    if len(set(expressions)) < len(expressions):
        return frozenset({"argument_passed_twice"})
    return frozenset()


def target_of(statement: Statement) -> str | None:
    """The name a ``tN = ...`` statement binds (None for writes into existing arrays)."""
    head = statement.code.split(" = ", 1)[0]
    return head if " = " in statement.code and head.isidentifier() else None


def random_array(rng, shape, dtype):
    """Small, well-conditioned values: ints in [-4, 4] (uint8 in [0, 8]), floats in [-3, 3] with two decimals."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind == "u":
        return rng.integers(0, 9, shape).astype(dtype)
    if dtype.kind == "i":
        return rng.integers(-4, 5, shape).astype(dtype)
    values = np.round(rng.uniform(-3, 3, shape), 2)
    if dtype.kind == "c":
        values = values + 1j * np.round(rng.uniform(-3, 3, shape), 2)
    return np.asarray(values).astype(dtype)


# Families whose last statement raises on purpose -> the error NumPy (or Python) raises there.
RAISING = {"assert_fails": AssertionError, "math_domain_error": ValueError}


@dataclass(frozen=True)
class Raised:
    """NumPy's run of a program ended with the error its raising statement (see ``RAISING``) raises: the result
    the other runs must give too."""
    error: type
    message: str


def run_numpy(program: Program, copied_views: bool = False):
    """``(outputs, arguments after the call)`` under NumPy with every floating-point warning an error."""
    arguments = program.inputs()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            outputs = program.function(np, copied_views)(*program.call_arguments(arguments))
    return outputs, arguments


def numpy_result(program: Program, copied_views: bool = False) -> tuple | Raised:
    """``run_numpy``'s result, or ``Raised`` where the program raises its raising family's error."""
    try:
        return run_numpy(program, copied_views)
    except Exception as e:
        if any(isinstance(e, RAISING[tag]) for tag in program.tags & set(RAISING)):
            return Raised(type(e), str(e))
        raise


def numpy_accepts(program: Program) -> tuple | Raised | None:
    """NumPy's ``(outputs, arguments)`` when it runs the program cleanly with finite results, ``Raised`` when it
    raises the error its raising statement means to raise (see ``RAISING``), else None."""
    try:
        result = numpy_result(program)
    except Exception:
        return None
    if isinstance(result, Raised):
        return result
    outputs, arguments = result
    for value in list(outputs) + arguments:
        value = np.asarray(value)
        if value.dtype == object or (value.dtype.kind in "fc" and not np.all(np.isfinite(value))):
            return None
    return outputs, arguments


# ---------------------------------------------------------------- strategies


def _scalar(draw):
    kind = draw(st.sampled_from(("int", "float", "complex", "bool")))
    if kind == "int":
        return repr(draw(st.integers(-3, 3))), "pyint"
    if kind == "float":
        return repr(draw(st.sampled_from((0.5, -1.5, 2.0, 0.25, 3.0)))), "pyfloat"
    if kind == "complex":
        return draw(st.sampled_from(("1j", "(0.5-1j)", "(2+0j)"))), "pycomplex"
    return draw(st.sampled_from(("True", "False"))), "pybool"


def _index(draw, shape):
    """A basic index for ``shape``: ints, slices, Ellipsis, None."""
    parts = []
    for size in shape[:draw(st.integers(1, max(1, len(shape))))]:
        choice = draw(st.sampled_from(("int", "slice", "step", "full", "neg")))
        if choice == "int":
            parts.append(str(draw(st.integers(0, size - 1))))
        elif choice == "neg":
            parts.append(str(-draw(st.integers(1, size))))
        elif choice == "slice":
            parts.append(f"{draw(st.integers(0, size - 1))}:")
        elif choice == "step":
            parts.append(draw(st.sampled_from(("::2", "::-1", "1::2", ":-1"))))
        else:
            parts.append(":")
    if draw(st.booleans()):
        parts.insert(draw(st.integers(0, len(parts))), draw(st.sampled_from(("None", "..."))))
    return ", ".join(parts) if parts else "..."


def _advanced_index(draw, name, shape):
    """An integer-array or boolean-mask index for ``shape``, as source."""
    choice = draw(st.sampled_from(("list", "list_axis1", "mask", "mask_var")))
    if choice == "mask":
        return f"{name} > 0", ("advanced_index", "mask_read")
    if choice == "mask_var":
        return f"np.{draw(st.sampled_from(('isfinite', 'signbit')))}({name})", ("advanced_index", "mask_read")
    indices = draw(st.lists(st.integers(-shape[0], shape[0] - 1), min_size=1, max_size=4))
    if choice == "list_axis1" and len(shape) >= 2:
        indices = draw(st.lists(st.integers(0, shape[1] - 1), min_size=1, max_size=3))
        return f":, {indices}", ("advanced_index",)
    return f"{indices}", ("advanced_index",)


def _statement(draw, env: dict, temp: str) -> Statement:
    """One candidate statement over the arrays in ``env`` (name -> NumPy value), binding ``temp`` if it binds."""
    names = sorted(env)
    x = draw(st.sampled_from([name for name in names if 0 not in np.shape(env[name])]))   # arguments qualify
    value = env[x]
    shape = np.shape(value)
    kind = draw(st.sampled_from(("unary", "binary", "binary", "operator_scalar", "reduction", "index", "advanced",
                                 "setitem", "augmented_slice", "augmented", "view", "ufunc_method", "at",
                                 "astype", "where", "loop", "branch", "real_imag", "python_scalar")))
    dtype_tag = f"dtype:{np.asarray(value).dtype.name}"
    if kind == "unary":
        f = draw(st.sampled_from(UNARY))
        complex_tag = ()
        if np.iscomplexobj(value):
            complex_tag = {"rint": ("rint_complex",), "arctan": ("complex_inverse_trig",)}.get(f, ())
        return Statement(f"{temp} = np.{f}({x})", ("unary", f, dtype_tag) + complex_tag)
    if kind in ("binary", "operator_scalar"):
        if kind == "binary":
            y, y_tag = draw(st.sampled_from(names)), "array"
        else:
            y, y_tag = _scalar(draw)
        if draw(st.booleans()):
            op = draw(st.sampled_from(BINARY_OPERATORS))
            left, right = (x, y) if draw(st.booleans()) else (y, x)
            tags = ("binary", y_tag, dtype_tag) + (("floor_divide_mod",) if op in ("//", "%") else ())
            tags += ("complex_maxmin",) if _is_complex(env, x, y) and op in ("<", "<=", ">", ">=") else ()
            return Statement(f"{temp} = {left} {op} {right}", tags)
        f = draw(st.sampled_from(BINARY_UFUNCS))
        tags = ("binary", f, y_tag, dtype_tag)
        tags += ("complex_maxmin",) if f in ("maximum", "minimum", "fmax", "fmin") and _is_complex(env, x, y) else ()
        return Statement(f"{temp} = np.{f}({x}, {y})", tags)
    if kind == "reduction":
        f = draw(st.sampled_from(REDUCTIONS))
        arguments = [x]
        if shape and draw(st.booleans()):
            arguments.append(f"axis={draw(st.integers(-len(shape), len(shape) - 1))}")
        if f not in ("cumsum", "argmax", "argmin") and draw(st.booleans()):
            arguments.append("keepdims=True")
        initial = ("reduce_initial",) if f in ("sum", "prod", "max", "min") and draw(st.booleans()) else ()
        if initial:
            arguments.append(f"initial={draw(st.sampled_from(('0', '1', '-2', '2.5')))}")
        tags = ("reduction", f, dtype_tag) + initial + (("complex_maxmin",) if f in ("max", "min", "argmax", "argmin")
                                             and np.iscomplexobj(value) else ())
        if draw(st.booleans()):
            return Statement(f"{temp} = {x}.{f}({', '.join(arguments[1:])})", tags + ("method",))
        return Statement(f"{temp} = np.{f}({', '.join(arguments)})", tags)
    if kind == "index" and shape:
        index = _index(draw, shape)
        element = ("element_read",) if _selects_element(value, index) else ()
        return Statement(f"{temp} = {x}[{index}]", ("index",) + element, f"{temp} = {x}[{index}].copy()")
    if kind == "view" and shape:
        op = draw(st.sampled_from(("*=", "+=", "-=")))
        y, y_tag = _scalar(draw)
        index = _index(draw, shape)
        element = ("element_view",) if _selects_element(value, index) else ()
        return Statement(f"{temp} = {x}[{index}]\n{temp} {op} {y}", ("view_write", y_tag) + element,
                         f"{temp} = {x}[{index}].copy()\n{temp} {op} {y}")
    if kind == "advanced" and shape:
        index, tags = _advanced_index(draw, x, shape)
        return Statement(f"{temp} = {x}[{index}]", tags)
    if kind == "setitem" and shape:
        y = draw(st.sampled_from(names)) if draw(st.booleans()) else _scalar(draw)[0]
        if draw(st.booleans()):
            index, tags = _advanced_index(draw, x, shape)
            return Statement(f"{x}[{index}] = {y}", ("setitem",) + tags + (dtype_tag,))
        return Statement(f"{x}[{_index(draw, shape)}] = {y}", ("setitem", dtype_tag))
    if kind == "augmented_slice" and shape:
        op = draw(st.sampled_from(AUGMENTED))
        y = draw(st.sampled_from(names)) if draw(st.booleans()) else _scalar(draw)[0]
        tags = ("augmented", "setitem", dtype_tag) + (("floor_divide_mod",) if op in ("//=", "%=") else ())
        if draw(st.booleans()):
            index, index_tags = _advanced_index(draw, x, shape)
            tags += index_tags + (("mask_inplace",) if "mask_read" in index_tags else ())
            return Statement(f"{x}[{index}] {op} {y}", tags)
        index = _index(draw, shape)
        element = ("element_view",) if _selects_element(value, index) else ()
        return Statement(f"{x}[{index}] {op} {y}", tags + element)
    if kind == "augmented":
        op = draw(st.sampled_from(AUGMENTED))
        y = draw(st.sampled_from(names)) if draw(st.booleans()) else _scalar(draw)[0]
        tags = ("augmented", dtype_tag) + (("floor_divide_mod",) if op in ("//=", "%=") else ())
        return Statement(f"{x} {op} {y}", tags)
    if kind == "ufunc_method":
        method = draw(st.sampled_from(UFUNC_METHODS))
        if method.endswith("outer"):
            y = draw(st.sampled_from(names))
            return Statement(f"{temp} = np.{method}({x}, {y})", ("ufunc_method", method, dtype_tag))
        axis = f", axis={draw(st.integers(-len(shape), len(shape) - 1))}" if shape else ""
        tags = ("ufunc_method", method, dtype_tag)
        tags += ("complex_maxmin",) if method.startswith("maximum") and np.iscomplexobj(value) else ()
        return Statement(f"{temp} = np.{method}({x}{axis})", tags)
    if kind == "at" and shape:
        f = draw(st.sampled_from(AT_UFUNCS))
        indices = draw(st.lists(st.integers(0, shape[0] - 1), min_size=1, max_size=4))
        y = draw(st.sampled_from(names)) if draw(st.booleans()) else _scalar(draw)[0]
        tags = ("ufunc_at", f, dtype_tag) + (("complex_maxmin",) if f == "maximum" and np.iscomplexobj(value) else ())
        return Statement(f"np.{f}.at({x}, {indices}, {y})", tags)
    if kind == "python_scalar":
        call = draw(st.sampled_from(PYTHON_SCALAR_CALLS)).format(e=f"{x}[{(0,) * len(shape)}]")
        op = draw(st.sampled_from(("+", "*", "-")))
        return Statement(f"{temp} = {x} {op} {call}", ("python_scalar", dtype_tag))
    if kind == "real_imag":
        part = draw(st.sampled_from(("real", "imag")))
        return Statement(f"{temp} = {x}.{part}", ("real_imag", dtype_tag), f"{temp} = {x}.{part}.copy()")
    if kind == "astype":
        dtype = draw(st.sampled_from(DTYPES))
        if np.asarray(value).dtype.kind in "fc" and not _fits(value, dtype):   # C leaves such casts undefined
            dtype = "float64"
        return Statement(f"{temp} = {x}.astype(np.{dtype if dtype != 'bool' else 'bool_'})", ("astype", dtype_tag))
    if kind == "where":
        y, z = draw(st.sampled_from(names)), draw(st.sampled_from(names))
        return Statement(f"{temp} = np.where({x} > 0, {y}, {z})", ("where",))
    if kind == "loop":
        y = draw(st.sampled_from(names))
        op = draw(st.sampled_from(("+", "*", "-")))
        return Statement(f"{temp} = {x} * 1\nfor _ in range({draw(st.integers(1, 3))}):\n"
                         f"    {temp} = {temp} {op} {y}", ("loop", dtype_tag))
    if kind == "branch":
        y = draw(st.sampled_from(names))
        return Statement(f"if {len(shape)} > 1:\n    {temp} = {x} + {y}\nelse:\n    {temp} = {x} - {y}",
                         ("branch", dtype_tag))
    return Statement(f"{temp} = np.negative({x})", ("unary", "negative", dtype_tag))


def _selects_element(value, index: str) -> bool:
    """Whether ``value[index]`` is one element (a NumPy scalar) rather than an array."""
    try:
        return isinstance(eval(f"value[{index}]", {"value": value}), np.generic)
    except Exception:       # noqa: BLE001  (NumPy rejects the index: the statement is dropped anyway)
        return False


def _fits(value, dtype) -> bool:
    """Whether every value of a float array lies in ``dtype``'s range (always for float and complex dtypes)."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "iu":
        return True
    info = np.iinfo(dtype)
    real = np.real(np.asarray(value)).astype(np.float64)
    return bool(np.all((real > info.min - 1) & (real < info.max + 1)))


def _is_complex(env, *names) -> bool:
    return any(np.iscomplexobj(env.get(n, np.asarray(0))) for n in names) or any("j" in n for n in names)


@st.composite
def programs(draw, exclude=frozenset(BEING_FIXED) | frozenset(OPEN), max_statements: int = 6):
    """Programs NumPy runs cleanly, built statement by statement; statements tagged in ``exclude`` are left out.

    Where issue 31's families (``tests/fuzz/as_written.py``) are not all excluded, a third of the statements
    come from them, a third of the programs are called with one array as two parameters or as overlapping
    views (their first statement writes one from the other), and a sixth end with a statement that raises
    (NumPy's error is then the expected result: ``Raised``). With them all excluded, the programs drawn are
    those drawn before the families existed (the CI test's).

    >>> from hypothesis import given
    >>> @given(programs())
    ... def check(program):
    ...     assert numpy_accepts(program) is not None
    """
    from tests.fuzz import as_written      # here: as_written builds on this module's Statement and Program
    families = frozenset(as_written.FAMILIES) - set(exclude)
    args = tuple((f"a{i}", draw(st.sampled_from(SHAPES)), draw(st.sampled_from(DTYPES)))
                 for i in range(draw(st.integers(1, 3))))
    call: tuple = ()
    if families & as_written.CALL_FAMILIES and draw(st.integers(0, 2)) == 0:
        args, call = as_written.shared_call(draw, families)
    program = Program(args, (), (), draw(st.integers(0, 2**16)), call_tags(call), call)
    env = _run_body(program)
    statements: list[Statement] = []
    for step in range(draw(st.integers(1, max_statements))):
        for _attempt in range(4):
            temp = f"t{len(statements)}"
            if call and not statements:
                statement = as_written.shared_write(draw, env, call)
            elif families - as_written.CALL_FAMILIES and draw(st.integers(0, 2)) == 0:
                statement = as_written.statement(draw, env, temp, families)
            else:
                statement = _statement(draw, env, temp)
            if set(statement.tags) & WRITES and any("element_read" in s.tags for s in statements):
                statement = replace(statement, tags=statement.tags + ("element_view",))
            if set(statement.tags) & set(exclude):
                continue
            candidate = program.with_statements(statements + [statement])
            namespace = _run_body(candidate)
            if namespace is not None:
                statements.append(statement)
                env = {k: v for k, v in namespace.items() if isinstance(v, np.ndarray) and k != "_"}
                break
    temps = [target_of(s) for s in statements if target_of(s)]
    final = replace(program.with_statements(statements), outputs=tuple(dict.fromkeys(temps[-3:])))
    if numpy_accepts(final) is None:      # a later write may have made an earlier output non-finite
        final = replace(final, outputs=())
    if families & set(RAISING) and draw(st.integers(0, 5)) == 0:
        final = as_written.with_raising_statement(draw, final, env, families)
    return final


def _run_body(program: Program) -> dict | None:
    """The variables after running ``program``'s statements in NumPy, or None when NumPy rejects them."""
    helpers = "\n".join(s.helper for s in program.statements if s.helper)
    body = "\n".join(s.code for s in program.statements)
    namespace = dict(zip(program.parameters(), program.call_arguments(program.inputs())))
    module = {"np": np, "math": math}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with np.errstate(all="raise"):
                exec(compile(helpers, "<fuzz helpers>", "exec"), module)
                exec(compile(body, "<fuzz program>", "exec"), module, namespace)
    except Exception:
        return None
    for value in namespace.values():
        if isinstance(value, np.ndarray) and (value.dtype == object or (
                value.dtype.kind in "fc" and not np.all(np.isfinite(value)))):
            return None
        if not isinstance(value, np.ndarray) and not np.isscalar(value) and value is not None:
            return None
    return namespace


# ---------------------------------------------------------------- loops and branches

# Dtypes of loop programs' arguments: those whose in-place updates NumPy takes from Python numbers.
LOOP_DTYPES = ("int8", "uint8", "int32", "int64", "float16", "float32", "float64", "complex64", "complex128")
LOOP_SHAPES = ((3,), (4,), (2, 3), (3, 2), (2, 1, 3), ())
CONDITION_LIMITS = ("0.5", "0", "-1", "1.5")
TRIPS = (3, 2, 5, 4, 6, 1)      # hypothesis draws early elements more often: a loop of 1 trip does not roll


def loop_programs(exclude=frozenset(BEING_FIXED) | frozenset(OPEN), max_blocks: int = 2, max_body: int = 3):
    """Programs with ``for i in range(n)`` loops (n in 1..6) whose bodies write through indices and views
    that use ``i`` (``x[i % k] += ...``, ``x[i:i + 1] = ...``, ``acc = acc + x[i % k]``), and ``if``s on
    traced tests (``if a0[1] > 0.5:``, ``if i % 2 == 0:`` inside a loop) whose branches write in place; each
    loop also written with ``xlac.fori_loop`` (``Statement.fori_code``) where that keeps NumPy's meaning.

    Names: ``a<k>`` arguments, ``t<k>`` temporaries and ``acc<k>`` accumulators of the function,
    ``u<k>`` temporaries local to one loop body. Loop bodies may hold an inner loop (indexing with both
    variables). Statements tagged in ``exclude`` are left out. Both branches of every ``if`` run cleanly in
    NumPy and bind the same names to values of the same types (xlac traces both).

    >>> from hypothesis import given, settings
    >>> @settings(max_examples=3, deadline=None)
    ... @given(loop_programs())
    ... def check(program):
    ...     assert numpy_accepts(program) is not None
    >>> check()
    """
    return _loop_programs(frozenset(exclude), max_blocks, max_body)


@st.composite
def _loop_programs(draw, exclude: frozenset, max_blocks: int, max_body: int):
    args = tuple((f"a{i}", draw(st.sampled_from(LOOP_SHAPES)), draw(st.sampled_from(LOOP_DTYPES)))
                 for i in range(draw(st.integers(1, 3))))
    program = Program(args, (), (), draw(st.integers(0, 2**16)))
    env = dict(zip((name for name, _, _ in args), program.inputs()))
    statements: list[Statement] = []
    names = _Names(exclude)
    for _block in range(draw(st.sampled_from(range(max_blocks, 0, -1)))):     # the most blocks first
        kind = draw(st.sampled_from(("loop", "loop", "loop_acc", "branch", "straight")))
        for _attempt in range(3):
            if kind == "straight":
                new = [_statement(draw, _visible(env, names.function), names.temp())]
                if set(new[0].tags) & exclude:
                    continue
            elif kind == "branch":
                new = [_branch_block(draw, program, statements, env, names, None)]
            else:
                new = _loop_block(draw, program, statements, env, names, accumulate=kind == "loop_acc",
                                  max_body=max_body)
            if not new or None in new:
                continue
            namespace = _run_body(program.with_statements(statements + new))
            if namespace is not None:
                statements += new
                env = namespace
                names.function |= {target_of(s) for s in new if target_of(s)}
                break
    outputs = tuple(sorted(n for n in names.function if n.startswith(("acc", "t"))))[-3:]
    final = Program(args, tuple(statements), outputs, program.seed, frozenset(t for s in statements for t in s.tags))
    if numpy_accepts(final) is None:
        final = Program(args, tuple(statements), (), program.seed, final.tags)
    return final


class _Names:
    """The names a loop program has bound: the function's (arguments, temporaries, accumulators), and fresh
    ones for temporaries, loop bodies' temporaries, accumulators and ``fori_loop`` bodies."""

    def __init__(self, exclude: frozenset = frozenset()):
        self.function: set = set()
        self.count = 0
        self.exclude = exclude          # tags of statements left out
        from tests.fuzz.as_written import LOOP_BODY_FAMILIES
        self.families = LOOP_BODY_FAMILIES - exclude           # issue 31's families that loop bodies may hold
        self.body_kinds = BODY_KINDS + (("as_written", "as_written") if self.families else ())

    def _fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def temp(self) -> str:
        return self._fresh("t")

    def local(self) -> str:
        return self._fresh("u")

    def accumulator(self) -> str:
        return self._fresh("acc")

    def body(self) -> str:
        return self._fresh("_body")


def _visible(env: dict, function_names: set, local: set = frozenset()) -> dict:
    """The arrays a statement may use: arguments, the function's names, and the loop body's own."""
    return {k: v for k, v in env.items() if isinstance(v, np.ndarray) and
            (k.startswith("a") and k[1:].isdigit() or k in function_names or k in local)}


def _indent(code: str) -> str:
    return "\n".join("    " + line for line in code.split("\n"))


def _loop_index(draw, var: str | None, n: int, size: int) -> tuple[str, tuple]:
    """An index into an axis of ``size`` that uses the loop variable ``var`` (n iterations), or a constant
    one without a loop."""
    if var is None:
        if draw(st.booleans()):
            return str(draw(st.integers(-size, size - 1))), ()
        start = draw(st.integers(0, size - 1))
        return f"{start}:{start + draw(st.integers(1, 2))}", ("slice",)
    choices = ["mod", "mod", "shift", "reverse", "slice_mod", "slice", "prefix", "strided"]
    if n <= size:
        choices += ["plain", "negative"]
    choice = draw(st.sampled_from(choices))
    if choice == "mod":
        return f"{var} % {size}", ()
    if choice == "shift":
        return f"({var} + {draw(st.integers(1, 3))}) % {size}", ()
    if choice == "reverse":
        return f"{size - 1} - {var} % {size}", ()
    if choice == "plain":
        return var, ()
    if choice == "negative":
        return f"-1 - {var}", ()
    if choice == "slice_mod":
        return f"{var} % {size}:{var} % {size} + 1", ("slice",)
    if choice == "slice":
        return f"{var}:{var} + 1", ("slice", "slice_past_end")      # empty once var >= size
    if choice == "prefix":
        return f":{var} % {size} + 1", ("slice", "traced_extent")   # its length changes with var
    return f"{var} % {size}::2", ("slice", "traced_extent")


def _loop_target(draw, env: dict, var: str | None, n: int) -> tuple[str, str, tuple] | None:
    """``(name, index source, tags)``: a place in an array of ``env`` to write or read, indexed by ``var``."""
    candidates = [k for k, v in env.items() if np.ndim(v) >= 1 and 0 not in np.shape(v)]
    if not candidates:
        return None
    name = draw(st.sampled_from(sorted(candidates)))
    shape = np.shape(env[name])
    if len(shape) >= 2 and draw(st.booleans()):          # the loop walks the second axis
        index, tags = _loop_index(draw, var, n, shape[1])
        return name, f":, {index}", tags + ("axis1",)
    index, tags = _loop_index(draw, var, n, shape[0])
    rest = ""
    if len(shape) >= 2 and draw(st.booleans()):
        rest = ", " + draw(st.sampled_from((":", "0", "-1", "1:", "::-1")))
    return name, index + rest, tags


def _value(draw, env: dict, var: str | None, n: int, extra: tuple = ()) -> tuple[str, tuple]:
    """A value to write or add: a Python number, the loop variable, a read through an index, a name."""
    choices = ["scalar", "read", "read"] + (["index"] if var else []) + (["name"] if extra else [])
    choice = draw(st.sampled_from(choices))
    if choice == "scalar":
        scalar, tag = _scalar(draw)
        return scalar, (tag,)
    if choice == "index":
        return var, ("loop_index_value",)
    if choice == "name":
        return draw(st.sampled_from(sorted(extra))), ()
    target = _loop_target(draw, env, var, n)
    if target is None:
        return "1", ("pyint",)
    name, index, tags = target
    tags += ("slice_value",) if var and "slice" in tags else ()      # a value of traced length
    read = f"{name}[{index}]"
    if draw(st.booleans()):
        read = f"np.{draw(st.sampled_from(('sin', 'abs', 'square', 'negative', 'sum')))}({read})"
    return read, ("read",) + tags


BODY_KINDS = ("set", "augmented", "augmented", "view", "read", "accumulate", "existing")
BRANCH_KINDS = ("set", "augmented", "augmented", "accumulate")      # no names bound in one branch only


def _body_statement(draw, env: dict, var: str | None, n: int, names: _Names, local: set,
                    accumulators: tuple, kinds: tuple = BODY_KINDS) -> tuple[str, tuple]:
    """One statement of a loop body (``var`` its variable) or a branch (``var`` None): code and tags."""
    kind = draw(st.sampled_from(kinds))
    if kind == "accumulate" and accumulators:
        acc = draw(st.sampled_from(accumulators))
        value, tags = _value(draw, env, var, n)
        op = draw(st.sampled_from(("+", "-")))
        return f"{acc} = {acc} {op} {value}", ("accumulate",) + tags
    if kind == "existing":
        statement = _statement(draw, env, names.local())
        return statement.code, statement.tags
    if kind == "as_written":
        from tests.fuzz import as_written
        target, read = _loop_target(draw, env, var, n), _loop_target(draw, env, var, n)
        if var and target and read and "math_scalar" in names.families and draw(st.booleans()):
            code = as_written.scalar_write(draw, f"{target[0]}[{target[1]}]", f"np.sum({read[0]}[{read[1]}])")
            return code, ("math_scalar", "setitem") + target[2] + read[2]
        statement = as_written.statement(draw, env, names.local(), names.families)
        return statement.code, statement.tags
    target = _loop_target(draw, env, var, n)
    if target is None:
        return "pass", ()
    name, index, tags = target
    if var and "slice" in tags and kind not in ("set", "augmented"):      # a view or a read (a name's value)
        tags += ("slice_value",)
    if kind == "set":
        value, value_tags = _value(draw, env, var, n, tuple(accumulators))
        if var and "slice" in tags and _ndim_at_zero(value, env) > _ndim_at_zero(f"{name}[{index}]", env):
            tags += ("slice_target_extra_axes",)
        return f"{name}[{index}] = {value}", ("setitem",) + tags + value_tags
    if kind == "augmented":
        value, value_tags = _value(draw, env, var, n, tuple(accumulators))
        op = draw(st.sampled_from(("+=", "-=", "*=", "+=")))
        return f"{name}[{index}] {op} {value}", ("augmented", "setitem") + tags + value_tags
    if kind == "view":
        view = names.local()
        value, value_tags = _value(draw, env, var, n)
        op = draw(st.sampled_from(("+=", "*=", "-=")))
        return f"{view} = {name}[{index}]\n{view} {op} {value}", ("view_write",) + tags + value_tags
    temp = names.local()
    return f"{temp} = {name}[{index}] * 2", ("read",) + tags


def _augments_a_name(code: str) -> bool:
    """Whether ``code`` has ``x op= y`` with ``x`` a name that lives across a loop's iterations."""
    return any(isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and
               not node.target.id.startswith("u") for node in ast.walk(ast.parse(code)))


def _ndim_at_zero(expression: str, env: dict) -> int:
    """The number of axes of ``expression`` with the loop variables at 0 (-1 where NumPy rejects it)."""
    try:
        return np.ndim(eval(expression, {"np": np}, {**env, "i": 0, "j": 0, "k": 0}))
    except Exception:       # noqa: BLE001  (the statement is dropped anyway)
        return -1


def _loop_block(draw, program: Program, statements: list, env: dict, names: _Names, accumulate: bool,
                max_body: int) -> list | None:
    """A ``for`` loop (after its accumulator's initialization, with ``accumulate``) built statement by
    statement, each kept when NumPy runs the program with it cleanly."""
    var = draw(st.sampled_from(("i", "j", "k")))
    n = draw(st.sampled_from(TRIPS))
    visible = _visible(env, names.function)
    before: list[Statement] = []
    accumulators: tuple = ()
    if accumulate:
        target = _loop_target(draw, visible, var, n)
        if target is None:
            return None
        acc = names.accumulator()
        name, index, _ = target
        first = re.sub(rf"\b{var}\b", "0", index)
        before = [Statement(f"{acc} = np.zeros_like({name}[{first}])", ("accumulator",))]
        accumulators = (acc,)
        namespace = _run_body(program.with_statements(statements + before))
        if namespace is None:
            return None
        env = namespace
    body: list[str] = []
    tags: set = set()
    local: set = set()
    branch_tested = False
    for position in range(draw(st.sampled_from((2,) + tuple(range(1, max_body + 1))))):
        for _attempt in range(4):
            visible = _visible(env, names.function | set(accumulators), local)
            if accumulators and position == 0:
                code, code_tags = _body_statement(draw, visible, var, n, names, local, accumulators,
                                                  ("accumulate",))
            elif draw(st.integers(0, 5)) == 0:
                code, code_tags = _inner_loop(draw, visible, var, n, names, local, accumulators)
            elif not branch_tested and draw(st.integers(0, 4)) == 0:
                branch = _branch_block(draw, program, statements + before, env, names, (var, n, body, local,
                                                                                         accumulators))
                if branch is None:
                    continue
                code, code_tags = branch.code, branch.tags
            else:
                code, code_tags = _body_statement(draw, visible, var, n, names, local, accumulators,
                                                  names.body_kinds)
            if _augments_a_name(code):
                code_tags = tuple(code_tags) + ("name_augmented_in_loop",)
            if set(code_tags) & names.exclude:
                continue
            block = f"for {var} in range({n}):\n" + _indent("\n".join(body + [code]))
            namespace = _run_body(program.with_statements(statements + before + [Statement(block)]))
            if namespace is None:
                continue
            body.append(code)
            tags |= set(code_tags)
            local |= _bound_locals(code)
            branch_tested = branch_tested or "traced_branch" in code_tags
            env = namespace
            break
    if not body:
        return None
    body_code = "\n".join(body)
    code = f"for {var} in range({n}):\n" + _indent(body_code)
    env_before = _run_body(program.with_statements(statements + before))
    fori = _fori_form(var, n, body_code, env_before or {}, env, names)
    steps = n * sum(line.count("\n") + 1 for line in body)
    loop_tags = ("for_loop", f"trips:{n}") + tuple(sorted(tags)) + (("fori",) if fori else ())
    return before + [Statement(code, loop_tags, steps=steps, fori_code=fori)]


def _inner_loop(draw, env: dict, var: str, n: int, names: _Names, local: set, accumulators: tuple):
    """``for <inner> in range(m):`` inside a loop over ``var``, indexing with the inner variable or both."""
    inner = draw(st.sampled_from([v for v in ("i", "j", "k") if v != var]))
    m = draw(st.sampled_from((2, 3, 1)))
    index, trips = draw(st.sampled_from(((inner, m), (f"({var} + {inner})", n + m - 1),
                                         (f"({var} * {m} + {inner})", n * m))))
    lines = [_body_statement(draw, env, index, trips, names, local, accumulators, BRANCH_KINDS)
             for _ in range(draw(st.integers(1, 2)))]
    code = f"for {inner} in range({m}):\n" + _indent("\n".join(c for c, _ in lines))
    return code, ("nested_loop",) + tuple(t for _, ts in lines for t in ts)


def _branch_block(draw, program: Program, statements: list, env: dict, names: _Names, loop) -> Statement | None:
    """``if <traced test>: ... else: ...``, each branch one or two in-place writes (or reads into names both
    bind), kept when both branches run cleanly in NumPy and bind the same names to the same types. Inside a
    loop (``loop`` = (variable, trips, body so far, its local names, accumulators)), the test may be on
    the loop variable."""
    var, n, body, local, accumulators = loop or (None, 1, [], set(), ())
    visible = _visible(env, names.function | set(accumulators), local)
    test = _traced_test(draw, visible, var)
    if test is None:
        return None
    branches = []
    for _branch in range(2):
        lines = [_body_statement(draw, visible, var, n, names, local, accumulators, BRANCH_KINDS)
                 for _ in range(draw(st.integers(1, 2)))]
        branches.append(lines)
    code = f"if {test}:\n" + _indent("\n".join(c for c, _ in branches[0])) + "\nelse:\n" + \
        _indent("\n".join(c for c, _ in branches[1]))
    tags = ("traced_branch",) + tuple(t for lines in branches for _, ts in lines for t in ts)
    if set(tags) & names.exclude:
        return None
    outcomes = []
    for forced in ("True", "False"):
        forced_code = code.replace(f"if {test}:", f"if {forced}:", 1)
        if loop:
            forced_code = f"for {var} in range({n}):\n" + _indent("\n".join(body + [forced_code]))
        namespace = _run_body(program.with_statements(statements + [Statement(forced_code)]))
        if namespace is None:
            return None
        outcomes.append({k: _type_of(v) for k, v in namespace.items() if k != "_"})
    if outcomes[0] != outcomes[1]:
        return None
    return Statement(code, tags)


def _traced_test(draw, env: dict, var: str | None) -> str | None:
    """A test on an argument's element (traced when compiled), or on the loop variable."""
    if var is not None and draw(st.integers(0, 2)) == 0:
        return f"{var} % 2 == 0"
    names = sorted(k for k, v in env.items() if np.asarray(v).dtype.kind != "b" and np.size(v) > 0)
    if not names:
        return None
    name = draw(st.sampled_from(names))
    value = env[name]
    limit = draw(st.sampled_from(CONDITION_LIMITS))
    element = ", ".join(str(draw(st.integers(0, size - 1))) for size in np.shape(value))
    read = f"{name}[{element}]" if element else name
    if var is not None and np.ndim(value) >= 1 and draw(st.booleans()):
        read = f"{name}[{', '.join([f'{var} % {np.shape(value)[0]}'] + element.split(', ')[1:])}]"
    if np.iscomplexobj(value):
        read = f"{read}.real"
    if draw(st.integers(0, 3)) == 0:
        read = f"{name}.sum()" + (".real" if np.iscomplexobj(value) else "")
    return f"{read} {draw(st.sampled_from(('>', '<=')))} {limit}"


def _bound_locals(code: str) -> set:
    """The body-local names (``u<k>``) that ``code`` binds outside any ``if``."""
    bound = set()
    for node in ast.parse(code).body:
        if isinstance(node, ast.Assign):
            bound |= {t.id for t in node.targets if isinstance(t, ast.Name) and t.id.startswith("u")}
    return bound


def _type_of(value):
    if isinstance(value, (np.ndarray, np.generic)):
        return (type(value).__name__ if isinstance(value, np.generic) else "ndarray", value.dtype.str,
                np.shape(value))
    return type(value).__name__


def _fori_form(var: str, n: int, body_code: str, env_before: dict, env_after: dict, names: _Names) -> str | None:
    """The loop as ``xlac.fori_loop(0, n, body, carry)``: the names the body rebinds and the function
    reads are the carry; arrays of the function it writes in place (``x[i] = ...``, ``x += ...`` as
    ``x[...] += ...``) are written from the body, through its closure; its own names stay its own. None where that would not keep NumPy's meaning: a carried
    name that changes type, or whose array the body also writes in place."""
    tree = ast.parse(body_code)
    carried, written = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign):
            targets = [node.target]
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Subscript):
                root = target.value
                while isinstance(root, ast.Subscript):
                    root = root.value
                if isinstance(root, ast.Name):
                    written.add(root.id)
            elif isinstance(target, ast.Name) and not target.id.startswith("u"):
                if isinstance(node, ast.AugAssign) and isinstance(env_before.get(target.id), np.ndarray):
                    written.add(target.id)
                else:
                    carried.add(target.id)
    carried -= {var, "_"}
    for name in carried:
        if name in written or name not in env_before:
            return None
        before, after = env_before[name], env_after.get(name)
        if _type_of(before)[1:] != _type_of(after)[1:]:
            return None

    class InPlace(ast.NodeTransformer):
        def visit_AugAssign(self, node):
            name = node.target.id if isinstance(node.target, ast.Name) else "u"
            if not name.startswith("u") and isinstance(env_before.get(name), np.ndarray):
                node.target = ast.Subscript(ast.Name(node.target.id, ast.Load()), ast.Constant(Ellipsis),
                                            ast.Store())
            return node
    tree = ast.fix_missing_locations(InPlace().visit(tree))
    body = ast.unparse(tree)
    function = names.body()
    carry = "(" + "".join(f"{name}, " for name in sorted(carried)) + ")"
    if carried:
        return (f"def {function}({var}, carry):\n    {carry} = carry\n{_indent(body)}\n    return {carry}\n"
                f"{carry} = xlac.fori_loop(0, {n}, {function}, {carry})")
    return (f"def {function}({var}, carry):\n{_indent(body)}\n    return carry\n"
            f"xlac.fori_loop(0, {n}, {function}, 0)")
