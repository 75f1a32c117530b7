"""The benchmark workloads, each a plain NumPy function that pullback differentiates as written.

Every module defines `objective(...)` (a scalar loss), `SIZES` (small and medium),
`inputs(size, rng)` (the arguments) and `WRT` (the positions of the arguments the
gradient is taken with respect to). The autograd and JAX versions run the same
source with `np` and `math` bound to their NumPy (`peers.py`); PyTorch has its own.
"""

NAMES = ["scalar_loop", "gmm", "ba", "lstm", "mlp", "treelstm"]
