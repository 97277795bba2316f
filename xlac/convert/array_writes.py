"""Which arrays a function's statements may read and write, through views and calls: ``v = a[1:]`` then
``v[0] = 1`` writes ``a``; ``a.T``, ``a.reshape(...)``, ``np.ravel(a)`` and the rows of a ``for`` over ``a``
are views of ``a``; ``np.copyto(a, b)``, ``a.fill(0)``, ``f(x, out=a)`` and a helper function that writes
its parameter write their argument (see :mod:`xlac.convert.known_calls`).

Each :class:`ArrayAccess` names the array as a *place*: a parameter, a local name bound to a new object
(``out = np.zeros(n)``: ``out``), a global or free name, or an attribute of one (``self.cache``). What a
name may be a view of follows the definitions that reach its read (see
:class:`xlac.convert.analysis.Definitions`). Where the analysis cannot tell (an unknown call's result, a
call to something it cannot see), it assumes the worst: the result may be a view of any argument, and the
call may write into any of them.

>>> import ast
>>> from xlac.convert.analysis import analyze
>>> fn = ast.parse('''
... def f(a, n):
...     out = np.zeros(n)
...     v = a[1:]
...     for i in range(n):
...         out[i] = v.sum()
...         v[0] = i
... ''').body[0]
>>> [(w.place, ast.unparse(w.index) if w.index else None) for w in analyze(fn).array_writes]
[('out', 'i'), ('a', None)]
"""
from __future__ import annotations

import ast
import inspect
import types
from dataclasses import dataclass
from typing import Callable

from xlac.convert.known_calls import UNKNOWN, CallEffects, VIEW_ATTRIBUTES, effects_of, method_effects
from xlac.convert.syntax import SCOPES, own_scope, place_of

__all__ = ["ArrayAccess", "MISSING", "array_accesses"]

MISSING = object()          # what a resolver returns for a name it does not know


@dataclass(frozen=True)
class ArrayAccess:
    """One read or write of an array: ``place``, the array (see the module's docstring); ``index``: the
    subscript expression where the access is ``place[index]`` on the array itself (``out[i] = v``: ``i``;
    ``x[i, j:j + 2]``: the tuple), None for the whole array or a part not known (through a view, a call);
    ``node``: the syntax that makes the access (a subscript, a name, a call); ``write``: a write;
    ``assumed``: a write assumed of a call the analysis cannot see into (it may not happen)."""

    place: str
    index: ast.expr | None
    node: ast.AST
    write: bool
    assumed: bool = False


_NEW = "<new>"              # in a set of roots: an object the expression makes


