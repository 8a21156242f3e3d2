"""Markers: points and body-fixed directions, evaluated for many at once.

A marker hands its global position (or direction), its Jacobian with respect to the coordinates of
its body, its velocity and its convective acceleration (the acceleration when all second
derivatives vanish) to the constraints and forces that use it, so that one constraint implementation
serves every body parametrisation (Exudyn's marker idea; DESIGN.md).

Column convention: every marker stores the coordinate columns (x, y, theta) of its body. Ground and
"no rotation" (point masses) use column ``n``, the index of an extra coordinate that is always zero
(``qe = [q, 0]``); entries placed in column ``n`` of a Jacobian are dropped by the assembly. For a
ground marker the local vector is its global position.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..linalg.rotations import perp, rotate


@dataclass(frozen=True)
class MarkerValues:
    """Values of k markers at a state.

    pos (k, 2): global position (points) or global direction (vectors);
    jac (k, 2, 3): derivative of pos with respect to the body's (x, y, theta) columns;
    vel (k, 2): time derivative of pos;
    conv (k, 2): convective acceleration, d2 pos/dt2 at zero coordinate accelerations (-A s' theta'^2).
    """

    pos: np.ndarray
    jac: np.ndarray
    vel: np.ndarray
    conv: np.ndarray


@dataclass(frozen=True)
class MarkerSet:
    """k markers; ``cols`` (k, 3) int body columns (x, y, theta), ``local`` (k, 2) body-fixed vectors.

    ``is_vector`` marks body-fixed directions (no translation part).
    """

    cols: np.ndarray
    local: np.ndarray
    is_vector: bool = False

    def __len__(self) -> int:
        return len(self.local)

    def evaluate(self, qe: np.ndarray, ve: np.ndarray) -> MarkerValues:
        """Evaluate all markers; qe, ve are (n + 1,) coordinates and velocities with a trailing zero."""
        th = qe[self.cols[:, 2]]
        w = ve[self.cols[:, 2]]
        u = rotate(th, self.local)            # A s'
        bu = perp(u)                          # B s'
        k = len(u)
        jac = np.zeros((k, 2, 3), dtype=u.dtype)
        jac[:, :, 2] = bu
        vel = bu * w[:, None]
        conv = -u * (w * w)[:, None]
        if self.is_vector:
            return MarkerValues(u, jac, vel, conv)
        jac[:, 0, 0] = 1.0
        jac[:, 1, 1] = 1.0
        pos = qe[self.cols[:, :2]] + u
        vel = vel + ve[self.cols[:, :2]]
        return MarkerValues(pos, jac, vel, conv)
