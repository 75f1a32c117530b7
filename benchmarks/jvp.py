"""Time pullback's forward mode against the NumPy primal, JAX and PyTorch on CPU.

    python benchmarks/jvp.py [--quick] [--only NAME[,NAME...]] [--output PATH]

For each workload of `benchmarks/workloads` and each size, in a process per library
(as `run.py` does): the Jacobian-vector product of the objective in a random
direction of the arguments its gradient is taken in (`WRT`), by `pullback.jvp`,
`jax.jvp` (eager and jit) and `torch.func.jvp`, each checked against pullback's
before it is timed; then the Hessian-vector product in the same direction three
ways: reverse over reverse (`vjp` of `grad`), forward over reverse (`jvp` of
`grad`, what `pullback.hvp` runs) and JAX's (`jvp` of `grad`, jit). The tables go
into docs/benchmarks.md between the markers of their section.
"""

import os

os.environ.update({
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
})

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import json  # noqa: E402
import pathlib  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import peers  # noqa: E402
import run  # noqa: E402
from workloads import NAMES  # noqa: E402

import pullback  # noqa: E402
from pullback.testing import of_arguments  # noqa: E402

BEGIN = "<!-- begin: written by benchmarks/jvp.py; edits between these markers are lost -->"
END = "<!-- end: written by benchmarks/jvp.py -->"
CHILD_SECONDS = 240
LABELS = ("pullback jvp", "JAX jvp eager", "JAX jvp jit", "PyTorch jvp",
          "pullback hvp, reverse over reverse", "pullback hvp, forward over reverse",
          "JAX hvp jit")


@dataclasses.dataclass
class Measured:
    """One library's time on one case (None if it did not run), and why not."""

    seconds: float = None
    compile_seconds: float = None
    mismatch: str = ""
    note: str = ""


def direction(args, wrt, rng):
    """A random tangent for the arguments at `wrt` (None for the others)."""
    return tuple(rng.standard_normal(np.shape(a)) if i in wrt and np.ndim(a) else
                 float(rng.standard_normal()) if i in wrt else None
                 for i, a in enumerate(args))


def pullback_jvp(module, args, tangents):
    return lambda: pullback.jvp(module.objective, args, tangents)[1]


def pullback_hvp(module, args, tangents, forward):
    """The HVP in the direction of `tangents`, as a tuple by WRT argument."""
    wrt = module.WRT
    f = of_arguments(module.objective, args, wrt)
    grad = pullback.grad(f, argnums=tuple(range(len(wrt))))
    point = tuple(args[i] for i in wrt)
    dots = tuple(tangents[i] for i in wrt)
    if forward:
        return lambda: pullback.jvp(grad, point, dots)[1]
    return lambda: pullback.vjp(grad, *point)[1](dots)


def jax_case(module_name, args, tangents, wrt, jit, hvp=False):
    """A function computing JAX's jvp (or, with `hvp`, jvp of grad) of the objective, and
    the seconds its compilation took (for jit)."""
    jax, jnp = peers.import_jax()
    module = peers.load_workload(module_name, jnp, peers.math_shim(jnp))
    jargs = peers.jax_arguments(args)
    f = of_arguments(module.objective, jargs, wrt)
    if hvp:
        f = jax.grad(f, argnums=tuple(range(len(wrt))))
    point = tuple(jargs[i] for i in wrt)
    dots = tuple(jnp.asarray(tangents[i]) for i in wrt)

    def product(p, d):
        return jax.jvp(f, p, d)[1]

    if not jit:
        return (lambda: jax.block_until_ready(product(point, dots))), None
    start = time.perf_counter()
    lowered = jax.jit(product).lower(point, dots)
    if lowered.as_text().count(" = ") > peers.JIT_MAX_OPERATIONS:
        raise peers.ProgramTooLarge(lowered.as_text().count(" = "), time.perf_counter() - start)
    compiled = lowered.compile()
    seconds = time.perf_counter() - start
    return (lambda: jax.block_until_ready(compiled(point, dots))), seconds


def torch_case(module_name, args, tangents, wrt):
    """`torch.func.jvp` of the PyTorch translation of the objective."""
    import torch
    import torch_workloads

    run.single_threaded_torch()
    objective = getattr(torch_workloads, module_name)
    full = list(torch_workloads.arguments(args, ()))
    point = tuple(full[i] for i in wrt)
    dots = tuple(torch.as_tensor(np.asarray(tangents[i], dtype=float)) for i in wrt)

    def of_wrt(*values):
        for i, value in zip(wrt, values):
            full[i] = value
        return objective(*full)

    return lambda: torch.func.jvp(of_wrt, point, dots)[1]


def flat(value):
    """A result as one NumPy vector, to compare."""
    if isinstance(value, (tuple, list)):
        return np.concatenate([flat(v) for v in value]) if value else np.zeros(0)
    if hasattr(value, "detach"):
        value = value.detach().numpy()
    return np.ravel(np.asarray(value, dtype=float))


