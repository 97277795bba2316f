"""The VJP, JVP and batching rules of the primitives, one module per family of ``xlac/ir/primitives.py``."""
