"""Structure checks over xlac's own source: what a reviewer would otherwise have to remember."""
import ast
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
    from xlac.ir import primitives_control, primitives_fft, primitives_linalg
    declared = {id(v) for module in (P, primitives_control, primitives_fft, primitives_linalg)
                for v in vars(module).values() if isinstance(v, Primitive)}
    assert [p.name for p in CATALOG.values() if id(p) not in declared] == []


# The layers, lowest first: a module imports (at its top) only modules of its own layer or lower ones.
LAYERS = {
    "ir": ["xlac.ir", "xlac.errors", "xlac.config"],
    "runtime, lowering and graph-to-graph passes": [
        "xlac.runtime", "xlac.lowering", "xlac.passes.functionalize", "xlac.passes.autocast",
        "xlac.passes.simplify", "xlac.passes.inplace", "xlac.passes.pipeline"],
    "tracing": ["xlac.trace", "xlac.argument_specs", "xlac.callables", "xlac.array"],
    "transforms": ["xlac.passes.autodiff", "xlac.passes.batching", "xlac.passes.rules",
                   "xlac.captures", "xlac.rebinding"],
    "numpy": ["xlac.numpy"],
    "api": ["xlac", "xlac.distributed"],
}
# Imports inside functions: each a cycle this layering cannot avoid, commented where it stands.
MAX_FUNCTION_LEVEL_IMPORTS = 10


def _layer(module: str) -> int:
    matches = [(len(prefix), rank) for rank, prefixes in enumerate(LAYERS.values()) for prefix in prefixes
               if module == prefix or module.startswith(prefix + ".")]
    return max(matches)[1]


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(SOURCE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(node) -> list[str]:
    """The xlac modules an import statement names (``from xlac.passes import autodiff``: xlac.passes.autodiff)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.startswith("xlac")]
    if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("xlac"):
        out = []
        for alias in node.names:
            sub = SOURCE.parent.joinpath(*f"{node.module}.{alias.name}".split("."))
            out.append(f"{node.module}.{alias.name}" if sub.with_suffix(".py").exists() or sub.is_dir()
                       else node.module)
        return out
    return []


def test_imports_run_one_way():
    names = list(LAYERS)
    upward = []
    for path in sorted(SOURCE.rglob("*.py")):
        module = _module_name(path)
        for node in ast.parse(path.read_text()).body:
            for target in _imported(node):
                if _layer(target) > _layer(module):
                    upward.append(f"{module} ({names[_layer(module)]}) imports {target} ({names[_layer(target)]})")
    assert upward == []


def test_few_imports_inside_functions():
    inside = set()
    for path in sorted(SOURCE.rglob("*.py")):
        for fn in ast.walk(ast.parse(path.read_text())):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inside |= {(path.name, n.lineno) for n in ast.walk(fn) if _imported(n)}
    assert len(inside) <= MAX_FUNCTION_LEVEL_IMPORTS, sorted(inside)
