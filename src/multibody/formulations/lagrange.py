"""Index-1 formulation with Lagrange multipliers (paper 000 eq. 3 with eq. 6; paper 003 eqs 4-9):

    [ M  A^T ] [ q''    ]   [ f     ]
    [ A  0   ] [ lambda ] = [ gamma ]

q'' is computed by ``linalg.rank.gauss_solve`` (Gauss's principle in the singular-value basis of A),
not by factorising the augmented matrix: near a singular configuration at distance sigma the
augmented matrix loses accuracy like eps/sigma^2 (measured on the double four-bar: accelerations
wrong by O(1) at sigma = 1e-8, by 1e-4 at 1e-6), and a hard rank decision makes the right-hand side
jump, which an adaptive integrator cannot step over. Redundant constraints (rank-deficient A) drop
out of that solve by themselves: the accelerations are unique. The multipliers of a rank-deficient A
are not; the ones reported are the minimum-norm solution of A^T lambda = f - M q'' (SVD), the unique
solution whenever A has full row rank. Paper 003 explains which reactions are nonetheless unique.

Nonholonomic rows (paper 003 eqs 3-11): A and gamma above are then C = [Phi_q; Psi] and Gamma (eq. 9);
positions evolve from the velocities, the projection of q uses the holonomic Phi only and that of v
the whole C v + b = 0. ``eliminate``: labels of rows left out of C and Gamma (redundant-constraint
elimination, paper 003 Sect. 3.1): their multipliers are set to zero, which moves their load onto the
remaining rows; the rows must be redundant (rank unchanged) or the motion would change.
``choose_rows`` (default on for models with nonholonomic rows): the acceleration solve uses an
independent subset of rows chosen at every accepted step (see ``_choose_rows``).

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
from ..linalg.rank import (NORMAL_ERROR_WEIGHT, RankTolerance, Regularization, gauss_solve, min_norm_solve,
                          pivoted_qr, row_space_filter)
from ..assembly import Terms
from ..linalg.sparse import tangent_filter
from .lagrange_sparse import WINDOW_PIN, SparseLagrange, lagrange_sparse
from .base import Accelerations, Formulation
from .extended_projection import polish
from .velocity_error import turn_velocity_change

#: Singular configurations by construction (issue 12). The acceleration solve (linalg.gauss_solve) enforces a
#: constraint direction of singular value s_i with the penalty (s_i / mu)^8, mu = 1e-6 s_max: to round-off
#: for s_i >= 100 mu = PIN s_max ((1e-2)^8 = 1e-16 relative), not at all for s_i << mu, smoothly between.
#: The projection after a step corrects exactly the directions the solve enforces (s_i > PIN s_max,
#: linalg.rank.pinned_solve) and the error control measures the others at full weight. Why: near a singular
#: configuration at distance sigma the index-1 equations (Phi'' = 0) keep the state on the level set
#: Phi = c it started on, a hyperbola that turns onto the other assembly branch ~sqrt(|c| / L) from the
#: crossing, and a full inverse of s_i ~ sigma turns the round-off of Phi (eps L) into eps L / sigma in
#: positions and eps L omega / sigma^2 in velocities along the other branch's motion; which branch a run
#: then took depended on the BLAS kernel's summation order. Inside the window (s_r < PIN s_max: crank
#: angle < 5e-4 rad on the double four-bar) the vanishing direction follows Gauss's principle without that
#: constraint (the unconstrained dynamics), leaving at most |a| (window / omega)^2 ~ 1e-10 m, which the
#: projection removes on the way out; every other direction keeps its exact constraints. Measured over
#: rtol 1e-4..1e-12 x atol = rtol, rtol / 100 x dopri5, dop853 under OpenBLAS's Haswell and Prescott
#: kernels: crank spread <= 5e-10 rad (benchmarks/singular_matrix.py).
LAGRANGE_REGULARIZATION = Regularization(rel=1e-6, power=4)
PIN = 1e-4


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
    """q'' of the augmented system; see ``linalg.rank.gauss_solve``."""
    try:
        return gauss_solve(M, A, f, gamma, reg)
    except (sla.LinAlgError, ValueError) as exc:
        raise SimulationError(f"the mass matrix is not positive definite on the admissible motions "
                              f"({exc}); every motion the constraints allow must carry mass or inertia.") from None


class Lagrange(Formulation):
    """``--formulation lagrange``: multipliers formulation, see the module docstring."""

    name = "lagrange"
    supports_nonholonomic = True

    @property
    def rhs_changes_after_step(self) -> bool:
        """With ``choose_rows`` the rows of the acceleration solve are chosen anew after each step."""
        return bool(self.choose_rows)
    projects_state = True

    def __init__(self, model, *, stabilization: Stabilization = Stabilization(), eliminate=(), choose_rows=None,
                 regularization: Regularization = LAGRANGE_REGULARIZATION,
                 rank_tol: RankTolerance = RankTolerance(),
                 projection_tol: KinematicTolerance = KinematicTolerance(max_iterations=10, pin=PIN), fast: bool = True,
                 sparse: bool | None = None, forced_change: bool | None = None):
        super().__init__(model)
        self.stabilization = stabilization
        self.regularization = regularization
        self.rank_tol = rank_tol
        self.projection_tol = projection_tol
        self.keep = _kept_rows(model, eliminate)
        self.active = self.keep          # rows of C used in the acceleration solve (see _choose_rows)
        self.choose_rows = choose_rows   # None: decided in initial_state (nonholonomic or redundant rows)
        if stabilization.kind == "projection" and self.ws.m + self.ws.h:
            self.error_filter = self._tangent_error
        # issue 7 item 3: sparse path for large models (formulations.lagrange_sparse; None = automatic)
        self.sparse = lagrange_sparse(self, sparse, eliminate, choose_rows)
        self.sparse_path = SparseLagrange(self) if self.sparse else None
        # issue 12gh: the forced velocity change in the error filter (_forced_change); None: where it is compiled too
        self.forced_change = _forced_default(self) if forced_change is None else forced_change
        if self.sparse:     # issue 16: the compiled band Schur solve where the model allows (fast.band)
            from ..fast.lagrange import sparse_band_rhs
            self.fast_rhs, self.choose_rows = sparse_band_rhs(self, fast), False
        else:   # issue 7: compiled rhs (multibody.fast) when numba is installed and the model is supported
            from ..fast import fast_lagrange_rhs
            self.fast_rhs = fast_lagrange_rhs(self, fast)
        # issue 7: the per-step work (projection, error filter, output) compiled too (multibody.fast.step)
        self.fast_step = self.band_step = None
        if getattr(self.fast_rhs, "sparse", False):     # issue 16: the sparse path's projection and filter (fast.band)
            from ..fast.band import BandStep
            self.band_step = BandStep(self, self.fast_rhs)
        elif self.fast_rhs is not None:
            from ..fast.step import fast_step
            self.fast_step = fast_step(self)

    def initial_state(self, t, q, v):
        """[q, v]; with ``eliminate``, checks that the eliminated rows are redundant at the start
        (rank of the kept rows = rank of C, paper 003 Sect. 3.1), else the motion would change."""
        if len(self.keep) < self.ws.m + self.ws.h:
            C = self.ws.velocity_constraints(t, q, v)[1]
            full, kept = pivoted_qr(C, self.rank_tol).rank, pivoted_qr(C[self.keep], self.rank_tol).rank
            if kept < full:
                raise MultibodyError(f"Model '{self.model.name}': the eliminated rows are not redundant (rank of C "
                                     f"drops from {full} to {kept}); eliminating them would change the motion. "
                                     "'multibody analyze' lists redundant rows.")
        if self.choose_rows is None:
            C = self.ws.velocity_constraints(t, q, v)[1][self.keep]
            self.choose_rows = bool(self.ws.h) or pivoted_qr(C, STRUCTURAL_RANK).rank < len(self.keep)
        self._choose_rows(t, q, v)
        return super().initial_state(t, q, v)

    def _choose_rows(self, t, q, v) -> bool:
        """With ``choose_rows`` (default: models with nonholonomic rows, or with holonomic rows that are
        redundant at the initial state by STRUCTURAL_RANK, e.g. the six-body linkage): the rows of C used by the
        acceleration solve until the next accepted step are an independent subset, chosen by pivoted
        QR at the accepted (projected) state. Why: rows that are dependent on the constraint manifold
        (Ackermann-type nonholonomic redundancy) become nearly independent off it, at Runge-Kutta stage
        states, where Gamma is also slightly inconsistent; the full solve then enforces an O(eps)
        combination with an O(eps) right-hand side, an O(1) acceleration error (measured on
        mobile-robot: 6e-4 m final error at rk4 step 2e-3, assembly failure at 5e-3; with the choice
        the runs agree to 1e-8). Returns True if the set changed. The reported multipliers stay the
        minimum-norm ones over all kept rows."""
        if not self.choose_rows or len(self.keep) == 0:
            return False
        C = self.ws.velocity_constraints(t, q, v)[1][self.keep]
        pqr = pivoted_qr(C, STRUCTURAL_RANK if not self.ws.h else self.rank_tol)
        active = self.keep[np.sort(pqr.perm[: pqr.rank])]
        changed = not np.array_equal(active, self.active)
        self.active = active
        return changed

    @property
    def plain_solve(self) -> bool:
        """True when the accelerations come from this class's own solve (not a subclass's, e.g.
        Projection): the compiled and sparse paths reproduce only this one."""
        return type(self)._solve is Lagrange._solve

    @property
    def schur_solve(self) -> bool:
        """True when the sparse path's Schur solve (formulations.lagrange_sparse, fast.band) evaluates this
        formulation's accelerations: the plain solve (the same q'' for independent rows) and Projection's."""
        return self.plain_solve

    def _solve(self, t, q, v):
        """Terms with A = C[keep] (kept rows of [Phi_q; Psi]) and gamma = Gamma[keep], and q'' from the
        ``active`` rows."""
        ws = self.ws
        Phi, C, b, Gamma = ws.velocity_constraints(t, q, v)
        if self.stabilization.kind == "baumgarte":
            s = self.stabilization
            Gamma = Gamma - 2 * s.alpha * (C @ v + b) - s.beta ** 2 * np.r_[Phi, np.zeros(ws.h)]
        k, a = self.keep, self.active
        terms = Terms(self.model.mass(q), ws.forces(t, q, v), Phi, C[k], b[k], Gamma[k])
        return terms, solve_kkt(terms.M, C[a], terms.f, Gamma[a], self.regularization)

    def rhs(self, t, y):
        self.nfev += 1
        if self.fast_rhs is not None:
            return self.fast_rhs(t, y)
        if self.sparse:
            return self.sparse_path.rhs(t, y)
        q, v = self.split(t, y)
        return np.concatenate([v, self._solve(t, q, v)[1]])

    def accelerations(self, t, q, v):
        if self.sparse:     # the Schur multipliers are the unique ones (full row rank)
            vdot, lam = self.sparse_path.solve(t, q, v)[:2]
            return Accelerations(vdot, lam, {"rank": self.ws.m, "multipliers": "unique (sparse, full row rank)"})
        out = self.fast_step.record(t, q, v) if self.fast_step is not None else None
        if out is not None:     # compiled: same numbers up to round-off (tests/test_fast_step.py)
            return Accelerations(out[0], out[1], {"multipliers": "minimum-norm"})
        terms, vdot = self._solve(t, q, v)
        kind = "minimum-norm" if len(self.keep) == self.ws.m + self.ws.h else "elimination + minimum-norm"
        return Accelerations(vdot, self.multipliers(terms, vdot), {"multipliers": kind})

    def multipliers(self, terms, vdot) -> np.ndarray:
        """lambda (m + h,): the minimum-norm solution of A^T lambda = f - M q'' on the kept rows, 0 on the
        eliminated ones (paper 000 eq. 3; paper 003 on what elimination does to reactions)."""
        lam = np.zeros(self.ws.m + self.ws.h)
        lam[self.keep] = min_norm_solve(terms.A.T, terms.f - terms.M @ vdot, self.rank_tol)
        return lam

    def summary(self) -> dict:
        return self.sparse_path.summary() if self.sparse else {}

    def failure_hint(self, t, y) -> str:
        """A sentence appended to a failed integration's message (simulation.driver.advance) when the state is near a
        singular configuration: s_min / s_max of C[keep] below SINGULAR_HINT_RATIO, counting only singular
        values above STRUCTURAL_RANK (redundant rows are not singular configurations); else ""."""
        if self.sparse or len(self.keep) == 0:
            return ""
        q, v = self.split(t, y)
        s = np.linalg.svd(self.ws.velocity_constraints(t, q, v)[1][self.keep], compute_uv=False)
        ratio = s[s > STRUCTURAL_RANK.rtol * s[0]].min() / s[0] if s[0] > 0 else 1.0
        if ratio >= SINGULAR_HINT_RATIO:
            return ""
        return (f" The constraints are near a singular configuration there (smallest singular value of the "
                f"constraint Jacobian {ratio:.1e} times the largest), where another assembly branch meets this one.")

    @property
    def _dense_now(self) -> bool:
        """True off the sparse path and inside its dense window (formulations.lagrange_sparse)."""
        return not self.sparse or self.sparse_path.window

    @property
    def _kin_sparse(self):
        """The projection's ``sparse`` option: automatic (sparse, dense where A loses rank) on the sparse path."""
        return False if self._dense_now else None

    def after_step(self, t, y):
        if self.sparse:         # issue 12: the dense window for the next step (formulations.lagrange_sparse)
            self.sparse_path.accepted(t, y[: self.model.n])
        if self.stabilization.kind != "projection" or self.ws.m + self.ws.h == 0:
            return y if self._choose_rows(t, *self.split(t, y)) else None
        step = self.fast_step or self.band_step
        y_new = step.project(t, y) if step is not None else None
        if y_new is not None:   # compiled projection (no row choice on the fast path); else the reference
            return y_new
        q, v = self.split(t, y)
        try:
            q = solve_positions(self.model, q, t, ws=self.ws, tol=self.projection_tol, sparse=self._kin_sparse)
        except MultibodyError as exc:
            raise SimulationError(f"projection onto the constraints failed at t = {t:g}: {exc}") from None
        v = solve_velocities(self.model, q, v, t, ws=self.ws, tol=_NO_CHECK_PINNED, sparse=self._kin_sparse)
        if self._dense_now:     # issue 12: residuals in extended precision next to a singular configuration
            q, v = polish(self.model, self.ws, t, q, v, self._polish_pin) or (q, v)
        self._choose_rows(t, q, v)
        return np.concatenate([q, v])

    def _tangent_error(self, t, y, err):
        """The local error with its components normal to the constraint manifold scaled down by
        NORMAL_ERROR_WEIGHT, for the integrator's step-size control: the projection after the step
        removes them, so they need not meet the tolerance, only stay small enough for the projection
        to land on the nearest point of the same assembly branch. Plus, counted whole on the velocity part, the
        velocity change -A_r^+ A'(v) P_t dq that the tangential position error forces (:meth:`_forced_change`)."""
        step = self.fast_step or self.band_step
        out = step.tangent_error(t, y, err) if step is not None else None
        if out is not None:     # compiled (well-conditioned A); else the reference below
            return out
        n = self.model.n
        q, v = self.split(t, y)
        qv = err[:2 * n].reshape(2, n).T
        tangent = self._tangent_part(t, q, v, qv)
        out = err.copy()
        out[:2 * n] = (tangent + NORMAL_ERROR_WEIGHT * (qv - tangent)).T.ravel()
        if self.forced_change:
            out[n:2 * n] += self._forced_change(t, q, v, err[:n])
        return out

    def _forced_change(self, t, q, v, dq):
        """The velocity change -A_r^+ A'(v) P_t dq (n,) that the position error dq forces on the motion the run
        continues from (formulations.velocity_error.turn_velocity_change; derivation: velocity_error module docstring,
        "The measure of flow", Dpi e = (P_t e_q, P_t e_v - A^+ A'(v) P_t e_q) for the projection pi after the step,
        paper 000 eq. 15 for A'(v), paper 003 eqs 4-9 for the velocity constraints C v + b = 0). It is normal to the
        constraints but the projection keeps it (it keeps v tangent at the moved q), so it counts whole, not at
        NORMAL_ERROR_WEIGHT with the drift of v. r = the generic rank (the rank of C by rank_tol, as nullspace's,
        taken once: an extra row of a redundant mechanism has a singular value ~ the distance off the manifold,
        whose inverse must not enter), and at most the directions the projection corrects (s_i > pin s_max,
        _polish_pin; next to a singular configuration the pinned direction is not enforced, so nothing is forced
        along it; the crossing window of formulations.crossing_window runs this filter too).
        Compiled identically in fast.step_kernels.forced_change (FastStep and the in-loop filter of fast.rk_kernels)
        and fast.band_kernels.band_forced_change (band filters); on the sparse path outside its dense window by
        SparseLagrange.forced_change (SuperLU, every row: full row rank there). Not in the spatial director
        kernels (fast.spatial_sparse): there it is off (:func:`_forced_default`)."""
        if not self._dense_now:
            try:
                return self.sparse_path.forced_change(t, q, v, dq)
            except SimulationError:     # rank loss at a singular configuration: the dense measure below
                pass
        A = self.ws.velocity_constraints(t, q, np.zeros_like(q))[1]
        if getattr(self, "_generic_rank", None) is None:    # at the first step, off the singular configurations
            self._generic_rank = pivoted_qr(A, self.rank_tol).rank
        sv = np.linalg.svd(A, compute_uv=False)
        r = min(self._generic_rank, int(np.sum(sv > self._polish_pin * sv[0]))) if sv.size else 0
        u = row_space_filter(A[:self.ws.m], dq)     # v: the state's, the projected one's to first order
        return turn_velocity_change(self.ws, t, q, v, u, A, r, motion=True)

    def _tangent_part(self, t, q, v, qv):
        """qv (n, 2) = [position error, velocity error] without their components normal to the
        constraints: positions normal to Phi = 0 only, velocities normal to C v + b = 0."""
        if not self._dense_now:
            try:
                return tangent_filter(self.ws.sparse_constraints(t, q, v)[1], qv)
            except SimulationError:     # rank loss at a singular configuration: the dense filter below
                pass
        C = self.ws.velocity_constraints(t, q, v)[1]
        if self.ws.h:
            return np.column_stack([row_space_filter(C[: self.ws.m], qv[:, 0], PIN),
                                    row_space_filter(C, qv[:, 1], PIN)])
        return row_space_filter(C, qv, self._polish_pin)

    @property
    def _polish_pin(self) -> float:
        """The directions (s_i > pin s_max) the extended-precision polish corrects and the error filter weighs as
        normal: PIN, and WINDOW_PIN inside the sparse path's dense window (formulations.lagrange_sparse)."""
        return WINDOW_PIN if self.sparse else PIN


