"""Rank-revealing factorisations and rank decisions with named, scale-relative tolerances.

The rank of A (m, n) is decided from the QR factorisation of A^T with column pivoting,
A^T P = Q R (paper 000 eqs 23-28; paper 003 eq. 21): |R_11| >= |R_22| >= ..., and

    rank = #{ i : |R_ii| > rtol * |R_11| }  (and |R_11| > atol),

with ``RankTolerance.rtol`` default sqrt(eps) = 1.5e-8. Structural redundancy gives |R_ii| at
round-off level (~1e-16 |R_11|), a regular configuration |R_ii| of order one relative to |R_11|;
|R_ii| falls continuously to zero when a singular configuration is approached, so the rank drops only
within about rtol (relative, in configuration units) of it. The value sqrt(eps) balances the two
errors of a solve near a singular configuration at distance sigma (measured, double four-bar):
round-off amplified as eps/sigma while the row is kept, and the neglected reaction component
sigma |lambda| once it is dropped; both are ~1e-8 relative at the switch.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla


@dataclass(frozen=True)
class RankTolerance:
    """rtol: relative to the largest ``|R_ii|``; atol: absolute floor (a zero matrix has rank 0)."""

    rtol: float = float(np.sqrt(np.finfo(float).eps))
    atol: float = 1e-300


@dataclass(frozen=True)
class PivotedQR:
    """A^T P = Q R, with Q (n, n), R (n, m), perm (m,) the row order of A, rank, R_diag (min(m, n),)."""

    Q: np.ndarray
    R: np.ndarray
    perm: np.ndarray
    rank: int
    R_diag: np.ndarray
    tolerance: RankTolerance

    @property
    def independent_rows(self) -> np.ndarray:
        """Rows of A that pivoting found independent (sorted)."""
        return np.sort(self.perm[: self.rank])

    @property
    def redundant_rows(self) -> np.ndarray:
        """Rows of A that pivoting found dependent on the others (sorted)."""
        return np.sort(self.perm[self.rank:])

    @property
    def null_space(self) -> np.ndarray:
        """Q2 (n, n - rank): an orthonormal basis of the null space of A (the tangent space)."""
        return self.Q[:, self.rank:]


def pivoted_qr(A: np.ndarray, tolerance: RankTolerance = RankTolerance()) -> PivotedQR:
    """QR with column pivoting of A^T (paper 000 eq. 23) and the rank decision described above."""
    m, n = A.shape
    if m == 0:
        return PivotedQR(np.eye(n), np.zeros((n, 0)), np.zeros(0, int), 0, np.zeros(0), tolerance)
    Q, R, perm = sla.qr(A.T, pivoting=True, mode="full")
    diag = np.abs(np.diag(R))
    rank = _rank_from_diag(diag, tolerance)
    return PivotedQR(Q, R, perm, rank, diag, tolerance)


def svd(A: np.ndarray, full_matrices: bool = True, compute_uv: bool = True):
    """numpy.linalg.svd (LAPACK gesdd), or where it does not converge LAPACK gesvd (scipy.linalg.svd), the QR-iteration
    SVD that converges where the divide-and-conquer one may not (Demmel, Applied Numerical Linear Algebra, Sect. 5.4):
    seen under OPENBLAS_CORETYPE=Prescott on the N-four-bar with 10 cells, A (62, 63) with ten singular values
    ~1e-13, in the singular tracker's projection."""
    try:
        return np.linalg.svd(A, full_matrices=full_matrices, compute_uv=compute_uv)
    except np.linalg.LinAlgError:
        return sla.svd(A, full_matrices=full_matrices, compute_uv=compute_uv, lapack_driver="gesvd", check_finite=False)


def _rank_from_diag(diag: np.ndarray, tol: RankTolerance) -> int:
    if diag.size == 0 or diag[0] <= tol.atol:
        return 0
    return int(np.count_nonzero(diag > tol.rtol * diag[0]))


