"""The sparse pieces of the Lagrange formulation for large models (issue 7 item 3): accelerations by the
Schur complement S = A M^-1 A^T (paper 000 eqs 3, 6; paper 003 eqs 4-9) with SuperLU
(:mod:`multibody.linalg.sparse`). Needs A of full row rank; see :func:`multibody.assembly.use_sparse`.

Near a singular configuration A loses rank and the factorisation of S refuses (its pivot ratio falls below
linalg.sparse.SPARSE_PIVOT_RATIO). Such evaluations take the dense reference solve of the formulation
(Gauss's principle in the singular-value basis of A, smooth through the singular configuration and on the
same branch; issue 12) instead of stopping the run; they are counted in the summary
(``dense_fallback_evaluations``). A model whose A is rank deficient from the first evaluation on has
redundant rows, not a crossing: that still stops with the message to use the dense path.

The dense window (issue 12, N-four-bar with 40 cells at rtol 1e-12): within sigma_min / sigma_max < DENSE_WINDOW of A
(:func:`conditioning`, decided after every accepted step from that state and its linear extrapolation one step of the
same length ahead, like formulations.crossing_window) every piece of the step is the dense path's, the same functions
as with ``sparse=False``: the acceleration solve of Gauss's principle with its penalty fade (linalg.gauss_solve), the
pinned projection (directions with s_i > PIN s_max), then the extended-precision polish
(formulations.extended_projection) and the error filter over every direction with s_i > WINDOW_PIN s_max. Why: the
sparse solves enforce and invert every direction down to the pivot ratio SPARSE_PIVOT_RATIO (s_min / s_max ~ 1e-6),
so the velocity projection put the position round-off along the vanishing directions, amplified by 1 / s^2, into the
velocity (2e-7 of the speed, 2e5 tolerances at rtol 1e-12, a loud stop 4e-5 s before the first crossing); the dense
rules pin only s_i > 1e-4 s_max and evaluate the residuals in extended precision (double-double,
formulations.extended_residuals). Why the polish and filter reach further than PIN: a direction left uncorrected
(s = 5e-5 s_max next to the crossing) kept the residual u^T A v ~ 3e-18 of rounding q, whose level set turns
within the crossing step (measured: its error 8.5 tolerances, 0.15 from the exact state; 0.076 with WINDOW_PIN),
and with residuals in extended precision its correction errs only by eps_x |v| / s_i. Outside
the window every s_i > DENSE_WINDOW s_max: the penalty (mu / s_i)^8 <= 1e-24 and the pin change nothing there, so
both paths are the same function to round-off and the right-hand side does not jump where the window opens. Its cost:
one shift-invert Lanczos estimate per step (~1 ms, n = 243), and the dense solves (~15 ms) only for the ~25 ms of
motion around each crossing of the N-four-bar.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse.linalg as spla

from ..analysis.structural_rank import full_row_rank_on_manifold
from ..assembly import use_sparse
from ..errors import MultibodyError, SimulationError
from ..linalg.sparse import SparseMass, min_norm_correction, schur_accelerations, tangent_filter
from .velocity_error import polarised_rate

#: sigma_min / sigma_max of A below which the sparse path takes the dense path's solves (module docstring): 10 times
#: the dense projection's pin (formulations.lagrange.PIN), where the penalty of the acceleration solve is 1e-24
DENSE_WINDOW = 1e-3
#: inside the window the extended-precision polish corrects, and the error filter weighs as normal, every direction
#: with s_i > WINDOW_PIN s_max: the penalty width mu of the acceleration solve (formulations.lagrange
#: LAGRANGE_REGULARIZATION), below which that solve does not enforce a direction (module docstring)
WINDOW_PIN = 1e-6


def conditioning(A) -> float:
    """sigma_min / sigma_max of the sparse A (m <= n): sqrt(lambda_min / |S|_1) of S = A A^T, lambda_min by
    shift-invert Lanczos (ARPACK, fixed start vector), |S|_1 >= lambda_max; 0.0 where S is (numerically) singular.
    Measured on the N-four-bar (40 cells) from crank angle 0.3 to 1e-6 rad: 0.94 to 0.98 of the SVD's ratio."""
    S = (A @ A.T).tocsc()
    try:
        lam = float(spla.eigsh(S, k=1, sigma=0, which="LM", v0=np.ones(S.shape[0]), return_eigenvectors=False)[0])
    except (RuntimeError, spla.ArpackError, ValueError):
        return 0.0
    norm = float(abs(S).sum(axis=0).max())
    return float(np.sqrt(max(lam, 0.0) / norm)) if norm > 0 else 1.0


