"""Static analysis of a function's syntax tree: what each statement reads and writes, which variables are
live where, and what a loop must carry from one iteration to the next.

- :func:`effects`: the names a statement (or expression) reads and binds, and the places it writes into in
  place (``a[i] = v``, ``a += v``, ``a.fill(v)``, ``f(x, out=a)``: the base ``a``), in its own scope: a
  nested function, lambda, class or comprehension contributes the names it reads from outside.
- :func:`analyze`: liveness over a function (a variable is live at a point if some path from there reads it
  before binding it), and per loop a :class:`LoopFacts`: the names one iteration binds, the ones the loop must
  carry (read in an iteration before that iteration binds them, read by the loop's test, or live after the
  loop), and the iteration's :class:`Effects` (does one iteration read what another writes?).

Names that code may reach other than by reading them in the function (read by a nested scope, declared
``global``/``nonlocal``, or every name when the function calls ``locals``, ``vars``, ``eval``, ``exec`` or
``dir``) are live everywhere.

>>> import ast
>>> fn = ast.parse('''
... def binned(data, labels, nb):
...     res = np.zeros(nb)
...     for i in range(nb):
...         vals = data[labels == i]
...         res[i] = vals.mean()
...     return res
... ''').body[0]
>>> facts = analyze(fn).loops[fn.body[1]]
>>> facts.written, facts.carried, sorted(facts.iteration.stores)
(('i', 'vals'), (), ['res'])
"""
from __future__ import annotations

import ast
import builtins
import dataclasses
import inspect
import math
import types
import weakref
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from xlac.convert.array_writes import MISSING, array_accesses
from xlac.convert.known_calls import UNKNOWN, method_effects
from xlac.convert.source import NotConvertible, definition_of, is_user_code
from xlac.convert.syntax import SCOPES as _SCOPES, own_scope, place_of

_FRAME_READERS = {"locals", "vars", "eval", "exec", "dir"}
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


@dataclass(frozen=True)
class Effects:
    """What running some code does to names: ``reads`` and ``writes`` (binds, or unbinds with ``del``), and
    ``stores``: the places (a name or attribute chain, ``out``, ``self.cache``) it writes into in place.

    >>> found = effects(ast.parse("a[i] += b * c").body[0])
    >>> sorted(found.reads), sorted(found.writes), sorted(found.stores)
    (['a', 'b', 'c', 'i'], [], ['a'])
    """

    reads: frozenset = frozenset()
    writes: frozenset = frozenset()
    stores: frozenset = frozenset()

    def __or__(self, other: Effects) -> Effects:
        return Effects(self.reads | other.reads, self.writes | other.writes, self.stores | other.stores)


@dataclass(frozen=True)
class LoopFacts:
    """One loop: ``written``, the names an iteration may bind (the target of a ``for`` first); ``carried``,
    those the loop must carry (read before bound in an iteration, by the test, or after the loop);
    ``live_after``: the names live after the loop; ``iteration``: the effects of one iteration (test, target
    and body). A name in ``written`` but not in ``carried`` is local to each iteration.

    ``array_writes`` and ``array_reads``: the :class:`xlac.convert.array_writes.ArrayAccess` es of one
    iteration (test, target and body), in source order: each names the array's place (a parameter, a
    local array, outside state) through views and calls, and the index where it is the array itself that
    is indexed (``out[i] = v`` writes ``out`` at ``i``; ``v = out[1:]`` then ``v[i] = 1`` writes ``out``
    at an index not known, None). Iterations are independent where no iteration reads or writes a place
    at an index that another writes."""

    written: tuple
    carried: tuple
    live_after: frozenset
    iteration: Effects
    array_writes: tuple = ()
    array_reads: tuple = ()


