"""Tangent-space bases of the constraint manifold and their continuation (paper 000 eqs 8-28 and the
derivation of its missing appendices A-C).

Notation: A (m, n) the constraint Jacobian; pivoted QR  A^T P = Q R  (eq. 23), r = rank;
Q = [Q1_ns | T] with Q1_ns = Q[:, :r] and T = Q[:, r:] (n, n - r), which is [Q1_s Q2] for m <= n
(eq. 25) and Q1_s for m > n (eq. 28); R1_ns = R[:r, :r] (the non-singular leading block).

Continuation (eqs 14-22, Appendices B and C derived here). With the pivot order P frozen over the
interval, differentiate A^T P = Q R and multiply by Q^T: Q^T A'^T P = Omega R + R', Omega = Q^T Q'
skew (eq. 15). Only the first r columns are used (those of R1_ns; the dependent columns of A^T P
repeat the same information, and R1_s is irrelevant):

    Q1_ns^T A'^T P_r R1_ns^-1 = Omega_11 + R1_ns' R1_ns^-1   ->  Omega_11 = L - L^T,
                                                               L = stril(Q1_ns^T A'^T P_r R1_ns^-1) (eq. 19)
    T^T A'^T P_r R1_ns^-1     = Omega_21                                                      (eq. 20)
    Omega_22 = T^T T' := 0    (the block acting inside the tangent subspace is kept at zero)

so that  T' = Q1_ns Omega_12 = -Q1_ns R1_ns^-T P_r^T A' T = -A_r^+ A_r' T  with A_r = P_r^T A the
independent rows: the tangent basis moves only as much as A T = 0 requires, (A T)' = 0 with
T' in the row space (for m = n and m > n, T = Q1_s and Q2 is empty; the formulas do not change).
For a constant Omega over a step h, Q_{k+1} = Q_k expm(Omega h) (eq. 22): :func:`continue_expm`; for the
continued Q = [Q1_ns | T] (the fresh Q1_ns, the carried T) Omega is :func:`omega_continued` and the whole
update with the re-orthogonalisation below is :func:`continue_basis` (``--basis continuation``).

Re-orthogonalisation (Appendix A, novelty N1): the integrated T_{k+1} is replaced by the nearest
(Frobenius) orthonormal basis of the complement of the new Q1_ns:
X = (I - Q1_ns Q1_ns^T) T,  T <- X (X^T X)^(-1/2) (polar factor; cost as listed in Sect. 2.4).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from ..linalg.rank import PivotedQR, Regularization


def tangent_basis(pqr: PivotedQR, rank: int | None = None) -> np.ndarray:
    """T (n, n - r) = Q[:, r:] of the pivoted QR (paper 000 eqs 8, 25, 28); r = pqr.rank by default."""
    r = pqr.rank if rank is None else rank
    return pqr.Q[:, r:]


def polar_factor(X: np.ndarray) -> np.ndarray:
    """X (X^T X)^(-1/2) (n, k): the orthonormal basis nearest to X in the Frobenius norm (paper 000 App. A's polar
    factor; symmetric eigen-decomposition of X^T X)."""
    lam, V = np.linalg.eigh(X.T @ X)
    return X @ (V / np.sqrt(lam)) @ V.T


def polar_reorthogonalize(T: np.ndarray, Q1: np.ndarray) -> np.ndarray:
    """Nearest orthonormal basis (n, k) to T (n, k) orthogonal to Q1 (n, r) (paper 000 App. A):
    X = (I - Q1 Q1^T) T, returns X (X^T X)^(-1/2) (symmetric eigen-decomposition of X^T X)."""
    return polar_factor(T - Q1 @ (Q1.T @ T))


def omega_matrix(pqr: PivotedQR, Adot: np.ndarray, rank: int | None = None) -> np.ndarray:
    """Omega (n, n) = Q^T Q' of the continued factorisation (paper 000 eqs 17-20, App. B/C above).

    Adot (m, n): dA/dt. Uses only the non-singular block R1_ns (r, r); Omega_22 = 0."""
    r = pqr.rank if rank is None else rank
    B = pqr.Q.T @ Adot.T[:, pqr.perm[:r]]                   # Q^T A'^T P_r  (n, r)
    return _omega_blocks(sla.solve_triangular(pqr.R[:r, :r], B.T, trans="T", lower=False).T)


def _omega_blocks(B: np.ndarray) -> np.ndarray:
    """Omega (n, n) from B = Q^T A'^T P_r R1_ns^-1 (n, r): eq. 19 (Omega_11 = L - L^T, L = stril(B_1)),
    eq. 20 (Omega_21 = B_2, Omega_12 = -B_2^T), Omega_22 = 0."""
    n, r = B.shape
    Omega = np.zeros((n, n))
    L = np.tril(B[:r], -1)
    Omega[:r, :r] = L - L.T                                  # eq. 19
    Omega[r:, :r] = B[r:]                                    # eq. 20
    Omega[:r, r:] = -B[r:].T
    return Omega


def omega_continued(AdotQ_r: np.ndarray, R1: np.ndarray, reg: Regularization = Regularization()) -> np.ndarray:
    """Omega (n, n) of eqs 19-20 for the continued Q = [Q1_ns | T] (Q1_ns, R1 (r, r) of the fresh pivoted QR,
    T the continued tangent basis): ``AdotQ_r`` (r, n) = P_r^T A' Q, the independent rows of A' Q.

    R1^-1 is applied as the smooth pseudo-inverse (:class:`SmoothPinv`): R1^-1 itself to (mu / s)^2 where
    every |R_ii| is well above mu, fading the direction that vanishes at a singular configuration
    instead of dividing by it (the derivation of App. B/C keeps only the non-singular block)."""
    return _omega_blocks((SmoothPinv.of(R1.T, reg) @ AdotQ_r).T)


def continue_basis(Q1: np.ndarray, T: np.ndarray, Omega: np.ndarray, h: float, Q1_new: np.ndarray) -> np.ndarray:
    """T_{k+1} (n, f): the tangent block of Q_k expm(Omega h) (eq. 22, Q_k = [Q1 | T], Omega frozen over the
    step) re-orthogonalised against the new Q1_ns of the QR of A_{k+1}^T (App. A, :func:`polar_reorthogonalize`;
    the continued Q1 block is discarded, Sect. 2.4)."""
    r = Q1.shape[1]
    Q = continue_expm(np.hstack([Q1, T]), Omega, h)
    return polar_reorthogonalize(Q[:, r:], Q1_new)


def continue_expm(Q: np.ndarray, Omega: np.ndarray, h: float) -> np.ndarray:
    """Q_{k+1} = Q_k expm(Omega h) (paper 000 eq. 22), Omega constant over the step."""
    return Q @ sla.expm(Omega * h)


@dataclass(frozen=True)
class SmoothPinv:
    """A regularised pseudo-inverse A_mu^+ = W diag(s / (s^2 + mu^2)) U^T, mu = reg.rel * s_max.

    A smooth function of A: no rank decision, so the right-hand side stays smooth when a singular
    configuration is crossed (the lesson of linalg.gauss_solve). A component with singular value
    s carries the relative error (mu / s)^2: round-off for s > 1e-3 s_max with rel = 1e-10; near a
    singular configuration at distance sigma the solve loses accuracy only like eps / sigma
    (the consistent right-hand sides gamma, A' T vanish like sigma there), and within about rel of
    it the component fades out, which the projection after the step repairs."""

    U: np.ndarray
    s: np.ndarray
    Wt: np.ndarray

    @classmethod
    def of(cls, A: np.ndarray, reg: Regularization = Regularization()) -> "SmoothPinv":
        U, s, Wt = np.linalg.svd(A, full_matrices=False)
        if s.size == 0 or s[0] == 0:
            return cls(U, np.zeros_like(s), Wt)
        mu = reg.rel * s[0]
        return cls(U, s / (s * s + mu * mu), Wt)

    def __matmul__(self, b: np.ndarray) -> np.ndarray:
        """A_mu^+ b for b (m,) or (m, k)."""
        c = self.U.T @ b
        c = (self.s[:, None] * c) if c.ndim == 2 else self.s * c
        return self.Wt.T @ c


def jacobian_rate_times(gamma_at, v: np.ndarray, B: np.ndarray) -> np.ndarray:
    """A' B (m, k) = (Phi_qq v + Phi_qt) B from gamma by polarisation (exact, no step size):
    gamma(q, v) = -Phi_qq[v, v] - 2 Phi_qt v - Phi_tt, so
    A' b = Phi_qq[v, b] + Phi_qt b = -(gamma(q, v + b) - gamma(q, v - b)) / 4.
    ``gamma_at(v) -> (m,)`` evaluates gamma at the fixed (t, q); B (n, k)."""
    cols = [-(gamma_at(v + b) - gamma_at(v - b)) / 4.0 for b in B.T]
    return np.stack(cols, axis=1) if cols else np.zeros((0, 0))


def smooth_reorthogonalize(T: np.ndarray, A: np.ndarray, reg: Regularization = Regularization()) -> np.ndarray:
    """App. A with the projector onto the complement of Q1_ns written as I - A_mu^+ A (SmoothPinv):
    X = T - A_mu^+ (A T), returns X (X^T X)^(-1/2). Equal to :func:`polar_reorthogonalize` with
    Q1_ns of the generic rank wherever every nonzero singular value of A exceeds ~1e3 mu; a smooth
    function of A near singular configurations (no rank decision)."""
    return polar_factor(T - SmoothPinv.of(A, reg) @ (A @ T))