#: failure_hint: s_min / s_max of the constraint Jacobian below which a failed run is reported as near a
#: singular configuration (the compiled Schur solve declines at a pivot ratio of 1e-3 for the same reason)
SINGULAR_HINT_RATIO = 1e-3


_NO_CHECK = KinematicTolerance(consistency=np.inf)

_NO_CHECK_PINNED = KinematicTolerance(consistency=np.inf, pin=PIN)

#: rank decision for holonomic row choosing: at a projected state (|Phi| <= 1e-12 L) structurally
#: redundant rows give |R_ii| ~ 1e-16..1e-13 |R_11|, while near a singular configuration |R_ii| is of the
#: order of the distance to it, so rows are dropped only within ~1e-12 of a singular configuration and
#: the smooth solve of gauss_solve keeps handling the approach to it (double four-bar unchanged)
STRUCTURAL_RANK = RankTolerance(rtol=1e-12)


def _kept_rows(model, eliminate) -> np.ndarray:
    """Indices of the rows of C = [Phi_q; Psi] not in ``eliminate`` (labels "joint.component")."""
    labels = model.velocity_labels
    unknown = [x for x in eliminate if x not in labels]
    if unknown:
        raise MultibodyError(f"Model '{model.name}': cannot eliminate {', '.join(map(str, unknown))}: no such "
                             f"constraint row; rows are {', '.join(labels)}.")
    return np.array([i for i, x in enumerate(labels) if x not in set(eliminate)], dtype=int)


def _forced_default(form) -> bool:
    """Whether the error filter counts the forced velocity change by default: yes for every model but the spatial
    director models the compiled spatial kernels run (fast.spatial_lagrange; their filter, fast.spatial_sparse, lacks
    it, and the reference follows it so both paths take the same steps)."""
    try:
        from ..fast.spatial_lagrange import spatial_lagrange_supported
    except ImportError:     # no numba: no spatial kernels, the reference counts it
        return True
    return spatial_lagrange_supported(form) is not None
