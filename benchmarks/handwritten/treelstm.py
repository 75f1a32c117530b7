"""Hand-written adjoint of `workloads.treelstm`: a binary TreeLSTM over a forest.

The forward is the workload's recursion, node by node, children first, each node computed
as `leaf_state`, `node_state` and `cross_entropy` do (the last stopping at the softmax its
gradient is), returning per node a record of what the backward needs. The backward
recursion walks the records in reverse order (root, right subtree, left subtree) and
collects each layer's inputs and output gradients: the weight and bias gradients are formed
once at the end as `X.T @ G`, and the embedding's from all the leaves' gate gradients.

A record is `(h, c, cell, p, label, subtree)`: the node's hidden state and cell, the tape of
its cell, the softmax of its readout, its label, and its word for a leaf or its children's
records for an inner node.
"""

import numpy as np
from workloads.treelstm import sigmoid

from .common import (
    dense_gradients,
    forget_backward,
    input_backward,
    output_backward,
    scatter_add,
    softmax,
)


def leaf_forward(params, word):
    """The workload's `leaf_state`: a leaf's hidden state and cell, and the tape of its cell,
    `(embedding row, i, o, u, tanh c)`, `u` the candidate."""
    embedding, w_leaf, b_leaf = params[:3]
    n = b_leaf.shape[0] // 3
    x = embedding[word]
    gates = x @ w_leaf + b_leaf
    i = sigmoid(gates[:n])
    u = np.tanh(gates[2 * n:])
    c = i * u
    o = sigmoid(gates[n:2 * n])
    tanh_c = np.tanh(c)
    return o * tanh_c, c, (x, i, o, u, tanh_c)


def node_forward(params, left, right):
    """The workload's `node_state` from the children's records: an inner node's hidden state
    and cell, and the tape of its cell, `(concat(h_left, h_right), c_left, c_right, i,
    f_left, f_right, o, u, tanh c)`."""
    w_node, b_node = params[3:5]
    (h_left, c_left), (h_right, c_right) = left[:2], right[:2]
    n = h_left.shape[0]
    x = np.concatenate([h_left, h_right])
    gates = x @ w_node + b_node
    i = sigmoid(gates[:n])
    u = np.tanh(gates[4 * n:])
    f_left = sigmoid(gates[n:2 * n])
    f_right = sigmoid(gates[2 * n:3 * n])
    c = i * u + f_left * c_left + f_right * c_right
    o = sigmoid(gates[3 * n:4 * n])
    tanh_c = np.tanh(c)
    return o * tanh_c, c, (x, c_left, c_right, i, f_left, f_right, o, u, tanh_c)


def tree_forward(params, tree, labels):
    """The workload's `tree_loss` over `tree` and its `labels`: the record of its root."""
    w_out, b_out = params[5:]
    if isinstance(tree, int):
        h, c, cell = leaf_forward(params, tree)
        label, subtree = labels, tree
    else:
        label, left_labels, right_labels = labels
        left = tree_forward(params, tree[0], left_labels)
        right = tree_forward(params, tree[1], right_labels)
        h, c, cell = node_forward(params, left, right)
        subtree = (left, right)
    return h, c, cell, softmax(h @ w_out + b_out, axis=0), label, subtree


def leaf_backward(cell, dh, dc):
    """Back through a leaf's cell given the gradients of its hidden state and cell: the
    gradient of its gates' pre-activations."""
    _, i, o, u, tanh_c = cell
    d_o, dc = output_backward(dh, dc, o, tanh_c)
    d_i, d_u = input_backward(dc, i, u)
    return np.concatenate([d_i, d_o, d_u])


def node_backward(w_node, cell, dh, dc):
    """Back through an inner node's cell given the gradients of its hidden state and cell: the
    gradient of its gates' pre-activations and those of each child's hidden state and cell."""
    _, c_left, c_right, i, f_left, f_right, o, u, tanh_c = cell
    d_o, dc = output_backward(dh, dc, o, tanh_c)
    d_i, d_u = input_backward(dc, i, u)
    d_gates = np.concatenate([d_i, forget_backward(dc, f_left, c_left),
                              forget_backward(dc, f_right, c_right), d_o, d_u])
    d_x = w_node @ d_gates
    n = d_i.shape[0]
    return d_gates, (d_x[:n], dc * f_left), (d_x[n:], dc * f_right)


def tree_backward(params, record, dh, dc, uses):
    """Back through the subtree of `record` given the gradients of its root's hidden state and
    cell from its parent, appending to the lists of `uses` (readout, leaves, inner nodes)
    each use's input and output gradient (and a leaf's word first)."""
    h, _, cell, p, label, subtree = record
    readout_uses, leaf_uses, node_uses = uses
    p[label] -= 1.0  # the record's softmax becomes the gradient of the logits
    readout_uses.append((h, p))
    dh = dh + params[5] @ p
    if isinstance(subtree, int):
        leaf_uses.append((subtree, cell[0], leaf_backward(cell, dh, dc)))
    else:
        d_gates, (dh_left, dc_left), (dh_right, dc_right) = node_backward(params[3], cell, dh, dc)
        node_uses.append((cell[0], d_gates))
        tree_backward(params, subtree[1], dh_right, dc_right, uses)
        tree_backward(params, subtree[0], dh_left, dc_left, uses)


def stacked_gradients(uses):
    """The weight and bias gradients of a layer from its uses' inputs and output gradients."""
    inputs, output_grads = zip(*uses)
    return dense_gradients(np.array(inputs), np.array(output_grads))


def gradient(embedding, w_leaf, b_leaf, w_node, b_node, w_out, b_out, trees, labels):
    """The gradient of `workloads.treelstm.objective` with respect to the embeddings, the
    weights and the biases."""
    params = (embedding, w_leaf, b_leaf, w_node, b_node, w_out, b_out)
    roots = [tree_forward(params, tree, tree_labels) for tree, tree_labels in zip(trees, labels)]
    readout_uses, leaf_uses, node_uses = uses = ([], [], [])
    for root in reversed(roots):
        tree_backward(params, root, 0.0, 0.0, uses)
    words, leaf_inputs, d_leaf_gates = zip(*leaf_uses)
    d_leaf_gates = np.array(d_leaf_gates)
    d_embedding = scatter_add(d_leaf_gates @ w_leaf.T, np.array(words), embedding.shape[0])
    return (d_embedding, *dense_gradients(np.array(leaf_inputs), d_leaf_gates),
            *stacked_gradients(node_uses), *stacked_gradients(readout_uses))
