"""The `treelstm` workload as in the reference code of Tai et al. (2015), binary Tree-LSTM:
the trees as node objects with children, one weight matrix per gate, and per child for the
composer (`U_i_l`, `U_i_r`, ...), applied to vectors by `np.dot`, the parameters in a dict of
modules, and a recursion over the nodes."""

import numpy as np

from workloads import treelstm as base

BASE = "treelstm"
SIZES = base.SIZES
WRT = (0,)
LEAF_GATES = ("i", "o", "u")  # the order of the base's stacked leaf weights
COMPOSER_GATES = ("i", "fl", "fr", "o", "u")  # and of its composer's


class Node:
    """A node of a parse tree: a leaf has a `word`, an inner node `left` and `right`."""

    def __init__(self, label, word=None, left=None, right=None):
        self.label = label
        self.word = word
        self.left = left
        self.right = right


def sigmoid(z):
    return 0.5 * (np.tanh(0.5 * z) + 1.0)


def leaf_module(p, x):
    i = sigmoid(np.dot(p["W_i"], x) + p["b_i"])
    o = sigmoid(np.dot(p["W_o"], x) + p["b_o"])
    u = np.tanh(np.dot(p["W_u"], x) + p["b_u"])
    c = i * u
    h = o * np.tanh(c)
    return c, h


def composer(p, lc, lh, rc, rh):
    i = sigmoid(np.dot(p["U_i_l"], lh) + np.dot(p["U_i_r"], rh) + p["b_i"])
    lf = sigmoid(np.dot(p["U_fl_l"], lh) + np.dot(p["U_fl_r"], rh) + p["b_fl"])
    rf = sigmoid(np.dot(p["U_fr_l"], lh) + np.dot(p["U_fr_r"], rh) + p["b_fr"])
    o = sigmoid(np.dot(p["U_o_l"], lh) + np.dot(p["U_o_r"], rh) + p["b_o"])
    u = np.tanh(np.dot(p["U_u_l"], lh) + np.dot(p["U_u_r"], rh) + p["b_u"])
    c = i * u + lf * lc + rf * rc
    h = o * np.tanh(c)
    return c, h


def output_module(p, h, label):
    """The negative log-likelihood of `label` under the softmax of a linear readout."""
    logits = np.dot(p["W"], h) + p["b"]
    top = np.max(logits)
    log_probabilities = logits - (np.log(np.sum(np.exp(logits - top))) + top)
    return -log_probabilities[label]


def forward(params, node):
    """The cell and hidden state of `node`, and the loss summed over its subtree."""
    if node.left is None:
        c, h = leaf_module(params["leaf"], params["embedding"][node.word])
        loss = 0.0
    else:
        lc, lh, left_loss = forward(params, node.left)
        rc, rh, right_loss = forward(params, node.right)
        c, h = composer(params["composer"], lc, lh, rc, rh)
        loss = left_loss + right_loss
    return c, h, loss + output_module(params["output"], h, node.label)


def objective(params, trees):
    loss = 0.0
    for tree in trees:
        loss = loss + forward(params, tree)[2]
    return loss


def as_node(tree, labels):
    """A base tree and its labels as `Node` objects."""
    if isinstance(tree, int):
        return Node(labels, word=tree)
    label, left_labels, right_labels = labels
    return Node(label, left=as_node(tree[0], left_labels), right=as_node(tree[1], right_labels))


def inputs(size, rng):
    embedding, w_leaf, b_leaf, w_node, b_node, w_out, b_out, trees, labels = base.inputs(
        size, rng)
    n = b_leaf.shape[0] // 3
    leaf, composer_params = {}, {}
    for g, name in enumerate(LEAF_GATES):
        leaf["W_" + name] = w_leaf[:, g * n:(g + 1) * n].T.copy()
        leaf["b_" + name] = b_leaf[g * n:(g + 1) * n].copy()
    for g, name in enumerate(COMPOSER_GATES):
        composer_params["U_" + name + "_l"] = w_node[:n, g * n:(g + 1) * n].T.copy()
        composer_params["U_" + name + "_r"] = w_node[n:, g * n:(g + 1) * n].T.copy()
        composer_params["b_" + name] = b_node[g * n:(g + 1) * n].copy()
    params = {"embedding": embedding, "leaf": leaf, "composer": composer_params,
              "output": {"W": w_out.T.copy(), "b": b_out}}
    return params, [as_node(tree, tree_labels) for tree, tree_labels in zip(trees, labels)]


def as_tuples(node):
    """A `Node` tree as the base's tree and labels."""
    if node.left is None:
        return node.word, node.label
    left, left_labels = as_tuples(node.left)
    right, right_labels = as_tuples(node.right)
    return (left, right), (node.label, left_labels, right_labels)


def base_arguments(params, trees):
    """The base objective's arguments holding the same numbers as these."""
    leaf, composer_params = params["leaf"], params["composer"]
    w_leaf = np.concatenate([leaf["W_" + name].T for name in LEAF_GATES], axis=1)
    b_leaf = np.concatenate([leaf["b_" + name] for name in LEAF_GATES])
    w_node = np.concatenate(
        [np.concatenate([composer_params["U_" + name + "_l"].T,
                         composer_params["U_" + name + "_r"].T]) for name in COMPOSER_GATES],
        axis=1)
    b_node = np.concatenate([composer_params["b_" + name] for name in COMPOSER_GATES])
    forest = [as_tuples(tree) for tree in trees]
    return (params["embedding"], w_leaf, b_leaf, w_node, b_node, params["output"]["W"].T,
            params["output"]["b"], tuple(t for t, _ in forest), tuple(lab for _, lab in forest))
