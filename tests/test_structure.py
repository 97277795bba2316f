"""Structure checks over xlac's own source: what a reviewer would otherwise have to remember."""
import pathlib
import re

import xlac
from xlac.ir import primitives as P
from xlac.ir.primitive import CATALOG, Primitive

SOURCE = pathlib.Path(xlac.__file__).parent


def _sources():
    for path in sorted(SOURCE.rglob("*.py")):
        yield path.relative_to(SOURCE.parent).as_posix(), path.read_text()


def test_no_primitive_is_looked_up_by_its_name():
    lookup = re.compile(r"CATALOG\[(?!name\] = )|\bP\.\w+\[|ops\.(unary|binary)\(")
    hits = [f"{name}:{i}: {line.strip()}" for name, text in _sources()
            for i, line in enumerate(text.splitlines(), 1) if lookup.search(line)]
    assert hits == []


def test_every_primitive_is_a_name_of_the_primitives_modules():
    from xlac.ir import primitives_fft, primitives_linalg
    declared = {id(v) for module in (P, primitives_fft, primitives_linalg)
                for v in vars(module).values() if isinstance(v, Primitive)}
    assert [p.name for p in CATALOG.values() if id(p) not in declared] == []
