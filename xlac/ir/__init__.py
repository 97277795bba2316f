"""xlac's graph IR: types, dtypes, values, nodes, graphs, the primitive catalog, printer and verifier."""
from xlac.ir import primitives  # noqa: F401  (declares the catalog)
from xlac.ir.graph import Graph, Node, SourceLocation, Value
from xlac.ir.primitive import CATALOG, Primitive, ShapeError
from xlac.ir.types import TensorType
from xlac.ir.verifier import VerificationError, verify

__all__ = ["CATALOG", "Graph", "Node", "Primitive", "ShapeError", "SourceLocation", "TensorType", "Value",
           "VerificationError", "verify"]