def measure(name, size, label):
    """In a child process: check and time `label` on one case; print its `Measured`, and
    for pullback's jvp the primal's time, as JSON."""
    run.keep_freed_memory()
    module = peers.load_workload(name)
    args = module.inputs(module.SIZES[size], np.random.default_rng(0))
    tangents = direction(args, module.WRT, np.random.default_rng(1))
    reference = pullback_jvp(module, args, tangents)()
    result, extra = Measured(), {}
    try:
        compute, result.compile_seconds = build(label, name, module, args, tangents)
        value = compute()
        want = reference if "hvp" not in label else pullback_hvp(module, args, tangents,
                                                                  True)()
        result.mismatch = run.mismatch((flat(value),), (flat(want),))
        result.seconds = run.median_seconds(compute)
    except Exception as error:  # noqa: BLE001 (a library's failure is a result to report)
        result.note = f"failed: {run.first_line(error)}"
    if label == "pullback jvp":
        module.objective(*args)
        extra["primal"] = run.median_seconds(lambda: module.objective(*args))
    print(json.dumps({**dataclasses.asdict(result), **extra}))


def build(label, name, module, args, tangents):
    """The computation `label` names, and its compile time (or None)."""
    wrt = module.WRT
    if label == "pullback jvp":
        return pullback_jvp(module, args, tangents), None
    if label.startswith("pullback hvp"):
        return pullback_hvp(module, args, tangents, "forward" in label), None
    if label == "PyTorch jvp":
        return torch_case(name, args, tangents, wrt), None
    return jax_case(name, args, tangents, wrt, jit="jit" in label, hvp="hvp" in label)


def in_child(name, size, label):
    """What `measure` prints for one library on one case, run in a new process stopped
    after `CHILD_SECONDS` (XLA compiles an unrolled loop's HVP for tens of minutes)."""
    command = [sys.executable, __file__, "--measure", name, size, label]
    try:
        result = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False,
                                timeout=CHILD_SECONDS)
    except subprocess.TimeoutExpired:
        return {"note": f"stopped after {CHILD_SECONDS / 60:.0f} minutes (compiling)"}
    try:
        return json.loads(result.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"note": "failed: the measuring process stopped"}


def table(rows, notes):
    header = ["workload", "NumPy primal"]
    for label in LABELS:
        header += [label, "ratio"]
    lines = ["| " + " | ".join(header) + " |", "|---" + "|---:" * (len(header) - 1) + "|"]
    for name, primal, measured in rows:
        row = [name, run.format_seconds(primal)]
        for label in LABELS:
            m = measured[label]
            text = run.format_seconds(m.get("seconds"))
            remark = f"MISMATCH: {m['mismatch']}" if m.get("mismatch") else m.get("note", "")
            if m.get("compile_seconds"):
                remark = (remark + "; " if remark else "") + (
                    f"compile {run.format_seconds(m['compile_seconds'])}")
            if remark:
                notes.append(f"{name}, {label}: {remark}")
                text += f" [{len(notes)}]"
            ratio = (f"{m['seconds'] / primal:.1f}" if m.get("seconds") and primal else "—")
            row += [text, ratio]
        lines.append("| " + " | ".join(row) + " |")
    return lines


def report(by_size, command, elapsed):
    lines = [BEGIN, "", f"Produced by `{command}` on {time.strftime('%Y-%m-%d')} in "
             f"{elapsed / 60:.1f} minutes, on the machine and libraries of the section above "
             f"(pullback at {run.pullback_revision()}). Each time is the median of repeated "
             "calls after a first one; each ratio is over the NumPy primal. Every result "
             "is checked against pullback's jvp (the HVPs against forward over reverse) "
             "before it is timed; footnotes give JAX's compile times and any failure."]
    notes = []
    for size, rows in by_size.items():
        lines += ["", f"#### {size.capitalize()} size", ""] + table(rows, notes)
    if notes:
        lines += [""] + [f"[{i}] {note}  " for i, note in enumerate(notes, 1)]
    lines += ["", END]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    parser.add_argument("--only", help="comma-separated workloads (default: all)")
    parser.add_argument("--output", default=str(run.DOC),
                        help="where to write the report; '-' for stdout only")
    parser.add_argument("--measure", nargs=3, help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.measure:
        measure(*options.measure)
        return
    start = time.perf_counter()
    by_size = {}
    for size in run.SIZES[:1] if options.quick else run.SIZES:
        rows = []
        for name in options.only.split(",") if options.only else NAMES:
            measured = {label: in_child(name, size, label) for label in LABELS}
            primal = measured["pullback jvp"].get("primal")
            run.log(f"{name} {size}: " + ", ".join(
                f"{label} {run.format_seconds(m.get('seconds'))}" for label, m in
                measured.items()))
            rows.append((name, primal, measured))
        by_size[size] = rows
    command = "python benchmarks/jvp.py" + (" --quick" if options.quick else "") + (
        f" --only {options.only}" if options.only else "")
    section = report(by_size, command, time.perf_counter() - start)
    if options.output == "-":
        print(section)
    else:
        run.write_report(section, pathlib.Path(options.output), (BEGIN, END), "Forward mode")


if __name__ == "__main__":
    main()
