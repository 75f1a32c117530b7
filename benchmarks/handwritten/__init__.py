"""Hand-written NumPy adjoints of the benchmark workloads, a reference for pullback's gradients.

One module per workload of `benchmarks/workloads`, each a structure-preserving adjoint:
its forward pass performs the workload's NumPy operations on the same arrays, in the same
order and layout (the same loops and recursion, the workload's own helpers where it has
them), keeping what the backward pass needs and dropping what the gradient does not need;
its backward pass is what a careful, performance-minded person writes by hand for that
forward pass in plain NumPy (and `math` for scalar code): in reverse order, with
simplified derivative formulas and no recomputation. Each module's docstring says how its
forward mirrors the workload's and how it sums the gradients of weights used many times.

Contract: each module defines `gradient(*args)`, taking exactly the arguments
`workloads.<name>.inputs(size, rng)` returns, in the order of `objective`, and
returning a tuple with the gradient of `objective` with respect to each
argument listed in the workload's `WRT`, in that order, each of its argument's
type and shape (a float for a float, an array of the same shape for an array).

`common.py` holds what several modules share: the softmax, the LSTM gates' backward steps
and the gradients of a dense layer. `check.py` compares every gradient with pullback's and
with finite differences, and times them against pullback and the NumPy primal.
"""
