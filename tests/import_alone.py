"""Import every module of xlac alone, as a fresh process would, in sorted order; print those that fail.

Run from the repository root, in a fresh interpreter (``tests/test_structure.py`` does); one line per
module, ``name: ok`` or ``name:`` and the error::

    python -c "import runpy; runpy.run_path('tests/import_alone.py', run_name='__main__')"

Importing ``xlac.a.b`` runs ``xlac/__init__``, then ``xlac/a/__init__``, then ``b``. ``xlac/__init__``
imports nearly everything, in its own order, and so hides a module that imports only in that order
(``xlac.passes.autodiff`` once failed when imported first): here it is an empty package, and every
other package's ``__init__`` runs as Python runs it. The real ``import xlac`` is checked on its own.

Each import runs in a process forked from one where nothing of xlac is loaded yet (the third-party
libraries are, to save time). A package's submodules are imported in processes forked from the one
that imported the package, which is the state a fresh process reaches before importing them. The
modules of the top package run two at a time.
"""
import importlib
import os
import pathlib
import pkgutil
import sys
import traceback
import types

import jax  # noqa: F401  (loaded once, before the forks)
import jax.extend.backend  # noqa: F401
import ml_dtypes  # noqa: F401
import numpy  # noqa: F401

SOURCE = pathlib.Path("xlac").resolve()


def _import_in_child(name: str, report: int, then=None) -> int:
    """In a forked process, import ``name`` (and, if it succeeds, run ``then()``); write one line to the
    file descriptor ``report``: ``name: ok`` or ``name:`` and the error. Returns the child's pid."""
    pid = os.fork()
    if pid:
        return pid
    try:
        importlib.import_module(name)
        os.write(report, f"{name}: ok\n".encode())
        if then is not None:
            then()
    except BaseException:
        last = traceback.format_exc().strip().splitlines()[-1]
        os.write(report, f"{name}: {last[:300]}\n".encode())
    finally:
        os._exit(0)


def _submodules(package: str, path: pathlib.Path, at_once: int = 1) -> None:
    """Each module of ``package`` (imported in this process) imported alone, subpackages recursively;
    ``at_once`` children at a time."""
    running = set()
    for info in sorted(pkgutil.iter_modules([str(path)]), key=lambda m: m.name):
        if len(running) == at_once:
            running.discard(os.wait()[0])
        name = f"{package}.{info.name}"
        then = (lambda n=name, p=path / info.name: _submodules(n, p)) if info.ispkg else None
        running.add(_import_in_child(name, REPORT, then))
    for pid in running:
        os.waitpid(pid, 0)


def _with_empty_top_package() -> None:
    top = types.ModuleType("xlac")
    top.__path__ = [str(SOURCE)]
    sys.modules["xlac"] = top
    _submodules("xlac", SOURCE, at_once=min(2, os.cpu_count() or 1))


if __name__ == "__main__":
    read_end, REPORT = os.pipe()
    os.waitpid(_import_in_child("xlac", REPORT), 0)
    _with_empty_top_package()
    os.close(REPORT)
    with os.fdopen(read_end) as lines:
        sys.stdout.write(lines.read())
