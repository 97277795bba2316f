"""Every primitive carries every rule the pipeline needs, each registered once through Primitive.register."""
import subprocess
import sys

import pytest

import xlac  # noqa: F401  (loads the emitters)
import xlac.passes.rules  # noqa: F401  (registers the VJP, JVP and batching rules)
from xlac.ir.primitive import CATALOG, RULE_KINDS, Primitive


@pytest.mark.parametrize("kind", RULE_KINDS)
def test_every_primitive_has_each_rule_it_needs(kind):
    needs = [p for p in CATALOG.values() if kind == "emitter" or not p.removed_by_functionalization]
    assert [p.name for p in needs if getattr(p, kind) is None] == []


def test_import_xlac_alone_registers_every_rule():
    """``xlac.grad``, ``xlac.vmap`` and a test that calls an engine directly reach the rules through
    ``import xlac`` (which imports ``xlac.differentiate`` and ``xlac.vectorize``, which import them)."""
    code = ("import xlac; from xlac.ir.primitive import CATALOG, RULE_KINDS\n"
            "print(sorted({p.name for p in CATALOG.values() for kind in RULE_KINDS if getattr(p, kind) is None}))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(sorted(p.name for p in CATALOG.values() if p.removed_by_functionalization))


def test_a_rule_is_registered_once():
    for prim in CATALOG.values():
        rule = prim.emitter
        with pytest.raises(ValueError, match=f"{prim.name}: a second emitter rule"):
            prim.register(emitter=rule)
        assert prim.emitter is rule


def test_the_view_primitives_are_the_table_in_view_rules():
    from xlac.ir import primitives as P
    viewing = {p for p in CATALOG.values() if p.view_rule is not None}
    assert viewing == {P.slice_, P.dynamic_slice, P.reverse, P.transpose, P.reshape, P.broadcast_in_dim,
                       P.real, P.imag}
    assert all(not p.multiple_results for p in viewing)


def test_an_unknown_rule_kind_is_refused():
    with pytest.raises(TypeError, match="no rule kind 'jvpp'"):
        Primitive("example", lambda x: x).register(jvpp=print)
