"""Detection of singular configurations along a run (paper 000 Sect. 2.5 "Singular configurations", N3).

A singular configuration is where the rank of A falls below the generic rank r_g (the R diagonal of
the pivoted QR, eq. 23, loses one more element). Accepted steps almost never land on one, so the
tracker watches sigma_r(t), the r_g-th singular value of A at the accepted states (continuous, unlike
the pivoted |R_ii|, whose pivot order may change), and at a local minimum below ``screen * sigma_1``
locates it: golden-section search over the two steps around it on

    x(t) = proj_{Phi = 0}( Hermite cubic through (t_j, x_j, x'_j) ),

the projection by minimum-norm Gauss-Newton (eqs 12-13). There the pivoted QR decides the rank with
the run's RankTolerance; if it is below r_g an event is recorded: the admissible motions N (the null
space Q[:, rank:]), the continuing motion C (the f directions of span(N) closest to the tangent space
of the branch, i.e. the tangent spaces just before and after averaged and extrapolated to the crossing
(Richardson, ``BRANCH_RATIO``), oriented like the basis
before the singularity so that it is in continuity with it) and the new motions, the orthonormal
complement of C in span(N) (orthogonal to the continuing one by construction). With ``--basis
continuation`` the event also carries the paper's identification, the directions of span(N) nearest to the
continued basis T(t*) of eq. 22 (``continuing_from_basis``), and its largest principal angle to C
(``basis_branch_angle``; measured 4e-7 to 9e-3 rad on the double, triple and 2x2 four-bars at rtol 1e-6 and
1e-9: eq. 22 freezes Omega over a step, an O(h^2) error, while the extrapolated tangent spaces are O(offset^4)).
"""
from __future__ import annotations

import numpy as np

from ..errors import MultibodyError
from ..kinematics import solve_positions
from ..linalg.rank import pivoted_qr

GOLDEN = (np.sqrt(5.0) - 1.0) / 2.0
#: offset (fraction of the two-step bracket) of the configurations on both sides of a singular one
#: whose tangent spaces, averaged, give the tangent of the branch through it (error ~ offset^2)
BRANCH_OFFSET = 1e-3
#: ... or rather where sigma_r / sigma_1 reaches BRANCH_RATIO, when the samples give its rate, with Richardson's
#: extrapolation of the averages at offset and 2 offset (error O(offset^4)). Why: the configurations next to the
#: crossing are fixed by the constraints only to ~eps / (sigma_r / sigma_1) across the branch, which tilts their
#: tangent spaces; the plain average's O(offset^2) from the branch's curvature put the continuing motion 1e-8 to 6e-8
#: rad off at 1e-3 of a 0.02 s bracket. Accepted steps of the singular window (formulations.crossing_window) come
#: ~3e-7 s apart next to the crossing; 1e-3 of that put the two configurations at sigma_r / sigma_1 ~ 1e-10 and
#: the continuing motion 1e-3 rad off
BRANCH_RATIO = 1e-4


def hermite(t, t0, x0, v0, t1, x1, v1):
    """Cubic Hermite interpolant (n,) at t in [t0, t1] through positions x and derivatives v."""
    h = t1 - t0
    s = (t - t0) / h
    h00, h10 = 2 * s ** 3 - 3 * s ** 2 + 1, s ** 3 - 2 * s ** 2 + s
    h01, h11 = -2 * s ** 3 + 3 * s ** 2, s ** 3 - s ** 2
    return h00 * x0 + h10 * h * v0 + h01 * x1 + h11 * h * v1


def golden_min(fun, a, b, *, rel: float = 1e-15):
    """Minimiser of a unimodal fun on [a, b] (golden-section search, to rel * max(1, |b|))."""
    c, d = b - GOLDEN * (b - a), a + GOLDEN * (b - a)
    fc, fd = fun(c), fun(d)
    while b - a > rel * max(1.0, abs(b)):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - GOLDEN * (b - a)
            fc = fun(c)
        else:
            a, c, fc = c, d, fd
            d = a + GOLDEN * (b - a)
            fd = fun(d)
    return (a + b) / 2


