"""Time pullback's gradients against autograd, JAX (eager and jit) and PyTorch on CPU.

    python benchmarks/run.py [--quick] [--only NAME[,NAME...]] [--output PATH]
                             [--no-peers]

For each workload of `benchmarks/workloads` and each size, it measures each
library in a process of its own (so that none pays for what another left in
memory: JAX's traces of unrolled programs take gigabytes): pullback's first
gradient and the NumPy primal and pullback's gradient, then, for each peer, its
gradient checked against pullback's and timed (medians of repeats, after a
first call), all single-threaded and with glibc keeping freed memory
(`keep_freed_memory`). pullback is timed once more with the allocator's
defaults. Then each further formulation of the workload (`<workload>_<style>`)
is timed the same way, pullback and its own primal, and every gradient's peak
memory is measured against its primal's (`tracemalloc`, which NumPy reports its
arrays to). The tables go into docs/benchmarks.md between the markers of its
section.
"""

import os

os.environ.update({
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
})

import argparse  # noqa: E402
import ctypes  # noqa: E402
import ctypes.util  # noqa: E402
import dataclasses  # noqa: E402
import importlib.metadata  # noqa: E402
import json  # noqa: E402
import pathlib  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402
import peers  # noqa: E402
from workloads import FORMULATIONS, NAMES  # noqa: E402

import pullback  # noqa: E402

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
BEGIN = "<!-- begin: written by benchmarks/run.py; edits between these markers are lost -->"
END = "<!-- end: written by benchmarks/run.py -->"
SIZES = ("small", "medium")
BUDGET_SECONDS = 1.0
LONG_SECONDS = 20.0
MIN_REPEATS = 3
MAX_REPEATS = 200
FIRST_GRADIENT_COPIES = 3
RTOL = 1e-6
PEER_NAMES = ("hand-written", "autograd", "JAX eager", "JAX jit", "PyTorch")
LIBRARIES = ("numpy", "pullback", "autograd", "jax", "jaxlib", "torch")


@dataclasses.dataclass
class Timing:
    """How one peer fared on one case: its gradient's median time, or why there is none.

    Attributes:
      seconds: the median time of one gradient (None if it did not run).
      compile_seconds: for JAX jit, trace + lower + compile.
      mismatch: how its gradient differs from pullback's ("" if it agrees).
      note: why it did not run.
    """

    seconds: float = None
    compile_seconds: float = None
    mismatch: str = ""
    note: str = ""


@dataclasses.dataclass
class Case:
    """The measurements of one workload at one size."""

    name: str
    size: str
    primal: float = None
    ratio: float = None  # pullback's gradient over the primal, timed in turn
    first_gradient: float = None
    timings: dict = dataclasses.field(default_factory=dict)
    default_allocator: tuple = (None, None)  # pullback's seconds and ratio in a child
    memory: tuple = (None, None, None, None)  # bytes: primal's peak, held for the pullback,
    #                                           gradient's peak, the gradient's own arrays


def log(message):
    """Progress, on stderr."""
    print(message, file=sys.stderr, flush=True)


def seconds_of(run):
    """The wall time of one call of `run`."""
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def repeated(sample, cost=lambda found: found):
    """The results of `sample()` (whose run was already called once), taken until
    `BUDGET_SECONDS` are spent (the `cost` of each result, in seconds), at least
    `MIN_REPEATS` times unless that would pass `LONG_SECONDS`."""
    found = [sample()]
    spent = cost(found[0])
    while len(found) < MAX_REPEATS and (
            spent < BUDGET_SECONDS
            or len(found) < MIN_REPEATS and spent * (1 + 1 / len(found)) < LONG_SECONDS):
        found.append(sample())
        spent += cost(found[-1])
    return found


def median_seconds(run):
    """The median time of `run()`, already called once (see `repeated`)."""
    return statistics.median(repeated(lambda: seconds_of(run)))


