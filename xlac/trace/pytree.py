"""Pytrees: nested tuples (named ones too), lists, dicts and None, flattened to leaves and rebuilt.

>>> leaves, tree = flatten({"w": 1, "b": (2, None)})
>>> leaves
[2, 1]
>>> unflatten(tree, [20, 10])
{'b': (20, None), 'w': 10}
"""
from __future__ import annotations

from operator import itemgetter
from typing import Any

import numpy as np


class TreeDef(tuple):
    """The structure of a pytree: a node kind, its children, and its keys (for dicts); leaves are ``LEAF``.

    A tuple underneath, so hashing and comparing it (it is part of every cache key) run in C."""

    __slots__ = ()

    def __new__(cls, kind: str, children: tuple = (), keys: tuple = ()):
        return tuple.__new__(cls, (kind, children, keys))

    kind = property(itemgetter(0))          # "leaf", "none", "tuple", "list", "dict", "namedtuple", "leading"
    children = property(itemgetter(1))
    keys = property(itemgetter(2))          # a dict's keys; a namedtuple's class, as a 1-tuple

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children)

    def __repr__(self) -> str:
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        if self.kind == "leading":
            return "*[:?]"
        inner = ", ".join(repr(c) if self.kind != "dict" else f"{k!r}: {c!r}"
                          for k, c in zip(self.keys or [None] * len(self.children), self.children))
        if self.kind == "namedtuple":
            inner = ", ".join(repr(c) for c in self.children)
            return f"{self.keys[0].__name__}({inner})"
        return {"tuple": f"({inner})", "list": f"[{inner}]", "dict": f"{{{inner}}}"}[self.kind]


LEAF = TreeDef("leaf")
NONE = TreeDef("none")
# A result whose length along some axes is known only when the program runs: two leaves, the data with its
# elements in the leading positions of each of those axes (``keys``) and their lengths; rebuilt as the data's
# leading part.
def leading(axes: tuple) -> TreeDef:
    return TreeDef("leading", (LEAF, LEAF), tuple(axes))


def flatten(tree: Any, leaves: list | None = None) -> tuple[list, TreeDef]:
    """Leaves in a fixed order (dicts by sorted key) and the structure to rebuild them."""
    out = [] if leaves is None else leaves
    return out, _flatten(tree, out)


def _flatten(tree, out: list) -> TreeDef:
    if tree is None:
        return NONE
    kind = type(tree)
    if kind is tuple or kind is list:
        return TreeDef(kind.__name__, tuple(_flatten(c, out) for c in tree))
    if kind is dict:
        keys = tuple(sorted(tree))
        return TreeDef("dict", tuple(_flatten(tree[k], out) for k in keys), keys)
    if isinstance(tree, tuple) and hasattr(kind, "_fields"):
        return TreeDef("namedtuple", tuple(_flatten(c, out) for c in tree), (kind,))
    out.append(tree)
    return LEAF


def unflatten(treedef: TreeDef, leaves) -> Any:
    """Rebuild a pytree of ``treedef``'s structure from ``leaves``."""
    it = iter(leaves)
    result = _unflatten(treedef, it)
    return result


def _unflatten(treedef: TreeDef, it):
    kind = treedef.kind
    if kind == "leaf":
        return next(it)
    if kind == "none":
        return None
    children = [_unflatten(c, it) for c in treedef.children]
    if kind == "leading":
        data, lengths = children
        index = [slice(None)] * data.ndim
        for axis, length in zip(treedef.keys, np.asarray(lengths).tolist()):
            index[axis] = slice(0, length)
        return data[tuple(index)]
    if kind == "dict":
        return dict(zip(treedef.keys, children))
    if kind == "namedtuple":
        return treedef.keys[0](*children)
    return tuple(children) if kind == "tuple" else children


def with_subtrees(treedef: TreeDef, subtrees: dict) -> TreeDef:
    """``treedef`` with its leaves numbered in ``subtrees`` (leaf index -> TreeDef) replaced by those trees.

    >>> with_subtrees(flatten((1, 2))[1], {1: leading((0,))})
    (*, *[:?])
    """
    if not subtrees:
        return treedef
    counter = iter(range(treedef.num_leaves))

    def rebuilt(tree: TreeDef) -> TreeDef:
        if tree.kind == "leaf":
            return subtrees.get(next(counter), tree)
        return TreeDef(tree.kind, tuple(rebuilt(c) for c in tree.children), tree.keys)
    return rebuilt(treedef)


class PrefixMismatch(ValueError):
    """``prefix`` is not a pytree prefix of ``tree`` (see :func:`broadcast_prefix`)."""

    def __init__(self, prefix, tree: TreeDef):
        super().__init__(f"{prefix!r} is not a prefix of {tree!r}")
        self.prefix, self.tree = prefix, tree


def broadcast_prefix(prefix, tree: TreeDef, is_entry) -> list:
    """One entry of ``prefix`` per leaf of ``tree``: ``prefix`` is a pytree prefix of ``tree`` whose entries
    (``is_entry(x)``) each apply to a whole subtree, as JAX's ``in_axes`` and ``in_shardings``.
    PrefixMismatch where the structures differ.

    >>> broadcast_prefix((0, None), flatten((1, {"a": 2, "b": 3}))[1], lambda x: not isinstance(x, tuple))
    [0, None, None]
    """
    if is_entry(prefix):
        return [prefix] * tree.num_leaves
    if tree.kind == "none":
        return []
    if tree.kind in ("tuple", "list", "namedtuple") and type(prefix) in (tuple, list) and \
            len(prefix) == len(tree.children):
        children = prefix
    elif tree.kind == "dict" and type(prefix) is dict and tuple(sorted(prefix)) == tuple(tree.keys):
        children = [prefix[k] for k in tree.keys]
    else:
        raise PrefixMismatch(prefix, tree)
    return [entry for child, sub in zip(children, tree.children) for entry in broadcast_prefix(child, sub, is_entry)]


def leaf_paths(treedef: TreeDef, prefix: str = "") -> list[str]:
    """A readable path for each leaf, in leaf order: ``["x", "params['w']", "args[2][0]"]``."""
    if treedef.kind == "leaf":
        return [prefix]
    if treedef.kind == "none":
        return []
    paths = []
    for i, child in enumerate(treedef.children):
        key = f"[{treedef.keys[i]!r}]" if treedef.kind == "dict" else f"[{i}]"
        paths.extend(leaf_paths(child, prefix + key))
    return paths
