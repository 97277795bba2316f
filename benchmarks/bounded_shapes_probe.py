"""Probe: does XLA's bounded dynamic shapes path (StableHLO ``tensor<?xf32, #stablehlo.bounds<N>>``,
``set_dimension_size``, ``get_dimension_size``) compile, run and give correct results through jaxlib's PJRT
client, and is a reduction over a bounded dimension faster than the masked reduction xlac emits for a
dynamic extent (issue 18: "full data + mask, or XLA's bounded dynamic shapes; decide, measure, say why")?

Run: python benchmarks/bounded_shapes_probe.py
Prints, per construct: compiles / runs / correct (or the first line of the error); what jax itself exposes
for dynamic shapes; and the run time of a masked against a bounded-shape reduction of the same data (once,
and per iteration of a loop whose extent is the loop index), best of several calls.
"""
from __future__ import annotations

import timeit

import jax
import jax.extend.backend as eb
import numpy as np

BOUND = 1000
VECTOR = f"tensor<{BOUND}xf32>"
BOUNDED = f"tensor<?xf32, #stablehlo.bounds<{BOUND}>>"


def bounded(name: str, source: str, length: str = "%n") -> str:
    """A line setting ``name`` to ``source`` with its dimension 0 of run-time length ``length``."""
    return f"{name} = stablehlo.set_dimension_size {source}, {length}, dim = 0 : ({VECTOR}, tensor<i32>) -> {BOUNDED}"


def summed(name: str, source: str, kind: str = "add", init: str = "0.0", of: str = BOUNDED) -> str:
    """Lines setting ``name`` to the reduction (``kind``: add, maximum) of ``source`` (of type ``of``), e.g.
    ``summed("%s", "%d")``: the sum of the bounded ``%d``."""
    return (f"%init_{name[1:]} = stablehlo.constant dense<{init}> : tensor<f32>\n"
            f"  {name} = stablehlo.reduce({source} init: %init_{name[1:]}) applies stablehlo.{kind} across "
            f"dimensions = [0] : ({of}, tensor<f32>) -> tensor<f32>")


def module(params: str, result: str, body: str, returned: str) -> str:
    """A StableHLO module whose ``main`` takes ``params``, runs ``body`` and returns ``returned`` of type
    ``result``, e.g. ``module("%x: tensor<2xf32>", "tensor<2xf32>", "", "%x")``: the identity."""
    return f"func.func @main({params}) -> {result} {{\n  {body}\n  return {returned} : {result}\n}}\n"


X = f"%x: {VECTOR}, %n: tensor<i32>"
LOOP = """%zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %acc0 = stablehlo.constant dense<0.0> : tensor<f32>
  %out:2 = stablehlo.while(%i = %zero, %acc = %acc0) : tensor<i32>, tensor<f32>
    cond {
      %more = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %more : tensor<i1>
    } do {
      BODY
      %next = stablehlo.add %i, %one : tensor<i32>
      %total = stablehlo.add %acc, %s : tensor<f32>
      stablehlo.return %next, %total : tensor<i32>, tensor<f32>
    }"""


def prefix_sums_loop(body: str) -> str:
    """``sum(x[:i] for i in range(n))``: a while loop whose body sums ``x[:i]`` (``body`` defines ``%s``)."""
    return LOOP.replace("BODY", body)


MASKED_PREFIX = (f"%positions = stablehlo.iota dim = 0 : tensor<{BOUND}xi32>\n"
                 f"      %bound = stablehlo.broadcast_in_dim %i, dims = [] : (tensor<i32>) -> tensor<{BOUND}xi32>\n"
                 f"      %inside = stablehlo.compare LT, %positions, %bound : (tensor<{BOUND}xi32>, tensor<{BOUND}xi32>) "
                 f"-> tensor<{BOUND}xi1>\n"
                 f"      %zeros = stablehlo.constant dense<0.0> : {VECTOR}\n"
                 f"      %kept = stablehlo.select %inside, %x, %zeros : tensor<{BOUND}xi1>, {VECTOR}\n"
                 f"      {summed('%s', '%kept', of=VECTOR)}")
BOUNDED_PREFIX = f"{bounded('%d', '%x', '%i')}\n      {summed('%s', '%d')}"

