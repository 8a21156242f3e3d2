"""M-weighted projectors, minimal coordinates and orthogonal complements of constraint Jacobians
(paper 002 Sect. 3: eqs 7 and 10; Fig. 4a's generalized momenta).

Used by the projected and minimal formulations, by the transition conditions at constraint activation
(:mod:`multibody.simulation.transitions`) and by the event log's momenta.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

def weighted_pseudoinverse(M: np.ndarray, J: np.ndarray) -> np.ndarray:
    """J_M^+ = M^-1 J^T (J M^-1 J^T)^-1 (n, m), the M-weighted right pseudoinverse (paper 002 eq. 7).

    M (n, n) symmetric positive definite, J (m, n) of full row rank."""
    if J.shape[0] == 0:
        return np.zeros((M.shape[0], 0))
    chol = sla.cho_factor(M)
    MinvJt = sla.cho_solve(chol, J.T)
    return MinvJt @ np.linalg.solve(J @ MinvJt, np.eye(J.shape[0]))


def nullspace_projector(M: np.ndarray, J: np.ndarray) -> np.ndarray:
    """N_{J,M} = I - J_M^+ J (n, n), the M-weighted projector onto the null space of J (eq. 7)."""
    return np.eye(M.shape[0]) - weighted_pseudoinverse(M, J) @ J


def independent_coordinates(J: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(p, s): dependent and independent coordinate indices for J (m, n) of full row rank m.

    The QR factorisation of J with column pivoting puts the m best-conditioned columns first: those
    are the dependent coordinates p (Jp invertible), the rest the minimal coordinates s (paper 002
    Sect. 3.3). Both index arrays are sorted."""
    m, n = J.shape
    if m == 0:
        return np.zeros(0, int), np.arange(n)
    perm = sla.qr(J, pivoting=True, mode="r")[1]
    return np.sort(perm[:m]), np.sort(perm[m:])


def orthogonal_complement(J: np.ndarray, s: np.ndarray | None = None) -> np.ndarray:
    """F (n, n - m) with J F = 0 and F[s] = I: F = [-Jp^-1 Js; I] (paper 002 eq. 10), in the
    original coordinate order. ``s`` (n - m,): the minimal coordinates (default: chosen by
    :func:`independent_coordinates`)."""
    m, n = J.shape
    if s is None:
        p, s = independent_coordinates(J)
    else:
        p = np.setdiff1d(np.arange(n), s)
    F = np.zeros((n, n - m))
    F[s, np.arange(n - m)] = 1.0
    if m:
        F[p] = -np.linalg.solve(J[:, p], J[:, s])
    return F


def generalized_momenta(M: np.ndarray, J: np.ndarray, v: np.ndarray, s: np.ndarray | None = None):
    """P = F^T M v (n - m,), the generalized momenta conjugate to the minimal coordinates s
    (paper 002 Sect. 6, Fig. 4a); for locked joints of a serial chain, the momenta of the unlocked
    joints. Returns (P, s)."""
    if s is None:
        s = independent_coordinates(J)[1]
    return orthogonal_complement(J, s).T @ (M @ v), s
