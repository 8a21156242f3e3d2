"""Planar rotation helpers, vectorised over many points.

Notation: A(theta) is the planar rotation matrix, B(theta) = dA/dtheta = A(theta) S with
S = [[0, -1], [1, 0]]; for a body-fixed vector s', d/dt (A s') = B s' theta' and
d2/dt2 (A s') = B s' theta'' - A s' theta'^2 (Nikravesh, Computer-Aided Analysis of Mechanical
Systems, ch. 6).
"""
from __future__ import annotations

import numpy as np


def rotate(theta: np.ndarray, s: np.ndarray) -> np.ndarray:
    """A(theta) s for theta (k,) and s (k, 2) -> (k, 2)."""
    c, sn = np.cos(theta), np.sin(theta)
    out = np.empty_like(s, dtype=np.result_type(theta, s))
    out[:, 0] = c * s[:, 0] - sn * s[:, 1]
    out[:, 1] = sn * s[:, 0] + c * s[:, 1]
    return out


def perp(u: np.ndarray) -> np.ndarray:
    """S u: the vector u (k, 2) turned by +90 degrees, so that B(theta) s = perp(A(theta) s)."""
    out = np.empty_like(u)
    out[:, 0] = -u[:, 1]
    out[:, 1] = u[:, 0]
    return out
