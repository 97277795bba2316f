"""The converter's passes (xlac/convert/rewrite.py's pipeline): each rewrites its own constructs, they talk
through data (no attribute stuck on a node), every node of the result sits in one place, and a loop whose
body binds a temporary the analysis finds dead after the loop rolls."""
import ast
import inspect

import numpy as np
import pytest

import xlac
from tests import numpy_kernels
from xlac.convert.analysis import analyze, namespace_resolver
from xlac.convert.cache import converted
from xlac.convert.control_statements import rewrite_control_flow
from xlac.convert.exits import normalize_exits
from xlac.convert.rewrite import convert_function
from xlac.convert.source import definition_of
from xlac.convert.state_routing import route_state

KERNELS = [f for _, f in inspect.getmembers(numpy_kernels, inspect.isfunction)
           if f.__module__ == numpy_kernels.__name__]


def converted_tree(fn) -> ast.FunctionDef:
    return convert_function(definition_of(fn), namespace_resolver(fn))


# ---------------------------------------------------------------- the loop


def binned(data, labels, nb):
    res = np.zeros(nb)
    for i in range(nb):
        vals = data[labels == i]         # a temporary, never read after the loop: not carried
        res[i] = vals.mean()
    return res


def test_a_loop_with_a_dead_temporary_rolls_at_1000_iterations_and_matches_numpy():
    rng = np.random.default_rng(0)
    labels = rng.permutation(np.arange(5000) % 1000)
    data = rng.normal(size=5000)
    compiled = xlac.compile(binned, static_argnums=(2,))
    # each mean sums 5 values in some order: within 5 roundings of the largest magnitude of the bin
    bound = 5 * np.finfo(np.float64).eps * np.abs(data).max()
    np.testing.assert_allclose(np.asarray(compiled(data, labels, 1000)), binned(data, labels, 1000), rtol=0,
                               atol=bound)
    [decision] = compiled.trace(data, labels, 1000).loop_decisions
    assert (decision.decision, decision.trips) == ("rolled", 1000)


def test_the_loop_carries_only_what_the_analysis_finds_live():
    [loop_call] = [n for n in ast.walk(converted_tree(binned)) if isinstance(n, ast.Call) and
                   isinstance(n.func, ast.Attribute) and n.func.attr == "for_range"]
    keywords = {k.arg: ast.literal_eval(k.value) for k in loop_call.keywords}
    assert keywords["names"] == ("i", "vals") and keywords["carried"] == () and keywords["live"] == ()


# ---------------------------------------------------------------- the passes


def test_control_flow_alone_leaves_expressions_to_the_later_passes():
    fn = ast.parse("def f(x, n):\n    while x < n:\n        x = x + 1\n    return x").body[0]
    facts = {fn: analyze(fn)}
    rewrite_control_flow(fn, facts, normalize_exits(fn), {"x", "n"}, keep_asserts=True)
    source = ast.unparse(fn)
    assert "while_stmt" in source and "def __xlac_while_test_0(x):\n        return x < n" in source
    assert "current(" not in source and "call(" not in source


def test_state_routing_leaves_what_it_is_told_to():
    fn = ast.parse("def f(x):\n    y = x\n    return y").body[0]
    kept = fn.body[1].value
    route_state(fn, {fn: analyze(fn)}, {"x", "y"}, leave=frozenset([kept]))
    assert ast.unparse(fn).splitlines()[1:] == ["    y = __xlac_runtime__.current(x)", "    return y"]


def test_the_variables_passed_into_branch_functions_are_read_as_they_are():
    def f(x):
        if x > 0:
            y = x * 2
        else:
            y = -x
        return y
    source = ast.unparse(converted_tree(f))
    assert "__xlac_runtime__.current_values(locals(), ('y',))" in source
    assert "return (y,)" in source and "current(y)" in source      # y read after the if: routed


_SHARED_BY_PYTHON = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)     # the parser's singletons


@pytest.mark.parametrize("fn", KERNELS, ids=lambda f: f.__name__)
def test_every_node_of_the_converted_tree_sits_in_one_place_and_holds_only_its_fields(fn):
    tree = converted_tree(fn)
    nodes = [n for n in ast.walk(tree) if not isinstance(n, _SHARED_BY_PYTHON)]
    assert len({id(n) for n in nodes}) == len(nodes)
    for node in nodes:
        assert set(vars(node)) <= set(node._fields) | set(node._attributes), type(node).__name__


def after_a_returning_branch(x):
    if x > 0:
        if x > 5:
            return -1
    else:
        x = -x
    y = x + 1                           # joins both branches of the outer if
    return y * 2


def test_statements_joining_both_branches_are_rewritten_once_and_run_as_python():
    tree = converted_tree(after_a_returning_branch)
    assert "current(__xlac_runtime__.current(" not in ast.unparse(tree)
    run = converted(after_a_returning_branch)
    assert run is not after_a_returning_branch
    assert [run(x) for x in (-3, 0, 2, 9)] == [after_a_returning_branch(x) for x in (-3, 0, 2, 9)]
