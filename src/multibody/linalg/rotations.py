"""Rotations: planar (vectorised over many points) and spatial (rigid bodies in director coordinates,
paper 004, Betsch & Leyendecker).

Planar: A(theta) is the rotation matrix, B(theta) = dA/dtheta = A(theta) S with S = [[0, -1], [1, 0]];
for a body-fixed vector s', d/dt (A s') = B s' theta' and d2/dt2 (A s') = B s' theta'' - A s' theta'^2
(Nikravesh, Computer-Aided Analysis of Mechanical Systems, ch. 6): :func:`rotate`, :func:`perp`.

Spatial: every function is vectorised over leading axes and *complex-safe* (no ``abs``, no conjugation, no
branch on a complex value), so that Jacobians of the energy-momentum residuals can be taken by
complex-step differentiation (exact to round-off).

- :func:`skew` ``a^`` of eq. (28): ``skew(a) @ b = a x b``.
- :func:`expm_so3` the Rodrigues formula, closed form of the exponential map, eq. (43).
- :func:`axis_rotation` ``exp(theta n^)`` for a unit axis n (product-of-exponentials, eqs 116, 188).
- :func:`inertia_to_euler` the Euler tensor from the inertia tensor, eq. (158): E = 1/2 tr(J) I - J.
"""
from __future__ import annotations

import numpy as np

#: below this value of |theta|^2 the Rodrigues coefficients are evaluated by their Taylor series
#: (truncation error < 1e-24 relative; the closed form loses digits like eps/|theta|^2 there)
SERIES_SWITCH = 1e-6


# ----------------------------------------------------------------------------- planar
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


# ----------------------------------------------------------------------------- spatial
def skew(a: np.ndarray) -> np.ndarray:
    """The skew-symmetric matrix of eq. (28): a (..., 3) -> (..., 3, 3)."""
    a = np.asarray(a)
    out = np.zeros(a.shape + (3,), dtype=a.dtype)
    out[..., 0, 1], out[..., 0, 2] = -a[..., 2], a[..., 1]
    out[..., 1, 0], out[..., 1, 2] = a[..., 2], -a[..., 0]
    out[..., 2, 0], out[..., 2, 1] = -a[..., 1], a[..., 0]
    return out


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b for (..., 3) arrays; complex-safe (no conjugation)."""
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    out = np.empty(a.shape, dtype=np.result_type(a, b))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def rodrigues_coefficients(s):
    """c1 = sin(x)/x and c2 = 1/2 (sin(x/2)/(x/2))^2 with x^2 = s (eq. 43), analytic in s."""
    s = np.asarray(s)
    small = np.real(s) < SERIES_SWITCH
    safe = np.where(small, 1.0, s)
    x = np.sqrt(safe)
    c1 = np.where(small, 1 - s / 6 + s * s / 120 - s ** 3 / 5040, np.sin(x) / x)
    half = np.sin(x / 2) / (x / 2)
    c2 = np.where(small, 0.5 - s / 24 + s * s / 720 - s ** 3 / 40320, 0.5 * half * half)
    return c1, c2


def expm_so3(theta: np.ndarray) -> np.ndarray:
    """exp(theta^) by the Rodrigues formula, eq. (43): theta (..., 3) -> (..., 3, 3).

    R = I + sin|t|/|t| t^ + 1/2 (sin(|t|/2)/(|t|/2))^2 (t^)^2, with |t|^2 = t.t (no conjugation)."""
    theta = np.asarray(theta)
    s = np.einsum("...i,...i->...", theta, theta)
    c1, c2 = rodrigues_coefficients(s)
    W = skew(theta)
    eye = np.broadcast_to(np.eye(3), W.shape)
    return eye + c1[..., None, None] * W + c2[..., None, None] * (W @ W)


def axis_rotation(angle: np.ndarray, axis: np.ndarray) -> np.ndarray:
    """exp(angle n^) for unit axes n (..., 3) and angles (...,): (..., 3, 3) (Rodrigues, eq. 43)."""
    angle = np.asarray(angle)
    W = skew(axis)
    eye = np.broadcast_to(np.eye(3), W.shape)
    return eye + np.sin(angle)[..., None, None] * W + (1 - np.cos(angle))[..., None, None] * (W @ W)


def inertia_to_euler(J: np.ndarray) -> np.ndarray:
    """Euler tensor from the inertia tensor (both about the centre of mass), eq. (158):
    E = 1/2 tr(J) I - J; J (3, 3) or principal values (3,) -> same shape."""
    J = np.asarray(J, dtype=float)
    if J.ndim == 1:
        return 0.5 * J.sum() - J
    return 0.5 * np.trace(J) * np.eye(3) - J


def principal_frame(J: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Principal values (3,) and a right-handed principal frame D (3, 3) (columns d_I) of a symmetric
    inertia tensor J (3, 3): J = D diag(values) D^T. Needed because eq. (17) assumes the directors
    along the principal axes."""
    vals, D = np.linalg.eigh(np.asarray(J, dtype=float))
    if np.linalg.det(D) < 0:
        D[:, 2] = -D[:, 2]
    return vals, D
