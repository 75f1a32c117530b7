"""The `ba` workload with a Python loop over the cameras: each camera unpacks its row into
named parts, builds its 3×3 rotation matrix by Rodrigues' formula and projects the points it
observes (their indices grouped per camera in advance) with `@`."""

import numpy as np

from workloads import ba as base

BASE = "ba"
SIZES = base.SIZES
WRT = (0, 1, 2)


def rotation_matrix(rotation):
    """The rotation by the axis-angle vector `rotation`: cos I + sin [k]× + (1 - cos) k kᵀ."""
    theta = np.sqrt(np.dot(rotation, rotation))
    k = rotation / theta
    skew = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return (np.cos(theta) * np.eye(3) + np.sin(theta) * skew
            + (1.0 - np.cos(theta)) * np.outer(k, k))


def project(camera, points):
    """Where the rows of `points` land in the image of one camera (a row of 11 numbers)."""
    rotation, center = camera[0:3], camera[3:6]
    focal, principal, distortion = camera[6], camera[7:9], camera[9:11]
    in_camera = (points - center) @ rotation_matrix(rotation).T
    projected = in_camera[:, :2] / in_camera[:, 2:]
    rsq = np.sum(projected ** 2, axis=1, keepdims=True)
    distorted = projected * (1.0 + distortion[0] * rsq + distortion[1] * rsq ** 2)
    return focal * distorted + principal


def objective(cams, points, weights, observations, per_camera):
    """`per_camera[c]` holds the indices of the observations camera c makes and of the
    points they see."""
    total = 0.0
    for c, (observed, seen) in enumerate(per_camera):
        w = weights[observed]
        errors = w[:, None] * (project(cams[c], points[seen]) - observations[observed])
        total = total + np.sum(errors ** 2)
    return total + np.sum((1.0 - weights ** 2) ** 2)


def inputs(size, rng):
    cams, points, weights, observations, cam_index, point_index = base.inputs(size, rng)
    per_camera = []
    for c in range(cams.shape[0]):
        observed = np.flatnonzero(cam_index == c)
        per_camera.append((observed, point_index[observed]))
    return cams, points, weights, observations, per_camera


def base_arguments(cams, points, weights, observations, per_camera):
    """The base objective's arguments holding the same numbers as these."""
    cam_index = np.zeros(len(weights), dtype=int)
    point_index = np.zeros(len(weights), dtype=int)
    for c, (observed, seen) in enumerate(per_camera):
        cam_index[observed] = c
        point_index[observed] = seen
    return cams, points, weights, observations, cam_index, point_index
