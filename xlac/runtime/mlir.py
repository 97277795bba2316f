"""Looking at a StableHLO module through jaxlib: XLA's HLO before optimization, and the MLIR parser's verdict.

>>> text = '''func.func public @main(%a: tensor<2xf32>) -> tensor<2xf32> {
...   %0 = "stablehlo.add"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
...   "func.return"(%0) : (tensor<2xf32>) -> ()
... }'''
>>> verify_stablehlo(text)
>>> "add(" in stablehlo_to_hlo(text)
True
"""
from __future__ import annotations

__all__ = ["stablehlo_to_hlo", "verify_stablehlo"]


def _mlir_converters():
    try:
        from jaxlib import _jax
    except ImportError:  # older layouts keep it under jax._src.lib
        from jax._src.lib import _jax
    return _jax.mlir


def stablehlo_to_hlo(text: str) -> str:
    """XLA's HLO text of a StableHLO module, before XLA's optimization passes (with source metadata)."""
    computation = _mlir_converters().mlir_module_to_xla_computation(text, use_tuple_args=False,
                                                                     return_tuple=False)
    return computation.as_hlo_module().to_string()


def verify_stablehlo(text: str) -> None:
    """Parse and verify a StableHLO module with jaxlib's MLIR parser; ``ValueError`` with its diagnostics if
    it does not parse or verify."""
    from jax.extend.mlir import ir
    from jax.interpreters.mlir import make_ir_context

    with make_ir_context():
        try:
            module = ir.Module.parse(text)
        except Exception as e:  # jaxlib's MLIRError
            raise ValueError(f"StableHLO does not parse: {e}") from None
        if not module.operation.verify():
            raise ValueError("StableHLO parses but does not verify")
