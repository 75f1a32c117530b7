"""The workloads written for PyTorch (float64, eager), one function per workload.

Each function takes the arguments of the NumPy workload of the same name, as
converted by `arguments`, and returns the same scalar as a 0-d tensor.
"""

import math

import numpy as np
import torch
from workloads.gmm import cholesky_index


def arguments(args, wrt):
    """NumPy arguments as tensors; the differentiated ones (floats too) require grad."""
    converted = []
    for i, arg in enumerate(args):
        if isinstance(arg, np.ndarray):
            arg = torch.from_numpy(arg)
        elif i in wrt:
            arg = torch.tensor(arg, dtype=torch.float64)
        if i in wrt:
            arg.requires_grad_(True)
        converted.append(arg)
    return tuple(converted)


def scalar_loop(a, b, c, steps):
    """`workloads.scalar_loop` on 0-d tensors."""
    x = torch.tensor(0.5, dtype=torch.float64)
    total = 0.0
    for _ in range(steps):
        x = torch.sin(a * x + b) + c * torch.exp(-x * x)
        total = total + torch.log(1.0 + x * x)
    return total / steps


def mlp(w1, b1, w2, b2, w3, b3, images, labels):
    """`workloads.mlp`."""
    h1 = torch.relu(images @ w1 + b1)
    h2 = torch.relu(h1 @ w2 + b2)
    logp = torch.log_softmax(h2 @ w3 + b3, dim=1)
    return -torch.mean(torch.sum(logp * labels, dim=1))


def gmm(alphas, means, icf, x, gamma, m, constant):
    """`workloads.gmm`."""
    n, d = x.shape
    log_diag = icf[:, :d]
    diag = torch.exp(log_diag)
    sum_qs = torch.sum(log_diag, dim=1)
    zeros = torch.zeros((icf.shape[0], 1), dtype=icf.dtype)
    entries = torch.cat([zeros, diag, icf[:, d:]], dim=1)
    chol = entries[:, torch.tensor(cholesky_index(d))]
    centered = x[None, :, :] - means[:, None, :]
    mahalanobis = torch.sum((centered @ chol.transpose(1, 2)) ** 2, dim=2)
    inner = alphas[:, None] + sum_qs[:, None] - 0.5 * mahalanobis
    data_term = (torch.sum(torch.logsumexp(inner, 0)) - n * torch.logsumexp(alphas, 0)
                 - 0.5 * n * d * math.log(2.0 * math.pi))
    frobenius = torch.sum(diag ** 2) + torch.sum(icf[:, d:] ** 2)
    return data_term + 0.5 * gamma * gamma * frobenius - m * torch.sum(sum_qs) - constant


def rodrigues_rotate(rotation, x):
    """`workloads.ba.rodrigues_rotate`, with `torch.cross`."""
    theta = torch.sqrt(torch.sum(rotation ** 2, dim=1, keepdim=True))
    axis = rotation / theta
    cos, sin = torch.cos(theta), torch.sin(theta)
    along = torch.sum(axis * x, dim=1, keepdim=True) * (1.0 - cos)
    return x * cos + torch.cross(axis, x, dim=1) * sin + axis * along


def project(cams, points):
    """`workloads.ba.project`."""
    in_camera = rodrigues_rotate(cams[:, 0:3], points - cams[:, 3:6])
    projected = in_camera[:, 0:2] / in_camera[:, 2:3]
    rsq = torch.sum(projected ** 2, dim=1, keepdim=True)
    distorted = projected * (1.0 + cams[:, 9:10] * rsq + cams[:, 10:11] * rsq * rsq)
    return distorted * cams[:, 6:7] + cams[:, 7:9]


def ba(cams, points, weights, observations, cam_index, point_index):
    """`workloads.ba`."""
    errors = weights[:, None] * (project(cams[cam_index], points[point_index]) - observations)
    return torch.sum(errors ** 2) + torch.sum((1.0 - weights ** 2) ** 2)


def lstm_cell(w, b, x, h, c):
    """`workloads.lstm.lstm_cell`."""
    n = h.shape[1]
    gates = torch.cat([x, h], dim=1) @ w + b
    c = torch.sigmoid(gates[:, n:2 * n]) * c + torch.sigmoid(gates[:, :n]) * torch.tanh(
        gates[:, 3 * n:])
    return torch.sigmoid(gates[:, 2 * n:3 * n]) * torch.tanh(c), c


def lstm(w1, b1, w2, b2, w_out, b_out, sequence, steps):
    """`workloads.lstm`."""
    h1 = c1 = h2 = c2 = torch.zeros((sequence.shape[1], b1.shape[0] // 4), dtype=w1.dtype)
    loss = 0.0
    for t in range(steps):
        h1, c1 = lstm_cell(w1, b1, sequence[t], h1, c1)
        h2, c2 = lstm_cell(w2, b2, h1, h2, c2)
        loss = loss + torch.mean((h2 @ w_out + b_out - sequence[t + 1]) ** 2)
    return loss


def tree_loss(params, tree, labels):
    """`workloads.treelstm.tree_loss`."""
    embedding, w_leaf, b_leaf, w_node, b_node, w_out, b_out = params
    n = b_leaf.shape[0] // 3
    if isinstance(tree, int):
        gates = embedding[tree] @ w_leaf + b_leaf
        c = torch.sigmoid(gates[:n]) * torch.tanh(gates[2 * n:])
        h = torch.sigmoid(gates[n:2 * n]) * torch.tanh(c)
        loss, label = 0.0, labels
    else:
        label, left_labels, right_labels = labels
        h_left, c_left, loss_left = tree_loss(params, tree[0], left_labels)
        h_right, c_right, loss_right = tree_loss(params, tree[1], right_labels)
        gates = torch.cat([h_left, h_right]) @ w_node + b_node
        c = (torch.sigmoid(gates[:n]) * torch.tanh(gates[4 * n:])
             + torch.sigmoid(gates[n:2 * n]) * c_left + torch.sigmoid(gates[2 * n:3 * n]) * c_right)
        h = torch.sigmoid(gates[3 * n:4 * n]) * torch.tanh(c)
        loss = loss_left + loss_right
    logits = h @ w_out + b_out
    return h, c, loss + torch.logsumexp(logits, 0) - logits[label]


def treelstm(embedding, w_leaf, b_leaf, w_node, b_node, w_out, b_out, trees, labels):
    """`workloads.treelstm`."""
    params = (embedding, w_leaf, b_leaf, w_node, b_node, w_out, b_out)
    total = 0.0
    for tree, tree_labels in zip(trees, labels):
        total = total + tree_loss(params, tree, tree_labels)[2]
    return total