def generic_ratio(A: np.ndarray, generic: int, tolerance: RankTolerance = RankTolerance()) -> tuple[float, int, float]:
    """(sigma_r / sigma_1, r, sigma_1) of A by its singular values, r = max(``generic``, rank of A): the generic rank
    is the largest rank seen along a run, and sigma_r falls to zero at a singular configuration (paper 000 Sect.
    2.5). The ratio is 1 without rows, for A = 0 or while r = 0."""
    return generic_ratio_of_values(svd(A, compute_uv=False), generic, tolerance)


def generic_ratio_of_values(s: np.ndarray, generic: int,
                            tolerance: RankTolerance = RankTolerance()) -> tuple[float, int, float]:
    """:func:`generic_ratio` from A's singular values s (descending), where they are at hand already."""
    if not s.size or s[0] <= 0:
        return 1.0, generic, 0.0
    generic = max(generic, int(np.count_nonzero(s > tolerance.rtol * s[0])))
    return (float(s[generic - 1] / s[0]) if generic else 1.0), generic, float(s[0])


def min_norm_solve(A: np.ndarray, b: np.ndarray, tolerance: RankTolerance = RankTolerance()) -> np.ndarray:
    """The minimum-norm least-squares solution x = A^+ b (SVD, LAPACK gelsd), with singular values
    below ``tolerance.rtol`` times the largest treated as zero (numerically dependent rows)."""
    if A.size == 0:
        return np.zeros(A.shape[1])
    return sla.lstsq(A, b, cond=tolerance.rtol, lapack_driver="gelsd")[0]


def pinned_solve(A: np.ndarray, r: np.ndarray, pin: float) -> tuple[np.ndarray, np.ndarray, float]:
    """(x, r_pinned, s_max): x = A_pin^+ r, the minimum-norm solution of A x = r restricted to the singular
    directions that the constraints pin down (s_i > pin * s_max; truncated SVD, Golub & Van Loan Sect.
    5.5.4), and r_pinned = U_k U_k^T r, the part of r those directions can remove.

    Why (issue 12): a constraint with singular value s_i determines q along its right singular vector
    only to eps L / s_i (Phi is evaluated with round-off eps L). Near a singular configuration at
    distance sigma, s_i ~ sigma and a full inverse turns that round-off into position errors eps L /
    sigma along the motions of the other assembly branch and velocity errors eps L omega / sigma^2 (the
    velocity projection at the noisy q): the adaptive step then collapses and the run may leave its
    branch. Directions with s_i <= pin s_max are left as the integrator predicted them (the prediction
    is accurate to the local error tolerance); the caller's error control must then measure them at
    full weight (see :func:`row_space_filter`)."""
    if A.size == 0:
        return np.zeros(A.shape[1]), np.zeros(A.shape[0]), 0.0
    U, s, Wt = svd(A, full_matrices=False)
    k = int(np.count_nonzero(s > pin * s[0])) if s[0] > 0 else 0
    c = U[:, :k].T @ r
    return Wt[:k].T @ (c / s[:k]), U[:, :k] @ c, float(s[0])



@dataclass(frozen=True)
class Regularization:
    """Relative penalty width of :func:`gauss_solve`: mu = rel * s_max (s the singular values of A).

    Integrated over one crossing of a singular configuration the penalty changes the motion by ~rel
    (double four-bar, exact states through the crossing: crank rate -0.81 rel rad/s, i.e. 8e-11 rad/s for
    rel = 1e-10, and 8e-15 for 1e-14); at the tolerances that pass such crossings (rtol >= 1e-11, docs/guide/performance.md
    "Known limit") other errors dominate (a run with rel = 1e-14 had the same tip error), so rel stays."""

    rel: float = 1e-10
    #: the penalty is (s_i / mu)^(2 power): power 1 is Bayo & Ledesma's quadratic penalty; a higher power
    #: makes the fade sharp (issue 12: constraints with s_i >= 100 mu enforced to round-off at power 4)
    power: int = 1