class _Places:
    """The places each expression of one function may refer to, through the definitions reaching its names."""

    def __init__(self, reaching: dict, resolve: Callable, function_writes: Callable):
        self.reaching, self.resolve, self.function_writes = reaching, resolve, function_writes
        self.memo: dict = {}

    def roots(self, node: ast.expr) -> frozenset:
        """``(place, exact)`` pairs: what ``node``'s value may be (``exact``) or be a view of (not exact);
        ``(_NEW, True)`` where it may be an object the expression makes."""
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.Attribute):
            if node.attr in VIEW_ATTRIBUTES:
                return _inexact(self.roots(node.value))
            return frozenset((f"{place}.{node.attr}", exact) for place, exact in self.roots(node.value)
                             if place != _NEW) or frozenset({(_NEW, True)})
        if isinstance(node, (ast.Subscript, ast.Starred)):
            return _inexact(self.roots(node.value))
        if isinstance(node, ast.NamedExpr):
            return self.roots(node.value)
        if isinstance(node, ast.IfExp):
            return self.roots(node.body) | self.roots(node.orelse)
        if isinstance(node, ast.BoolOp):
            return frozenset().union(*(self.roots(v) for v in node.values))
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return _inexact(frozenset().union(*(self.roots(e) for e in node.elts))) | {(_NEW, True)}
        if isinstance(node, ast.Dict):
            return _inexact(frozenset().union(*(self.roots(e) for e in node.values))) | {(_NEW, True)}
        if isinstance(node, ast.Call):
            effects = self.call_effects(node)
            viewed = self.arguments(node, effects.view_of)
            made = {(_NEW, True)} if effects.view_of != {"self"} and effects.view_of != {0} else set()
            return _inexact(frozenset().union(*(self.roots(e) for e in viewed))) | made
        return frozenset({(_NEW, True)})          # operators, constants, comprehensions, lambdas: new objects

    def name(self, node: ast.Name) -> frozenset:
        definitions = self.reaching.get(node)
        if definitions is None:
            return frozenset({(node.id, True)})   # a global or free name
        if node in self.memo:
            return self.memo[node]
        self.memo[node] = frozenset()             # a cycle through a loop adds nothing
        found = frozenset().union(*(self.definition(d, node.id) for d in definitions))
        self.memo[node] = found
        return found

    def definition(self, definition, name: str) -> frozenset:
        """What ``name`` may be after ``definition`` binds it."""
        if isinstance(definition, ast.arguments):
            return frozenset({(name, True)})
        if isinstance(definition, (ast.Assign, ast.AnnAssign)):
            targets = definition.targets if isinstance(definition, ast.Assign) else [definition.target]
            return _named(self.assigned(targets, definition.value, name), name)
        if isinstance(definition, ast.AugAssign) and isinstance(definition.target, ast.Name):
            return self.name(definition.target) | {(name, True)}      # `a += 1`: an array stays itself
        if isinstance(definition, (ast.For, ast.AsyncFor)):
            return _named(_inexact(self.roots(definition.iter)), name)    # the rows of an array are views
        if isinstance(definition, (ast.With, ast.AsyncWith)):
            return _named(frozenset().union(*(self.roots(i.context_expr) for i in definition.items)), name)
        if isinstance(definition, str):          # UNBOUND
            return frozenset()
        walrus = [n for n in own_scope([definition]) if isinstance(n, ast.NamedExpr) and n.target.id == name]
        if walrus:
            return _named(frozenset().union(*(self.roots(n.value) for n in walrus)), name)
        return frozenset({(name, True)})          # def, class, import, except ... as, match

    def assigned(self, targets: list, value: ast.expr, name: str) -> frozenset:
        """What ``name`` may be after ``targets = value``: matched element by element where both sides are
        tuples of one length."""
        found = frozenset()
        for target in targets:
            if isinstance(target, ast.Name):
                found |= self.roots(value) if target.id == name else frozenset()
            elif isinstance(target, (ast.Tuple, ast.List)) and any(
                    isinstance(n, ast.Name) and n.id == name for n in ast.walk(target)):
                if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) and \
                        not any(isinstance(e, ast.Starred) for e in target.elts + value.elts):
                    found |= frozenset().union(*(self.assigned([t], v, name)
                                                 for t, v in zip(target.elts, value.elts)))
                else:
                    found |= _inexact(self.roots(value)) | {(_NEW, True)}
        return found

    # ---- calls

    def call_effects(self, call: ast.Call) -> CallEffects:
        """The effects of ``call``, from its target where the resolver knows it (a user function: the
        parameters its source writes), else from a method's name."""
        target = self.target(call.func)
        if target is MISSING:
            return method_effects(call.func.attr) if isinstance(call.func, ast.Attribute) else UNKNOWN
        written = self.function_writes(target)
        if written is None:
            return effects_of(target)
        try:
            signature = inspect.signature(target)
        except (TypeError, ValueError):
            return UNKNOWN
        positions = list(signature.parameters)
        return CallEffects(frozenset(positions.index(p) if p in positions[:len(call.args)] else f"={p}"
                                     for p in written), frozenset({"*"}), python_state=False)

    def target(self, func: ast.expr):
        """The object a call's target names (``np.sin``, ``helper``), or MISSING."""
        if isinstance(func, ast.Name):
            return MISSING if func in self.reaching else self.resolve(func.id)
        if isinstance(func, ast.Attribute):
            owner = self.target(func.value)
            try:
                return MISSING if owner is MISSING else getattr(owner, func.attr, MISSING)
            except Exception:                    # a property that raises
                return MISSING
        return MISSING

    def arguments(self, call: ast.Call, which: frozenset) -> list:
        """The argument expressions of ``call`` that ``which`` names (see :class:`CallEffects`)."""
        found = []
        starred = any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
        if ("self" in which or "*" in which) and isinstance(call.func, ast.Attribute) and \
                not isinstance(self.target(call.func.value), types.ModuleType):
            found.append(call.func.value)
        if "*" in which or starred and which - {"self"}:
            return found + list(call.args) + [k.value for k in call.keywords]
        found += [a for k, a in enumerate(call.args) if k in which]
        found += [k.value for k in call.keywords if f"={k.arg}" in which]
        return found

    def written_by_call(self, call: ast.Call) -> list:
        """``(argument, assumed)`` for each argument ``call`` may write into (``assumed``: a call to
        something unknown)."""
        effects = self.call_effects(call)
        out = [(k.value, False) for k in call.keywords if k.arg == "out"]
        return [(a, effects is UNKNOWN) for a in self.arguments(call, effects.writes)] + out