def paired_seconds(primal, gradient):
    """The median times of `primal()` and `gradient()`, both already called once, and
    the median of their ratios: they are called in turn, each pair's ratio taken, so
    that the ratio holds while the machine's speed drifts (timed one after the other,
    a primal measured in a slow second and a gradient in a fast one give a ratio off
    by half). Each gets the budget of `median_seconds`."""
    pairs = repeated(lambda: (seconds_of(primal), seconds_of(gradient)),
                     cost=lambda pair: sum(pair) / 2)
    return (statistics.median(p for p, _ in pairs), statistics.median(g for _, g in pairs),
            statistics.median(g / p for p, g in pairs))


def mismatch(gradient, reference):
    """What differs between `gradient` and `reference`, or "" if they agree: np.allclose
    with rtol 1e-6 and an absolute tolerance of 1e-8 times the argument's largest component."""
    problems = []
    for position, (got, want) in enumerate(zip(gradient, reference)):
        got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
        atol = 1e-8 * max(1.0, float(np.max(np.abs(want), initial=0.0)))
        if got.shape != want.shape:
            problems.append(f"argument {position}: shape {got.shape}, not {want.shape}")
        elif not np.allclose(got, want, rtol=RTOL, atol=atol):
            error = np.max(np.abs(got - want) / (np.abs(want) + atol))
            problems.append(f"argument {position}: relative error {error:.1e}")
    return "; ".join(problems)


def first_line(error):
    """An exception as one short line."""
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"[:200]


def pullback_reference(args, name, copies=1):
    """Differentiate `copies` fresh copies of workload `name`; return the median time
    to first gradient and the last copy's gradient."""
    firsts = []
    for _ in range(copies):
        peer = peers.pullback_peer(name)
        start = time.perf_counter()
        result = peer.gradient(*args)
        firsts.append(time.perf_counter() - start)
    return statistics.median(firsts), peer, peer.to_numpy(result)


def check_peer(label, case, args, reference):
    """Build peer `label`, compile it if it compiles, and check its first gradient.

    Returns the peer's timing record and a function running its gradient (None
    if it failed).
    """
    timing = Timing()
    try:
        peer = peers.PEERS[label](case.name)
        prepared = peer.prepare(args)
        if peer.compile_seconds is not None:
            timing.compile_seconds = peer.compile_seconds(prepared)
        gradient = peer.to_numpy(peer.gradient(*prepared))
    except peers.ProgramTooLarge as error:
        timing.note = f"not compiled: {error}"
        log(f"  {label}: {timing.note}")
        return timing, None
    except Exception as error:  # noqa: BLE001 (a peer's failure is a result to report)
        timing.note = f"failed: {first_line(error)}"
        log(f"  {label}: {timing.note}")
        return timing, None
    timing.mismatch = mismatch(gradient, reference) if reference is not None else ""
    if timing.mismatch:
        log(f"  !!! GRADIENT MISMATCH: {label} on {case.name} {case.size}: {timing.mismatch}")
    else:
        log(f"  {label}: gradient agrees with pullback's")
    return timing, lambda: peer.gradient(*prepared)


def run_case(name, size, peer_names=PEER_NAMES):
    """Check, then time, pullback and `peer_names` on workload (or formulation) `name` at
    `size`, each in a child process."""
    case = Case(name, size)
    log(f"{name} {size}")
    measured = in_child(name, size, "pullback")
    case.primal, case.first_gradient = measured.get("primal"), measured.get("first_gradient")
    case.ratio = measured.get("ratio")
    case.memory = tuple(measured.get(key)
                        for key in ("primal_peak", "held", "gradient_peak", "result"))
    case.timings["pullback"] = Timing(seconds=measured.get("seconds"),
                                      note=measured.get("note", ""))
    if case.first_gradient is not None:
        log(f"  pullback first gradient {format_seconds(case.first_gradient)}")
    for label in ("pullback", *peer_names):
        if label != "pullback":
            case.timings[label] = Timing(**in_child(name, size, label))
        timing = case.timings[label]
        log(f"  {label} {format_seconds(timing.seconds)} {timing.note}".rstrip())
    if not peer_names:
        return case
    defaults = in_child(name, size, "pullback", keep=False)
    case.default_allocator = (defaults.get("seconds"), defaults.get("ratio"))
    log(f"  pullback, allocator defaults {format_seconds(case.default_allocator[0])}")
    return case