def small_solve(K: np.ndarray, b: np.ndarray) -> np.ndarray:
    """x = K^-1 b for a small dense symmetric positive definite K (LAPACK gesv through NumPy: about
    4 us for n = 15 against 15 us for scipy.linalg.solve's checks, measured). Raises
    numpy.linalg.LinAlgError if K is singular."""
    return np.linalg.solve(K, b)


def gauss_solve(M: np.ndarray, A: np.ndarray, f: np.ndarray, gamma: np.ndarray,
                reg: Regularization = Regularization()) -> np.ndarray:
    """Accelerations a (n,) of M a + A^T lam = f, A a = gamma, smooth through singular configurations.

    a minimises Gauss's constraint  (a - M^-1 f)^T M (a - M^-1 f) + mu^-2 |A a - gamma|^2
    (Gauss's principle, paper 002 eq. 6, with the constraints enforced by a penalty as in Bayo &
    Ledesma 1996). In the singular-value basis A = U S W^T, a = W b with

        (W^T M W + mu^-2 S^2) b = W^T f + mu^-2 S U^T gamma,

    solved after the diagonal scaling D = diag(K)^(-1/2), so the penalty does not spoil the
    conditioning: a constrained component carries the relative error (mu/s_i)^2, which is round-off
    for every s_i > 1e-3 s_max when rel = 1e-10. Dependent rows (s_i = 0: redundant constraints)
    drop out by themselves and their directions follow the dynamics: the accelerations are unique.
    Why not the augmented matrix: at distance sigma from a singular configuration its factorisation
    loses accuracy like eps/sigma^2 and a hard rank decision makes the right-hand side jump; this
    solve is a smooth function of the state. Within about rel (configuration units) of a singular
    configuration the constrained component fades into the dynamic one; the projection after the
    step removes what that window leaves (measured on the double four-bar: error < 1e-7 at 1e-6
    from the singular configuration).
    """
    m, n = A.shape
    if m == 0:
        return small_solve(M, f)
    U, s, Wt = svd(A, full_matrices=True)
    W, k = Wt.T, len(s)
    if s[0] == 0:
        return small_solve(M, f)
    penalty = (s / (reg.rel * s[0])) ** (2 * reg.power)
    K = W.T @ M @ W
    K[np.arange(k), np.arange(k)] += penalty
    rhs = W.T @ f
    pos = s > 0
    rhs[:k][pos] += penalty[pos] / s[pos] * (U[:, :k].T @ gamma)[pos]
    d = 1.0 / np.sqrt(np.diag(K))
    b = d * small_solve(d[:, None] * K * d[None, :], d * rhs)
    return W @ b


#: weight of the normal part of the local error (formulations.lagrange: Lagrange._tangent_error, with
#: row_space_filter below): the normal error may be
#: 1e4 times the tolerance. Near a singular configuration (distance sigma) the states carry round-off
#: along the vanishing directions: eps L / sigma in positions (|Phi| cannot go below ~eps L), hence
#: omega eps L / sigma^2 in velocities and omega^2 eps L / sigma^3 in accelerations (measured on the double
#: four-bar at sigma = 1.9e-6: 1.4e3 m/s^2); without this weight an adaptive step collapses there at tight
#: tolerances (measured on the double four-bar at rtol 1e-10).
NORMAL_ERROR_WEIGHT = 1e-4


def row_space_filter(A: np.ndarray, x: np.ndarray, rel: float = 1e-13) -> np.ndarray:
    """x (n,) or (n, k) with its components in the row space of A removed: (I - A^+ A) x."""
    if A.size == 0:
        return x
    _, s, Wt = svd(A, full_matrices=False)
    rows = Wt[s > rel * s[0]] if s[0] > 0 else Wt[:0]
    return x - rows.T @ (rows @ x)
