"""``--formulation projection``: Gauss-principle projected equations in redundant coordinates
(paper 002 Sect. 3.2, eqs 6-9; Müller, Nonlinear Dyn. 67 (2012), ref. [6] there).

Gauss's principle (6), 1/2 (q'' - a)^T M (q'' - a) -> min subject to A q'' = gamma, with
a = M^-1 f the acceleration of the unconstrained system, has the solution (7)

    q'' = M^-1 N^T f + A_M^+ gamma,     A_M^+ = M^-1 A^T (A M^-1 A^T)^-1,   N = I - A_M^+ A,

free of multipliers and of any choice of independent coordinates; a change of the constraints only
changes N and A_M^+ (the property paper 002 builds its transition condition (32) on). In this
library's convention gamma = -A' q' - 2 A_t q' - Phi_tt is the right-hand side of A q'' = gamma
(= -J' q' of the paper for scleronomic constraints).

Like the paper (which assumes non-redundant constraints), the constraint rows must be independent:
redundant rows are removed by a pivoted QR (:class:`~multibody.linalg.RankTolerance`) when the run
starts and after every accepted step, never inside a step. The formulation is not meant for passing
through singular configurations (A M^-1 A^T becomes singular there): use ``lagrange``. Constraint
stabilisation (projection after the step, Baumgarte) and the reported multipliers (minimum-norm
solution of A^T lambda = f - M q'', unique for independent rows) are those of ``lagrange``.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ..errors import SimulationError
from ..linalg.rank import min_norm_solve, pivoted_qr
from ..linalg.projectors import nullspace_projector, weighted_pseudoinverse
from .base import Accelerations
from .lagrange import Lagrange


def projected_accelerations(M: np.ndarray, A: np.ndarray, f: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """q'' (n,) = M^-1 N^T f + A_M^+ gamma (paper 002 eq. 7); M (n, n) s.p.d., A (m, n) full row
    rank, f (n,), gamma (m,)."""
    try:
        chol = sla.cho_factor(M, check_finite=False)
        if A.shape[0] == 0:
            return sla.cho_solve(chol, f)
        N = nullspace_projector(M, A)
        return sla.cho_solve(chol, N.T @ f) + weighted_pseudoinverse(M, A) @ gamma
    except (sla.LinAlgError, np.linalg.LinAlgError) as exc:
        raise SimulationError(f"projection formulation: M or A M^-1 A^T is singular ({exc}); the "
                              "constraints may be at a singular configuration: use --formulation "
                              "lagrange there.") from None


class Projection(Lagrange):
    """Projected equations (7) of paper 002; see the module docstring."""

    name = "projection"

    def __init__(self, model, **options):
        super().__init__(model, **options)
        self._rows = np.arange(self.ws.m)

    def _choose_rows(self, t, q, v):
        A = self.ws.constraints(t, q, v)[1]
        self._rows = pivoted_qr(A, self.rank_tol).independent_rows if A.shape[0] else np.arange(0)

    def initial_state(self, t, q, v):
        self._choose_rows(t, q, v)
        return super().initial_state(t, q, v)

    def after_step(self, t, y):
        y_new = super().after_step(t, y)
        self._choose_rows(t, *self.split(t, y if y_new is None else y_new))
        return y_new

    def _solve(self, t, q, v):
        terms = self.ws.terms(t, q, v)
        gamma = terms.gamma
        if self.stabilization.kind == "baumgarte":
            s = self.stabilization
            gamma = gamma - 2 * s.alpha * (terms.A @ v + terms.Phi_t) - s.beta ** 2 * terms.Phi
        r = self._rows
        return terms, projected_accelerations(terms.M, terms.A[r], terms.f, gamma[r])

    def accelerations(self, t, q, v):
        terms, vdot = self._solve(t, q, v)
        lam = min_norm_solve(terms.A.T, terms.f - terms.M @ vdot)
        return Accelerations(vdot, lam, {"rank": len(self._rows), "multipliers": "minimum-norm"})

    def summary(self):
        return {"independent_constraint_rows": int(len(self._rows))}
