"""xlac.convert.analysis: reads, writes and in-place stores per statement, liveness, and what a loop carries;
checked on small functions, against what running generated programs shows, and on loops that now roll."""
from __future__ import annotations

import ast
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xlac
from xlac.convert.analysis import UNBOUND, analyze, effects, local_names, reaching_definitions
from xlac.convert.array_writes import MISSING
from xlac.convert.rewrite import convert_function


def function(source: str) -> ast.FunctionDef:
    return ast.parse(textwrap.dedent(source)).body[0]


def loop_facts(source: str):
    fn = function(source)
    loop = next(n for n in ast.walk(fn) if isinstance(n, (ast.For, ast.While)))
    return analyze(fn).loops[loop]


# ---------------------------------------------------------------- per statement


def test_a_subscript_store_reads_its_base_and_index_and_stores_into_the_base():
    found = effects(ast.parse("out[i, j] = x[i] * 2").body[0])
    assert found.reads == {"out", "i", "j", "x"} and found.writes == set() and found.stores == {"out"}


def test_in_place_writes_through_methods_out_arguments_and_attribute_chains():
    found = effects(ast.parse("a.fill(0); np.add(x, 1, out=self.buf); b += 1; c.rows[0][1] = 2").body[0])
    assert found.stores == {"a"}
    places = {w.place for w in analyze(function("""
        def f(a, b, c, x):
            a.fill(0)
            np.add(x, 1, out=self.buf)
            b += 1
            c.rows[0][1] = 2
    """)).array_writes}
    assert places == {"a", "self.buf", "b", "c.rows"}


def test_nested_scopes_contribute_only_the_names_they_read_from_outside():
    found = effects(ast.parse("y = [x * k for x in xs if x > lo]").body[0])
    assert found.reads == {"k", "xs", "lo"} and found.writes == {"y"}
    found = effects(ast.parse("g = lambda v, w=d: v + t").body[0])
    assert found.reads == {"t", "d"} and found.writes == {"g"}
    fn = function("""
        def f():
            def inner(p):
                nonlocal count
                count = p + scale
            return inner
    """)
    found = effects(fn.body[0])
    assert found.reads == {"scale"} and found.writes == {"inner", "count"}


# ---------------------------------------------------------------- liveness and loops


def test_a_temporary_bound_before_it_is_read_in_every_iteration_is_not_carried():
    facts = loop_facts("""
        def binned(data, labels, nb):
            res = np.zeros(nb)
            for i in range(nb):
                mask = labels == i
                vals = data[mask]
                res[i] = vals.mean()
            return res
    """)
    assert facts.written == ("i", "mask", "vals") and facts.carried == ()
    assert facts.iteration.stores == {"res"} and {"data", "labels", "res"} <= facts.iteration.reads


def test_a_name_read_before_its_write_or_after_the_loop_is_carried():
    facts = loop_facts("""
        def f(x, n):
            t = x
            for i in range(n):
                acc = t * 2
                t = t + 1
                last = acc
            return last
    """)
    assert facts.carried == ("last", "t") and facts.live_after == {"last"}


def test_a_name_bound_on_one_path_only_is_carried():
    facts = loop_facts("""
        def f(x, n):
            t = x
            for i in range(n):
                if i > 2:
                    t = i
                y = t + 1
            return 0
    """)
    assert facts.carried == ("t",)


def test_a_while_loop_carries_what_its_test_reads():
    facts = loop_facts("""
        def f(x):
            while x > 1:
                step = x / 2
                x = step
            return 0
    """)
    assert facts.carried == ("x",) and facts.written == ("step", "x")


def test_break_and_continue_reach_the_names_live_after_and_at_the_loop_head():
    facts = loop_facts("""
        def f(xs):
            found = None
            for x in xs:
                if x is None:
                    continue
                found = x
                if x > 3:
                    break
            return found
    """)
    assert facts.carried == ("found",)


