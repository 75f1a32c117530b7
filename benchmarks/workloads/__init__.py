"""The benchmark workloads, each a plain NumPy function that pullback differentiates as written.

Every module defines `objective(...)` (a scalar loss), `SIZES` (small and medium),
`inputs(size, rng)` (the arguments) and `WRT` (the positions of the arguments the
gradient is taken with respect to). The autograd and JAX versions run the same
source with `np` and `math` bound to their NumPy (`peers.py`); PyTorch has its own.

`NAMES` are the workloads. A module named `<workload>_<style>` is another
*formulation* of one of them: the same model and numbers written in another style
(parameters in a dict or a dataclass, one weight per gate, node objects, loops
over examples, `np.dot` on vectors...). It also defines `BASE` (its workload's
name) and `base_arguments(*args)`, its arguments as its workload's, with which
tests/test_formulations.py checks its value and gradient against the workload's.
"""

import pkgutil

NAMES = ["scalar_loop", "gmm", "ba", "lstm", "mlp", "treelstm"]
FORMULATIONS = sorted(info.name for info in pkgutil.iter_modules(__path__)
                      if any(info.name.startswith(f"{name}_") for name in NAMES))