@dataclass
class FunctionFacts:
    """A function's analysis: ``live_after[statement]``, the names live after it; ``loops[loop]``, a
    :class:`LoopFacts` per ``for``/``while`` of the function's own scope; ``always_live``, names live
    everywhere; ``definitions``: which bindings reach each read, and which names are surely bound where
    (:class:`Definitions`); ``array_writes``: every write into an array (or another object in place) of
    the function's own scope and the scopes inside it, as :class:`xlac.convert.array_writes.ArrayAccess` es."""

    live_after: dict = field(default_factory=dict)
    loops: dict = field(default_factory=dict)
    always_live: frozenset = frozenset()
    definitions: Definitions | None = None
    array_writes: tuple = ()


def effects(node: ast.AST) -> Effects:
    """The :class:`Effects` of ``node``, a statement with everything inside it, or an expression.

    >>> found = effects(ast.parse("y = [x * k for x in xs]").body[0])
    >>> sorted(found.reads), sorted(found.writes)
    (['k', 'xs'], ['y'])
    """
    reads, writes, stores = set(), set(), set()
    if isinstance(node, _SCOPES):           # a nested scope as a whole: the statement or expression defining it
        node = ast.Module([node], []) if isinstance(node, ast.stmt) else ast.Expr(node)
    for child in own_scope([node]):
        if isinstance(child, ast.Name):
            (reads if isinstance(child.ctx, ast.Load) else writes).add(child.id)
            if isinstance(child.ctx, ast.Del):
                reads.add(child.id)
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            writes.add(child.name)
        elif isinstance(child, (ast.Import, ast.ImportFrom)):
            writes.update((a.asname or a.name).split(".")[0] for a in child.names if a.name != "*")
        elif isinstance(child, ast.ExceptHandler) and child.name:
            writes.add(child.name)
        elif isinstance(child, ast.AugAssign) and isinstance(child.target, ast.Name):
            reads.add(child.target.id)                   # `t += 1` reads `t` first
        stores.update(_stored_places(child))
        if isinstance(child, _SCOPES):
            inner = _free_names(child)
            reads.update(inner.reads)
            writes.update(inner.writes)
    return Effects(frozenset(reads), frozenset(writes), frozenset(stores))


def analyze(fn: ast.FunctionDef | ast.AsyncFunctionDef, resolve: Callable | None = None) -> FunctionFacts:
    """Liveness, reaching definitions, array accesses and loop facts over the statements of ``fn``'s own
    scope (see :class:`FunctionFacts`). ``resolve(name)``: the object a global or free name of ``fn``
    holds, or MISSING (then a call to it may write into its arguments); a user function found so has its
    source analysed for the parameters it writes (see :func:`written_parameters`). By default, names
    resolve as in a module that imported ``numpy as np`` and ``math``, with Python's builtins.

    >>> fn = ast.parse("def f(n):\\n    t = 0\\n    for i in range(n):\\n        t = t + i\\n    return 1").body[0]
    >>> analyze(fn).loops[fn.body[1]].carried
    ('t',)
    """
    liveness = _Liveness(fn)
    facts = liveness.facts
    facts.definitions = _Reaching(fn, liveness._bound, _local_names(fn, liveness.everything.writes)).definitions
    accesses = array_accesses(fn, facts.definitions.reaching, resolve=resolve or _usual_names,
                              function_writes=written_parameters)
    facts.array_writes = tuple(a for a in accesses if a.write)
    for loop, loop_facts in facts.loops.items():
        inside = {id(n) for n in own_scope([loop]) if n is not loop} | \
            {id(n) for n in own_scope([loop.target if isinstance(loop, ast.For) else loop.test])}
        if isinstance(loop, (ast.For, ast.AsyncFor)):
            inside -= {id(n) for n in own_scope([loop.iter])} | {id(n) for s in loop.orelse for n in own_scope([s])}
        else:
            inside -= {id(n) for s in loop.orelse for n in own_scope([s])}
        mine = [a for a in accesses if id(a.node) in inside]
        facts.loops[loop] = dataclasses.replace(loop_facts, array_writes=tuple(a for a in mine if a.write),
                                                array_reads=tuple(a for a in mine if not a.write))
    return facts


