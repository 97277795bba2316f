"""``xlac.compile``: the compiled function, its executable cache, and the ahead-of-time stages.

>>> import numpy as np, xlac, xlac.numpy as xnp
>>> @xlac.compile
... def f(x, y):
...     return xnp.tanh(x @ y)
>>> out = f(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32))
>>> out.shape, out.dtype
((2, 4), dtype('float32'))
>>> "stablehlo.dot_general" in f.lower(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)).as_text()
True
"""
from __future__ import annotations

import functools
import inspect
import re
import threading
import time
import types
import dataclasses
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from xlac import runtime
from xlac.array import Array
from xlac.callables import callable_name
from xlac.captures import Captures
from xlac.convert import converted
from xlac.errors import ValueNeeded, located
from xlac.config import config
from xlac.inspection import Signature, recompile_cause, record_compile
from xlac.inspection.cost_view import cost_by_line
from xlac.inspection.log import CompileNotice
from xlac.inspection.hlo_copies import with_loop_copies
from xlac.ir.exact import exact_key
from xlac.ir.graph import Graph
from xlac.ir.sharding import NamedSharding, ProgramSharding, as_sharding
from xlac.ir.types import TensorType
from xlac.lowering import lower_module
from xlac.passes import run_passes
from xlac.passes.inplace import inplace_report
from xlac.outside_state import OutsideBindings, OutsideState
from xlac.runners import OutsideArrayChanged, Places, call_key, make_runner, make_updating_runner
from xlac.shared_arguments import ArgumentsShareMemory, SharedVariant
from xlac.sharding import broadcast_prefix, program_sharding, result_shardings, sharding_of
from xlac.argument_specs import by_identity, check_leaf, is_static_object, leaf_key, leaf_mutability, leaf_spec
from xlac.trace import pytree
from xlac.trace.context import Trace
from xlac.trace.state import autocast_state, current_trace
from xlac.trace.tracer import Tracer
from xlac.numpy._core import asarray
from xlac.window_writes import window_updates, window_writers


# ---------------------------------------------------------------- stages


@dataclass
class Traced:
    """The IR of a function for one signature, as traced and after each pass. ``str()`` is the traced IR."""

    name: str
    stages: list[tuple[str, Graph]]
    in_tree: pytree.TreeDef
    in_specs: tuple
    in_paths: list[str]
    out_tree: pytree.TreeDef
    device: object
    # What the program reads and writes outside its arguments at each call (see xlac.outside_state): the
    # implicit arguments are its last inputs, the rebound places' values outputs after the results.
    outside: OutsideBindings = field(default_factory=OutsideBindings)
    # Seconds per stage: "trace", each pass, "lower", "xla_compile" (or "cache_load": a persistent-cache hit).
    timings: dict = field(default_factory=dict)
    # What the program checks after the call (traced indices in bounds): its output after the results and
    # the rebound values holds the status and the payload (see xlac.trace.checks).
    checks: list = field(default_factory=list)
    # How each converted Python loop ran (xlac.convert.loops.LoopDecision): rolled or unrolled, and why.
    loop_decisions: list = field(default_factory=list)
    # How the program is split over a mesh of devices (None: it runs on one device).
    sharding: ProgramSharding | None = None
    # Result position -> argument leaf, for each result that is an argument's new value (``x[0] = 1; return
    # x``): the call returns that argument itself (as NumPy does), and the program has no output for it.
    returned_arguments: dict = field(default_factory=dict)
    # The arguments written back by the windows the program updated, not whole (see xlac.window_writes): the
    # pieces and their starts are the program's last outputs.
    windows: list = field(default_factory=list)

    @property
    def captures(self) -> Captures | None:
        """The arrays read from outside the arguments: the program's last inputs."""
        return self.outside.captures

    @property
    def graph(self) -> Graph:
        """The graph as traced."""
        return self.stages[0][1]

    def ir(self, stage: str = "traced") -> Graph:
        """The graph after ``stage`` ("traced" or a pass name, "final" for the last)."""
        if stage == "final":
            return self.stages[-1][1]
        for name, graph in self.stages:
            if name == stage:
                return graph
        raise KeyError(f"no stage {stage!r}; stages: {', '.join(n for n, _ in self.stages)}")

    def __str__(self) -> str:
        return str(self.graph)

    def inplace_report(self) -> list:
        """Each in-place write (``x[i] = v``, ``x += y``) with its line and whether XLA does it in the
        array's own buffer or must copy it first (and why)."""
        return inplace_report(self.ir("final"))

    def lower(self) -> "Lowered":
        graph = self.ir("final")
        start = time.perf_counter()
        # Each argument the program writes to shares its buffer with the output holding its new value.
        text = lower_module(graph, dict(graph.input_updates), runtime.linalg_kernels(self.device), self.sharding,
                            self.device.platform)
        self.timings["lower"] = time.perf_counter() - start
        return Lowered(self, text)