# name, module, expected result of (x, n)
CASES = [
    ("sum over a bounded dimension", module(X, "tensor<f32>", f"{bounded('%d', '%x')}\n  {summed('%s', '%d')}", "%s"),
     lambda x, n: x[:n].sum()),
    ("max over a bounded dimension (padding holds 1e30)",
     module(X, "tensor<f32>", f"{bounded('%d', '%x')}\n  {summed('%s', '%d', 'maximum', '0xFF800000')}", "%s"),
     lambda x, n: x[:n].max()),
    ("get_dimension_size", module(X, "tensor<i32>", f"{bounded('%d', '%x')}\n  %s = stablehlo.get_dimension_size %d, "
                                  f"dim = 0 : ({BOUNDED}) -> tensor<i32>", "%s"),
     lambda x, n: np.int32(n)),
    ("elementwise multiply, then sum", module(X, "tensor<f32>", f"{bounded('%d', '%x')}\n  %sq = stablehlo.multiply "
                                              f"%d, %d : {BOUNDED}\n  {summed('%s', '%sq')}", "%s"),
     lambda x, n: (x[:n] * x[:n]).sum()),
    ("dot_general of two bounded vectors",
     module(X, "tensor<f32>", f"{bounded('%d', '%x')}\n  %s = stablehlo.dot_general %d, %d, contracting_dims = [0] x [0]"
            f" : ({BOUNDED}, {BOUNDED}) -> tensor<f32>", "%s"),
     lambda x, n: x[:n] @ x[:n]),
    ("x[i:j] as dynamic_slice of padded data + set_dimension_size, sum",
     module(X + ", %j: tensor<i32>", "tensor<f32>",
            f"%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
            f"  %padded = stablehlo.pad %x, %z, low = [0], high = [{BOUND}], interior = [0] : ({VECTOR}, tensor<f32>) "
            f"-> tensor<{2 * BOUND}xf32>\n"
            f"  %window = stablehlo.dynamic_slice %padded, %n, sizes = [{BOUND}] : (tensor<{2 * BOUND}xf32>, tensor<i32>)"
            f" -> {VECTOR}\n  %length = stablehlo.subtract %j, %n : tensor<i32>\n"
            f"  {bounded('%d', '%window', '%length')}\n  {summed('%s', '%d')}", "%s"),
     lambda x, n, j: x[n:j].sum()),
    ("while loop: sum of x[:i] per iteration (bounded by the loop index)",
     module(X, "tensor<f32>", prefix_sums_loop(BOUNDED_PREFIX), "%out#1"),
     lambda x, n: sum(x[:i].sum() for i in range(n))),
    ("while loop carrying a bounded value",
     module(X, BOUNDED, f"{bounded('%d0', '%x', '%n')}\n"
            f"  %zero = stablehlo.constant dense<0> : tensor<i32>\n"
            f"  %r:2 = stablehlo.while(%i = %zero, %d = %d0) : tensor<i32>, {BOUNDED}\n"
            f"    cond {{\n      %more = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
            f"      stablehlo.return %more : tensor<i1>\n    }} do {{\n"
            f"      %one = stablehlo.constant dense<1> : tensor<i32>\n      %next = stablehlo.add %i, %one : tensor<i32>\n"
            f"      %twice = stablehlo.add %d, %d : {BOUNDED}\n"
            f"      stablehlo.return %next, %twice : tensor<i32>, {BOUNDED}\n    }}", "%r#1"),
     lambda x, n: x[:n] * 2.0 ** n),
    ("a bounded result returned from the program", module(X, BOUNDED, bounded('%d', '%x'), "%d"),
     lambda x, n: x[:n]),
    ("a bounded parameter (an argument of its run-time length)",
     module(f"%d: {BOUNDED}", "tensor<f32>", summed('%s', '%d'), "%s"),
     lambda x, n: x[:n].sum()),
]


def first_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0][:150] if text else ''}"


class Probe:
    """Compiles and runs StableHLO text on the default PJRT device (CPU here)."""

    def __init__(self):
        self.backend = eb.get_backend()
        self.device = self.backend.local_devices()[0]

    def compile(self, text: str):
        options = eb.get_compile_options(num_replicas=1, num_partitions=1)
        return self.backend.compile_and_load(text, [self.device], options)

    def put(self, args) -> list:
        return [jax.device_put(a, self.device) for a in args]

    def run(self, executable, buffers) -> list:
        outputs = executable.execute_sharded(buffers).disassemble_into_single_device_arrays()
        return [np.asarray(o[0]) for o in outputs]


def probe_constructs(probe: Probe) -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=BOUND).astype(np.float32)
    x[600:] = 1e30                      # positions past every extent below: a max that reads them is wrong
    print(f"{'construct':70s} result")
    for name, text, expected in CASES:
        n, j = 37, 412
        if "parameter" in name:
            args, want = [x[:n]], expected(x, n)
        elif "x[i:j]" in name:
            args, want = [x, np.int32(n), np.int32(j)], expected(x, n, j)
        else:
            args, want = [x, np.int32(n)], expected(x, n)
        try:
            executable = probe.compile(text)
        except Exception as error:          # noqa: BLE001: a probe reports every failure
            print(f"{name:70s} does not compile: {first_line(error)}")
            continue
        try:
            got = probe.run(executable, probe.put(args))[0]
        except Exception as error:          # noqa: BLE001
            print(f"{name:70s} compiles, does not run: {first_line(error)}")
            continue
        want = np.asarray(want)
        if got.shape == want.shape:
            print(f"{name:70s} compiles, runs, {'correct' if np.allclose(got, want, rtol=1e-4) else 'WRONG'}")
        elif got.shape == (BOUND,) and np.allclose(got[:n], want, rtol=1e-4):
            print(f"{name:70s} compiles, runs; comes back as the whole {BOUND}-element buffer, its first {n} "
                  "correct (the length is lost)")
        else:
            print(f"{name:70s} compiles, runs, WRONG (shape {got.shape}, expected {want.shape})")