class SingularTracker:
    """Watches the accepted states of a NullSpace formulation; appends events to ``form.events``."""

    def __init__(self, form, *, screen: float = 0.2):
        self.form, self.screen = form, screen
        self.history: list[tuple] = []     # (t, x, x', T, sigma_r, sigma_1), last three accepted
        self.values, self.left, self.accepted_values = None, None, None

    def _sigmas(self, t, x, A=None):
        """(sigma_r, sigma_1) of A at x (``A``: already evaluated there by the caller, at an accepted state: the thin SVD
        then keeps the left singular vectors too, ``left``, for the crossing window's rate, CrossingWindow._rate)."""
        if A is None:
            A, self.left = self.form.ws.velocity_constraints(t, x, np.zeros_like(x))[1], None
            s = self.values = np.linalg.svd(A, compute_uv=False)
        else:
            self.left, s, _ = np.linalg.svd(A, full_matrices=False)
            self.values = s
        r = self.form.generic_rank
        return (s[r - 1] if r else 0.0), (s[0] if s.size else 0.0)

    def accepted(self, t, x, v, T, A=None):
        """An accepted state (x, x', T; ``A``: the constraint Jacobian at x, if the caller has it)."""
        if self.form.generic_rank == 0:
            return
        self.history = (self.history + [(t, x.copy(), v.copy(), T.copy(), *self._sigmas(t, x, A))])[-3:]
        self.accepted_values = (t, self.history[-1][1], self.values, self.left)    # A's SVD at this state
        if len(self.history) < 3:
            return
        (_, _, _, _, s0, _), (_, _, _, _, s1, big), (_, _, _, _, s2, _) = self.history
        if s1 < s0 and s1 <= s2 and s1 < self.screen * big:
            self._locate()

    def _position(self, t):
        (ta, xa, va, *_), (tb, xb, vb, *_), (tc, xc, vc, *_) = self.history
        guess = hermite(t, ta, xa, va, tb, xb, vb) if t <= tb else hermite(t, tb, xb, vb, tc, xc, vc)
        f = self.form
        return solve_positions(f.model, guess, t, ws=f.ws, tol=f.projection_tol)

    def _objective(self, t) -> float:
        """sigma_r at the projected interpolant at t: one compiled call where the formulation has it
        (fast.nullspace: the same projection and singular values), else _sigmas(_position(t))."""
        f = self.form
        fast = getattr(f.fast_rhs, "crossing_sigma", None)
        value = fast(t, self.history, f.generic_rank, f.projection_tol, f.model.length_scale) if fast else None
        return self._sigmas(t, self._position(t))[0] if value is None else value

    def _minimize(self, a, b) -> float:
        """The time of the smallest sigma_r in [a, b] (:func:`golden_min` on :meth:`_objective`)."""
        return golden_min(self._objective, a, b)

    def _locate(self):
        t_a, t_c = self.history[0][0], self.history[2][0]
        try:
            t_star = self._minimize(t_a, t_c)
            x = self._position(t_star)
        except MultibodyError:
            return
        f = self.form
        pqr = pivoted_qr(f.ws.velocity_constraints(t_star, x, np.zeros_like(x))[1], f.rank_tol)
        if pqr.rank >= f.generic_rank:
            return
        (t0, *_, s0, b0), (t1, *_, s1, b1), (t2, *_, s2, b2) = self.history
        rate = max(abs(s1 / b1 - s0 / b0) / (t1 - t0), abs(s2 / b2 - s1 / b1) / (t2 - t1))   # d(sigma_r/sigma_1)/dt
        offset = BRANCH_RATIO / rate if np.isfinite(BRANCH_RATIO / rate) else BRANCH_OFFSET * (t_c - t_a)
        offset = min(offset, (t_star - t_a) / 2, (t_c - t_star) / 2)     # t* -+ 2 offset inside the bracket
        try:
            branch = self._branch_tangent(t_star, offset)
        except MultibodyError:      # not assembled there: the tangent before the crossing (singular_event's default)
            branch = None
        event = singular_event(t_star, x, pqr, self.history[0][3], f.generic_rank, f.model.coordinate_names, branch)
        if hasattr(f, "continued_basis"):      # the paper's identification from the continued basis itself (N3)
            C = np.asarray(singular_event(t_star, x, pqr, f.continued_basis(t_star), f.generic_rank, ())["continuing"])
            event["continuing_from_basis"] = C.tolist()
            cosines = np.linalg.svd(C.T @ np.asarray(event["continuing"]), compute_uv=False)
            event["basis_branch_angle"] = float(np.arccos(np.clip(np.min(cosines), -1.0, 1.0)))
        f.events.append(event)

    def _branch_tangent(self, t_star, offset):
        """Projectors T T^T averaged over t* -+ offset and t* -+ 2 offset (fresh QR, unique span there), extrapolated to
        offset 0 (Richardson): the tangent of the branch through the singular configuration to O(offset^4). The caller
        keeps t* -+ 2 offset inside the bracket of the accepted states: beyond it the Hermite cubic is an
        extrapolation, not the motion, and its projection near the crossing did not converge (N-four-bar with 40
        cells, nullspace at rtol 1e-10: "cannot be assembled at t = 3.21213", 2.5 ms past the crossing, which ended
        the run; the event now falls back to the tangent before the crossing where a projection fails)."""
        f, P = self.form, []
        for d in (offset, 2 * offset):
            P.append(0.0)
            for t in (t_star - d, t_star + d):
                x = self._position(t)
                T = pivoted_qr(f.ws.velocity_constraints(t, x, np.zeros_like(x))[1], f.rank_tol).Q[:, f.generic_rank:]
                P[-1] = P[-1] + T @ T.T / 2
        return (4 * P[0] - P[1]) / 3          # Richardson: the O(offset^2) of the averages cancels


def singular_event(t, x, pqr, T_before, generic_rank, names, branch=None) -> dict:
    """The admissible motions at a singular configuration, split into continuing and new ones.

    N = Q[:, rank:]; continuing: the f = n - r_g directions of span(N) closest to the branch
    (eigenvectors of N^T P N, P = ``branch`` the averaged projector, or T_before T_before^T),
    oriented like T_before (Procrustes: C <- C polar(C^T T_before)); new: the rest of span(N)."""
    N = pqr.Q[:, pqr.rank:]
    k = T_before.shape[1]
    P = T_before @ T_before.T if branch is None else branch
    _, V = np.linalg.eigh(N.T @ P @ N)
    C = N @ V[:, ::-1][:, :k]
    U, _, Wt = np.linalg.svd(C.T @ T_before)
    C = C @ (U @ Wt)
    rest = N - C @ (C.T @ N)
    U, s, _ = np.linalg.svd(rest, full_matrices=False)
    new = U[:, : N.shape[1] - C.shape[1]]
    return {"kind": "singular", "t": float(t), "rank": int(pqr.rank), "generic_rank": int(generic_rank),
            "q": x.tolist(), "R_diag": pqr.R_diag.tolist(), "coordinate_names": list(names),
            "admissible": N.tolist(), "continuing": C.tolist(), "new": new.tolist(),
            "continuity": float(np.min(np.linalg.svd(C.T @ T_before, compute_uv=False)))}