@dataclass
class Lowered:
    """A traced function lowered to StableHLO text."""

    traced: Traced
    text: str

    def as_text(self) -> str:
        """The StableHLO module."""
        return self.text

    def ir(self, stage: str = "final") -> Graph:
        return self.traced.ir(stage)

    def compile(self) -> "Compiled":
        start = time.perf_counter()
        output_types = [v.type for v in self.traced.ir("final").outputs]
        executable = runtime.compile_stablehlo(self.text, self.traced.device, self.traced.sharding, output_types)
        stage = "cache_load" if executable.persistent_cache == "hit" else "xla_compile"
        self.traced.timings[stage] = time.perf_counter() - start
        return Compiled(self, executable)


class Compiled:
    """An executable for one signature; calling it checks every argument against that signature."""

    def __init__(self, lowered: Lowered, executable: runtime.Executable):
        self.lowered = lowered
        self.executable = executable
        traced = lowered.traced
        self.outside = traced.outside
        # (for the call path: a program with none of these runs without looking outside)
        self.captures, self.rebound = self.outside.captures, self.outside.rebound
        self.read_while_tracing = self.outside.read_while_tracing
        graph = traced.ir("final")
        out_types = [v.type for v in graph.outputs]
        if traced.sharding is None:
            places = Places([traced.device] * len(traced.in_specs), [traced.device] * len(out_types), traced.in_paths)
        else:
            places = Places(list(traced.sharding.inputs), executable.output_shardings, traced.in_paths)
        if graph.input_updates:
            self._run, self.runner_for = make_updating_runner(
                executable, places, traced.in_specs, out_types, traced.out_tree, graph.input_updates,
                traced.in_paths, traced.checks, traced.returned_arguments,
                window_writers(traced.windows, [v.type for v in graph.inputs]))
        else:
            self._run, self.runner_for = make_runner(executable, places, traced.in_specs, out_types,
                                                     traced.out_tree, traced.checks)

    def as_text(self) -> str:
        """XLA's optimized HLO."""
        return self.executable.optimized_hlo()

    def inplace_report(self) -> list:
        """Each in-place write with its line and whether it runs in place (see ``Traced.inplace_report``),
        and inside loops also whether XLA's optimized program copies the buffer each iteration."""
        return with_loop_copies(self.lowered.traced.inplace_report(), self.as_text())

    def cost_analysis(self) -> dict:
        return self.executable.cost_analysis()

    def cost_by_line(self) -> list:
        """Per line of the user's source, XLA's estimated work per call, most first: ``LineCost`` rows with
        ``flops``, ``transcendentals`` and ``bytes_accessed`` counted from the optimized HLO (a loop's body
        times its trip count where XLA knows it), ``runs`` and the loops on the line with their decision
        (``xlac.inspection.format_cost_table`` prints them; ``python -m xlac explain --cost`` too).

        >>> import numpy as np, xlac
        >>> def f(a, b):
        ...     return np.tanh(a @ b)
        >>> compiled = xlac.compile(f).lower(np.ones((20, 30)), np.ones((30, 40))).compile()
        >>> top = compiled.cost_by_line()[0]
        >>> top.source, top.flops == 2 * 20 * 30 * 40
        ('return np.tanh(a @ b)', True)
        """
        return cost_by_line(self.as_text(), self.lowered.traced.loop_decisions)

    def memory_analysis(self) -> dict:
        return self.executable.memory_analysis()

    def __call__(self, *args, **kwargs):
        traced = self.lowered.traced
        leaves, tree = pytree.flatten((args, kwargs))
        if tree != traced.in_tree:
            raise TypeError(f"{traced.name}: compiled for arguments structured as {traced.in_tree}, "
                            f"got {tree}")
        try:
            leaves = leaves + self.outside.implicit_arguments(())
        except OutsideArrayChanged as changed:
            raise TypeError(f"{traced.name}: {changed}; call the xlac.compile'd function to trace it again") from None
        for leaf, spec, path in zip(leaves, traced.in_specs, traced.in_paths):
            check_leaf(leaf, spec, path)
        return self._run_and_write_back(leaves, ())

    def run(self, leaves, statics=()):
        """Execute with argument leaves already known to fit (the cached call path). Raises
        ``OutsideArrayChanged`` when what the program reads or rebinds outside its arguments no longer fits
        (see ``OutsideBindings.implicit_arguments``)."""
        if self.outside.empty:
            return self._run(leaves)
        return self._run_and_write_back(list(leaves) + self.outside.implicit_arguments(statics), statics)

    def _run_and_write_back(self, leaves, statics):
        """Run; then assign each place the function rebinds outside its arguments its new value."""
        if self.outside.rebound is None:
            return self._run(leaves)
        result, rebound_values = self._run(leaves)
        self.outside.write_back(rebound_values, leaves, statics)
        return result


# ---------------------------------------------------------------- tracing