def _inexact(roots: frozenset) -> frozenset:
    return frozenset((place, False) if place != _NEW else (place, exact) for place, exact in roots)


def _named(roots: frozenset, name: str) -> frozenset:
    """``roots`` of a value bound to ``name``: a new object is ``name``'s own."""
    return frozenset((name, exact) if place == _NEW else (place, exact) for place, exact in roots)


def array_accesses(fn: ast.FunctionDef | ast.AsyncFunctionDef, reaching: dict, *,
                   resolve: Callable = lambda name: MISSING,
                   function_writes: Callable = lambda target: None) -> list[ArrayAccess]:
    """Every :class:`ArrayAccess` of ``fn``'s own scope, in source order. Writes by
    nested functions and classes are those of the places their stores name (their own analysis is not
    run). ``resolve(name)``: the object a global or free name holds, or :data:`MISSING`;
    ``function_writes(target)``: the names of the parameters a user function ``target`` writes into, or
    None where it is not one whose source the caller can analyse."""
    places = _Places(reaching, resolve, function_writes)
    accesses = []

    def add(node, expression, index, write, assumed=False):
        for place, exact in places.roots(expression):
            if place != _NEW:
                accesses.append(ArrayAccess(place, index if exact else None, node, write, assumed))

    read_whole = set()            # expressions read as a whole, not as the base of a larger read
    for node in own_scope(fn.body):
        if isinstance(node, SCOPES) and not isinstance(node, ast.Lambda):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for inner in ast.walk(node):
                    for base in _stored_bases(inner):
                        name = place_of(base)
                        if name is not None:
                            accesses.append(ArrayAccess(name, None, inner, True))
            continue
        if isinstance(node, ast.Subscript):
            if isinstance(node.ctx, (ast.Store, ast.Del)):
                add(node, node.value, node.slice, True)
            else:
                add(node, node.value, node.slice, False)
            read_whole.add(node.value)
        elif isinstance(node, ast.AugAssign):
            target = node.target
            if isinstance(target, ast.Subscript):
                add(target, target.value, target.slice, False)
            else:
                add(target, target, None, True)
                add(target, target, None, False)
        elif isinstance(node, ast.Call):
            for written, assumed in places.written_by_call(node):
                add(node, written, None, True, assumed)
            if isinstance(node.func, ast.Attribute):
                add(node, node.func.value, None, False)
                read_whole.add(node.func.value)
            read_whole.add(node.func)
        elif isinstance(node, ast.Attribute):
            read_whole.add(node.value)
            if isinstance(node.ctx, ast.Load) and node not in read_whole:
                add(node, node, None, False)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node not in read_whole:
            add(node, node, None, False)
    return sorted(accesses, key=lambda a: (a.node.lineno, a.node.col_offset, not a.write))


def _stored_bases(node: ast.AST) -> list:
    """The syntactic bases ``node`` itself stores into: ``a`` of ``a[i] = v``, ``a += v``, ``a.fill(v)``."""
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
        base = node.value
    elif isinstance(node, ast.AugAssign):
        base = node.target
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            "self" in method_effects(node.func.attr).writes and method_effects(node.func.attr) is not UNKNOWN:
        base = node.func.value
    else:
        return []
    while isinstance(base, ast.Subscript):
        base = base.value
    return [base]