def written_parameters(function) -> frozenset | None:
    """The names of the parameters a user function (a plain Python function whose source is found) may
    write into, through views and the helpers it calls; None for anything else.

    >>> import numpy as np
    >>> def fill_head(buffer, value):
    ...     head = buffer[:2]
    ...     head[:] = value
    >>> written_parameters(fill_head), written_parameters(np.sin)
    (frozenset({'buffer'}), None)
    """
    if not isinstance(function, types.FunctionType) or not is_user_code(function.__code__):
        return None
    code = function.__code__
    if code in _WRITTEN_PARAMETERS:
        return _WRITTEN_PARAMETERS[code]
    _WRITTEN_PARAMETERS[code] = None             # a recursive call writes what it may: anything
    try:
        definition = definition_of(function)
    except NotConvertible:
        return None
    parameters = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount +
                                       bool(code.co_flags & inspect.CO_VARARGS) +
                                       bool(code.co_flags & inspect.CO_VARKEYWORDS)])
    facts = analyze(definition, namespace_resolver(function))
    written = frozenset(a.place.split(".")[0] for a in facts.array_writes) & parameters
    _WRITTEN_PARAMETERS[code] = written
    return written


_WRITTEN_PARAMETERS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_USUAL_MODULES = {"np": np, "numpy": np, "math": math}


def _usual_names(name: str):
    return _USUAL_MODULES.get(name, getattr(builtins, name, MISSING))


def namespace_resolver(function) -> Callable:
    """``resolve(name)`` for ``analyze``: what a global, free or builtin name of ``function`` holds now."""
    cells = dict(zip(function.__code__.co_freevars, function.__closure__ or ()))
    namespace = function.__globals__
    builtin_names = namespace.get("__builtins__", builtins)
    builtin_names = builtin_names if isinstance(builtin_names, dict) else vars(builtin_names)

    def resolve(name: str):
        if name in cells:
            try:
                return cells[name].cell_contents
            except ValueError:                   # an empty cell
                return MISSING
        return namespace.get(name, builtin_names.get(name, MISSING))
    return resolve


# ---------------------------------------------------------------- names and places


def _stored_places(node: ast.AST) -> list[str]:
    """The places ``node`` itself writes into in place (not looking inside its children)."""
    bases = []
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
        bases.append(node.value)
    elif isinstance(node, ast.AugAssign):
        target = node.target
        bases.append(target.value if isinstance(target, ast.Subscript) else target)
    elif isinstance(node, ast.Call):
        if isinstance(node.func, ast.Attribute) and _writes_its_object(node.func.attr):
            bases.append(node.func.value)
        bases.extend(element for keyword in node.keywords if keyword.arg == "out"
                     for element in ast.walk(keyword.value) if isinstance(element, (ast.Name, ast.Attribute)))
    places = []
    for base in bases:
        while isinstance(base, ast.Subscript):
            base = base.value
        place = place_of(base)
        if place is not None:
            places.append(place)
    return places


def _writes_its_object(method: str) -> bool:
    """Whether ``x.method(...)`` is known to write into ``x`` (``a.fill(0)``, ``xs.append(v)``)."""
    effects = method_effects(method)
    return effects is not UNKNOWN and "self" in effects.writes


def _free_names(scope: ast.AST) -> Effects:
    """A nested scope's effects on the enclosing one: the names it reads but does not bind, and the names it
    declares ``nonlocal`` (or binds with ``:=`` in a comprehension) as written."""
    bound, declared, loaded, outer_writes = set(), set(), set(), set()
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        arguments = scope.args
        bound.update(a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs)
        bound.update(a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None)
    if isinstance(scope, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        parts = [child for child in ast.iter_child_nodes(scope) if child is not scope.generators[0].iter]
    else:
        parts = scope.body if isinstance(scope.body, list) else [scope.body]
    for node in ast.walk(ast.Module(parts, [])):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
            if isinstance(node, ast.Nonlocal):
                outer_writes.update(node.names)
        elif isinstance(node, ast.NamedExpr) and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                         ast.Lambda, ast.ClassDef)):
            outer_writes.add(node.target.id)
    return Effects(frozenset(loaded - (bound - declared)), frozenset(outer_writes))


