"""The gradient of each workload computed by pullback and by its peers.

autograd and JAX run the workload's own source, executed afresh with `np` bound
to `autograd.numpy` or `jax.numpy` and `math` bound to a shim of that library;
PyTorch runs the hand translation in `torch_workloads.py`, and "hand-written" a
person's NumPy adjoint of the same computation (`handwritten/`). Each peer is a
`Peer`: `prepare` converts the NumPy arguments once, `compile_seconds` (JAX
jit only) compiles the gradient, `gradient` computes it (and waits for it), and
`to_numpy` turns its result into a tuple of NumPy values for the check.
"""

import dataclasses
import importlib
import math
import pathlib
import time
import types

import numpy

WORKLOADS = pathlib.Path(__file__).parent / "workloads"
JIT_MAX_OPERATIONS = 100_000


def load_workload(name, np_module=numpy, math_module=math):
    """A fresh copy of workload `name` (new code objects), with `np` and `math` rebound."""
    path = WORKLOADS / f"{name}.py"
    module = types.ModuleType(f"workloads.{name}")
    module.__file__ = str(path)
    exec(compile(path.read_text(), str(path), "exec"), module.__dict__)
    module.np = np_module
    module.math = math_module
    return module


def math_shim(library):
    """The `math` functions the workloads call, taken from `library` (a NumPy)."""
    return types.SimpleNamespace(sin=library.sin, cos=library.cos, exp=library.exp,
                                 log=library.log, sqrt=library.sqrt, tanh=library.tanh,
                                 pi=math.pi)


@dataclasses.dataclass
class Peer:
    """One way of computing a workload's gradient.

    Attributes:
      prepare: the NumPy arguments -> the arguments `gradient` takes.
      gradient: the prepared arguments -> the gradient, computed to completion.
      to_numpy: that gradient -> a tuple of NumPy values, in `WRT` order.
      compile_seconds: for a compiled peer, a function of the prepared
        arguments that compiles the gradient and returns how long it took.
    """

    prepare: object
    gradient: object
    to_numpy: object
    compile_seconds: object = None


def as_tuple(gradient):
    """A gradient as a tuple of NumPy values (floats stay floats)."""
    return tuple(numpy.asarray(g) if not isinstance(g, float) else g for g in gradient)


def pullback_peer(name):
    """pullback's gradient of a fresh copy of workload `name`."""
    import pullback

    module = load_workload(name)
    return Peer(lambda args: args, pullback.grad(module.objective, argnums=module.WRT), tuple)


def handwritten_peer(name):
    """A person's hand-written NumPy adjoint of workload `name` (`handwritten/`)."""
    module = importlib.import_module(f"handwritten.{name}")
    return Peer(lambda args: args, module.gradient, as_tuple)


def autograd_peer(name):
    """autograd's gradient of workload `name` run on `autograd.numpy`."""
    import autograd
    import autograd.numpy as anp

    module = load_workload(name, anp, math_shim(anp))
    return Peer(lambda args: args, autograd.grad(module.objective, argnum=module.WRT), as_tuple)


def import_jax():
    """`jax` and `jax.numpy`, with 64-bit floats enabled."""
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    return jax, jnp


def jax_arguments(args):
    """NumPy arrays as JAX arrays (once, outside the timings); other values unchanged."""
    _, jnp = import_jax()
    return tuple(jnp.asarray(a) if isinstance(a, numpy.ndarray) else a for a in args)


def jax_to_numpy(gradient):
    """A JAX gradient tuple as NumPy values."""
    return tuple(numpy.asarray(g) for g in gradient)


def jax_eager_peer(name):
    """`jax.grad` of workload `name` on `jax.numpy`, without jit: operation by operation."""
    jax, jnp = import_jax()
    module = load_workload(name, jnp, math_shim(jnp))
    grad = jax.grad(module.objective, argnums=module.WRT)
    return Peer(jax_arguments, lambda *args: jax.block_until_ready(grad(*args)), jax_to_numpy)


class ProgramTooLarge(Exception):
    """A jit program over the size limit, not compiled: XLA would take too long."""

    def __init__(self, operations, seconds):
        super().__init__(f"{operations:,} StableHLO operations after tracing and lowering "
                         f"({seconds:.0f} s); over the limit, not compiled")
        self.operations = operations
        self.seconds = seconds


def jax_jit_peer(name, max_operations=JIT_MAX_OPERATIONS):
    """`jax.jit(jax.grad(...))` of workload `name`, compiled ahead of its first call.

    The arrays and the differentiated arguments are traced; the others (step
    counts, trees, Python constants) are closed over, so Python control flow
    on them is unrolled into the program. A program of more than
    `max_operations` operations is not compiled (`ProgramTooLarge`).
    """
    jax, jnp = import_jax()
    module = load_workload(name, jnp, math_shim(jnp))
    state = {}

    def prepare(args):
        args = jax_arguments(args)
        traced = [i for i, a in enumerate(args) if i in module.WRT or hasattr(a, "shape")]

        def partial(*values):
            full = list(args)
            for i, value in zip(traced, values):
                full[i] = value
            return module.objective(*full)

        argnums = tuple(traced.index(i) for i in module.WRT)
        state["jit"] = jax.jit(jax.grad(partial, argnums=argnums))
        return tuple(args[i] for i in traced)

    def compile_seconds(values):
        start = time.perf_counter()
        lowered = state["jit"].lower(*values)
        operations = lowered.as_text().count(" = ")
        if operations > max_operations:
            raise ProgramTooLarge(operations, time.perf_counter() - start)
        state["run"] = lowered.compile()
        return time.perf_counter() - start

    def gradient(*values):
        return jax.block_until_ready(state["run"](*values))

    return Peer(prepare, gradient, jax_to_numpy, compile_seconds)


def torch_peer(name):
    """PyTorch's gradient of its own translation of workload `name` (float64, eager)."""
    import torch
    import torch_workloads

    objective = getattr(torch_workloads, name)
    wrt = load_workload(name).WRT

    def gradient(*args):
        leaves = [args[i] for i in wrt]
        return torch.autograd.grad(objective(*args), leaves)

    return Peer(lambda args: torch_workloads.arguments(args, wrt), gradient,
                lambda g: tuple(t.numpy() if t.dim() else float(t) for t in g))


PEERS = {
    "hand-written": handwritten_peer,
    "autograd": autograd_peer,
    "JAX eager": jax_eager_peer,
    "JAX jit": jax_jit_peer,
    "PyTorch": torch_peer,
}