def in_child(name, size, label, keep=True):
    """What `measure` prints for one library on one case, run in a new process (with
    the allocator's defaults unless `keep`)."""
    command = [sys.executable, __file__, "--measure", name, size, label]
    environment = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    if not keep:
        command.append("--default-allocator")
    result = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False,
                            env=environment)
    try:
        return json.loads(result.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        log(f"  !!! the child measuring {label} failed (exit code {result.returncode})")
        return {"note": "failed: the measuring process stopped"}


def measure(name, size, label, keep):
    """In a child process: check and time `label` on one case; print the results as JSON
    (for pullback: its first gradient, the primal's and its gradient's times; for a
    peer: its `Timing`)."""
    if keep:
        keep_freed_memory()
    if label == "PyTorch":
        single_threaded_torch()
    module = peers.load_workload(name)
    args = module.inputs(module.SIZES[size], np.random.default_rng(0))
    try:
        first, peer, reference = pullback_reference(
            args, name, FIRST_GRADIENT_COPIES if label == "pullback" else 1)
    except Exception as error:  # noqa: BLE001 (pullback's failure is a result to report)
        if label == "pullback":
            log(f"  !!! PULLBACK FAILED on {name} {size}: {first_line(error)}")
            print(json.dumps({"note": f"failed: {first_line(error)}"}))
            return
        reference = None
    if label == "pullback":
        module.objective(*args)
        primal, seconds, ratio = paired_seconds(lambda: module.objective(*args),
                                                lambda: peer.gradient(*args))
        results = {"first_gradient": first, "primal": primal, "seconds": seconds,
                   "ratio": ratio,
                   "primal_peak": peak_bytes(lambda: module.objective(*args)),
                   "held": held_bytes(module, args),
                   "gradient_peak": peak_bytes(lambda: peer.gradient(*args)),
                   "result": array_bytes(reference)}
    else:
        timing, run = check_peer(label, Case(name, size), args, reference)
        if run is not None:
            timing.seconds = median_seconds(run)
        results = dataclasses.asdict(timing)
    print(json.dumps(results))


def peak_bytes(run):
    """The most memory `run()` (already called once) holds at any moment beyond what was
    allocated before it, as `tracemalloc` counts it (Python objects and NumPy's arrays)."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        run()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def array_bytes(value):
    """The bytes of the NumPy arrays in `value` (in its tuples, lists, dicts and fields)."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, dict):
        return array_bytes(list(value.values()))
    if isinstance(value, (list, tuple)):
        return sum(map(array_bytes, value))
    return array_bytes(vars(value)) if hasattr(value, "__dict__") else 0


def held_bytes(module, args):
    """The memory the forward pass leaves held for the pullback: allocated by `vjp` of the
    objective in its `WRT` arguments and not freed when it returns the pullback."""
    def objective(*chosen):
        return module.objective(*[chosen[module.WRT.index(i)] if i in module.WRT else a
                                  for i, a in enumerate(args)])

    chosen = [args[i] for i in module.WRT]
    pullback.vjp(objective, *chosen)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = pullback.vjp(objective, *chosen)
        held = tracemalloc.get_traced_memory()[0] - before
        del kept
        return held
    finally:
        tracemalloc.stop()


def keep_freed_memory():
    """Tell glibc's malloc to keep the memory programs free for reuse, for every library
    and the primal alike; True if it could.

    By default it returns the top of the heap to the system and unmaps large
    blocks when they are freed, so a gradient that holds more arrays than the
    primal takes page faults on the same memory at every call: 1-3 µs each on
    this virtual machine, and far more, and unevenly, when it is busy. What that
    measures is the machine's page faults, not the libraries.
    """
    path = ctypes.util.find_library("c")
    mallopt = getattr(ctypes.CDLL(path), "mallopt", None) if path else None
    if mallopt is None:
        return False
    trim_threshold, mmap_threshold = -1, -3
    return bool(mallopt(trim_threshold, 1 << 30) and mallopt(mmap_threshold, 32 << 20))


def format_seconds(seconds):
    """A duration in µs, ms or s, to three significant figures."""
    if seconds is None:
        return "—"
    unit, scale = next((u, k) for u, k in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6))
                       if seconds >= k or u == "µs")
    value = seconds / scale
    return f"{value:.3g} {unit}" if value < 1000 else f"{value:,.0f} {unit}"