def test_names_code_may_reach_other_than_by_a_read_here_are_live_everywhere():
    closure = loop_facts("""
        def f(n):
            show = lambda: t
            for i in range(n):
                t = i
            return show()
    """)
    assert closure.carried == ("t",)
    frame = loop_facts("""
        def f(n):
            for i in range(n):
                t = i
            return locals()
    """)
    assert frame.carried == ("i", "t")
    declared = loop_facts("""
        def f(n):
            global total
            for i in range(n):
                total = i
    """)
    assert declared.carried == ("total",)


def test_a_name_read_only_in_a_handler_stays_live_through_the_try_body():
    fn = function("""
        def f(x):
            t = 0
            try:
                t = 1
                x = x / 0
                t = 2
            except ZeroDivisionError:
                return t
            return x
    """)
    facts = analyze(fn)
    first, second = fn.body[1].body[0], fn.body[1].body[1]
    assert "t" in facts.live_after[first] and "t" in facts.live_after[second]


# ---------------------------------------------------------------- against running the code

NAMES = "abcd"


@st.composite
def expressions(draw):
    left = draw(st.sampled_from(NAMES + "1"))
    if draw(st.booleans()):
        return left
    return f"{left} {draw(st.sampled_from('+-*'))} {draw(st.sampled_from(NAMES + '2'))}"


@st.composite
def blocks(draw, depth=0, in_loop=False):
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        kinds = ["assign", "augment"] + (["if", "for"] if depth < 2 else []) + (["exit"] if in_loop else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "assign":
            lines.append(f"{draw(st.sampled_from(NAMES))} = {draw(expressions())}")
        elif kind == "augment":
            lines.append(f"{draw(st.sampled_from(NAMES))} += {draw(expressions())}")
        elif kind == "exit":
            lines.append(f"if {draw(expressions())} % 3 == 0:")
            lines.append(f"    {draw(st.sampled_from(['break', 'continue']))}")
        else:
            header = f"if {draw(expressions())} % 2 == 0:" if kind == "if" else \
                f"for {draw(st.sampled_from(NAMES))} in range({draw(st.integers(0, 3))}):"
            lines.append(header)
            lines += ["    " + line for line in draw(blocks(depth + 1, in_loop or kind == "for"))]
            if kind == "if" and draw(st.booleans()):
                lines.append("else:")
                lines += ["    " + line for line in draw(blocks(depth + 1, in_loop))]
    return lines


@st.composite
def programs(draw):
    body = draw(blocks())
    returned = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=2, unique=True))
    return "def f(a, b, c, d):\n" + "".join(f"    {line}\n" for line in body) + \
        f"    return ({', '.join(returned)},)\n"


class _UnbindDead(ast.NodeTransformer):
    """After every simple statement, and at the start of every loop iteration, unbind each name the analysis
    says is dead there: the program must return the same, or read an unbound name (UnboundLocalError)."""

    def __init__(self, facts):
        self.facts = facts

    def unbind(self, live) -> list:
        return [ast.Try([ast.Delete([ast.Name(n, ast.Del())])],
                        [ast.ExceptHandler(ast.Name("NameError", ast.Load()), None, [ast.Pass()])], [], [])
                for n in NAMES if n not in live]

    def generic_visit(self, node):
        super().generic_visit(node)
        for field in ("body", "orelse"):
            statements = getattr(node, field, None)
            if isinstance(statements, list) and statements and isinstance(statements[0], ast.stmt):
                out = []
                for statement in statements:
                    out.append(statement)
                    original = self.originals.get(id(statement))
                    if original is not None and not isinstance(statement, (ast.If, ast.For, ast.Return,
                                                                            ast.Break, ast.Continue)):
                        out += self.unbind(self.facts.live_after[original])
                    if original is not None and isinstance(statement, ast.For):    # the target is bound
                        loop = self.facts.loops[original]
                        statement.body = self.unbind(set(NAMES) - set(loop.written[1:]) | set(loop.carried)) + \
                            statement.body
                setattr(node, field, out)
        return node


