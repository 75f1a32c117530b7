"""Hand-written adjoint of `workloads.ba`: ADBench's bundle adjustment objective.

The forward gathers a camera row and a point per observation and does the workload's
per-observation work in its (observations, components) layout, the rotation's angle,
axis, cosine and sine included; the backward works in the same layout and sums the rows'
gradients into the cameras and points (`common.scatter_add`).
"""

import numpy as np
from workloads.ba import cross

from .common import scatter_add

# The columns of a camera row.
ROTATION, CENTER, FOCAL = slice(0, 3), slice(3, 6), slice(6, 7)
PRINCIPAL, DISTORTION_1, DISTORTION_2 = slice(7, 9), slice(9, 10), slice(10, 11)


def dot(a, b):
    """The dot products of the rows of two arrays, as a column (by `np.einsum`: `np.sum` over
    rows of two or three is several times slower)."""
    return np.einsum("ij,ij->i", a, b)[:, None]


def rotate_forward(rotation, x):
    """The workload's Rodrigues rotation of the rows of `x`: the rotated rows and what its
    backward needs, `(theta, axis, cos, sin, axis·x, axis × x, along)`."""
    theta = np.sqrt(np.sum(rotation ** 2, axis=1, keepdims=True))
    axis = rotation / theta
    cos, sin = np.cos(theta), np.sin(theta)
    axis_dot_x = np.sum(axis * x, axis=1, keepdims=True)
    along = axis_dot_x * (1.0 - cos)
    axis_cross_x = cross(axis, x)
    rotated = x * cos + axis_cross_x * sin + axis * along
    return rotated, (theta, axis, cos, sin, axis_dot_x, axis_cross_x, along)


def rotate_backward(x, tape, d_rotated):
    """The gradients of the rotation with respect to `x` and the rotation vectors."""
    theta, axis, cos, sin, axis_dot_x, axis_cross_x, along = tape
    axis_dot_d = dot(axis, d_rotated)
    scaled_axis_dot_d = axis_dot_d * (1.0 - cos)
    d_x = d_rotated * cos + cross(d_rotated, axis) * sin + axis * scaled_axis_dot_d
    d_axis = cross(x, d_rotated) * sin + d_rotated * along + x * scaled_axis_dot_d
    d_cos = dot(d_rotated, x) - axis_dot_d * axis_dot_x
    d_theta = cos * dot(d_rotated, axis_cross_x) - sin * d_cos
    d_rotation = d_axis / theta + (d_theta - dot(d_axis, axis) / theta) * axis
    return d_x, d_rotation


def project_forward(cams, points):
    """The workload's projection of each point by the camera in the same row, keeping what
    the backward needs."""
    x = points - cams[:, CENTER]
    rotated, rotation_tape = rotate_forward(cams[:, ROTATION], x)
    projected = rotated[:, 0:2] / rotated[:, 2:3]
    rsq = np.sum(projected ** 2, axis=1, keepdims=True)
    factor = 1.0 + cams[:, DISTORTION_1] * rsq + cams[:, DISTORTION_2] * rsq * rsq
    distorted = projected * factor
    result = distorted * cams[:, FOCAL] + cams[:, PRINCIPAL]
    return result, (x, rotation_tape, rotated[:, 2:3], projected, rsq, factor, distorted)


def project_backward(cams, tape, d_result):
    """The gradients of the projection with respect to the camera rows and the points."""
    x, rotation_tape, depth, projected, rsq, factor, distorted = tape
    d_cams = np.empty_like(cams)
    d_cams[:, PRINCIPAL] = d_result
    d_cams[:, FOCAL] = dot(d_result, distorted)
    d_distorted = d_result * cams[:, FOCAL]
    d_factor = dot(d_distorted, projected)
    d_cams[:, DISTORTION_1] = d_factor * rsq
    d_cams[:, DISTORTION_2] = d_factor * rsq * rsq
    d_rsq = d_factor * (cams[:, DISTORTION_1] + 2.0 * cams[:, DISTORTION_2] * rsq)
    d_projected = d_distorted * factor + projected * (2.0 * d_rsq)
    d_rotated = np.empty_like(x)
    d_rotated[:, 0:2] = d_projected / depth
    d_rotated[:, 2:3] = -dot(d_projected, projected) / depth
    d_x, d_rotation = rotate_backward(x, rotation_tape, d_rotated)
    d_cams[:, ROTATION] = d_rotation
    d_cams[:, CENTER] = -d_x
    return d_cams, d_x


def gradient(cams, points, weights, observations, cam_index, point_index):
    """The gradient of `workloads.ba.objective` with respect to `cams`, `points`, `weights`."""
    gathered = cams[cam_index]
    result, tape = project_forward(gathered, points[point_index])
    residual = result - observations
    errors = weights[:, None] * residual
    d_weights = 2.0 * dot(errors, residual)[:, 0] - 4.0 * weights * (1.0 - weights ** 2)
    d_gathered, d_points = project_backward(gathered, tape, 2.0 * errors * weights[:, None])
    return (scatter_add(d_gathered, cam_index, cams.shape[0]),
            scatter_add(d_points, point_index, points.shape[0]), d_weights)