def cell(case, label, notes):
    """The time and ratio cells of one peer; its note or mismatch becomes a footnote."""
    timing = case.timings.get(label, Timing())
    text = format_seconds(timing.seconds)
    ratio = (format_ratio(case.ratio) if label == "pullback"
             else ratio_of(timing.seconds, case.primal))
    remark = f"MISMATCH: {timing.mismatch}" if timing.mismatch else timing.note
    if remark:
        notes.append(f"{case.name}, {label}: {remark}")
        text = f"**{text} [{len(notes)}]**" if timing.mismatch else f"{text} [{len(notes)}]"
    return [text, ratio]


def table(cases, notes):
    """The Markdown table of the cases of one size."""
    header = ["workload", "NumPy primal", "hand-written adjoint", "ratio", "pullback grad",
              "ratio", "pullback, allocator defaults", "ratio", "autograd", "ratio",
              "JAX eager", "ratio", "JAX jit", "ratio", "jit compile", "PyTorch", "ratio",
              "pullback first gradient"]
    lines = ["| " + " | ".join(header) + " |", "|---" + "|---:" * (len(header) - 1) + "|"]
    for case in cases:
        row = [case.name, format_seconds(case.primal)]
        row += cell(case, "hand-written", notes) + cell(case, "pullback", notes)
        gradient, ratio = case.default_allocator
        row += [format_seconds(gradient), format_ratio(ratio)]
        row += cell(case, "autograd", notes) + cell(case, "JAX eager", notes)
        row += cell(case, "JAX jit", notes)
        row.append(format_seconds(case.timings.get("JAX jit", Timing()).compile_seconds))
        row += cell(case, "PyTorch", notes) + [format_seconds(case.first_gradient)]
        lines.append("| " + " | ".join(row) + " |")
    return lines


def format_bytes(count):
    """A number of bytes in kB or MB, to three significant figures."""
    if count is None:
        return "—"
    return f"{count / 1e6:.3g} MB" if count >= 1e6 else f"{count / 1e3:.3g} kB"


def format_ratio(value):
    """A ratio to one decimal, or "—" if there is none."""
    return "—" if value is None else f"{value:.1f}"


def ratio_of(numerator, denominator):
    """`numerator / denominator` to one decimal, or "—" if either is missing."""
    return format_ratio(None if numerator is None or not denominator
                        else numerator / denominator)


def gradient_ratio(case):
    """pullback's gradient time over the case's own primal (timed in turn), or None."""
    return case.ratio if case.timings["pullback"].seconds is not None else None


def formulation_rows(base, variants, notes):
    """The rows of one workload in the formulations table: the workload as written in
    `benchmarks/workloads/<name>.py`, then each further formulation, then the spread."""
    torch_seconds = base.timings.get("PyTorch", Timing()).seconds
    rows = []
    for case in (base, *variants):
        seconds = case.timings["pullback"].seconds
        text = format_seconds(seconds)
        if case.timings["pullback"].note:
            notes.append(f"{case.name}, pullback: {case.timings['pullback'].note}")
            text = f"{text} [{len(notes)}]"
        primal_peak, held, gradient_peak, result = case.memory
        rows.append([base.name, case.name, format_seconds(case.primal), text,
                     format_ratio(gradient_ratio(case)), ratio_of(torch_seconds, seconds),
                     format_bytes(primal_peak), format_bytes(held), format_bytes(gradient_peak),
                     ratio_of(None if held is None else gradient_peak - held - result,
                              primal_peak)])
    ratios = [r for r in map(gradient_ratio, (base, *variants)) if r is not None]
    if ratios:
        rows.append([base.name, f"**best {min(ratios):.1f}, worst {max(ratios):.1f}: worst / "
                     f"best {max(ratios) / min(ratios):.2f}**"] + [""] * 8)
    return rows