def run(fn: ast.FunctionDef):
    namespace = {}
    exec(compile(ast.fix_missing_locations(ast.Module([fn], [])), "<generated>", "exec"), namespace)
    return namespace["f"](1, 2, 3, 4)


def instrumented(source: str) -> ast.FunctionDef:
    fn = function(source)
    facts = analyze(fn)
    copy = function(source)
    originals = {id(c): o for c, o in zip(ast.walk(copy), ast.walk(fn)) if isinstance(c, ast.stmt)}
    rewriter = _UnbindDead(facts)
    rewriter.originals = originals
    return rewriter.visit(copy)


@settings(max_examples=30, deadline=None)
@given(programs())
def test_unbinding_every_name_the_analysis_calls_dead_changes_no_result(source):
    assert run(instrumented(source)) == run(function(source)), source


@settings(max_examples=30, deadline=None)
@given(programs())
def test_the_names_an_iteration_changes_are_among_those_the_analysis_says_it_writes(source):
    fn = function(source)
    facts = analyze(fn)
    seen = {}
    for index, loop in enumerate(n for n in ast.walk(fn) if isinstance(n, ast.For)):
        start, end = (ast.parse(f"__seen__.setdefault({index}, []).append(('{when}', dict(locals())))").body[0]
                      for when in ("start", "end"))
        loop.body = [start] + loop.body + [end]         # a `break` or `continue` may skip the end
        seen[index] = facts.loops[loop].written
    namespace = {"__seen__": {}}
    exec(compile(ast.fix_missing_locations(ast.Module([fn], [])), "<generated>", "exec"), namespace)
    namespace["f"](1, 2, 3, 4)
    for index, snapshots in namespace["__seen__"].items():
        for (when, before), (then, after) in zip(snapshots, snapshots[1:]):
            if (when, then) == ("start", "end"):
                changed = {n for n in NAMES if before.get(n, before) != after.get(n, before)}
                assert changed <= set(seen[index]), source


# ---------------------------------------------------------------- loops that now roll


def binned(data, labels, nb):
    res = np.zeros(nb)
    for i in range(nb):
        mask = labels == i
        vals = data[mask]                # a dynamic extent: it could not be a loop carry
        res[i] = vals.mean()
    return res


def test_a_loop_whose_temporary_has_a_dynamic_extent_rolls_and_matches_numpy():
    rng = np.random.default_rng(0)
    data, labels = rng.normal(size=400), rng.integers(0, 40, size=400)
    compiled = xlac.compile(binned, static_argnums=(2,))
    np.testing.assert_allclose(np.asarray(compiled(data, labels, 40)), binned(data, labels, 40), rtol=1e-12)
    assert [d.decision for d in compiled.trace(data, labels, 40).loop_decisions] == ["rolled"]


def test_a_temporary_read_after_a_rolled_loop_keeps_the_last_iterations_value():
    def f(x):
        out = np.zeros((20, x.shape[0]))
        for i in range(20):
            t = x * i
            out[i] = t + 1
        return out, t

    x = np.linspace(0.0, 1.0, 5)
    compiled = xlac.compile(f, loops="roll")
    (out, t), (expected_out, expected_t) = compiled(x), f(x)
    np.testing.assert_allclose(np.asarray(out), expected_out)
    np.testing.assert_allclose(np.asarray(t), expected_t)
    assert [d.decision for d in compiled.trace(x).loop_decisions] == ["rolled"]


def test_a_name_read_before_its_write_in_the_body_is_carried_by_the_rolled_loop():
    def f(x):
        t, acc = x, x * 0
        for i in range(30):
            acc = acc + t
            t = t * 0.5
        return acc

    x = np.linspace(1.0, 2.0, 4)
    compiled = xlac.compile(f, loops="roll")
    np.testing.assert_allclose(np.asarray(compiled(x)), f(x))
    assert [d.decision for d in compiled.trace(x).loop_decisions] == ["rolled"]