@dataclass(frozen=True)
class TraceInputs:
    """The abstract arguments a function is traced on."""

    tree: pytree.TreeDef            # the structure of the argument leaves
    specs: tuple                    # per leaf, (shape, dtype, weak)
    paths: list                     # per leaf, its name in errors and in the IR: "x", "params['w']"
    rebuild: Callable               # traced leaves -> (args, kwargs) to call the function with
    # Per leaf, whether the function may write to it (see ``leaf_mutability``); None: the scalars may not.
    mutabilities: list | None = None
    shardings: list | None = None   # per leaf, a NamedSharding or None
    # The leaves that are NumPy arrays: of the arguments the program writes, only those (and outside NumPy
    # arrays) are written back by windows (see ``xlac.window_writes``); None: any argument.
    numpy_leaves: frozenset | None = None


@dataclass(frozen=True)
class TraceOptions:
    """How :func:`trace_function` traces. With ``statics`` (the static arguments as ``(key, value)`` pairs,
    named by ``static_names``), the state the function reaches outside its arguments is the program's
    (implicit arguments, rebound places: see ``xlac.outside_state``); without, outside arrays are constants.
    ``convert``: trace the function's converted source (see ``xlac.convert``), its loops rolled per
    ``loops``. ``out_shardings``: a prefix of the results' pytree (see ``xlac.sharding``)."""

    statics: tuple | None = None
    static_names: dict = field(default_factory=dict)
    check_bounds: bool = True
    convert: bool = False
    loops: str = "auto"
    out_shardings: object = None
    max_unrolled_ops: int | None = None


def trace_function(fn, name: str, inputs: TraceInputs, device, options: TraceOptions = TraceOptions()) -> Traced:
    """Trace ``fn`` on abstract arguments (``inputs``) into the stages of a program for ``device``."""
    specs, paths = list(inputs.specs), list(inputs.paths)
    mutabilities = inputs.mutabilities or ["value" if weak else "mutable" for _, _, weak in specs]
    statics = options.statics
    start = time.perf_counter()
    with Trace(check_bounds=options.check_bounds, convert=options.convert, loops=options.loops,
               max_unrolled_ops=options.max_unrolled_ops, kernels=runtime.linalg_kernels(device)) as trace:
        if statics is not None:
            trace.outside = OutsideState(trace, f"xlac.compile'd {name}", implicit_arguments=True)
            trace.outside.watch_function(fn, statics, options.static_names)
        tracers = [trace.add_input(TensorType(shape, dtype), weak=weak, name=path, mutability=mutability)
                   for (shape, dtype, weak), path, mutability in zip(specs, paths, mutabilities)]
        try:
            trace.graph.outputs, out_tree = _run_traced(converted(fn) if options.convert else fn, name, trace,
                                                        inputs.rebuild(tracers))
            wanted = result_shardings(options.out_shardings, out_tree, trace.graph.outputs, name)
            check_outputs = [trace.checks.output().value] if trace.checks.sources else []
        except BaseException as error:
            if trace.outside is not None:
                trace.outside.abandon()           # no Tracer stays in a user's object
            if isinstance(error, ValueNeeded):
                error.leaf = next((k for k, t in enumerate(tracers) if t.value is error.value), None)
            raise
    outside = OutsideBindings()
    if trace.outside is not None:
        outside, out_tree = trace.outside.finish(fn, statics, options.static_names, out_tree, len(specs))
    trace.graph.outputs.extend(check_outputs)
    input_shardings = list(inputs.shardings or [None] * len(specs))
    numpy_leaves = inputs.numpy_leaves
    if outside.captures is not None:
        implicit = [c.resolve(dict(statics)) for c in outside.captures.items]
        if numpy_leaves is not None:
            numpy_leaves |= {len(specs) + k for k, array in enumerate(implicit) if type(array) is np.ndarray}
        specs += [leaf_spec(array, c.name) for array, c in zip(implicit, outside.captures.items)]
        paths += outside.captures.names
        input_shardings += [sharding_of(array) for array in implicit]
    timings = {"trace": time.perf_counter() - start}
    stages = run_passes(trace.graph, timings)
    final, returned, wanted = _return_updated_arguments(stages[-1][1], wanted, input_shardings)
    sharding = program_sharding(final, input_shardings, wanted, name, specs, paths)
    windows = []
    if sharding is None:
        final, windows = window_updates(final, numpy_leaves)
    stages[-1] = (stages[-1][0], final)
    return Traced(name, stages, inputs.tree, tuple(specs), paths, out_tree, device, outside, timings,
                  checks=trace.checks.all_checks(), loop_decisions=list(dict.fromkeys(trace.loop_decisions)),
                  sharding=sharding, returned_arguments=returned, windows=windows)


def _return_updated_arguments(graph: Graph, result_shardings: list, input_shardings: list):
    """The results (the first ``len(result_shardings)`` outputs) that are an argument's new value: the
    graph without an output for them (else XLA must copy the buffer to give it twice, once as the
    updated argument and once as the result), the map result position -> argument, the other results'
    shardings."""
    update_of = {graph.outputs[j].id: i for i, j in graph.input_updates}
    returned = {}
    for k, wanted in enumerate(result_shardings):
        i = update_of.get(graph.outputs[k].id)
        if i is not None and wanted in (None, input_shardings[i]):
            returned[k] = i
    if not returned:
        return graph, returned, result_shardings
    kept = [k for k in range(len(graph.outputs)) if k not in returned]
    position = {old: new for new, old in enumerate(kept)}
    graph = dataclasses.replace(graph, outputs=[graph.outputs[k] for k in kept],
                                input_updates=[(i, position[j]) for i, j in graph.input_updates])
    return graph, returned, [s for k, s in enumerate(result_shardings) if k not in returned]


