"""Sharding: the mesh and spec arithmetic here, in this process; programs split over 8 host devices in a
child process (tests/sharding_checks.py), each of its checks reported as a test of its own."""
import itertools
import json
import os
import pathlib
import re
import subprocess
import sys

import jax
import numpy as np
import pytest

import xlac
import xlac.numpy as xnp
from xlac.ir.sharding import Mesh, NamedSharding, PartitionSpec as P, as_sharding, from_tiles
from xlac.lowering.sharding import sdy_sharding
from xlac.sharding import broadcast_prefix
from xlac.trace import pytree

ROOT = pathlib.Path(__file__).resolve().parent.parent
CHILD_CHECKS = re.findall(r"@check\ndef (\w+)", (ROOT / "tests" / "sharding_checks.py").read_text())
MESH = Mesh(np.arange(8).reshape(2, 4), ("x", "y"))       # integers stand in for devices


def _specs(ndim: int):
    """Every partition spec of an ``ndim``-dimensional array over MESH (each axis used at most once)."""
    choices = [None, "x", "y", ("x", "y"), ("y", "x")]
    for dims in itertools.product(choices, repeat=ndim):
        used = [a for d in dims if d for a in ((d,) if isinstance(d, str) else d)]
        if len(used) == len(set(used)):
            yield P(*dims)


@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_tiles_read_back_as_the_same_sharding(ndim):
    for spec in _specs(ndim):
        sharding = NamedSharding(MESH, spec)
        assert from_tiles(MESH, ndim, *sharding.tiles(ndim)) == sharding, spec


@pytest.mark.parametrize("ndim", [1, 2])
def test_shards_cover_the_array_once_per_copy(ndim):
    shape = (8, 16)[:ndim]
    for spec in _specs(ndim):
        sharding = NamedSharding(MESH, spec)
        counts = np.zeros(shape, int)
        for position in range(MESH.size):
            index = sharding.shard_index(shape, position)
            assert counts[index].shape == sharding.shard_shape(shape)
            counts[index] += 1
        copies = MESH.size // int(np.prod(sharding.parts(ndim)))
        assert (counts == copies).all(), spec


def test_shard_index_follows_the_mesh_order():
    sharding = NamedSharding(MESH, P(("y", "x")))
    # position 5 is x=1, y=1; with y major, the part is y * 2 + x = 3 of 8
    assert sharding.shard_index((16,), 5) == (slice(6, 8),)


def test_sharding_errors():
    with pytest.raises(ValueError, match="names mesh axis 'z', which the mesh lacks"):
        NamedSharding(MESH, P("z"))
    with pytest.raises(ValueError, match="uses a mesh axis for two dimensions"):
        NamedSharding(MESH, P("x", ("y", "x")))
    with pytest.raises(ValueError, match=r"arg: dimension 0 of shape \(6,\) \(size 6\) does not divide into 4"):
        NamedSharding(MESH, P("y")).check_shape((6,), "arg")
    with pytest.raises(ValueError, match="has 2 entries for an array of 1 dimensions"):
        NamedSharding(MESH, P("x", None)).check_shape((8,), "arg")
    with pytest.raises(ValueError, match="a device appears twice"):
        Mesh(np.array([0, 0]), ("x",))
    with pytest.raises(TypeError, match="expected a NamedSharding"):
        as_sharding(P("x"))


def test_trailing_unsplit_dimensions_do_not_matter():
    assert NamedSharding(MESH, P("x", None)) == NamedSharding(MESH, P("x"))
    assert hash(NamedSharding(MESH, P("x", None))) == hash(NamedSharding(MESH, P("x")))
    assert NamedSharding(MESH, P("x")) != NamedSharding(MESH, P(None, "x"))


def test_jax_objects_convert():
    device = jax.devices()[0]
    mesh = jax.sharding.Mesh(np.array([device]), ("data",))
    converted = as_sharding(jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("data", None)))
    assert converted == NamedSharding(Mesh(np.array([device], dtype=object), ("data",)), P("data"))


def test_shardy_spelling():
    assert sdy_sharding(NamedSharding(MESH, P(("y", "x"), None)), 3) == '#sdy.sharding<@mesh, [{"y", "x"}, {}, {}]>'


def test_shardings_broadcast_over_a_prefix():
    s1, s2 = NamedSharding(MESH, P("x")), NamedSharding(MESH, P())
    _, tree = pytree.flatten(((1, 2), {"a": 3, "b": (4, 5)}))
    assert broadcast_prefix((s1, {"a": s2, "b": None}), tree, "f") == [s1, s1, s2, None, None]
    assert broadcast_prefix(s1, tree, "f") == [s1] * 5
    with pytest.raises(ValueError, match="not a prefix"):
        broadcast_prefix((s1, s2, s1), tree, "f")


def test_one_device_mesh_compiles_in_this_process():
    mesh = xlac.sharding.make_mesh((1,), ("x",))
    f = xlac.compile(lambda a: xnp.sum(a * 2, axis=0), in_shardings=NamedSharding(mesh, P("x", None)))
    a = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(np.asarray(f(a)), (a * 2).sum(0))
    text = f.lower(a).as_text()
    assert 'sdy.mesh @mesh = <["x"=1]>' in text and 'sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>' in text


@pytest.fixture(scope="module")
def child_results():
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("XLA_FLAGS", None)
    try:
        done = subprocess.run([sys.executable, "-m", "tests.sharding_checks"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the sharding checks did not finish in 600 s: {e.stderr}")
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULTS ")]
    assert lines, f"the child process failed (rc {done.returncode}):\n{done.stderr[-4000:]}"
    return json.loads(lines[-1][len("RESULTS "):])


@pytest.mark.parametrize("name", CHILD_CHECKS)
def test_on_eight_devices(child_results, name):
    result = child_results.get(name)
    assert result == "ok", result