def probe_jax() -> None:
    """What jax itself offers for values whose length is known only at run time."""
    import inspect
    import jax.numpy as jnp
    options = [k for k in ("jax_dynamic_shapes",) if hasattr(jax.config, k)]
    print(f"jax {jax.__version__}: config option jax_dynamic_shapes: {'present' if options else 'absent'}; "
          f"jax.jit(abstracted_axes=...): {'accepted' if 'abstracted_axes' in inspect.signature(jax.jit).parameters else 'absent'}; "
          f"jnp.nonzero(size=...): {'present' if 'size' in inspect.signature(jnp.nonzero).parameters else 'absent'}")


def best_seconds(call, number: int = 5, rounds: int = 5) -> float:
    call()
    return min(timeit.timeit(call, number=number) for _ in range(rounds)) / number


def time_reductions(probe: Probe) -> None:
    """A masked against a bounded-shape sum of the same data: once over 10^7 elements (half of them
    valid), and per iteration of a 1,000-iteration loop summing ``x[:i]`` of 1,000 elements."""
    size = 10_000_000
    vector, bounded_type = f"tensor<{size}xf32>", f"tensor<?xf32, #stablehlo.bounds<{size}>>"
    params = f"%x: {vector}, %n: tensor<i32>"
    masked = module(params, "tensor<f32>",
                    f"%positions = stablehlo.iota dim = 0 : tensor<{size}xi32>\n"
                    f"  %bound = stablehlo.broadcast_in_dim %n, dims = [] : (tensor<i32>) -> tensor<{size}xi32>\n"
                    f"  %inside = stablehlo.compare LT, %positions, %bound : (tensor<{size}xi32>, tensor<{size}xi32>) -> "
                    f"tensor<{size}xi1>\n  %zeros = stablehlo.constant dense<0.0> : {vector}\n"
                    f"  %kept = stablehlo.select %inside, %x, %zeros : tensor<{size}xi1>, {vector}\n"
                    f"  {summed('%s', '%kept', of=vector)}", "%s")
    bounded_sum = module(params, "tensor<f32>",
                         f"%d = stablehlo.set_dimension_size %x, %n, dim = 0 : ({vector}, tensor<i32>) -> {bounded_type}\n"
                         f"  {summed('%s', '%d', of=bounded_type)}", "%s")
    loop_masked = module(X, "tensor<f32>", prefix_sums_loop(MASKED_PREFIX), "%out#1")
    loop_bounded = module(X, "tensor<f32>", prefix_sums_loop(BOUNDED_PREFIX), "%out#1")
    x = np.random.default_rng(1).random(size, dtype=np.float32)
    for label, pair, args in [
        (f"sum of x[:n], n = {size // 2:,} of {size:,}", (masked, bounded_sum), [x, np.int32(size // 2)]),
        (f"loop of {BOUND} iterations, each sum of x[:i] of {BOUND}", (loop_masked, loop_bounded),
         [x[:BOUND], np.int32(BOUND)]),
    ]:
        try:
            masked_exe, bounded_exe = (probe.compile(text) for text in pair)
        except Exception as error:          # noqa: BLE001
            print(f"{label}: does not compile: {first_line(error)}")
            continue
        buffers = probe.put(args)
        results = [probe.run(exe, buffers)[0] for exe in (masked_exe, bounded_exe)]
        masked_s = best_seconds(lambda: probe.run(masked_exe, buffers))
        bounded_s = best_seconds(lambda: probe.run(bounded_exe, buffers))
        agree = np.allclose(*results, rtol=1e-3)
        print(f"{label}: masked {masked_s * 1e3:.3f} ms, bounded {bounded_s * 1e3:.3f} ms "
              f"(bounded/masked {bounded_s / masked_s:.2f}; results {'agree' if agree else 'DIFFER'})")
        optimized = bounded_exe.hlo_modules()[0].to_string()
        print(f"  XLA's optimized HLO of the bounded version: "
              f"{'holds a dynamic dimension' if '<=' in optimized else 'static shapes only'}"
              f"{', masks with select' if 'select(' in optimized else ''}")


if __name__ == "__main__":
    probe = Probe()
    print(f"device: {probe.device}")
    probe_jax()
    probe_constructs(probe)
    time_reductions(probe)