def _bound_by(statement: ast.stmt) -> set[str]:
    """The names a simple statement surely binds when it completes (not ``:=`` inside it, which may not run)."""
    walrus = {n.target.id for n in own_scope([statement]) if isinstance(n, ast.NamedExpr)}
    written = effects(statement).writes - walrus
    return written - {n.id for n in own_scope([statement]) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Del)}


# ---------------------------------------------------------------- liveness


@dataclass(frozen=True)
class _Exits:
    """The names live where a ``break``, ``continue`` or ``return`` goes, and live anywhere an exception may go."""

    at_break: frozenset = frozenset()
    at_continue: frozenset = frozenset()
    at_return: frozenset = frozenset()
    on_raise: frozenset = frozenset()


class _Liveness:
    """Backward liveness over structured statements; a loop iterates to its fixed point."""

    def __init__(self, fn):
        self.facts = FunctionFacts()
        self.found_effects: dict = {}
        self.found_bound: dict = {}
        everything = self.everything = effects(ast.Module(fn.body, []))
        reads_frame = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _FRAME_READERS
                          for n in own_scope(fn.body))
        declared = {name for n in own_scope(fn.body) if isinstance(n, (ast.Global, ast.Nonlocal))
                    for name in n.names}
        reached_inside = set()                  # names nested scopes read or write (nonlocal)
        for node in own_scope(fn.body):
            if isinstance(node, _SCOPES):
                inner = _free_names(node)
                reached_inside |= inner.reads | inner.writes
        always = declared | reached_inside | (everything.writes | everything.reads if reads_frame else set())
        self.facts.always_live = frozenset(always)
        self.block(fn.body, frozenset(always), _Exits(at_return=frozenset(always)))

    def _effects(self, node: ast.AST) -> Effects:
        """``effects(node)``, found once per node (a loop's body is passed over until its fixed point)."""
        found = self.found_effects.get(node)
        if found is None:
            found = self.found_effects[node] = effects(node)
        return found

    def _bound(self, statement: ast.stmt) -> set[str]:
        found = self.found_bound.get(statement)
        if found is None:
            found = self.found_bound[statement] = _bound_by(statement)
        return found

    def block(self, statements: list, out: frozenset, exits: _Exits) -> frozenset:
        live = out
        for statement in reversed(statements):
            self.facts.live_after[statement] = live | exits.on_raise
            live = self.statement(statement, live, exits) | exits.on_raise
        return live

    def statement(self, node: ast.stmt, out: frozenset, exits: _Exits) -> frozenset:
        if isinstance(node, ast.If):
            return self._effects(node.test).reads | self.block(node.body, out, exits) | self.block(node.orelse, out, exits)
        if isinstance(node, _LOOPS):
            return self.loop(node, out, exits)
        if isinstance(node, ast.Break):
            return exits.at_break
        if isinstance(node, ast.Continue):
            return exits.at_continue
        if isinstance(node, (ast.Return, ast.Raise)):
            return self._effects(node).reads | exits.at_return
        if isinstance(node, (ast.With, ast.AsyncWith)):   # a context manager may swallow an exception
            header = frozenset().union(*(effects(item.context_expr).reads for item in node.items))
            targets = [item.optional_vars for item in node.items if item.optional_vars is not None]
            inner = _bound_by(ast.Assign(targets, ast.Constant(None))) if targets else set()
            return header | (self.block(node.body, out, _raising(exits, out)) - inner)
        if isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            return self.try_(node, out, exits)
        if isinstance(node, ast.Match):
            cases = frozenset().union(*(effects(c.pattern).reads | (effects(c.guard).reads if c.guard else set())
                                        | self.block(c.body, out, exits) for c in node.cases))
            return effects(node.subject).reads | cases | out
        return (out - self._bound(node)) | self._effects(node).reads

    def try_(self, node, out: frozenset, exits: _Exits) -> frozenset:
        # the finally block runs after the try's body, a handler, or an exception: its reads stay live through both
        after_finally = self.block(node.finalbody, out | exits.at_return | exits.on_raise, exits)
        handlers = frozenset().union(*(self.block(h.body, after_finally, _raising(exits, after_finally))
                                       | (effects(h.type).reads if h.type else frozenset())
                                       for h in node.handlers))
        after_body = self.block(node.orelse, after_finally, _raising(exits, after_finally))
        return self.block(node.body, after_body, _raising(exits, handlers | after_finally))

    def loop(self, node, out: frozenset, exits: _Exits) -> frozenset:
        is_for = not isinstance(node, ast.While)
        header = self._effects(node.iter if is_for else node.test).reads
        target = effects(ast.Assign([node.target], ast.Constant(None))) if is_for else Effects()
        head = frozenset()
        while True:
            inner = _Exits(out, head, exits.at_return, exits.on_raise)
            body = self.block(node.body, head, inner)
            new = self.block(node.orelse, out, exits) | (body - target.writes if is_for else body) | target.reads
            if not is_for:
                new |= header
            if new == head:
                break
            head = new
        iteration = target | effects(ast.Module(node.body, []))
        if not is_for:
            iteration |= effects(node.test)
        target_names = _in_order(node.target) if is_for else []
        written = tuple(dict.fromkeys(target_names + sorted(iteration.writes - set(target_names))))
        self.facts.loops[node] = LoopFacts(written, tuple(n for n in written if n in head), out, iteration)
        return head | header