def _run_traced(fn, name: str, trace: Trace, args_and_kwargs):
    """Run ``fn`` on tracers; its outputs as graph values, and their tree. (A function of its own so that
    arrays the function made die when it returns: see ``xlac.captures.is_temporary``.)"""
    args, kwargs = args_and_kwargs
    out_leaves, out_tree = pytree.flatten(fn(*args, **kwargs))
    outputs, of_dynamic_length = [], {}
    for k, leaf in enumerate(out_leaves):
        if isinstance(leaf, Tracer) and leaf._trace is not trace:
            raise TypeError(located(f"{name} returned a traced value from another trace"))
        if getattr(leaf, "is_dynamic_extent", False):     # x[mask], x[i:j]: its leading part after the call
            data, lengths, axes = leaf.as_result()
            outputs += [data.value, lengths.value]
            of_dynamic_length[k] = pytree.leading(axes)
        else:
            outputs.append(asarray(leaf).value)
    return outputs, pytree.with_subtrees(out_tree, of_dynamic_length)


@dataclass
class CacheInfo:
    """Counts for one compiled function: traces, XLA compiles, and calls served from the cache."""

    traces: int = 0
    compiles: int = 0
    hits: int = 0


class CompiledFunction:
    """A function compiled with XLA per argument signature; see :func:`compile`."""

    def __init__(self, fn, static_argnums=(), static_argnames=(), device=None, dump_dir=None, check_bounds=True,
                 convert=True, loops="auto", in_shardings=None, out_shardings=None, max_unrolled_ops=None):
        if loops not in ("auto", "roll", "unroll"):
            raise ValueError(f"xlac.compile: loops must be 'auto', 'roll' or 'unroll', got {loops!r}")
        if max_unrolled_ops is not None and (isinstance(max_unrolled_ops, bool) or
                                             not isinstance(max_unrolled_ops, int) or max_unrolled_ops < 0):
            raise ValueError(f"xlac.compile: max_unrolled_ops must be None or an int >= 0, got {max_unrolled_ops!r}")
        if not callable(fn):
            raise TypeError(f"xlac.compile expects a callable, got {type(fn).__name__}")
        # A callable object's attributes are its own state, not the wrapper's: copy only the names.
        functools.update_wrapper(self, fn, updated=() if _is_callable_object(fn) else ("__dict__",))
        self.__name__ = callable_name(fn)
        self._fn = fn
        self._dump_dir = dump_dir
        self._check_bounds, self._max_unrolled_ops = check_bounds, max_unrolled_ops
        self._convert, self._loops = convert, loops
        self._in_shardings, self._out_shardings = in_shardings, out_shardings
        self._last_signature = None       # of the latest compile, to name what changed at the next one
        self._device = runtime.get_device(device)
        self._static_argnums, self._static_argnames = _static_args(fn, static_argnums, static_argnames)
        self._cache: dict = {}
        self._by_call_key: dict = {}      # the fast path: runners by call_key (arrays, scalars, containers)
        # signature -> the Python int arguments whose values its trace needed (a shape, a range): those are
        # part of the key from then on (see ``_take_as_value``)
        self._as_values: dict = {}
        self._lock = threading.Lock()
        self._info = CacheInfo()
        self._hits = 0

    def cache_info(self) -> CacheInfo:
        """How many times this function was traced, compiled, and served from the cache."""
        return CacheInfo(self._info.traces, self._info.compiles, self._hits)

    def _split(self, args, kwargs, bound: bool = False, as_values=frozenset()):
        """(dynamic args, dynamic kwargs, static values) with static arguments taken out: those named
        static, a method's ``self`` (``bound``, compared by identity), objects that are not arrays
        (a module, a function, a class, a string: see ``is_static_object``) and ``as_values``."""
        statics = []
        dyn = []
        for i, a in enumerate(args):
            if bound and i == 0:
                statics.append((0, _ByIdentity(a)))
            elif i in self._static_argnums or i in as_values:
                statics.append((i, _hashable(a, f"static argument {i}")))
            elif is_static_object(a):
                statics.append((i, self._static_object(a, i)))
            else:
                dyn.append(a)
        dyn_kwargs = {}
        for k, v in kwargs.items():
            if k in self._static_argnames or k in as_values:
                statics.append((k, _hashable(v, f"static argument {k!r}")))
            elif is_static_object(v):
                statics.append((k, self._static_object(v, k)))
            else:
                dyn_kwargs[k] = v
        return tuple(dyn), dyn_kwargs, tuple(statics)

    def _static_object(self, value, key):
        """The cache key of an object taken as a static argument: itself by identity (a module, a function,
        a class), else by its hash and ``==``; TypeError naming the argument for an unhashable one."""
        if by_identity(value):
            return _ByIdentity(value)
        try:
            return _ByExactValue(value)
        except TypeError:
            names = _parameter_names(self._fn)
            name = names[key] if isinstance(key, int) and key < len(names) else key
            kind = type(value)
            raise TypeError(f"argument {name}: xlac takes a {kind.__module__}.{kind.__qualname__}, which is not an "
                            "array, as a static argument (part of the compile cache key), and static arguments "
                            "must be hashable; pass a hashable value (a tuple, a frozenset, an object with "
                            "__hash__), or arrays") from None

    def _merge(self, dyn_args, dyn_kwargs, statics):
        args = list(dyn_args)
        kwargs = dict(dyn_kwargs)
        for key, value in sorted((s for s in statics if isinstance(s[0], int)), key=lambda s: s[0]):
            args.insert(key, _unwrap(value))
        for key, value in statics:
            if isinstance(key, str):
                kwargs[key] = _unwrap(value)
        return args, kwargs

    def _signature(self, args, kwargs, bound: bool = False):
        """The cache key ``(tree, leaf keys, static values, autocast state)`` and the argument leaves; the
        Python ints an earlier trace of this signature needed as ints are static in it."""
        key, leaves, _ = self._signature_and_values(args, kwargs, bound)
        return key, leaves

    def _signature_and_values(self, args, kwargs, bound: bool):
        """:meth:`_signature`, and whether it holds the values of Python ints taken as values."""
        key, leaves = self._signature_with(args, kwargs, bound, frozenset())
        as_values = self._as_values.get(key)
        if as_values is None:
            return key, leaves, False
        return (*self._signature_with(args, kwargs, bound, as_values), True)

    def _signature_with(self, args, kwargs, bound: bool, as_values: frozenset):
        dyn_args, dyn_kwargs, statics = self._split(args, kwargs, bound, as_values)
        leaves, tree = pytree.flatten((dyn_args, dyn_kwargs))
        leaf_keys = tuple(map(leaf_key, leaves))
        if None in leaf_keys:      # an argument xlac does not take: leaf_spec says which and why
            for leaf, path in zip(leaves, self._paths(tree, statics)):
                leaf_spec(leaf, path)
        return (tree, leaf_keys, statics, autocast_state()), leaves

    def _static_names(self, statics) -> dict:
        """Static argument keys (positions or names) -> parameter names, e.g. {0: "self"}."""
        names = _parameter_names(self._fn)
        return {key: (names[key] if isinstance(key, int) and key < len(names) else str(key))
                for key, _ in statics}

    def _paths(self, tree, statics=()):
        arg_names = _parameter_names(self._fn)
        paths = []
        for path in pytree.leaf_paths(tree):
            # path looks like "[0][i]..." (positional) or "[1]['name']..." (keyword)
            if path.startswith("[0]["):
                i = int(path[4:path.index("]", 4)])
                rest = path[path.index("]", 4) + 1:]
                static_positions = self._static_argnums | {k for k, _ in statics if isinstance(k, int)}
                name = _positional_name(arg_names, i, static_positions)
            else:
                key_end = path.index("]", 4)
                name, rest = path[5:key_end - 1], path[key_end + 1:]
            paths.append(name + rest)
        return paths

    def _compiled_for(self, key, leaves, stale: Compiled | None = None,
                      shared: ArgumentsShareMemory | None = None) -> Compiled:
        """The executable for ``key``, made on a miss; ``stale`` is one whose outside arrays no longer fit.
        With ``shared``, the variant for arguments that share memory so (see ``xlac.shared_arguments``)."""
        cache_key = key if shared is None else (key, shared.sharing)
        compiled = self._cache.get(cache_key)
        if compiled is not None and compiled is not stale:
            self._hits += 1
            return compiled
        with self._lock:
            compiled = self._cache.get(cache_key)
            if compiled is None or compiled is stale:
                with CompileNotice(self.__name__, enabled=config.compile_notice) as notice:
                    traced = self._trace_for(key, leaves, shared)
                    notice.ops = sum(traced.ir("final").op_counts().values())
                    compiled = traced.lower().compile()
                self._info.compiles += 1
                self._record(key, compiled, stale)
                if shared is not None:
                    compiled = SharedVariant(compiled, shared.inputs)
                self._cache[cache_key] = compiled
            else:
                self._hits += 1
        return compiled

    def _record(self, key, compiled: Compiled, stale) -> None:
        """Log and dump this compile where configured (see ``xlac.inspection``)."""
        traced = compiled.lowered.traced
        names = self._static_names(key[2])
        signature = Signature.of(traced.in_paths, traced.in_specs,
                                 [(names[k], _unwrap(v)) for k, v in key[2]], key[3])
        cause = recompile_cause(self._last_signature, signature)
        if stale is not None:
            cause = "an array read from outside the arguments changed shape, dtype or place"
        cause = f"{cause}; persistent cache {compiled.executable.persistent_cache}"
        self._last_signature = signature
        record_compile(name=self.__name__, signature=str(signature), cause=cause, compiled=compiled,
                       timings=traced.timings, dump_dir=self._dump_dir)

    def _trace_for(self, key, leaves, shared: ArgumentsShareMemory | None = None) -> Traced:
        tree, _, statics, _ = key
        paths = self._paths(tree, statics)
        specs = tuple(leaf_spec(leaf, path) for leaf, path in zip(leaves, paths))
        mutabilities = [leaf_mutability(leaf) for leaf in leaves]
        in_shardings = self._leaf_shardings(tree, leaves)
        self._info.traces += 1

        def rebuild(tracers):
            dyn_args, dyn_kwargs = pytree.unflatten(tree, tracers)
            return self._merge(dyn_args, dyn_kwargs, statics)
        if shared is not None:      # the arguments are views of fewer inputs, taken inside the trace
            inputs = shared.variant_inputs(len(leaves), specs, mutabilities, rebuild, in_shardings)
            specs, paths, mutabilities, rebuild = inputs.specs, inputs.paths, inputs.mutabilities, inputs.rebuild
            in_shardings = [None] * len(specs)
        numpy_leaves = None if shared is not None else frozenset(
            i for i, leaf in enumerate(leaves) if type(leaf) is np.ndarray)
        inputs = TraceInputs(tree, specs, paths, rebuild, mutabilities, in_shardings, numpy_leaves)
        options = TraceOptions(_unwrap_all(statics), self._static_names(statics), self._check_bounds, self._convert,
                               self._loops, self._out_shardings, self._max_unrolled_ops)
        return trace_function(self._fn, self.__name__, inputs, self._device, options)

    def _leaf_shardings(self, tree, leaves) -> list:
        """Per argument leaf, its sharding: from ``in_shardings`` (a prefix of the positional arguments),
        else the sharding of a sharded array passed for it, else None."""
        args_tree, kwargs_tree = tree.children
        given = broadcast_prefix(self._in_shardings, args_tree, f"{self.__name__}: in_shardings")
        given += [None] * kwargs_tree.num_leaves
        return [as_sharding(s, f"{self.__name__}: in_shardings") if s is not None else sharding_of(leaf)
                for s, leaf in zip(given, leaves)]

    def __call__(self, *args, **kwargs):
        fast = call_key(args, kwargs, self._static_argnums, self._static_argnames)
        if fast is not None:
            fast_key, leaves = fast
            run = self._by_call_key.get(fast_key)
            if run is not None:
                self._hits += 1
                try:
                    return run(leaves)
                except OutsideArrayChanged:
                    del self._by_call_key[fast_key]
                except ArgumentsShareMemory as shared:
                    return self._call(args, kwargs, fast=((fast_key, shared.sharing), leaves), shared=shared)
        return self._call(args, kwargs, fast=fast)

    def _call(self, args, kwargs, bound: bool = False, fast=None, shared: ArgumentsShareMemory | None = None):
        """The call, traced and compiled on a miss. ``fast``: the call's ``call_key`` (key, leaves), under
        which the runner that served it is kept for the next call with that key."""
        trace = current_trace()
        if trace is not None:
            # Called while tracing (inside another compiled function or a transform): inline the function,
            # and watch the state it reaches too (see xlac.rebinding).
            owner = trace.outside_state()
            if owner is not None:
                owner.watch_function(self._fn, ((0, args[0]),) if bound else (), {0: "self"}, fixed=True)
            return (converted(self._fn) if self._convert and trace.convert else self._fn)(*args, **kwargs)
        try:
            return self._call_compiled(args, kwargs, bound, fast, shared)
        except ValueNeeded as needed:
            if not self._take_as_value(needed, args, kwargs, bound):
                raise
        return self._call_compiled(args, kwargs, bound, None, shared)

    def _take_as_value(self, needed: ValueNeeded, args, kwargs, bound: bool) -> bool:
        """Whether the argument whose value the trace ``needed`` is a Python int passed as an argument of its
        own (not inside a pytree): then it is static in this signature from now on (the function traces
        again per value, as with ``static_argnums``)."""
        key, _ = self._signature(args, kwargs, bound)
        paths = pytree.leaf_paths(key[0])
        if needed.leaf is None or needed.leaf >= len(paths):
            return False
        found = re.fullmatch(r"\[0\]\[(\d+)\]|\[1\]\['(.+)'\]", paths[needed.leaf])
        if found is None:
            return False
        static_positions = {k for k, _ in key[2] if isinstance(k, int)} | self._static_argnums
        argument = _original_position(int(found.group(1)), static_positions) if found.group(1) else found.group(2)
        value = args[argument] if isinstance(argument, int) else kwargs[argument]
        if type(value) is not int:
            return False
        base, _ = self._signature_with(args, kwargs, bound, frozenset())
        self._as_values[base] = self._as_values.get(base, frozenset()) | {argument}
        self._by_call_key.clear()          # a fast key does not hold the value
        return True

    def _call_compiled(self, args, kwargs, bound: bool, fast, shared):
        fast_key = None if fast is None else fast[0]
        if shared is not None and fast_key in self._by_call_key:
            try:
                return self._by_call_key[fast_key](fast[1])
            except OutsideArrayChanged:
                del self._by_call_key[fast_key]
        key, leaves, holds_values = self._signature_and_values(args, kwargs, bound)
        if holds_values:
            fast_key = None                  # a fast key does not hold the values
        statics = _unwrap_all(key[2])
        try:
            compiled, result = self._run_compiled(key, leaves, statics, shared)
        except ArgumentsShareMemory as found:    # run the variant for arguments sharing memory so
            if shared is not None:
                raise AssertionError(f"xlac internal error: a variant's arguments still share memory: {found}")
            if fast_key is not None:         # the program without sharing serves the next call first
                self._by_call_key[fast_key] = _fast_runner(self._cache[key], leaves, statics)
                fast_key = (fast_key, found.sharing)
            shared = found
            compiled, result = self._run_compiled(key, leaves, statics, shared)
        if fast_key is not None:
            self._by_call_key[fast_key] = _fast_runner(compiled, leaves, statics)
        return result

    def _run_compiled(self, key, leaves, statics, shared):
        """Run the executable for ``key`` (the variant for ``shared``); it and the result."""
        compiled = self._compiled_for(key, leaves, shared=shared)
        try:
            return compiled, compiled.run(leaves, statics)
        except OutsideArrayChanged:
            compiled = self._compiled_for(key, leaves, stale=compiled, shared=shared)
            return compiled, compiled.run(leaves, statics)

    def trace(self, *args, **kwargs) -> Traced:
        """The IR for these arguments (``str()`` prints it), with every pass stage."""
        key, leaves = self._signature(args, kwargs)
        try:
            return self._trace_for(key, leaves)
        except ValueNeeded as needed:
            if not self._take_as_value(needed, args, kwargs, False):
                raise
        key, leaves = self._signature(args, kwargs)
        return self._trace_for(key, leaves)

    def lower(self, *args, **kwargs) -> Lowered:
        """The StableHLO for these arguments: ``f.lower(x).as_text()``."""
        return self.trace(*args, **kwargs).lower()

    def __get__(self, instance, owner=None):
        """``@xlac.compile`` on a method: ``self`` is a static argument, told apart by identity, and the
        arrays the method reaches through it are implicit arguments (see ``xlac.captures``)."""
        return self if instance is None else BoundCompiledMethod(self, instance)

    def __repr__(self) -> str:
        return f"<xlac.compile of {self.__name__}>"