def test_a_temporary_first_bound_in_a_loop_with_a_traced_trip_count_and_read_after_it_is_refused():
    def f(x, n):
        for i in range(n):
            t = x * i
        return t

    with pytest.raises(TypeError, match=r"variable 't' is first bound inside a `for` loop whose trip count is "
                                        r"traced, and read after it: bind it before the loop"):
        xlac.compile(f)(np.ones(3), 4)


# ---------------------------------------------------------------- reaching definitions


def test_the_definitions_reaching_a_read_through_branches_and_loops():
    fn = function("""
        def f(x, n):
            if x > 0:
                y = x
            for i in range(n):
                y = i
                z = y
            return y
    """)
    found = reaching_definitions(fn)
    first, loop = fn.body[0].body[0], fn.body[1]
    read_in_loop = loop.body[1].value
    returned = fn.body[2].value
    assert found.reaching[read_in_loop] == {loop.body[0]}
    assert found.reaching[returned] == {first, loop.body[0], UNBOUND}
    assert found.reaching[fn.body[0].test.left] == {fn.args}
    assert found.bound_before[loop] == {"x", "n"} and found.bound_after[loop] == {"x", "n"}
    assert found.bound_after[loop.body[-1]] == {"x", "n", "i", "y", "z"}


def test_del_a_handler_name_and_a_break_leave_a_name_maybe_unbound():
    fn = function("""
        def f(xs):
            t = 1
            del t
            try:
                u = xs[0]
            except IndexError as error:
                pass
            for x in xs:
                w = x
                if x:
                    break
                v = x
            return t, u, v, w, error
    """)
    found = reaching_definitions(fn)
    reads = {n.id: found.reaching[n] for n in fn.body[-1].value.elts}
    assert all(UNBOUND in definitions for definitions in reads.values())
    assert found.bound_after[fn.body[-2]] == {"xs"}


def test_a_comprehension_reads_now_a_lambda_later():
    fn = function("""
        def f(xs):
            k = 2
            ys = [x * k for x in xs]
            k = 3
            g = lambda: k
    """)
    found = reaching_definitions(fn)
    read_k = fn.body[1].value.elt.right
    assert found.reaching[read_k] == {fn.body[0]}
    assert not any(isinstance(n, ast.Name) and n in found.reaching for n in ast.walk(fn.body[3].value.body))


@st.composite
def programs_with_unbound_names(draw):
    body = draw(blocks())
    returned = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=2, unique=True))
    return "def f(a, b):\n" + "".join(f"    {line}\n" for line in body) + f"    return ({', '.join(returned)},)\n"


class _RecordDefinitions(ast.NodeTransformer):
    """Each binding records itself as the name's last definition (``__last__``); before each statement, the
    names bound (``__bound__``) and, per read of a name, the definition it sees (``__seen__``)."""

    def __init__(self, originals: dict, number: dict):
        self.originals, self.number = originals, number

    def record_reads(self, original, parts) -> list:
        out = [ast.parse(f"__bound__.append(({self.number[original]}, set(__last__)))").body[0]]
        for part in parts:
            for name in ast.walk(part):
                if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Load) or \
                        isinstance(part, ast.AugAssign) and name is part.target:
                    key = self.number[self.originals[id(name)]]
                    out.append(ast.parse(f"__seen__.append(({key}, __last__.get('{name.id}', 'unbound')))").body[0])
        return out

    def generic_visit(self, node):
        super().generic_visit(node)
        for field in ("body", "orelse"):
            statements = getattr(node, field, None)
            if not (isinstance(statements, list) and statements and isinstance(statements[0], ast.stmt)):
                continue
            out = []
            for statement in statements:
                original = self.originals.get(id(statement))
                if original is None:
                    out.append(statement)
                    continue
                parts = [statement.test] if isinstance(statement, ast.If) else [statement.iter] \
                    if isinstance(statement, ast.For) else [] if isinstance(statement, (ast.Break, ast.Continue)) \
                    else [statement]
                out += self.record_reads(original, parts) + [statement]
                if isinstance(statement, (ast.Assign, ast.AugAssign)):
                    target = statement.targets[0] if isinstance(statement, ast.Assign) else statement.target
                    out.append(ast.parse(f"__last__['{target.id}'] = {self.number[original]}").body[0])
                if isinstance(statement, ast.For):
                    statement.body.insert(0, ast.parse(
                        f"__last__['{statement.target.id}'] = {self.number[original]}").body[0])
            setattr(node, field, out)
        return node