def _raising(exits: _Exits, live: frozenset) -> _Exits:
    return _Exits(exits.at_break, exits.at_continue, exits.at_return, exits.on_raise | live)


def _in_order(target: ast.expr) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]


# ---------------------------------------------------------------- reaching definitions


UNBOUND = "unbound"      # in a set of reaching definitions: some path reaches the read with the name unbound


@dataclass
class Definitions:
    """Reaching definitions over a function's own scope, for its local names (not those declared ``global``
    or ``nonlocal``).

    A definition is the node that binds a name: a statement (``=``, ``+=``, ``for``, ``with``, ``def``,
    ``import``, ``match``, ``try``'s handler), a ``:=``, or the function's ``ast.arguments`` for a
    parameter; :data:`UNBOUND` stands for a path on which the name is not bound (or ``del``-eted).
    ``reaching[read]``: the definitions that may reach that read (an ``ast.Name`` loaded; the target of
    ``t += 1`` too). ``bound_before[statement]`` / ``bound_after[statement]``: the local names surely bound
    when it starts / when it completes normally (absent where it cannot be reached, or cannot complete).

    >>> fn = ast.parse("def f(x, c):\\n    if c:\\n        y = x\\n    z = 1\\n    return y + z").body[0]
    >>> found = reaching_definitions(fn)
    >>> read_y = fn.body[2].value.left
    >>> sorted(type(d).__name__ if d != UNBOUND else d for d in found.reaching[read_y])
    ['Assign', 'unbound']
    >>> sorted(found.bound_before[fn.body[2]])
    ['c', 'x', 'z']
    """

    reaching: dict = field(default_factory=dict)
    bound_before: dict = field(default_factory=dict)
    bound_after: dict = field(default_factory=dict)