def formulations_table(cases, variants, notes):
    """The Markdown table of every formulation of the workloads of one size."""
    header = ["workload", "formulation", "its NumPy primal", "pullback grad", "ratio",
              "PyTorch eager / pullback", "primal peak memory", "held for the pullback",
              "gradient peak memory", "(gradient peak - held - result) / primal peak"]
    lines = ["| " + " | ".join(header) + " |", "|---|---" + "|---:" * (len(header) - 2) + "|"]
    for case in cases:
        for row in formulation_rows(case, variants.get(case.name, ()), notes):
            lines.append("| " + " | ".join(row) + " |")
    return lines


def cpu_model():
    """The CPU's model name from /proc/cpuinfo (or what `platform` knows)."""
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def pullback_revision():
    """The git commit of the working tree, and whether pullback's code differs from it."""
    root = pathlib.Path(__file__).resolve().parent.parent

    def git(*command):
        return subprocess.run(["git", "--no-optional-locks", *command], cwd=root,
                              capture_output=True, text=True, check=False).stdout.strip()

    commit = git("rev-parse", "--short", "HEAD") or "an unknown commit"
    changed = git("status", "--porcelain", "--", "pullback", "templates")
    return f"commit {commit}" + (" with uncommitted changes" if changed else "")


def machine(startup, kept):
    """The lines describing the machine and the libraries."""
    versions = ", ".join(f"{name} {importlib.metadata.version(name)}" for name in LIBRARIES)
    allocator = ("glibc keeping freed memory for reuse (`mallopt`: trim threshold 1 GiB, "
                 "mmap threshold 32 MiB), for every library and the primal" if kept else
                 "the allocator's defaults (it could not be told to keep freed memory)")
    return [
        f"- CPU: {cpu_model()} ({os.cpu_count()} cores), single-threaded BLAS "
        "(OMP, OpenBLAS and MKL threads 1; XLA CPU on one thread; "
        "`torch.set_num_threads(1)`)",
        "- Each library measured in a process of its own, for each workload and size",
        f"- Memory: {allocator}; \"pullback, allocator defaults\" is pullback's gradient "
        "(and its ratio to the primal) timed in a child process that leaves the allocator "
        "as it is",
        f"- Python {platform.python_version()} on {platform.system()}; {versions}",
        f"- pullback at {pullback_revision()}",
        f"- pullback's one-time start-up (its first gradient in the process, of `x * x`): "
        f"{format_seconds(startup)}",
    ]


def report(cases_by_size, variants_by_size, startup, kept, command, elapsed):
    """The generated section of docs/benchmarks.md."""
    lines = [BEGIN, "", f"Produced by `{command}` on {time.strftime('%Y-%m-%d')} "
             f"in {elapsed / 60:.1f} minutes.", ""]
    lines += machine(startup, kept)
    lines += ["", "Each gradient time is the median of repeated calls after a first call "
              "(which for pullback transforms the code and for JAX compiles it); each "
              "\"ratio\" is that time over the NumPy primal's, but for pullback's, which is "
              "the median ratio of its gradient and the primal called in turn in one process "
              "(a ratio the machine's drift in speed moves less). \"hand-written adjoint\" is a "
              "person's NumPy gradient of the same computation (`benchmarks/handwritten/`: the "
              "workload's operations in its order, then the backward pass a careful person "
              "writes for them). \"jit compile\" is JAX's "
              "trace, lower and compile time; \"pullback first gradient\" is the time of "
              "the first gradient of a fresh copy of the workload (transformation and first "
              "call), in a process where pullback is already loaded. Every peer's gradient "
              "is first checked against pullback's (`np.allclose`, rtol 1e-6, absolute "
              "tolerance 1e-8 times the argument's largest component). JAX jit traces the "
              "arrays and closes over the other arguments (step counts, trees), so Python "
              "loops and recursion are unrolled; a program of more than "
              f"{peers.JIT_MAX_OPERATIONS:,} operations is not compiled."]
    notes = []
    for size, cases in cases_by_size.items():
        lines += ["", f"### {size.capitalize()} size", ""] + table(cases, notes)
    lines += ["", "### Every formulation", "", FORMULATIONS_TEXT]
    for size, cases in cases_by_size.items():
        lines += ["", f"#### {size.capitalize()} size", ""]
        lines += formulations_table(cases, variants_by_size[size], notes)
    if notes:
        lines += [""] + [f"[{i}] {note}  " for i, note in enumerate(notes, 1)]
    lines += ["", "Run: `pip install -e '.[bench]' && python benchmarks/run.py` "
              "(`--quick`: small sizes only; `--only NAME`: one workload and its "
              "formulations; `--no-peers`: pullback alone).", "", END]
    return "\n".join(lines) + "\n"


