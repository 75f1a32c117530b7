"""ADBench's bundle adjustment objective: weighted reprojection errors of every observation.

A camera is 11 numbers: a Rodrigues rotation (3), its centre (3), the focal
length, the principal point (2) and two radial distortion coefficients.
Observation i sees point `point_index[i]` from camera `cam_index[i]` at
`observations[i]`, with weight `weights[i]`.
"""

import numpy as np

SIZES = {"small": (20, 2000, 8000), "medium": (50, 20000, 80000)}
WRT = (0, 1, 2)


def cross(a, b):
    """The cross products of the rows of two (n, 3) arrays."""
    a0, a1, a2 = a[:, 0], a[:, 1], a[:, 2]
    b0, b1, b2 = b[:, 0], b[:, 1], b[:, 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=1)


def rodrigues_rotate(rotation, x):
    """Rotate each row of `x` by the axis-angle vector in the same row of `rotation`."""
    theta = np.sqrt(np.sum(rotation ** 2, axis=1, keepdims=True))
    axis = rotation / theta
    cos, sin = np.cos(theta), np.sin(theta)
    along = np.sum(axis * x, axis=1, keepdims=True) * (1.0 - cos)
    return x * cos + cross(axis, x) * sin + axis * along


def radial_distort(coefficients, projected):
    """Apply the two-coefficient radial distortion to projected points."""
    rsq = np.sum(projected ** 2, axis=1, keepdims=True)
    return projected * (1.0 + coefficients[:, 0:1] * rsq + coefficients[:, 1:2] * rsq * rsq)


def project(cams, points):
    """Where each point lands in the image of the camera in the same row."""
    in_camera = rodrigues_rotate(cams[:, 0:3], points - cams[:, 3:6])
    projected = in_camera[:, 0:2] / in_camera[:, 2:3]
    return radial_distort(cams[:, 9:11], projected) * cams[:, 6:7] + cams[:, 7:9]


def objective(cams, points, weights, observations, cam_index, point_index):
    """Sum of squared weighted reprojection errors plus the weights' penalty (1 - w²)²."""
    errors = weights[:, None] * (project(cams[cam_index], points[point_index]) - observations)
    return np.sum(errors ** 2) + np.sum((1.0 - weights ** 2) ** 2)


def inputs(size, rng):
    """Cameras about 10 units from a cloud of points, rotated by 0.2 to 0.6 radians, and
    noisy observations of their projections."""
    n_cams, n_points, n_obs = size
    axes = rng.standard_normal((n_cams, 3))
    angles = rng.uniform(0.2, 0.6, (n_cams, 1))
    rotations = axes / np.linalg.norm(axes, axis=1, keepdims=True) * angles
    centers = rng.uniform(-1.0, 1.0, (n_cams, 3)) + np.array([0.0, 0.0, -10.0])
    focal = rng.uniform(400.0, 600.0, (n_cams, 1))
    principal = rng.uniform(-5.0, 5.0, (n_cams, 2))
    distortion = rng.uniform(-0.05, 0.05, (n_cams, 2))
    cams = np.concatenate([rotations, centers, focal, principal, distortion], axis=1)
    points = rng.uniform(-2.0, 2.0, (n_points, 3))
    cam_index = rng.integers(0, n_cams, n_obs)
    point_index = np.concatenate([np.arange(n_points), rng.integers(0, n_points, n_obs - n_points)])
    weights = rng.uniform(0.8, 1.2, n_obs)
    exact = project(cams[cam_index], points[point_index])
    observations = exact + rng.normal(0.0, 2.0, exact.shape)
    return cams, points, weights, observations, cam_index, point_index