def reaching_definitions(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Definitions:
    """The :class:`Definitions` of ``fn``'s own scope."""
    return _Reaching(fn).definitions


def local_names(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> set[str]:
    """The names local to ``fn``'s own scope: its parameters and every name it binds, except those it
    declares ``global`` or ``nonlocal``.

    >>> sorted(local_names(ast.parse("def f(a):\\n    global g\\n    g = b = a\\n    [c for c in a]").body[0]))
    ['a', 'b']
    """
    body = fn.body if isinstance(fn.body, list) else [fn.body]
    return _local_names(fn, effects(ast.Module(body, [])).writes)


def _local_names(fn, written: frozenset) -> set[str]:
    """:func:`local_names`, given the names ``fn``'s body binds (its :func:`effects`' writes)."""
    arguments = fn.args
    names = {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
    names.update(a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None)
    body = fn.body if isinstance(fn.body, list) else [fn.body]
    declared, patterns, walrus = set(), set(), set()
    for n in own_scope(body):
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            declared.update(n.names)
        elif isinstance(n, ast.match_case):
            patterns |= _pattern_names(n.pattern)
        elif isinstance(n, ast.NamedExpr):
            walrus.add(n.target.id)
    return (names | written | walrus | patterns) - declared


def _pattern_names(pattern: ast.AST) -> set[str]:
    """The names a ``match`` pattern binds (``case Point(x=px) | [px, *rest]``)."""
    return {name for n in ast.walk(pattern) for name in (getattr(n, "name", None), getattr(n, "rest", None))
            if isinstance(name, str)}


def _walrus_names(statements) -> set[str]:
    return {n.target.id for n in own_scope(statements) if isinstance(n, ast.NamedExpr)}


class _State(dict):
    """Per local name, the definitions that reach a point; ``None`` as a whole where no path reaches it."""

    @staticmethod
    def join(*states):
        reached = [s for s in states if s is not None]
        if not reached:
            return None
        if len(reached) == 1:
            return reached[0]
        return _State({name: frozenset().union(*(s[name] for s in reached)) for name in reached[0]})

    def bound(self) -> frozenset:
        return frozenset(name for name, definitions in self.items() if UNBOUND not in definitions)

    def binding(self, names, definition, *, kill: bool = True) -> _State:
        if not names:
            return self
        new = _State(self)
        for name in names:
            if name in new:
                new[name] = frozenset({definition}) | (frozenset() if kill else new[name])
        return new


_NOWHERE = None          # the state after a statement that never completes (break, return, raise)


class _Reaching:
    """Forward reaching definitions over structured statements; a loop iterates to its fixed point."""

    def __init__(self, fn, bound_by: Callable = _bound_by, local: set | None = None):
        self.definitions = Definitions()
        self.bound_by = bound_by                 # shared with the liveness analysis, which caches it
        self.locals = local_names(fn) if local is None else local
        self.loop_exits: list[tuple[list, list]] = []        # per enclosing loop: states at break, at continue
        self.raise_points: list[list] = []                   # per enclosing try/with: states an exception leaves
        self.found_reads: dict = {}
        self.found_binds: dict = {}
        arguments = fn.args
        parameters = {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs} | \
            {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
        start = _State({name: frozenset({arguments if name in parameters else UNBOUND}) for name in self.locals})
        self.block(fn.body, start)

    def block(self, statements: list, state):
        for statement in statements:
            if state is None:
                break
            self.definitions.bound_before[statement] = state.bound()
            for points in self.raise_points:
                points.append(state)
            state = self.statement(statement, state)
            if state is not None:
                self.definitions.bound_after[statement] = state.bound()
        for points in self.raise_points:
            points.append(state)
        return state

    def reads(self, node: ast.AST | None, state) -> None:
        """Note the definitions reaching each read of a local name in ``node`` (an expression or a simple
        statement), evaluated in ``state``."""
        if node is not None and state is not None:
            for name in self._names_read(node):
                self.definitions.reaching[name] = state[name.id]

    def _names_read(self, node: ast.AST) -> list:
        """The reads of local names in ``node``, the target of ``t += 1`` and a comprehension's reads from
        this scope (it runs now) included; found once per node (a loop's body is passed over again)."""
        found = self.found_reads.get(node)
        if found is not None:
            return found
        found = []
        for child in own_scope([node]):
            if isinstance(child, ast.Name) and not isinstance(child.ctx, ast.Store):
                found.append(child)
            elif isinstance(child, ast.AugAssign) and isinstance(child.target, ast.Name):
                found.append(child.target)
            elif isinstance(child, _COMPREHENSIONS):
                own = {n.id for n in ast.walk(child) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
                found += [n for n in ast.walk(child) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                          and n.id not in own]
        found = self.found_reads[node] = [name for name in found if name.id in self.locals]
        return found

    def _binds(self, node: ast.AST) -> tuple:
        """What a simple statement (or expression) binds: by ``:=`` (maybe), surely, and by ``del``."""
        found = self.found_binds.get(node)
        if found is None:
            deleted = {n.id for n in own_scope([node]) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Del)}
            bound = self.bound_by(node) if isinstance(node, ast.stmt) else set()
            found = self.found_binds[node] = (_walrus_names([node]), bound, deleted)
        return found

    def expression(self, node: ast.expr | None, state, definition):
        """``state`` after evaluating ``node``: its ``:=`` may bind (``definition`` stands for them)."""
        if node is None or state is None:
            return state
        self.reads(node, state)
        walrus = self._binds(node)[0]
        return state.binding(walrus, definition, kill=False) if walrus else state

    def statement(self, node: ast.stmt, state):
        if isinstance(node, ast.If):
            state = self.expression(node.test, state, node)
            return _State.join(self.block(node.body, state), self.block(node.orelse, state))
        if isinstance(node, _LOOPS):
            return self.loop(node, state)
        if isinstance(node, ast.Break):
            self.loop_exits[-1][0].append(state)
            return _NOWHERE
        if isinstance(node, ast.Continue):
            self.loop_exits[-1][1].append(state)
            return _NOWHERE
        if isinstance(node, (ast.Return, ast.Raise)):
            self.reads(node, state)
            return _NOWHERE
        if isinstance(node, (ast.With, ast.AsyncWith)):          # a context manager may swallow an exception
            for item in node.items:
                state = self.expression(item.context_expr, state, node)
            targets = [item.optional_vars for item in node.items if item.optional_vars is not None]
            if targets:
                target = ast.Assign(targets, ast.Constant(None))
                self.reads(target, state)
                state = state.binding(_bound_by(target), node)
            points = []
            self.raise_points.append(points)
            end = self.block(node.body, state)
            self.raise_points.pop()
            return _State.join(end, *points)
        if isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            return self.try_(node, state)
        if isinstance(node, ast.Match):
            state = self.expression(node.subject, state, node)
            ends = [state]                                     # no case matches
            for case in node.cases:
                self.reads(case.pattern, state)
                bound = state.binding(_pattern_names(case.pattern), node, kill=False)
                bound = self.expression(case.guard, bound, node)
                ends.append(self.block(case.body, bound))
            return _State.join(*ends)
        self.reads(node, state)
        walrus, bound, deleted = self._binds(node)
        state = state.binding(walrus, node, kill=False).binding(bound, node)
        return state.binding(deleted, UNBOUND)

    def try_(self, node, state):
        points = []
        self.raise_points.append(points)
        body_end = self.block(node.body, state)
        self.raise_points.pop()
        raised = _State.join(state, *points)
        handler_ends = []
        for handler in node.handlers:
            self.reads(handler.type, raised)
            entry = raised.binding([handler.name], handler) if handler.name and raised is not None else raised
            end = self.block(handler.body, entry)
            handler_ends.append(end.binding([handler.name], UNBOUND) if handler.name and end is not None else end)
        normal = _State.join(self.block(node.orelse, body_end), *handler_ends)
        if not node.finalbody:
            return normal
        # the finally block also runs on the way out of a raise, break or return: joined in, conservatively
        return self.block(node.finalbody, _State.join(normal, raised))

    def loop(self, node, state):
        is_for = not isinstance(node, ast.While)
        if is_for:
            state = self.expression(node.iter, state, node)
        entry, head = state, state
        target = ast.Assign([node.target], ast.Constant(None)) if is_for else None
        while True:
            breaks, continues = [], []
            self.loop_exits.append((breaks, continues))
            if is_for:
                self.reads(target, head)
                tested = head
                body_start = head.binding(self._binds(target)[1], node)
            else:
                tested = body_start = self.expression(node.test, head, node)
            body_end = self.block(node.body, body_start)
            self.loop_exits.pop()
            new_head = _State.join(entry, body_end, *continues)
            if new_head == head:
                break
            head = new_head
        return _State.join(self.block(node.orelse, tested), *breaks)
