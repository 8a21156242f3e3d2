"""The projective criterion for coordinate partitioning (paper 001 Sect. 3, eqs 16-23).

Notation (paper 001 Sect. 2 with our names): q (n,) = [q_I (k,), q_D (r,)] symbolically; the
constraint Jacobian C = Phi_q (paper 001 eq. 1; ``A`` in :mod:`multibody.assembly`) restricted to r
independent rows; C_I (r, k), C_D (r, r) its columns of q_I and q_D. The paper's matrix
A = -C_D^{-1} C_I (eq. 7) is called ``J_DI`` here (it is dq_D/dq_I), because ``A`` is our
constraint Jacobian. D = [I^(k)  J_DI^T] (k, n) in the column order of q (eq. 9); D C^T = 0.

Criterion (eqs 19, 23): for every coordinate i, with k_i* the i-th unit vector (eq. 16),

    cos^2 alpha_i = D_i^T M_d^{-1} D_i / M^{-1}(i, i),              M_d = D M D^T      (23 a)
    cos^2 beta_i  = (C M^-1)_i^T M_c^{-1} (C M^-1)_i / M^{-1}(i, i),  M_c = C M^-1 C^T  (23 b)

(D_i, (C M^-1)_i the i-th columns). Both are squared cosines of the angles, in the metric M of the
configuration space, between the coordinate direction k_i and its projections onto the tangent and
the constrained subspace; they add up to one (M^-1 = T_cd^T M_cd^-1 T_cd, eqs 11, 15). cos^2 alpha
does not depend on which admissible partition D is built from (all span the same tangent subspace,
paper 001 after eq. 26). The bigger cos^2 alpha_i, the better q_i serves as an independent
coordinate; cos^2 alpha_i = 0 marks a singular choice.

Choosing k coordinates: Z (k, n) = L_d^{-1} D diag(M^-1(i,i))^{-1/2} (M_d = L_d L_d^T) has column
norms |Z_i|^2 = cos^2 alpha_i. The chooser takes the columns of Z by QR with column pivoting: the
first is the coordinate with the largest cos^2 alpha (for k = 1 the paper's rule exactly), each next
one the coordinate with the largest tangent projection left after removing the directions already
chosen. The quality of a set I is sigma_min(Z[:, I])^2: cos^2 alpha_i for k = 1, and zero exactly
when C_D is singular (the choice is inadmissible). With M = I the same construction is the
geometry-only choice (orthonormal tangent basis, as by SVD; paper 001 Sect. 6, refs [4]-[6]).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from ..assembly import Workspace
from ..errors import MultibodyError
from ..linalg.rank import RankTolerance, pivoted_qr
from ..model.system import Model

#: C_D counts as singular when its smallest LU pivot is below this fraction of its largest entry
SINGULAR_PIVOT = 1e-13


@dataclass(frozen=True)
class Partition:
    """independent (k,) and dependent (r,) coordinate columns (sorted), rows (r,): the independent
    constraint rows used (all rows unless some are redundant)."""

    independent: tuple[int, ...]
    dependent: tuple[int, ...]
    rows: tuple[int, ...]

    @classmethod
    def from_independent(cls, n: int, independent, rows) -> "Partition":
        ind = tuple(sorted(int(i) for i in independent))
        dep = tuple(i for i in range(n) if i not in ind)
        return cls(ind, dep, tuple(int(r) for r in rows))

    def names(self, model: Model) -> list[str]:
        """Names of the independent coordinates."""
        return [model.coordinate_names[i] for i in self.independent]


def admissible_partition(C: np.ndarray, tol: RankTolerance = RankTolerance()) -> Partition:
    """A geometrically admissible partition (C_D nonsingular) from QR with column pivoting of C.

    C (m, n). Rows: the independent rows found by :func:`multibody.pivoted_qr`; dependent columns: the
    first r pivots of the column-pivoted QR of those rows (the best conditioned C_D the greedy
    pivoting finds, in the spirit of Wehage & Haug's pivoted factorisation, paper 001 ref. [1])."""
    m, n = C.shape
    rows = pivoted_qr(C, tol).independent_rows if m else np.zeros(0, int)
    if len(rows) == 0:
        return Partition.from_independent(n, range(n), ())
    perm = sla.qr(C[rows], pivoting=True, mode="r")[1]
    return Partition.from_independent(n, perm[len(rows):], rows)


def tangent_matrix(C: np.ndarray, part: Partition) -> tuple[np.ndarray, np.ndarray]:
    """D (k, n) and J_DI (r, k) = -C_D^{-1} C_I of paper 001 eqs 7 and 9 for the partition.

    C (m, n) the full Jacobian (only ``part.rows`` are used). Raises MultibodyError if C_D is
    singular (the partition is inadmissible)."""
    Cr = C[list(part.rows)]
    I, Dc = list(part.independent), list(part.dependent)
    n, k = C.shape[1], len(I)
    J_DI = -_solve_CD(Cr[:, Dc], Cr[:, I]) if Dc else np.zeros((0, k))
    D = np.zeros((k, n))
    D[:, I] = np.eye(k)
    D[:, Dc] = J_DI.T
    return D, J_DI


def _solve_CD(C_D: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    lu, piv = sla.lu_factor(C_D, check_finite=False)
    if np.min(np.abs(np.diag(lu))) <= SINGULAR_PIVOT * np.max(np.abs(C_D), initial=0.0):
        raise MultibodyError("the dependent-coordinate block C_D of the constraint Jacobian is singular: "
                             "the chosen independent coordinates are inadmissible here.")
    return sla.lu_solve((lu, piv), rhs, check_finite=False)



@dataclass(frozen=True)
class Criterion:
    """cos2_alpha (n,), cos2_beta (n,) of paper 001 eq. 23; Z (k, n) the scaled tangent
    representation (module docstring); partition: the admissible partition D was built from;
    metric: "mass" (paper 001) or "geometry" (M = I)."""

    cos2_alpha: np.ndarray
    cos2_beta: np.ndarray
    Z: np.ndarray
    partition: Partition
    metric: str = "mass"

    @property
    def k(self) -> int:
        return self.Z.shape[0]

    def quality(self, independent) -> float:
        """sigma_min(Z[:, I])^2: cos^2 alpha_i for one coordinate, 0 for an inadmissible set."""
        I = list(independent)
        if not I:
            return 1.0
        return float(np.linalg.svd(self.Z[:, I], compute_uv=False)[-1] ** 2)

    def best(self) -> tuple[int, ...]:
        """The chosen independent set (sorted), see the module docstring."""
        if self.k == 0:
            return ()
        perm = sla.qr(self.Z, pivoting=True, mode="r")[1]
        return tuple(sorted(int(i) for i in perm[: self.k]))

    def best_partition(self) -> Partition:
        return Partition.from_independent(self.Z.shape[1], self.best(), self.partition.rows)


def set_quality(M: np.ndarray, Md: np.ndarray, independent) -> float:
    """Criterion.quality of the partition's own independent set I from its M_d = D M D^T (k, k; eq. 13) and M (n, n),
    without the other coordinates: Z[:, I] = L_d^-1 S^-1 (D[:, I] = I, S = diag(M^-1(i, i))^(1/2) over I; the module
    docstring), so sigma_min(Z[:, I])^2 = 1 / lambda_max(S M_d S). For k = 1 it is cos^2 alpha_i = 1 / (M^-1(i, i) M_d)
    of eq. 23 a. Cheap enough for every right-hand side (partitioning's step guard, formulations.partition_guard)."""
    I = list(independent)
    rows = M[I]
    if np.count_nonzero(rows) == len(I):          # the rows of I only on the diagonal: M^-1(i, i) = 1 / M(i, i)
        minv = 1.0 / rows[np.arange(len(I)), I]
    else:
        minv = np.diag(np.linalg.inv(M))[I]
    if len(I) == 1:
        return float(1.0 / (minv[0] * Md[0, 0]))
    s = np.sqrt(minv)                                                                   # M^-1(i, i)^(1/2), eq. 19
    return float(1.0 / np.linalg.eigvalsh(s[:, None] * Md * s[None, :])[-1])


def criterion(M: np.ndarray, C: np.ndarray, partition: Partition | None = None,
              tol: RankTolerance = RankTolerance(), metric: str = "mass") -> Criterion:
    """The projective criterion (paper 001 eqs 16-23) at a configuration.

    M (n, n) symmetric positive definite mass matrix (the metric), C (m, n) constraint Jacobian;
    partition: an admissible partition to build D from (default :func:`admissible_partition`)."""
    n = C.shape[1]
    part = partition or admissible_partition(C, tol)
    Lm = _cholesky(M, "the mass matrix M")
    Minv = np.linalg.solve(Lm.T, np.linalg.solve(Lm, np.eye(n)))
    scale = np.diag(Minv)                                          # |k_i|^2 = M^-1(i, i), eq. 19
    D, _ = tangent_matrix(C, part)
    k = D.shape[0]
    if k:
        Ld = _cholesky(D @ M @ D.T, "M_d = D M D^T")               # eq. 13, M_d = L_d L_d^T
        Z = np.linalg.solve(Ld, D) / np.sqrt(scale)
    else:
        Z = np.zeros((0, n))
    cos2_alpha = np.einsum("ki,ki->i", Z, Z)                       # eq. 23 a
    Cr = C[list(part.rows)]
    if Cr.shape[0]:
        K = Cr @ Minv                                              # columns k_i^{*(c)}, eq. 18
        Lc = _cholesky(K @ Cr.T, "M_c = C M^-1 C^T")               # eq. 15
        Y = np.linalg.solve(Lc, K)
        cos2_beta = np.einsum("ki,ki->i", Y, Y) / scale            # eq. 23 b
    else:
        cos2_beta = np.zeros(n)
    return Criterion(cos2_alpha, cos2_beta, Z, part, metric)


def _cholesky(S: np.ndarray, what: str) -> np.ndarray:
    """Lower Cholesky factor L (S = L L^T). (numpy, not scipy's triangular solver: measured 15 ms
    per call on 1x1 to 3x3 matrices on the shared test machine, against microseconds here.)"""
    try:
        return np.linalg.cholesky(S)
    except np.linalg.LinAlgError:
        raise MultibodyError(f"{what} is not positive definite: every coordinate must carry mass or "
                             "inertia, and the constraints must leave an admissible partition.") from None


def geometric_criterion(C: np.ndarray, partition: Partition | None = None,
                        tol: RankTolerance = RankTolerance()) -> Criterion:
    """The same projections with the Euclidean metric M = I: geometry only, masses ignored (the
    choice an SVD of the Jacobian makes, paper 001 Sect. 6)."""
    return criterion(np.eye(C.shape[1]), C, partition, tol, metric="geometry")


def choose_independent(M: np.ndarray, C: np.ndarray, tol: RankTolerance = RankTolerance()) -> Partition:
    """The best independent coordinates by the projective criterion (mass metric)."""
    return criterion(M, C, tol=tol).best_partition()


def geometric_choice(C: np.ndarray, tol: RankTolerance = RankTolerance()) -> Partition:
    """The best independent coordinates by geometry alone (M = I), for comparison."""
    return geometric_criterion(C, tol=tol).best_partition()


def criterion_at(model: Model, q: np.ndarray, t: float = 0.0, *, metric: str = "mass",
                 ws: Workspace | None = None, partition: Partition | None = None) -> Criterion:
    """The criterion of a model at configuration q and time t; metric "mass" or "geometry"."""
    if metric not in ("mass", "geometry"):
        raise MultibodyError(f"unknown metric '{metric}' (mass or geometry).")
    ws = ws or Workspace(model)
    q = np.asarray(q, float)
    C = ws.constraints(t, q, np.zeros(model.n))[1]
    if metric == "geometry":
        return geometric_criterion(C, partition)
    return criterion(model.mass(q), C, partition)
