"""The `ba` workload with its parameters in a dict of named camera fields (rotations, centres,
focal lengths, principal points, distortions), the points and the weights, and the projection
written out coordinate by coordinate, each coordinate a vector over the observations."""

import numpy as np

from workloads import ba as base

BASE = "ba"
SIZES = base.SIZES
WRT = (0,)


def rotate(rotation, point):
    """Rodrigues' rotation of `point` by `rotation`, both triples of coordinate vectors."""
    rx, ry, rz = rotation
    px, py, pz = point
    theta = np.sqrt(rx * rx + ry * ry + rz * rz)
    kx, ky, kz = rx / theta, ry / theta, rz / theta
    cos, sin = np.cos(theta), np.sin(theta)
    along = (kx * px + ky * py + kz * pz) * (1.0 - cos)
    return (px * cos + (ky * pz - kz * py) * sin + kx * along,
            py * cos + (kz * px - kx * pz) * sin + ky * along,
            pz * cos + (kx * py - ky * px) * sin + kz * along)


def objective(params, observations, cam_index, point_index):
    rotations = params["rotations"][cam_index]
    centers = params["centers"][cam_index]
    points = params["points"][point_index]
    relative = (points[:, 0] - centers[:, 0], points[:, 1] - centers[:, 1],
                points[:, 2] - centers[:, 2])
    x, y, z = rotate(rotations.T, relative)
    u, v = x / z, y / z
    rsq = u * u + v * v
    distortion = params["distortion"][cam_index]
    scale = (1.0 + distortion[:, 0] * rsq + distortion[:, 1] * rsq * rsq) * params["focal"][
        cam_index]
    principal = params["principal"][cam_index]
    weights = params["weights"]
    error_u = weights * (u * scale + principal[:, 0] - observations[:, 0])
    error_v = weights * (v * scale + principal[:, 1] - observations[:, 1])
    return np.sum(error_u ** 2 + error_v ** 2) + np.sum((1.0 - weights ** 2) ** 2)


def inputs(size, rng):
    cams, points, weights, observations, cam_index, point_index = base.inputs(size, rng)
    params = {"rotations": cams[:, 0:3], "centers": cams[:, 3:6], "focal": cams[:, 6],
              "principal": cams[:, 7:9], "distortion": cams[:, 9:11], "points": points,
              "weights": weights}
    return params, observations, cam_index, point_index


def base_arguments(params, observations, cam_index, point_index):
    """The base objective's arguments holding the same numbers as these."""
    cams = np.concatenate([params["rotations"], params["centers"], params["focal"][:, None],
                           params["principal"], params["distortion"]], axis=1)
    return cams, params["points"], params["weights"], observations, cam_index, point_index
