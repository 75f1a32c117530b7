"""The `treelstm` workload with the forest flattened into index arrays (the leaves' words, each
inner node's children, every node's label; children before parents), the leaves computed as
one batch, the inner nodes in a loop keeping the states in lists updated by index
(`hs[node] = ...`), the readout of all nodes as one batch, and the parameters as one tuple."""

import numpy as np

from workloads import treelstm as base

BASE = "treelstm"
SIZES = base.SIZES
WRT = (0,)


def sigmoid(z):
    return 0.5 * (np.tanh(0.5 * z) + 1.0)


def objective(params, forest):
    """`forest["words"][i]` is leaf i's word; inner node j (node `len(words) + j`) has children
    `forest["left"][j]` and `forest["right"][j]`; `forest["labels"]` labels every node."""
    embedding, w_leaf, b_leaf, w_node, b_node, w_out, b_out = params
    n = b_leaf.shape[0] // 3
    leaves = len(forest["words"])
    nodes = leaves + len(forest["left"])
    gates = embedding[forest["words"]] @ w_leaf + b_leaf
    c_leaves = sigmoid(gates[:, :n]) * np.tanh(gates[:, 2 * n:])
    h_leaves = sigmoid(gates[:, n:2 * n]) * np.tanh(c_leaves)
    hs = [None] * nodes
    cs = [None] * nodes
    for i in range(leaves):
        hs[i] = h_leaves[i]
        cs[i] = c_leaves[i]
    for j in range(nodes - leaves):
        left, right = forest["left"][j], forest["right"][j]
        g = np.concatenate([hs[left], hs[right]]) @ w_node + b_node
        c = (sigmoid(g[:n]) * np.tanh(g[4 * n:]) + sigmoid(g[n:2 * n]) * cs[left]
             + sigmoid(g[2 * n:3 * n]) * cs[right])
        hs[leaves + j] = sigmoid(g[3 * n:4 * n]) * np.tanh(c)
        cs[leaves + j] = c
    logits = np.stack(hs) @ w_out + b_out
    top = np.max(logits, axis=1)
    log_normalizers = np.log(np.sum(np.exp(logits - top[:, None]), axis=1)) + top
    return np.sum(log_normalizers - logits[np.arange(nodes), forest["labels"]])


def flatten(tree, labels, words, children, node_labels):
    """Add `tree`'s nodes to the lists, children first; return the node's (kind, index)."""
    if isinstance(tree, int):
        words.append(tree)
        node_labels[0].append(labels)
        return "leaf", len(words) - 1
    label, left_labels, right_labels = labels
    left = flatten(tree[0], left_labels, words, children, node_labels)
    right = flatten(tree[1], right_labels, words, children, node_labels)
    children.append((left, right))
    node_labels[1].append(label)
    return "inner", len(children) - 1


def inputs(size, rng):
    *params, trees, labels = base.inputs(size, rng)
    words, children, node_labels = [], [], ([], [])
    for tree, tree_labels in zip(trees, labels):
        flatten(tree, tree_labels, words, children, node_labels)
    leaves = len(words)

    def index(kind_index):
        kind, i = kind_index
        return i if kind == "leaf" else leaves + i

    forest = {"words": np.array(words, dtype=int),
              "left": np.array([index(left) for left, _ in children], dtype=int),
              "right": np.array([index(right) for _, right in children], dtype=int),
              "labels": np.array(node_labels[0] + node_labels[1], dtype=int)}
    return tuple(params), forest


def base_arguments(params, forest):
    """The base objective's arguments holding the same numbers as these."""
    leaves = len(forest["words"])
    labels = forest["labels"]

    def rebuild(node):
        if node < leaves:
            return int(forest["words"][node]), int(labels[node])
        j = node - leaves
        left, left_labels = rebuild(int(forest["left"][j]))
        right, right_labels = rebuild(int(forest["right"][j]))
        return (left, right), (int(labels[node]), left_labels, right_labels)

    def first_leaf(node):
        return node if node < leaves else first_leaf(int(forest["left"][node - leaves]))

    children = set(forest["left"].tolist()) | set(forest["right"].tolist())
    roots = sorted((node for node in range(len(labels)) if node not in children),
                   key=first_leaf)
    forest_tuples = [rebuild(root) for root in roots]
    return (*params, tuple(t for t, _ in forest_tuples), tuple(lab for _, lab in forest_tuples))
