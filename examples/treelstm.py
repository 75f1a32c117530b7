"""A TreeLSTM learning the sentiment of random binary trees of words.

The model of Tai et al. (2015) that Wang et al. use to show reverse mode through
recursion (seed 004, section 5.1): a leaf is a word (an int), an inner node a
pair `(left, right)`. `encode` recurses over the tree, a different shape for
every example, and `pullback.grad` differentiates through the recursion: the
backward pass is as deep as the forward one. Each word has a hidden polarity;
a tree is positive when the sum of its words' polarities is.

    python examples/treelstm.py
"""

import numpy as np

import pullback

VOCABULARY, HIDDEN = 20, 8


def sigmoid(z):
    """The logistic function, written with tanh (no overflow)."""
    return 0.5 * (np.tanh(0.5 * z) + 1.0)


def encode(params, tree):
    """The hidden state and memory cell of the root of `tree`."""
    n = HIDDEN
    if isinstance(tree, int):
        gates = params["embedding"][tree] @ params["leaf"] + params["leaf_bias"]
        c = sigmoid(gates[:n]) * np.tanh(gates[2 * n:])
    else:
        h_left, c_left = encode(params, tree[0])
        h_right, c_right = encode(params, tree[1])
        gates = np.concatenate([h_left, h_right]) @ params["node"] + params["node_bias"]
        c = (sigmoid(gates[:n]) * np.tanh(gates[4 * n:])
             + sigmoid(gates[2 * n:3 * n]) * c_left + sigmoid(gates[3 * n:4 * n]) * c_right)
    return sigmoid(gates[n:2 * n]) * np.tanh(c), c


def score(params, tree):
    """The sentiment score of `tree`: positive for a positive tree."""
    h, _ = encode(params, tree)
    return h @ params["readout"] + params["readout_bias"]


def loss(params, trees, labels):
    """The mean logistic loss of the root's score against labels -1 and +1."""
    total = 0.0
    for tree, label in zip(trees, labels):
        total = total + np.logaddexp(0.0, -label * score(params, tree))
    return total / len(trees)


def random_tree(rng, leaves):
    """A random binary tree over `leaves` random words."""
    if leaves == 1:
        return int(rng.integers(VOCABULARY))
    split = int(rng.integers(1, leaves))
    return random_tree(rng, split), random_tree(rng, leaves - split)


def words(tree):
    """The words of `tree`, left to right."""
    return [tree] if isinstance(tree, int) else words(tree[0]) + words(tree[1])


def init(rng):
    """Random parameters, by name."""
    shapes = {"embedding": (VOCABULARY, HIDDEN), "leaf": (HIDDEN, 3 * HIDDEN),
              "leaf_bias": (3 * HIDDEN,), "node": (2 * HIDDEN, 5 * HIDDEN),
              "node_bias": (5 * HIDDEN,), "readout": (HIDDEN,), "readout_bias": ()}
    return {name: rng.standard_normal(shape) / np.sqrt(shape[0] if shape else 1.0)
            for name, shape in shapes.items()}


def forest(rng, polarity, size):
    """`size` random trees of 3 to 7 words, and their labels."""
    trees = [random_tree(rng, int(rng.integers(3, 8))) for _ in range(size)]
    return trees, [1.0 if np.sum(polarity[words(tree)]) > 0 else -1.0 for tree in trees]


def accuracy(params, trees, labels):
    """The fraction of trees whose score has the sign of their label."""
    return np.mean([np.sign(score(params, t)) == y for t, y in zip(trees, labels)])


def train(steps=100, learning_rate=1.0, seed=0):
    """Gradient descent on a forest of 40 trees; returns the losses."""
    rng = np.random.default_rng(seed)
    polarity = rng.choice([-1.0, 1.0], VOCABULARY)
    trees, labels = forest(rng, polarity, 40)
    params = init(rng)
    loss_and_grad = pullback.value_and_grad(loss)
    losses = []
    for step in range(steps):
        value, grads = loss_and_grad(params, trees, labels)
        losses.append(value)
        if step % 10 == 0 or step == steps - 1:
            print(f"step {step:2d}  loss {value:.4f}  "
                  f"accuracy {accuracy(params, trees, labels):.0%}")
        params = {name: p - learning_rate * grads[name] for name, p in params.items()}
    print(f"accuracy on 200 new trees: {accuracy(params, *forest(rng, polarity, 200)):.0%}")
    return losses


if __name__ == "__main__":
    train()
