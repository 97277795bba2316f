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

import linecache
import warnings
import zlib
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

DTYPES = ("bool", "int8", "uint8", "int32", "int64", "float16", "float32", "float64", "complex64", "complex128")
SHAPES = ((), (3,), (2, 3), (3, 1), (1, 3), (2, 1, 3))

# Families of generated statements whose xlac bugs other work is fixing: name -> what is wrong.
# The generator leaves out statements tagged with these names; the merger deletes an entry once its fix is in.
BEING_FIXED = {
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


@dataclass(frozen=True)
class Statement:
    """One line (or a small block) of a program and the tags naming what it exercises.

    ``copied_code`` is the statement with its basic-index read copied: what it means eagerly on an
    ``xlac.Array``, where indexing gives a copy, not a view (a deviation README.md documents).
    """
    code: str
    tags: tuple = ()
    copied_code: str | None = None


@dataclass(frozen=True)
class Program:
    """A function of named array arguments: ``args`` are (name, shape, dtype); inputs come from ``seed``."""
    args: tuple
    statements: tuple
    outputs: tuple
    seed: int
    tags: frozenset = field(default_factory=frozenset)

    def source(self, copied_views: bool = False) -> str:
        """The program as the source of ``def program(<args>)``; with ``copied_views``, index reads copy."""
        lines = [f"def program({', '.join(name for name, _, _ in self.args)}):"]
        for statement in self.statements:
            code = (copied_views and statement.copied_code) or statement.code
            lines += ["    " + line for line in code.split("\n")]
        lines.append(f"    return ({''.join(name + ', ' for name in self.outputs).rstrip()})")
        return "\n".join(lines)

    def function(self, np_module, copied_views: bool = False):
        """The program as a Python function whose ``np`` is ``np_module``."""
        namespace = {"np": np_module}
        source = self.source(copied_views)
        # Registered with linecache, as a file's lines are: xlac.compile converts the source it can read.
        filename = f"<fuzz program {zlib.crc32(source.encode()):08x}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        exec(compile(source, filename, "exec"), namespace)
        return namespace["program"]

    def inputs(self) -> list:
        """Fresh NumPy arguments (the same values on every call)."""
        rng = np.random.default_rng(self.seed)
        return [random_array(rng, shape, dtype) for _, shape, dtype in self.args]

    def with_statements(self, statements) -> "Program":
        names = {name for name, _, _ in self.args} | {target_of(s) for s in statements}
        return Program(self.args, tuple(statements), tuple(o for o in self.outputs if o in names), self.seed,
                       frozenset(t for s in statements for t in s.tags))


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


def run_numpy(program: Program, copied_views: bool = False):
    """``(outputs, arguments after the call)`` under NumPy with every floating-point warning an error."""
    arguments = program.inputs()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            outputs = program.function(np, copied_views)(*arguments)
    return outputs, arguments


def numpy_accepts(program: Program) -> tuple | None:
    """NumPy's ``(outputs, arguments)`` when it runs the program cleanly with finite results, else None."""
    try:
        outputs, arguments = run_numpy(program)
    except Exception:
        return None
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
                                 "astype", "where", "loop", "branch", "real_imag")))
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

    >>> from hypothesis import given
    >>> @given(programs())
    ... def check(program):
    ...     assert numpy_accepts(program) is not None
    """
    args = tuple((f"a{i}", draw(st.sampled_from(SHAPES)), draw(st.sampled_from(DTYPES)))
                 for i in range(draw(st.integers(1, 3))))
    program = Program(args, (), (), draw(st.integers(0, 2**16)))
    env = dict(zip((name for name, _, _ in args), program.inputs()))
    statements: list[Statement] = []
    for step in range(draw(st.integers(1, max_statements))):
        for _attempt in range(4):
            statement = _statement(draw, env, f"t{len(statements)}")
            if set(statement.tags) & WRITES and any("element_read" in s.tags for s in statements):
                statement = Statement(statement.code, statement.tags + ("element_view",), statement.copied_code)
            if set(statement.tags) & set(exclude):
                continue
            candidate = program.with_statements(statements + [statement])
            namespace = _run_body(candidate)
            if namespace is not None:
                statements.append(statement)
                env = {k: v for k, v in namespace.items() if isinstance(v, np.ndarray) and k != "_"}
                break
    temps = [target_of(s) for s in statements if target_of(s)]
    outputs = tuple(dict.fromkeys(temps[-3:]))
    final = Program(args, tuple(statements), outputs, program.seed, frozenset(t for s in statements for t in s.tags))
    if numpy_accepts(final) is None:      # a later write may have made an earlier output non-finite
        final = Program(args, tuple(statements), (), program.seed, final.tags)
    return final


def _run_body(program: Program) -> dict | None:
    """The variables after running ``program``'s statements in NumPy, or None when NumPy rejects them."""
    body = "\n".join(s.code for s in program.statements)
    namespace = dict(zip((name for name, _, _ in program.args), program.inputs()))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with np.errstate(all="raise"):
                exec(compile(body, "<fuzz program>", "exec"), {"np": np}, namespace)
    except Exception:
        return None
    for value in namespace.values():
        if isinstance(value, np.ndarray) and (value.dtype == object or (
                value.dtype.kind in "fc" and not np.all(np.isfinite(value)))):
            return None
        if not isinstance(value, np.ndarray) and not np.isscalar(value) and value is not None:
            return None
    return namespace