FORMULATIONS_TEXT = (
    "Each workload as written in `benchmarks/workloads/<workload>.py`, then the same model "
    "written in other styles (`<workload>_<style>.py`: parameters in dicts, dataclasses or "
    "tuples, one weight per gate, node objects, index arrays, states in lists updated by "
    "index or in a NumPy array filled by index, a trajectory appended from its last state, "
    "`np.dot` on vectors), each timed against its own NumPy primal. \"PyTorch eager / "
    "pullback\" is the workload's PyTorch gradient time (above) over this formulation's "
    "pullback gradient: above 1, pullback is faster. Peak memory is the most that one call "
    "allocates beyond its arguments at any moment, as `tracemalloc` counts it (Python "
    "objects and NumPy's arrays), measured after the timed calls; \"held for the "
    "pullback\" is what `vjp` of the objective (in its differentiated arguments) still "
    "holds when it returns, the values its pullback reads. The last column takes that and "
    "the gradient's own arrays (the result) from the gradient's peak and divides by the "
    "primal's peak (the target is at most 3).")


def write_report(section, path, markers=(BEGIN, END), heading="pullback and its peers"):
    """Replace the generated section of `path` between `markers` (appended under
    `heading` if they are absent)."""
    begin, end = markers
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    if begin in text and end in text:
        before, rest = text.split(begin, 1)
        text = before + section.rstrip("\n") + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + f"\n\n## {heading}\n\n" + section
    path.write_text(text)


def pullback_startup():
    """The time of pullback's first gradient in this process (loading its rules)."""
    return seconds_of(lambda: pullback.grad(lambda x: x * x)(3.0))


def single_threaded_torch():
    """Import torch restricted to one thread."""
    import torch

    torch.set_num_threads(1)


def arguments(argv):
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    parser.add_argument("--only", help="comma-separated workloads (default: all)")
    parser.add_argument("--output", default=str(DOC),
                        help="where to write the report; '-' for stdout only")
    parser.add_argument("--no-peers", action="store_true",
                        help="time pullback and the primals only")
    parser.add_argument("--measure", nargs=3, metavar=("NAME", "SIZE", "LIBRARY"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--default-allocator", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    options.names = options.only.split(",") if options.only else NAMES
    unknown = set(options.names) - set(NAMES)
    if unknown:
        parser.error(f"unknown workload(s) {sorted(unknown)}; choose from {NAMES}")
    return options


def main(argv=None):
    """Run the benchmarks and write the report."""
    options = arguments(argv)
    if options.measure:
        measure(*options.measure, keep=not options.default_allocator)
        return
    start = time.perf_counter()
    kept = keep_freed_memory()
    startup = pullback_startup()
    sizes = SIZES[:1] if options.quick else SIZES
    peer_names = () if options.no_peers else PEER_NAMES
    cases, variants = {}, {}
    for size in sizes:
        cases[size] = [run_case(name, size, peer_names) for name in options.names]
        variants[size] = {name: [run_case(variant, size, ()) for variant in FORMULATIONS
                                 if variant.startswith(f"{name}_")]
                          for name in options.names}
    elapsed = time.perf_counter() - start
    command = " ".join(["python benchmarks/run.py", *sys.argv[1:]])
    section = report(cases, variants, startup, kept, command, elapsed)
    print(section)
    if options.output != "-":
        write_report(section, pathlib.Path(options.output))
    log(f"done in {elapsed / 60:.1f} minutes")


if __name__ == "__main__":
    main()
