"""A function xlac cannot compile is named by its real module: ``scipy.special.expit``, not
``numpy.expit``; and another library's function or ufunc never runs xlac.numpy's of the same name."""
import functools
import re
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import xlac
from xlac.numpy.protocols import public_name


def _expit(v):
    return 1 / (1 + np.exp(-v))


def _add(a, b):
    return a - b          # not NumPy's add: must never be replaced by xlac.numpy.add


@pytest.fixture
def fakelib(monkeypatch):
    """A package ``fakelib.special`` re-exporting a ufunc and a function from private modules, as scipy does."""
    package = types.ModuleType("fakelib")
    special = types.ModuleType("fakelib.special")
    private = types.ModuleType("fakelib.special._ufuncs")
    private.expit = special.expit = np.frompyfunc(_expit, 1, 1)

    def logistic(x):
        return x.__array_function__(logistic, (type(x),), (x,), {})    # dispatches as NumPy's functions do

    def sum(x):           # noqa: A001 - the same name as np.sum, on purpose
        return x.__array_function__(sum, (type(x),), (x,), {})
    for fn in (logistic, sum):
        fn.__module__ = "fakelib.special._basic"
        setattr(special, fn.__name__, fn)
    package.special = special
    for module in (package, special, private):
        monkeypatch.setitem(sys.modules, module.__name__, module)
    return special


def test_public_name_prefers_the_package_that_reexports_it(fakelib):
    assert public_name(fakelib.expit) == "fakelib.special.expit"
    assert public_name(fakelib.logistic) == "fakelib.special.logistic"
    assert public_name(np.unwrap) == "numpy.unwrap" and public_name(np.linalg.norm) == "numpy.linalg.norm"
    assert public_name(np.sin) == "numpy.sin"


def test_another_librarys_ufunc_is_named_by_its_module(fakelib):
    def f(x):
        return fakelib.expit(x)
    with pytest.raises(xlac.UnsupportedError) as info:
        xlac.compile(f)(np.zeros(3))
    message = str(info.value)
    assert message.startswith("fakelib.special.expit is not supported by xlac (it is not a NumPy ufunc")
    assert "numpy.expit" not in message
    assert f"{__file__}:{f.__code__.co_firstlineno + 1}" in message


def test_another_librarys_function_is_named_by_its_module(fakelib):
    def f(x):
        return fakelib.logistic(x)
    with pytest.raises(xlac.UnsupportedError, match=r"^fakelib\.special\.logistic is not supported by xlac "
                                                    r"\(it is not a NumPy function"):
        xlac.compile(f)(np.zeros(3))


def test_a_function_named_like_numpys_does_not_run_xlac_numpys(fakelib):
    with pytest.raises(xlac.UnsupportedError, match=r"^fakelib\.special\.sum is not supported"):
        xlac.compile(lambda x: fakelib.sum(x))(np.zeros(3))


def test_a_ufunc_named_like_numpys_does_not_run_xlac_numpys(monkeypatch):
    fake_add = np.frompyfunc(_add, 2, 1)
    module = types.ModuleType("fakeops")
    module.add = fake_add
    monkeypatch.setitem(sys.modules, "fakeops", module)
    with pytest.raises(xlac.UnsupportedError, match=r"^fakeops\.add is not supported"):
        xlac.compile(lambda x: fake_add(x, x))(np.ones(3))


def test_outside_a_compiled_function_it_runs_on_the_host(fakelib):
    x = xlac.asarray(np.array([0.0, 1.0]))
    np.testing.assert_allclose(np.asarray(fakelib.expit(x), dtype=float), _expit(np.array([0.0, 1.0])))


def test_the_readme_example_of_an_unsupported_function_is_unsupported():
    """The README names a NumPy function xlac lacks; it must stay one (called on one traced 1-d array)."""
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    (qualified,) = re.findall(r"`(numpy(?:\.\w+)+) is not supported by", readme)
    function = functools.reduce(getattr, qualified.split(".")[1:], np)
    with pytest.raises(xlac.UnsupportedError, match=rf"^{re.escape(qualified)} is not supported by xlac"):
        xlac.compile(lambda x: function(x))(np.array([1.0, -3.0, 2.0]))


def test_scipy_special_expit_is_named():
    special = pytest.importorskip("scipy.special")
    with pytest.raises(xlac.UnsupportedError, match=r"^scipy\.special\.expit is not supported"):
        xlac.compile(lambda x: special.expit(x))(np.zeros(3))
