"""The VJP, JVP and batching rules of the primitives, one module per family of ``xlac/ir/primitives.py``.

Importing this package registers every rule on its primitive (``Primitive.register``); the engines
(:mod:`xlac.passes.autodiff`, :mod:`xlac.passes.batching`) read them off the primitive and import no rule
module, as in JAX. Whoever runs an engine imports this package once: ``xlac.differentiate`` and
``xlac.vectorize`` do, and so does every ``import xlac``.

The rules' signatures (``None`` stands for a zero tangent or cotangent, and for integer values, which have
none; rules emit nodes through :mod:`xlac.trace.ops` into the current trace):

- ``vjp(attrs, operands, results, cotangents) -> one cotangent per operand``
- ``jvp(attrs, operands, results, tangents) -> one tangent per result``
- ``batch(attrs, operands, dims) -> (results, result_dims)``: ``dims[i]`` is the batch axis of operand
  ``i`` (``None``: unbatched); called only when some operand is batched.

The families, each module holding all three kinds of rules of its primitives: :mod:`.elementwise`,
:mod:`.structure`, :mod:`.indexing`, :mod:`.reductions`, :mod:`.control`, :mod:`.linalg`, :mod:`.fft`,
:mod:`.sharding`; helpers they share are in :mod:`.common`.

>>> from xlac.ir import primitives as P
>>> P.exp.vjp is not None and P.gather.batch is not None and P.while_.vjp_forward is not None
True
"""
from xlac.passes.rules import elementwise, structure, indexing, reductions, control, linalg, fft, sharding  # noqa: F401

__all__: list[str] = []
