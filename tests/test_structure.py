"""Structure checks over xlac's own source: what a reviewer would otherwise have to remember."""
import ast
import pathlib
import re
import subprocess
import sys

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
        "xlac.passes.simplify", "xlac.passes.index_ranges", "xlac.passes.nearby_reads", "xlac.passes.view_writes",
        "xlac.passes.windowed_reductions", "xlac.passes.flat_writes", "xlac.passes.inplace", "xlac.passes.pipeline"],
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


def _import_graph() -> dict[str, set[str]]:
    """Module -> the xlac modules it imports at its top (a package's ``__init__`` runs before its modules
    anyway, so the package a module sits in is no edge of its own)."""
    graph = {}
    for path in sorted(SOURCE.rglob("*.py")):
        graph[_module_name(path)] = {target for node in ast.parse(path.read_text()).body
                                     for target in _imported(node)}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles: the strongly connected components of more than one module (or a module importing
    itself), by Tarjan's algorithm, each sorted."""
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(module):
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph[module] & graph.keys()):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while not component or component[-1] != module:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1 or module in graph[module]:
                cycles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return cycles


def _package_of_cycle(cycle: list[str]) -> str:
    """The innermost package holding every module of ``cycle`` (a package's ``__init__`` is in it)."""
    def package(module):
        is_package = (SOURCE.parent / module.replace(".", "/") / "__init__.py").exists()
        return module if is_package else module.rpartition(".")[0]
    parts = [package(m).split(".") for m in cycle]
    common = []
    for names in zip(*parts):
        if len(set(names)) > 1:
            break
        common.append(names[0])
    return ".".join(common)


# Packages that still hold an import cycle, each to be removed by the issue named (an entry whose cycle is
# gone fails test_no_import_cycle_inside_a_package: take it out).
CYCLES_ALLOWED: set[str] = set()


def test_no_import_cycle_inside_a_package():
    by_package = {}
    for cycle in _cycles(_import_graph()):
        by_package.setdefault(_package_of_cycle(cycle), []).append(cycle)
    assert {p: c for p, c in by_package.items() if p not in CYCLES_ALLOWED} == {}
    assert sorted(CYCLES_ALLOWED - by_package.keys()) == [], "no cycle left there: take it out of CYCLES_ALLOWED"


def test_import_cycles_are_found():
    # The knot xlac.passes had: the autodiff engine imported rule modules that imported it back.
    knot = {"xlac.passes.autodiff": {"xlac.passes.rules_control", "xlac.passes.ad_rules_math", "xlac.trace"},
            "xlac.passes.ad_rules_math": {"xlac.passes.autodiff"},
            "xlac.passes.rules_control": {"xlac.passes.autodiff", "xlac.passes.batching_rules"},
            "xlac.passes.batching_rules": {"xlac.passes.rules_control"},
            "xlac.trace": set(), "xlac.ir.graph": {"xlac.ir.graph"}}
    cycles = _cycles(knot)
    assert cycles == [["xlac.ir.graph"], ["xlac.passes.ad_rules_math", "xlac.passes.autodiff",
                                          "xlac.passes.batching_rules", "xlac.passes.rules_control"]]
    assert [_package_of_cycle(c) for c in cycles] == ["xlac.ir", "xlac.passes"]


def test_every_module_imports_alone_in_a_fresh_process():
    """See tests/import_alone.py: each module imported in a process of its own, in sorted order."""
    script = pathlib.Path(__file__).with_name("import_alone.py")
    run = subprocess.run([sys.executable, "-c", f"import runpy; runpy.run_path({str(script)!r}, run_name='__main__')"],
                         cwd=SOURCE.parent, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    outcome = dict(line.split(": ", 1) for line in run.stdout.splitlines())
    assert sorted(outcome) == sorted(_module_name(path) for path in SOURCE.rglob("*.py"))
    assert {module: error for module, error in outcome.items() if error != "ok"} == {}


ARCHITECTURE = SOURCE.parent / "docs" / "architecture.md"


def test_the_architecture_page_names_files_and_helpers_that_exist():
    text = ARCHITECTURE.read_text()
    named = set(re.findall(r"\b((?:xlac|tests)/[\w/]+\.py)\b", text))
    assert named and sorted(p for p in named if not (SOURCE.parent / p).exists()) == []
    example = text[text.index("### Adding a primitive"):text.index("## Layers and imports")]
    helpers = set(re.findall(r"\b(_\w+)\b", example))            # the private helpers the example calls
    defined = {target.id if isinstance(target, ast.Name) else target.name
               for _, source in _sources() for node in ast.parse(source).body
               for target in ([node] if isinstance(node, ast.FunctionDef) else
                              node.targets if isinstance(node, ast.Assign) else [])
               if isinstance(target, (ast.Name, ast.FunctionDef))}
    assert helpers and sorted(helpers - defined) == []


def test_the_rules_table_lists_every_rule_module():
    text = ARCHITECTURE.read_text()
    table = text[text.index("| module | primitives |"):text.index("The engines (")]
    listed = set(re.findall(r"^\| `(\w+\.py)` \|", table, re.M))
    modules = {p.name for p in (SOURCE / "passes" / "rules").glob("*.py") if p.name != "__init__.py"}
    assert listed == modules