@settings(max_examples=30, deadline=None)
@given(programs_with_unbound_names())
def test_the_definition_each_read_sees_when_run_is_among_those_the_analysis_says_reach_it(source):
    fn = function(source)
    found = reaching_definitions(fn)
    number = {node: k for k, node in enumerate(ast.walk(fn))}
    number[UNBOUND] = "unbound"
    copy = function(source)
    originals = {id(c): o for c, o in zip(ast.walk(copy), ast.walk(fn))}
    instrumented = _RecordDefinitions(originals, number).visit(copy)
    instrumented.body.insert(0, ast.parse("__last__ = {'a': 'args', 'b': 'args'}").body[0])
    instrumented.body.insert(0, ast.Global(["__last__"]))
    namespace = {"__seen__": [], "__bound__": []}
    exec(compile(ast.fix_missing_locations(ast.Module([instrumented], [])), "<generated>", "exec"), namespace)
    try:
        namespace["f"](1, 2)
    except NameError:                     # a read of a name no path bound: recorded before it failed
        pass
    nodes = {k: node for node, k in number.items()}
    local = local_names(fn)
    for key, seen in namespace["__seen__"]:
        if nodes[key].id not in local:            # a global: the analysis follows local names only
            assert nodes[key] not in found.reaching
            continue
        expected = {"args" if d is fn.args else number[d] for d in found.reaching[nodes[key]]}
        assert seen in expected, source
    for key, bound in namespace["__bound__"]:
        assert found.bound_before[nodes[key]] <= bound, source


# ---------------------------------------------------------------- calls that act on Python state


def log_progress(i):
    print("step", i)


def update(t, x):                 # named as a dict's method; acts on nothing
    return t + x


def test_a_loop_whose_helper_prints_unrolls_and_names_the_call(capsys):
    def f(x):
        out = np.zeros((40, 3))
        for i in range(40):
            log_progress(i)
            out[i] = x * i
        return out

    x = np.arange(3.0)
    compiled = xlac.compile(f)
    result = compiled(x)
    assert capsys.readouterr().out.splitlines() == [f"step {i}" for i in range(40)]   # each once, as Python
    np.testing.assert_array_equal(np.asarray(result), f(x))
    decision, = compiled.trace(x).loop_decisions
    assert decision.decision == "unrolled" and "print" in decision.reason, decision


def test_a_loop_calling_a_function_named_like_a_container_method_still_rolls():
    def f(x):
        t = x * 0
        out = np.zeros((80, 3))
        for i in range(80):
            t = update(t, x)
            out[i] = t
        return out

    x = np.arange(3.0)
    compiled = xlac.compile(f)
    np.testing.assert_allclose(np.asarray(compiled(x)), f(x))
    assert [d.decision for d in compiled.trace(x).loop_decisions] == ["rolled"]


# ---------------------------------------------------------------- arrays written through views and calls


def writes(source: str, resolve=None) -> set:
    return {(w.place, ast.unparse(w.index) if w.index is not None else None)
            for w in analyze(function(source), resolve).array_writes}


def test_a_store_through_a_view_writes_the_array_it_views():
    assert writes("""
        def f(a, b, c, d, e):
            v = a[1:]
            v[0] = 1
            t = b.T
            t[0, 1] = 2
            r = np.ravel(c.reshape(-1))
            r[3] = 0
            for row in d:
                row[0] = 1
            w = e[::2] if e.ndim else e
            w.fill(0)
    """) == {("a", None), ("b", None), ("c", None), ("d", None), ("e", None)}


