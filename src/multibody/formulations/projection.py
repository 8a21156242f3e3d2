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
starts and after every accepted step, never inside a step.

Singular configurations (issue 12): A M^-1 A^T has the condition number (s_max / s_min)^2 of A's singular
values, so (7) evaluated near a singular configuration carries round-off eps (s_max / s_min)^2 into the
acceleration of the weakly constrained direction, which the index-1 equations integrate twice; at rtol 1e-12
the adaptive step collapsed there (measured on the double four-bar: 9e-9 s at t = 0.714, dopri5 and dop853).
Inside the window s_min < ``lagrange.PIN`` s_max of a singular configuration, (6) is minimised directly
instead, in the singular-value basis of A (``linalg.rank.gauss_solve`` with lagrange's
penalty): the constraint directions with s_i >= PIN s_max are enforced to round-off ((mu / s_i)^8 <= 1e-16),
so at the edge of the window both evaluations are the same function to round-off and the right-hand side
does not jump; the vanishing direction follows Gauss's principle without its constraint, which the
projection after the step (shared with lagrange, corrects only s_i > PIN s_max) leaves alone. This is the
lagrange formulation's construction; measured with it the double four-bar stays on its branch at rtol
1e-4..1e-12 (benchmarks/singular_matrix.py). Constraint
stabilisation (projection after the step, Baumgarte) and the reported multipliers (minimum-norm
solution of A^T lambda = f - M q'', unique for independent rows) are those of ``lagrange``.

Large models (issue 12, the N-four-bar with 40 cells, n = 243): eq. 7 in the form above is the Schur-complement solve
of lagrange's sparse path (linalg.sparse.schur_accelerations, fast.band: S = A M^-1 A^T factorised, q'' = a + M^-1 A^T
S^-1 (gamma - A a)), so the projection formulation takes that path where lagrange would (``schur_solve``; automatic for
n >= 150 with independent rows, option ``sparse``), with its dense window next to a singular configuration
(formulations.lagrange_sparse: inside it this class's dense solve above, the pinned projection and the extended-precision
polish). Every row is kept there: the factorisation of S proves them independent at every evaluation outside the
window, and inside it Gauss's principle needs no rank decision. Before, every evaluation factorised M and S densely and
took an SVD of A (for the window), and every step a dense projection, pivoted QR and error filter: 317 s CPU for 20 s
at dopri5 rtol 1e-10 against lagrange's 25-34 s, with the same steps; now ~20 s (docs/guide/singular.md).
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ..errors import SimulationError
from ..linalg.rank import gauss_solve, min_norm_solve, pivoted_qr
from .base import Accelerations
from .lagrange import LAGRANGE_REGULARIZATION, PIN, Lagrange


def projected_accelerations(M: np.ndarray, A: np.ndarray, f: np.ndarray, gamma: np.ndarray,
                            window: float = 0.0) -> np.ndarray:
    """q'' (n,) = M^-1 N^T f + A_M^+ gamma (paper 002 eq. 7); M (n, n) s.p.d., A (m, n) full row
    rank, f (n,), gamma (m,). Evaluated as a + M^-1 A^T (A M^-1 A^T)^-1 (gamma - A a), a = M^-1 f (eq. 7 with N^T =
    I - A^T (A_M^+)^T expanded): matrix-vector products instead of the n x n projector N (O(n^2 m) instead of
    O(n^3) per call: 25 -> 11 ms on the N-four-bar with 40 cells). Where s_min < ``window`` * s_max (singular values of A), the minimiser of
    Gauss's principle (eq. 6) by ``linalg.rank.gauss_solve`` instead (module docstring)."""
    try:
        chol = sla.cho_factor(M, check_finite=False)
        if A.shape[0] == 0:
            return sla.cho_solve(chol, f)
        if window > 0:
            s = np.linalg.svd(A, compute_uv=False)
            if s[-1] < window * s[0]:
                return gauss_solve(M, A, f, gamma, LAGRANGE_REGULARIZATION)
        a = sla.cho_solve(chol, f)                      # M^-1 f, the unconstrained acceleration
        B = sla.cho_solve(chol, A.T)                    # M^-1 A^T
        return a + B @ np.linalg.solve(A @ B, gamma - A @ a)
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

    @property
    def schur_solve(self) -> bool:
        """Eq. 7 is the Schur-complement formula of the sparse path (module docstring): True."""
        return True

    def _choose_rows(self, t, q, v):
        if self.sparse:         # every row, independent by the factorisation of S (module docstring)
            return
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
        return terms, projected_accelerations(terms.M, terms.A[r], terms.f, gamma[r], PIN)

    def accelerations(self, t, q, v):
        if self.sparse:
            return super().accelerations(t, q, v)
        terms, vdot = self._solve(t, q, v)
        lam = min_norm_solve(terms.A.T, terms.f - terms.M @ vdot)
        return Accelerations(vdot, lam, {"rank": len(self._rows), "multipliers": "minimum-norm"})

    def summary(self):
        return {**super().summary(), "independent_constraint_rows": int(len(self._rows))}