class BoundCompiledMethod:
    """An ``xlac.compile``'d method bound to an instance; ``trace`` and ``lower`` as on the function."""

    def __init__(self, function: CompiledFunction, instance):
        self.function, self.instance = function, instance

    def __call__(self, *args, **kwargs):
        return self.function._call((self.instance, *args), kwargs, bound=True)

    def trace(self, *args, **kwargs) -> Traced:
        key, leaves = self.function._signature((self.instance, *args), kwargs, bound=True)
        return self.function._trace_for(key, leaves)

    def lower(self, *args, **kwargs) -> Lowered:
        return self.trace(*args, **kwargs).lower()

    def cache_info(self) -> CacheInfo:
        return self.function.cache_info()


class _ByIdentity:
    """A static value compared by identity (a method's ``self``)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __hash__(self):
        return id(self.value)

    def __eq__(self, other):
        return type(other) is _ByIdentity and other.value is self.value

    def __repr__(self):
        return repr(self.value)


def _unwrap(value):
    return value.value if type(value) in (_ByIdentity, _ByExactValue) else value


def _unwrap_all(statics: tuple) -> tuple:
    return tuple((key, _unwrap(value)) for key, value in statics)


def _fast_runner(compiled, leaves, statics):
    """What the fast path calls with the leaves of a call keyed as these are (``call_key``, which holds the
    static arguments' values ``statics``): a program reading nothing outside its arguments runs directly,
    with transfers made for leaves of these kinds."""
    plain = compiled.captures is None and compiled.rebound is None and not compiled.read_while_tracing
    if plain:
        return compiled.runner_for(leaves)
    return functools.partial(compiled.run, statics=statics) if statics else compiled.run


def _is_callable_object(fn) -> bool:
    return not isinstance(fn, (types.FunctionType, types.MethodType, types.BuiltinFunctionType))


class _ByExactValue:
    """A static argument in a cache key, equal to another only with the same type and bits (``exact_key``):
    ``2`` and ``2.0``, ``0.0`` and ``-0.0`` compile differently, as NumPy computes them differently."""

    __slots__ = ("value", "key")

    def __init__(self, value):
        hash(value)                          # static arguments must be hashable, as in jax.jit
        self.value, self.key = value, exact_key(value)

    def __eq__(self, other):
        return type(other) is _ByExactValue and self.key == other.key

    def __hash__(self):
        return hash(self.key)

    def __repr__(self):
        return repr(self.value)


def _hashable(value, what: str):
    try:
        return _ByExactValue(value)
    except TypeError:
        raise TypeError(f"{what} must be hashable to be part of the compile cache key; "
                        f"got {type(value).__name__}") from None


def _parameter_names(fn) -> list[str]:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _positional_name(names, dyn_index, static_argnums) -> str:
    i = _original_position(dyn_index, static_argnums)
    return names[i] if i < len(names) else f"args[{i}]"


def _original_position(dyn_index: int, static_argnums) -> int:
    """The position among all the positional arguments of the ``dyn_index``-th one not static."""
    i, seen = 0, -1
    while True:
        if i not in static_argnums:
            seen += 1
            if seen == dyn_index:
                return i
        i += 1


def _static_args(fn, static_argnums, static_argnames):
    nums = {static_argnums} if isinstance(static_argnums, int) else set(static_argnums)
    names = {static_argnames} if isinstance(static_argnames, str) else set(static_argnames)
    params = _parameter_names(fn)
    for n in list(nums):
        if n < 0:
            raise ValueError(f"static_argnums must be non-negative, got {n}")
        if n < len(params):
            names.add(params[n])
    for name in list(names):
        if name in params:
            nums.add(params.index(name))
    return frozenset(nums), frozenset(names)


def compile(fn=None, *, static_argnums=(), static_argnames=(), device=None, dump_dir=None, check_bounds=True,
            convert=True, loops="auto", in_shardings=None, out_shardings=None, max_unrolled_ops=None):
    """Compile a NumPy-style function with XLA; usable bare (``@xlac.compile``) or with arguments.

    Each new signature (pytree structure, shapes, dtypes, static values, autocast state) is
    traced once and compiled once; later calls with it run the cached executable. A Python ``int`` argument
    that the trace needs as an int (a shape: ``np.zeros((n, 2))``) becomes static for that signature: the
    function is traced again with its value, and each new value compiles again, as with ``static_argnums``.
    ``dump_dir`` writes every stage of each compile there (see ``xlac.inspection``).

    A traced index out of bounds raises ``IndexError`` after the call, as NumPy raises it (the program
    computes a status next to its results; writes after the failing index are not made), and an
    ``assert`` whose test is traced raises ``AssertionError``. Code that Python would not have evaluated
    (the right side of ``a and b`` where ``a`` is false) checks nothing. With ``check_bounds=False``
    nothing is checked, asserts included: a traced index out of bounds is clamped into the axis
    for reads and for writes with a single traced index, as XLA does, and an out-of-bounds element of
    an index array drops its write.

    The function's source is converted before it is traced (``convert=False``: traced as written), and
    so is the source of the functions and methods of the user's it calls: ``if``/``elif``/``else``,
    conditional expressions and ``and``/``or``/``not`` on traced values become conditionals, ``max``/``min``
    of traced values and NumPy arrays the function allocates and fills become xlac's (see
    ``xlac.convert``). Python side effects in the branches of an ``if`` on a traced value (``print``,
    appending to a list) happen once per trace, for both branches. ``loops``: how a converted ``for``
    whose trip count is known when tracing (over ``range(n)``, a traced array's rows, ``enumerate``/``zip``
    of traced arrays) runs: ``"auto"`` rolls it into one XLA loop when its trip count times its body's ops
    reaches 256 and its body can be traced with a traced index (else it unrolls, with a warning when long
    and unable to roll; a loop that would roll and whose iterations are independent runs at once, batched,
    as ``xlac.config.vectorize_loops`` says), ``"roll"`` rolls every such loop (an error says why one cannot),
    ``"unroll"`` none. ``Traced.loop_decisions`` lists what was decided for each loop, and why.
    ``max_unrolled_ops``: a loop that unrolls stops the trace early, with ``UnrolledTooLargeError`` naming its
    line, why it could not roll and the ops the program would reach (those so far, plus the iterations left
    at the ops per iteration traced so far; an inner loop that unrolls counts in its outer loop's
    iterations), when that is past this many (``None``: 5,000, about 5 s of compiling); raise it to go on.

    ``in_shardings`` (a sharding, or a pytree prefix of the positional arguments' with None where the
    argument says) and ``out_shardings`` (a prefix of the results') split the program over a mesh of
    devices, as ``jax.jit``'s: see ``xlac.sharding``. A sharded ``xlac.Array`` argument's sharding is used
    when none is given; the results are sharded ``xlac.Array``s.

    >>> import numpy as np, xlac
    >>> @xlac.compile(static_argnames="n")
    ... def power_sum(x, n):
    ...     return sum(x ** k for k in range(n))
    >>> np.asarray(power_sum(np.array([2.0]), n=3))
    array([7.])
    """
    if fn is None:
        return functools.partial(compile, static_argnums=static_argnums, static_argnames=static_argnames,
                                 device=device, dump_dir=dump_dir, check_bounds=check_bounds, convert=convert,
                                 loops=loops, in_shardings=in_shardings, out_shardings=out_shardings,
                                 max_unrolled_ops=max_unrolled_ops)
    return CompiledFunction(fn, static_argnums, static_argnames, device, dump_dir, check_bounds, convert, loops,
                            in_shardings, out_shardings, max_unrolled_ops)