def test_a_rebinding_ends_the_view_and_an_array_stored_into_itself_keeps_its_index():
    assert writes("""
        def f(a, n):
            v = a[1:]
            v = np.zeros(n)
            v[0] = 1
            out = np.empty(n)
            out[n - 1] = a[0]
    """) == {("v", "0"), ("out", "n - 1")}


def fill_head(buffer, value):
    head = buffer[:2]
    head[:] = value


def fill_through(target, value):
    fill_head(target, value)


def test_a_call_writes_what_its_target_writes():
    source = """
        def f(a, b, c, d, e, x):
            fill_head(a, 1.0)
            fill_through(value=2.0, target=b)
            np.copyto(c, x)
            np.sin(x, out=d)
            unknown(e, x)
            np.cos(x)
    """
    resolve = {"fill_head": fill_head, "fill_through": fill_through, "np": np}.get
    assert writes(source, lambda name: resolve(name, MISSING)) == \
        {("a", None), ("b", None), ("c", None), ("d", None), ("e", None), ("x", None)}   # unknown: any argument


def test_a_loops_accesses_name_each_array_and_index():
    fn = function("""
        def f(x, out, n):
            for i in range(n):
                out[i] = x[i] * 2 + x[i + 1]
    """)
    facts = analyze(fn).loops[fn.body[0]]
    assert [(a.place, ast.unparse(a.index)) for a in facts.array_writes] == [("out", "i")]
    indexed = [(a.place, ast.unparse(a.index)) for a in facts.array_reads if a.index is not None]
    assert indexed == [("x", "i"), ("x", "i + 1")]


def test_an_array_written_only_through_a_view_is_made_as_an_xlac_array():
    source = """
        def f(x):
            out = np.zeros(3)
            head = out[:2]
            head[0] = x.sum()
            return out
    """
    converted = ast.unparse(convert_function(function(source), {"np": np}.get))
    assert "out = __xlac_runtime__.call_allocation(" in converted


ARRAYS = "abc"


ARRAY_STATEMENTS = ["{name} = {base}[1:]", "{name} = {base}[::2]", "{name} = {base}.T", "{name} = {base}.reshape(-1)",
                    "{name} = np.ravel({base})", "{name} = {base} * 2", "{name} = {base}", "{base}[0] = 7.0",
                    "fill_head({base}, 9.0)", "fill_through({base}, 9.0)"]


@st.composite
def array_programs(draw):
    lines = [draw(st.sampled_from(ARRAY_STATEMENTS)).format(name=draw(st.sampled_from("uvw")),
                                                             base=draw(st.sampled_from(ARRAYS + "uvw")))
             for _ in range(draw(st.integers(1, 6)))]
    return "def f(a, b, c):\n    u = v = w = a\n" + "".join(f"    {line}\n" for line in lines)


@settings(max_examples=30, deadline=None)
@given(array_programs())
def test_the_arrays_a_run_changes_are_among_those_the_analysis_says_it_writes(source):
    fn = function(source)
    resolve = {"fill_head": fill_head, "fill_through": fill_through, "np": np}.get
    written = {w.place for w in analyze(fn, lambda name: resolve(name, MISSING)).array_writes}
    namespace = {"np": np, "fill_head": fill_head, "fill_through": fill_through}
    exec(compile(ast.Module([fn], []), "<generated>", "exec"), namespace)
    arrays = {name: np.arange(1.0, 7.0).reshape(2, 3) + k for k, name in enumerate(ARRAYS)}
    before = {name: array.copy() for name, array in arrays.items()}
    try:
        namespace["f"](**arrays)
    except (IndexError, ValueError):
        pass
    changed = {name for name in ARRAYS if not np.array_equal(arrays[name], before[name])}
    assert changed <= written, source
