"""The StableHLO text xlac writes (xlac/lowering: the module and every primitive's emitter) is what MLIR
accepts: it parses and verifies with jaxlib's MLIR, and XLA runs it (values against NumPy)."""
import numpy as np

import xlac
from xlac.trace import ops

F32 = np.dtype("float32")


def many_primitives(x, idx, m):
    """A program touching most primitives, for the MLIR round trip."""
    y = ops.tanh(ops.mul(x, x))
    total = ops.reduce(y, "sum", (1,))
    sorted_keys, payload = ops.sort([x, ops.iota(x.shape, np.int32, 1)], 1, num_keys=1)
    best = ops.argmax(x, 1, np.int32)
    rows = ops.gather(x, idx, offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,), slice_sizes=(1, 4))
    scattered = ops.scatter(x, idx, rows, update_window_dims=(1,), inserted_window_dims=(0,),
                            scatter_dims_to_operand_dims=(0,), mode="add")
    product = ops.dot_general(x, m, ((1,), (0,)))
    padded = ops.pad(x, ops.constant(np.float32(0)), (1, -1), (0, 2), (1, 0))
    window = ops.dynamic_slice(x, [ops.constant(np.int32(1)), ops.constant(np.int32(0))], (1, 2))
    flags = ops.select(ops.compare(x, ops.full(x.shape, 0.5, F32), "GT"), x, ops.full(x.shape, 0.0, F32))
    ints = ops.pow(ops.convert(x, np.int32), ops.full(x.shape, 3, np.int32))
    bits = ops.bitcast_convert(x, np.uint8)
    joined = ops.concatenate([ops.reverse(x, (0,)), ops.transpose(ops.reshape(x, (4, 3)), (1, 0))], 0)
    return (total, sorted_keys, payload, best, scattered, product, padded, window, flags, ints, bits, joined,
            ops.clamp(ops.constant(np.float32(0)), x, ops.constant(np.float32(1))),
            ops.convert(ops.constant(np.array([1 + 2j, 3j], np.complex64)), np.bool_),
            ops.sign(ops.constant(np.array([0, 3], np.uint8))))


def test_stablehlo_text_reparses_with_jaxlib_mlir():
    from jax.extend.mlir import ir
    from jax.interpreters.mlir import make_ir_context
    args = (np.arange(12, dtype=np.float32).reshape(3, 4) / 10, np.array([[2], [0]], np.int32),
            np.ones((4, 5), np.float32))
    compiled = xlac.compile(many_primitives)
    text = compiled.lower(*args).as_text()
    for name in ("reduce", "sort", "gather", "scatter", "dot_general", "pad", "dynamic_slice", "bitcast_convert"):
        assert f'"stablehlo.{name}"' in text, name
    with make_ir_context():
        module = ir.Module.parse(text)
        assert module.operation.verify()
    results = compiled(*args)                     # and XLA runs it
    np.testing.assert_array_equal(np.asarray(results[3]), np.argmax(args[0], axis=1))
