"""Index-1 formulation with Lagrange multipliers (paper 000 eq. 3 with eq. 6; paper 003 eqs 4-9):

    [ M  A^T ] [ q''    ]   [ f     ]
    [ A  0   ] [ lambda ] = [ gamma ]

q'' is computed by :func:`linalg.gauss_solve` (Gauss's principle in the singular-value basis of A),
not by factorising the augmented matrix: near a singular configuration at distance sigma the
augmented matrix loses accuracy like eps/sigma^2 (measured on the double four-bar: accelerations
wrong by O(1) at sigma = 1e-8, by 1e-4 at 1e-6), and a hard rank decision makes the right-hand side
jump, which an adaptive integrator cannot step over. Redundant constraints (rank-deficient A) drop
out of that solve by themselves: the accelerations are unique. The multipliers of a rank-deficient A
are not; the ones reported are the minimum-norm solution of A^T lambda = f - M q'' (SVD), the unique
solution whenever A has full row rank. Paper 003 explains which reactions are nonetheless unique.

Stabilisation: projection of q and v onto Phi = 0, A v + Phi_t = 0 after every accepted step
(minimum-norm Gauss-Newton; default), with the local error measured in the tangent space (the
normal part is what the projection removes); or Baumgarte's gamma - 2 alpha (A v + Phi_t) -
beta^2 Phi (Baumgarte 1972); or none.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from ..errors import MultibodyError, SimulationError
from ..kinematics import KinematicTolerance, solve_positions, solve_velocities
from ..linalg import (RankTolerance, Regularization, gauss_solve, min_norm_solve, pivoted_qr,
                      row_space_filter)
from .base import Accelerations, Formulation


@dataclass(frozen=True)
class Stabilization:
    """kind: "projection" (default), "baumgarte" or "none"; alpha, beta: Baumgarte parameters (1/s)."""

    kind: str = "projection"
    alpha: float = 5.0
    beta: float = 5.0

    def __post_init__(self):
        if self.kind not in ("projection", "baumgarte", "none"):
            raise ValueError(f"unknown stabilization '{self.kind}' (projection, baumgarte, none)")


def solve_kkt(M, A, f, gamma, reg: Regularization = Regularization()):
    """q'' of the augmented system; see :func:`linalg.gauss_solve`."""
    try:
        return gauss_solve(M, A, f, gamma, reg)
    except (sla.LinAlgError, ValueError) as exc:
        raise SimulationError(f"the mass matrix is not positive definite on the admissible motions "
                              f"({exc}); every motion the constraints allow must carry mass or inertia.") from None


class Lagrange(Formulation):
    """``--formulation lagrange``: multipliers formulation, see the module docstring."""

    name = "lagrange"

    def __init__(self, model, *, stabilization: Stabilization = Stabilization(),
                 regularization: Regularization = Regularization(),
                 rank_tol: RankTolerance = RankTolerance(),
                 projection_tol: KinematicTolerance = KinematicTolerance(max_iterations=10)):
        super().__init__(model)
        self.stabilization = stabilization
        self.regularization = regularization
        self.rank_tol = rank_tol
        self.projection_tol = projection_tol
        if stabilization.kind == "projection" and self.ws.m:
            self.error_filter = self._tangent_error

    def _solve(self, t, q, v):
        terms = self.ws.terms(t, q, v)
        gamma = terms.gamma
        if self.stabilization.kind == "baumgarte":
            s = self.stabilization
            gamma = gamma - 2 * s.alpha * (terms.A @ v + terms.Phi_t) - s.beta ** 2 * terms.Phi
        return terms, solve_kkt(terms.M, terms.A, terms.f, gamma, self.regularization)

    def rhs(self, t, y):
        self.nfev += 1
        q, v = self.split(y)
        return np.concatenate([v, self._solve(t, q, v)[1]])

    def accelerations(self, t, q, v):
        terms, vdot = self._solve(t, q, v)
        lam = min_norm_solve(terms.A.T, terms.f - terms.M @ vdot, self.rank_tol)
        rank = pivoted_qr(terms.A, self.rank_tol).rank
        return Accelerations(vdot, lam, {"rank": rank, "multipliers": "minimum-norm"})

    def after_step(self, t, y):
        if self.stabilization.kind != "projection" or self.ws.m == 0:
            return None
        q, v = self.split(y)
        try:
            q = solve_positions(self.model, q, t, ws=self.ws, tol=self.projection_tol)
        except MultibodyError as exc:
            raise SimulationError(f"projection onto the constraints failed at t = {t:g}: {exc}") from None
        v = solve_velocities(self.model, q, v, t, ws=self.ws, tol=_NO_CHECK)
        return np.concatenate([q, v])

    def _tangent_error(self, t, y, err):
        """The local error with its components normal to the constraint manifold scaled down by
        NORMAL_ERROR_WEIGHT, for the integrator's step-size control: the projection after the step
        removes them, so they need not meet the tolerance, only stay small enough for the projection
        to land on the nearest point of the same assembly branch."""
        n = self.model.n
        q, v = self.split(y)
        A = self.ws.constraints(t, q, v)[1]
        out = err.copy()
        qv = err[:2 * n].reshape(2, n).T
        tangent = row_space_filter(A, qv)
        out[:2 * n] = (tangent + NORMAL_ERROR_WEIGHT * (qv - tangent)).T.ravel()
        return out


#: weight of the normal part of the local error (see Lagrange._tangent_error): the normal error may be
#: 1e4 times the tolerance. Near a singular configuration (distance < ~1e-8) the accelerations along the
#: vanishing directions are dominated by round-off (eps / distance); without this weight an adaptive
#: step collapses there at tight tolerances (measured on the double four-bar at rtol 1e-10).
NORMAL_ERROR_WEIGHT = 1e-4


_NO_CHECK = KinematicTolerance(consistency=np.inf)
