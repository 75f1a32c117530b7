"""A binary TreeLSTM classifying every node of a forest of random parse trees.

The model of Wang et al.'s section 5.1 (seed 004; Tai et al. 2015): a leaf is
an int, the index of its word, and an inner node a pair `(left, right)`. The
labels mirror the tree: a leaf's label is an int, an inner node's is
`(label, left_labels, right_labels)`. A leaf's state comes from its word's
embedding, an inner node's from its children's hidden states, with one forget
gate per child; every node adds the softmax cross-entropy of a linear readout
of its hidden state to the loss.
"""

import numpy as np

SIZES = {"small": (10, 8, 16, 32), "medium": (50, 20, 40, 64)}
WRT = (0, 1, 2, 3, 4, 5, 6)
VOCABULARY = 100
CLASSES = 5


def sigmoid(z):
    """The logistic function."""
    return 0.5 * (np.tanh(0.5 * z) + 1.0)


def cross_entropy(logits, label):
    """Softmax cross-entropy of one vector of logits against an int label."""
    top = np.max(logits)
    return np.log(np.sum(np.exp(logits - top))) + top - logits[label]


def leaf_state(params, word):
    """The hidden state and cell of a leaf, from its word's embedding."""
    embedding, w_leaf, b_leaf = params[:3]
    n = b_leaf.shape[0] // 3
    gates = embedding[word] @ w_leaf + b_leaf
    c = sigmoid(gates[:n]) * np.tanh(gates[2 * n:])
    return sigmoid(gates[n:2 * n]) * np.tanh(c), c


def node_state(params, left, right):
    """The hidden state and cell of an inner node from its children's states."""
    w_node, b_node = params[3:5]
    (h_left, c_left), (h_right, c_right) = left, right
    n = h_left.shape[0]
    gates = np.concatenate([h_left, h_right]) @ w_node + b_node
    c = (sigmoid(gates[:n]) * np.tanh(gates[4 * n:]) + sigmoid(gates[n:2 * n]) * c_left
         + sigmoid(gates[2 * n:3 * n]) * c_right)
    return sigmoid(gates[3 * n:4 * n]) * np.tanh(c), c


def tree_loss(params, tree, labels):
    """The state of the root of `tree` and the loss summed over its nodes."""
    if isinstance(tree, int):
        h, c = leaf_state(params, tree)
        loss, label = 0.0, labels
    else:
        label, left_labels, right_labels = labels
        h_left, c_left, loss_left = tree_loss(params, tree[0], left_labels)
        h_right, c_right, loss_right = tree_loss(params, tree[1], right_labels)
        h, c = node_state(params, (h_left, c_left), (h_right, c_right))
        loss = loss_left + loss_right
    w_out, b_out = params[5:]
    return h, c, loss + cross_entropy(h @ w_out + b_out, label)


def objective(embedding, w_leaf, b_leaf, w_node, b_node, w_out, b_out, trees, labels):
    """The TreeLSTM loss summed over every node of every tree in the forest."""
    params = (embedding, w_leaf, b_leaf, w_node, b_node, w_out, b_out)
    total = 0.0
    for tree, tree_labels in zip(trees, labels):
        total = total + tree_loss(params, tree, tree_labels)[2]
    return total


def random_tree(leaves, rng):
    """A random binary tree over `leaves` random words, with a random label per node."""
    if leaves == 1:
        return int(rng.integers(VOCABULARY)), int(rng.integers(CLASSES))
    split = int(rng.integers(1, leaves))
    left, left_labels = random_tree(split, rng)
    right, right_labels = random_tree(leaves - split, rng)
    return (left, right), (int(rng.integers(CLASSES)), left_labels, right_labels)


def inputs(size, rng):
    """Random weights and embeddings, and a forest of trees of between `low` and `high`
    leaves."""
    n_trees, low, high, hidden = size
    shapes = [(VOCABULARY, hidden), (hidden, 3 * hidden), (3 * hidden,),
              (2 * hidden, 5 * hidden), (5 * hidden,), (hidden, CLASSES), (CLASSES,)]
    params = [rng.standard_normal(shape) / shape[0] ** 0.5 for shape in shapes]
    forest = [random_tree(int(rng.integers(low, high + 1)), rng) for _ in range(n_trees)]
    trees, labels = zip(*forest)
    return (*params, trees, labels)