def lagrange_sparse(form, sparse: bool | None, eliminate, choose_rows) -> bool:
    """Resolve the Lagrange ``sparse`` option (None: automatic for large eligible models without
    ``eliminate``/``choose_rows`` and with an acceleration solve the Schur complement evaluates, ``schur_solve``)."""
    plain = form.schur_solve
    if sparse is None:
        return use_sparse(form.model, None) and plain and not eliminate and not choose_rows
    if sparse and (not plain or eliminate or choose_rows):
        raise MultibodyError(f"Model '{form.model.name}': sparse=True needs the Schur solve of 'lagrange' or "
                             "'projection' without eliminate/choose_rows (the sparse path requires independent rows).")
    return use_sparse(form.model, sparse)


class SparseLagrange:
    """The sparse pieces of :class:`~multibody.formulations.lagrange.Lagrange` (``sparse=True``)."""

    def __init__(self, form):
        self.form, self.model, self.ws = form, form.model, form.ws
        M0 = self.model.mass(self.model.q0)
        self.mass = SparseMass(M0) if self.model.mass_matrix is not None else None
        self.fallbacks, self.factored_once = 0, False
        self.window, self.last, self.windowed = False, None, [0, 0]     # windowed: [steps, evaluations] inside
        # a model proved free of singular configurations (open chains, analysis.structural_rank) needs no window
        self.watch = 0 < self.ws.m and not full_row_rank_on_manifold(self.model, self.ws)

    def accepted(self, t, q) -> None:
        """After an accepted step (state t, q): the dense window for the next step (module docstring)."""
        if not self.watch:
            return
        rho = conditioning(self.ws.sparse_constraints(t, q, np.zeros_like(q))[1])
        ahead = 2 * rho - self.last[1] if self.last is not None and t > self.last[0] else rho
        self.window, self.last = min(rho, ahead) < DENSE_WINDOW, (t, rho)
        self.windowed[0] += self.window

    def solve(self, t, q, v):
        """(q'' (n,), lambda (m,), A sparse, f) at (t, q, v), Baumgarte terms included if chosen."""
        Phi, A, Phi_t, gamma = self.ws.sparse_constraints(t, q, v)
        s = self.form.stabilization
        if s.kind == "baumgarte":
            gamma = gamma - 2 * s.alpha * (A @ v + Phi_t) - s.beta ** 2 * Phi
        mass = self.mass or SparseMass(self.model.mass(q))
        f = self.ws.forces(t, q, v)
        if self.window:                  # the dense window (module doc)
            self.windowed[1] += 1
            terms, vdot = self.form._solve(t, q, v)
            return vdot, self.form.multipliers(terms, vdot), A, f
        try:
            vdot, lam = schur_accelerations(mass, A, f, gamma)
            self.factored_once = True
        except SimulationError:          # rank loss at a singular configuration: the dense solve (module doc)
            if not self.factored_once:   # rank deficient from the start: redundant rows, not a crossing
                raise
            self.fallbacks += 1
            terms, vdot = self.form._solve(t, q, v)
            lam = self.form.multipliers(terms, vdot)
        return vdot, lam, A, f

    def forced_change(self, t, q, v, dq):
        """Lagrange._forced_change outside the dense window: -A^+ A'(v) u (n,) for u the tangential part of the
        position error dq (linalg.sparse.tangent_filter), A'(v) u by polarisation of gamma
        (formulations.velocity_error.polarised_rate) and A^+ = A^T (A A^T)^-1 by SuperLU
        (linalg.sparse.min_norm_correction; every row: full row rank, every s_i > DENSE_WINDOW s_max outside the
        window). Raises SimulationError where A A^T is (nearly) singular."""
        A = self.ws.sparse_constraints(t, q, np.zeros_like(q))[1]
        u = tangent_filter(A, dq)
        rate = polarised_rate(lambda w: self.ws.sparse_constraints(t, q, w)[3], v, u)
        return -min_norm_correction(A, rate, "forced velocity change") if rate is not None else np.zeros_like(q)

    def rhs(self, t, y):
        q, v = self.form.split(t, y)
        return np.concatenate([v, self.solve(t, q, v)[0]])

    def summary(self) -> dict:
        return {"linear_algebra": "sparse (SuperLU, Schur complement A M^-1 A^T); per-step rank and "
                                  "uniqueness diagnostics skipped (full row rank checked by the factorisation)",
                "dense_fallback_evaluations": self.fallbacks, "dense_window_steps": self.windowed[0],
                "dense_window_evaluations": self.windowed[1]}
