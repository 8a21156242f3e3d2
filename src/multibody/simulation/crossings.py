"""Singular configurations crossed during a run, for every formulation and integrator (paper 000 Sect. 2.5;
issue 12): ``summary["singular_crossings"]`` lists the time, the rank there and the rank drop of each.

Along a run the r_g-th singular value sigma_r of the holonomic Jacobian A = Phi_q (r_g: the generic rank,
the largest rank seen away from singular configurations) falls to zero at a singular configuration and
rises again behind it. :class:`CrossingMonitor` samples the ratio sigma_r / sigma_1 at every accepted state,
and inside a step wherever Weyl's inequality cannot exclude a zero of sigma_r between two samples (on the
step's dense output: no extra evaluations on dopri5, three per step on dop853; a cubic Hermite interpolant
of the end states for integrators without dense output), so that two crossings in one step are told apart. Every local
minimum of the samples below ``SCREEN`` is located by Brent's bounded
search on sigma_r(proj(x(t)))^2 (smooth: sigma_r is the modulus of a smooth function that changes sign at a
transversal crossing, so its square is locally a parabola and the parabolic steps converge in a few
evaluations), x the interpolant and proj the projection onto Phi = 0 (kinematics); the
projected curve passes through the singular configuration because the run's branch does, so the minimum
is sigma_r ~ 0 there. The pivoted QR (linalg.rank) with ``CROSSING_TOL`` then decides the rank; a minimum
where the rank stays r_g (a near miss) is not a crossing.

A model whose A has full row rank at every configuration by its structure (an open chain or tree of revolute
and weld joints; a tree of spherical and revolute director pairs, on its constraint manifold; proved once per model
by analysis.structural_rank) has no singular configuration to cross:
it is not sampled, and its empty list is complete (``singular_crossings_monitored: true``).

Spatial director models evaluated from the packed constraint table (issue 16; fast.spatial) are watched piece by
piece instead: a compiled certificate (:mod:`multibody.fast.spatial_monitor`) proves for each step, at the cost of
one Cholesky factor per accepted state, that no rank drop fits between its end states, and only the steps it
cannot certify get the SVD samples, refinement and location above (:meth:`CrossingMonitor._certified`). Why no
crossing is missed (paper 000 Sect. 2.5: a singular configuration is where the rank of A drops below the generic
r_g): with X = r_g independent rows of A, sigma_r(A) >= sigma_min(X) (interlacing), and sigma_min(X_a + E) >=
sigma_min(X_a) (1 - |X_a^+ E|_2) >= sigma_min(X_a) (1 - |L_a^-1 E|_F) (L_a L_a^T = X_a X_a^T), so while
REFINE_SAFETY |L^-1 (X_b - X_a)|_F < 1 from either end the rank stays >= r_g on the piece, under the same
assumption as the Weyl test (A(t) - A(a) ~ s (A(b) - A(a)) on a piece, up to the factor REFINE_SAFETY; A is
affine in q for these quadratic constraints). The bound is relative to sigma_min itself: on the six-body linkage
(sigma_r / sigma_1 = 0.014) Weyl needs four inner SVD samples per step, the certificate none (0.17-0.53 per step
against its limit 0.5 x 2). Near a crossing sigma_min(X_a) -> 0 makes |L^-1 E| grow without bound, so the pieces
around it always go to the SVD monitor (the spatial double four-bar: tests/test_crossings_spatial.py).

Dense models only (n < assembly.SPARSE_MIN_COORDINATES); larger models on the sparse path are watched by
:mod:`.crossings_sparse` (a sparse factorisation per sample), other large ones report
``singular_crossings_monitored: false`` instead of an empty list that would claim none. Why not this monitor for
them: on the 81-bar N-four-bar (n = 243) an SVD of its 242 x 243 A costs ~10 ms per sample, its generic
sigma_r / sigma_1 is small (a long chain is weakly conditioned), so Weyl's test keeps refining (~17 samples per
step), and each located crossing needs ~30 projections through the dense fallback: 157 s instead of 5 s for its
20 s run.
"""
from __future__ import annotations

import numpy as np
import scipy.optimize as so

from ..analysis.structural_rank import full_row_rank_on_manifold
from ..assembly import SPARSE_MIN_COORDINATES
from ..errors import MultibodyError, SimulationError
from ..formulations.singular import hermite
from ..kinematics import solve_positions
from ..linalg.rank import RankTolerance, generic_ratio, pivoted_qr
from ..model.director import QuadraticConstraints
from .crossing_step import AHEAD_MARGIN, CrossingStep

#: sigma_r / sigma_1 below which a step is sampled inside and a local minimum is located
SCREEN = 0.2
#: time tolerance of the location [s]: sigma_r / sigma_1 grows like |t - t*| omega away from the crossing,
#: so it must stay far below the rank tolerance sqrt(eps) / omega
LOCATE_XTOL = 1e-13
#: rank decision at the located minimum: sigma_i / sigma_1 <= 1e-6 counts as zero. The run's own rank
#: tolerance (sqrt(eps)) sits at the floor of the located minimum (measured 1.7e-8 on the 2x2 four-bar with
#: dop853 at rtol 1e-10: the projection pins only well-conditioned directions there, linalg.rank.pinned_solve),
#: while a path that misses a singular configuration by a relative 1e-6 cannot be told from one through it
#: at any integrator tolerance the project supports
CROSSING_TOL = RankTolerance(rtol=1e-6)
#: a located minimum counts only if the projection moved the interpolated configuration by less than this
#: fraction of the length scale (the run's own states are on Phi = 0 to the projection tolerance; a Hermite
#: piece is O(h^4) off; a stepper's reused stage buffers once gave positions 1-17 m off)
OFF_BRANCH = 1e-3
#: ... or, when larger, this many units atol + rtol L of the run's tolerances: the dense output of a long step at a
#: loose tolerance is that far off (2.2e-3 m = 1.1e-3 L inside a 0.44 s dop853 step at rtol = atol = 1e-4 on the
#: double four-bar, whose crossing at t = 2.657 was dropped), while the stale buffers it guards against were 1-17 m
OFF_BRANCH_TOLERANCES = 100.0
#: a step is halved (recursively, at most MAX_DEPTH times) unless its end samples prove, by Weyl's inequality
#: with this safety factor for the curvature of the path, that sigma_r cannot reach zero inside it (two
#: sub-mechanisms of the 2x2 four-bar cross 0.027 s apart, inside one step of dop853 at rtol 1e-4)
REFINE_SAFETY = 2.0
MAX_DEPTH = 5
#: spatial director models (issue 16): a local minimum is not located when Weyl's bound of the two pieces
#: around it (_excluded) keeps sigma_r / sigma_1 above this, 100 times the rank decision CROSSING_TOL
EXCLUDE_FLOOR = 1e-4


def _ell(a: tuple, b: tuple, tight: bool = False) -> float:
    """|A(b) - A(a)| / sigma_1 of two samples (see CrossingMonitor._refine). ``tight`` (spatial models, issue 16)
    bounds the spectral norm by |D|_2 = |G^4|_2^(1/8) <= |G^4|_1^(1/8), G = D^T D for D = A(b) - A(a) (an induced
    norm bounds the spectral radius; G^4 symmetric), within 8 % of |D|_2 on the six-body linkage, whose A turns by
    4.4 % of sigma_1 per step while sigma_r / sigma_1 is 1.4 %: samples every h/4 instead of h/8 (the Frobenius
    and sqrt(|D|_1 |D|_inf) bounds are 3.0 and 1.9 times |D|_2 there)."""
    D = b[2] - a[2]
    if tight and D.size:
        G = D.T @ D if D.shape[1] <= D.shape[0] else D @ D.T
        G = G @ G
        norm = float(np.abs(G @ G).sum(axis=0).max()) ** 0.125
    else:
        d = np.abs(D)
        norm = min(np.linalg.norm(d), np.sqrt(d.sum(axis=0).max(initial=0.0) * d.sum(axis=1).max(initial=0.0)))
    return norm / max(a[3], b[3], np.finfo(float).tiny)


def _excluded(a: tuple, k: tuple, b: tuple) -> bool:
    """Cheap pre-check before locating the local minimum k of the samples (issue 16, spatial models): True when
    on both pieces [a, k] and [k, b] Weyl's bound of _refine, sigma_r / sigma_1 >= (r_x + r_y - REFINE_SAFETY l)
    / 2, stays above EXCLUDE_FLOOR, so no rank drop fits in [t_a, t_b] by the same argument that spares a piece
    its inner samples. The six-body linkage (paper 004 Sect. 5.4; overconstrained, rank 59 of 60) has
    sigma_r / sigma_1 ~ 0.014 everywhere, below SCREEN, so every wiggle of the samples was located (~0.1 s
    each, three per 100 steps) although none can be a crossing."""
    return all((x[1] + y[1] - REFINE_SAFETY * _ell(x, y, True)) / 2 > EXCLUDE_FLOOR for x, y in ((a, k), (k, b)))


class CrossingMonitor(CrossingStep):
    """``accepted(step, y_end)`` after every accepted step (y_end: the state the run continues from);
    ``restart(form)`` after an event (a new model); ``summary()`` -> {"singular_crossings": [...], ...}."""

    def __init__(self, form, rank_tol: RankTolerance = RankTolerance()):
        self.tol, self.crossings = rank_tol, []
        self.run_tolerances = (0.0, 0.0)    # (rtol, atol) of the run (StepWatch), for off_branch_limit
        self.restart(form)

    def restart(self, form) -> None:
        """Start on a (new) model: its generic rank from the current state, no samples (the segment before closed)."""
        if getattr(self, "samples", None):
            self._close()
        self.form, model = form, form.model
        self.full_rank = 0 < form.ws.m and full_row_rank_on_manifold(model, form.ws)   # no crossing can exist
        self.active = 0 < form.ws.m and model.n < SPARSE_MIN_COORDINATES and not self.full_rank
        self.director = all(isinstance(g, QuadraticConstraints) for g in model.constraints)   # see _excluded
        self.samples, self.pieces, self.generic, self.examined = [], [], 0, -np.inf
        self.last = None            # (t, q, v) of the last accepted state
        self.opened = None          # time of the segment's first sample (_examine)
        self.resume = None          # (end, step proposed before it) of a crossing step under way (steer)
        # spatial director models with the packed constraint table (issue 16): the compiled certificate of
        # fast.spatial_monitor per step, the SVD samples only on the pieces it cannot certify (_certified)
        self.table = getattr(form.ws, "table", None) if self.director and self.active else None
        self.cert = None

    def _A(self, t, q):
        return self.form.ws.velocity_constraints(t, q, np.zeros_like(q))[1][: self.form.ws.m]

    def _sample(self, t, q) -> tuple:
        """(t, sigma_r / sigma_1, A, sigma_1) at the configuration q."""
        A = self._A(t, q)
        ratio, self.generic, s1 = generic_ratio(A, self.generic, self.tol)
        return t, ratio, A, s1

    def _position(self, t):
        """q at t on the piece (step) that contains it: dense output or Hermite cubic of the end states."""
        for t0, t1, dense, q0, v0, q1, v1 in reversed(self.pieces):
            if t0 <= t <= t1:
                if dense is not None:
                    return self.form.coordinates(t, dense(t))
                return hermite(t, t0, q0, v0, t1, q1, v1)
        raise ValueError(f"t = {t} outside the kept steps")

    def _refine(self, a: tuple, b: tuple, depth: int = 0) -> list:
        """Samples inside [a, b] where sigma_r may dip to zero between them. Weyl: |sigma_r(t) - sigma_r(a)| <=
        |A(t) - A(a)|_2, and on a short piece A(t) - A(a) ~ s (A(b) - A(a)), so sigma_r / sigma_1 >=
        (r_a + r_b - l) / 2 with l = |A(b) - A(a)| / sigma_1, |.| the smaller of the Frobenius norm and
        sqrt(|.|_1 |.|_inf) (both >= the spectral norm; the second stays O(1) for the sparse A of a large
        mechanism, where the Frobenius norm grows like the square root of its rows): when r_a + r_b >
        REFINE_SAFETY * l no crossing fits in between; otherwise the piece is halved (at most MAX_DEPTH times)."""
        if depth >= MAX_DEPTH or a[1] + b[1] > REFINE_SAFETY * _ell(a, b, self.director):
            return []
        t = (a[0] + b[0]) / 2
        m = self._sample(t, self._position(t))
        return self._refine(a, m, depth + 1) + [m] + self._refine(m, b, depth + 1)

    def accepted(self, step, y_end) -> None:
        if not self.active:
            return
        q, v = self.form.split(step.t, y_end)
        dense = getattr(step, "dense", None)
        if self.table is not None:
            self._certified(step, q, v, dense)
            return
        if self._first_start(step, dense):             # the first step: its start as the first sample
            self.samples.append(self._sample(*self.last[:2]))
        if self.last is not None:
            self._add_piece(step.t, q, v, dense)
        end = self._sample(step.t, q)
        if self.pieces and self.samples:
            self.samples += self._refine(self.samples[-1], end)
        self.samples.append(end)
        self.opened = self.samples[0][0] if self.opened is None else self.opened
        self.last = (step.t, q, v)
        self._examine()

    def _first_start(self, step, dense) -> bool:
        """Before the first piece: the first step's start (t_old and its state on the dense output) as the last
        accepted state; False (nothing set) after the first piece or without a dense output."""
        if self.last is not None or dense is None:
            return False
        q0, v0 = self.form.split(step.t_old, dense(step.t_old))
        self.last = (step.t_old, q0, v0)
        return True

    def _add_piece(self, t, q, v, dense) -> None:
        """The piece from the last accepted state to (t, q, v), kept with the one before it. An older step's dense
        output is not kept: a stepper may reuse its stage buffers (stale values gave positions 1-17 m off the
        constraints with partitioning), so it becomes a Hermite piece."""
        t0, q0, v0 = self.last
        older = [(a, b, None, *rest) for a, b, _, *rest in self.pieces[-1:]]
        self.pieces = older + [(t0, t, dense, q0, v0, q, v)]

    def _examine(self, final: bool = False) -> None:
        """Locate each local minimum of the samples below SCREEN (once), the segment's ends included: its first
        sample when it lies below the next one, and (``final``: the segment is over) its last when below the one
        before (:meth:`_close`)."""
        start = self.pieces[0][0] if self.pieces else np.inf
        self.samples = [x for x in self.samples if x[0] >= start] or self.samples[-1:]
        s = self.samples
        for k in range(len(s)):
            a = s[k - 1] if k else (s[k] if s[k][0] == self.opened else None)     # the segment's first sample
            b = s[k + 1] if k + 1 < len(s) else (s[k] if final else None)          # ... and its last, once over
            if a is None or b is None or a[0] == b[0]:
                continue
            (ta, ra, *_), (tk, rk, *_), (tb, rb, *_) = a, s[k], b
            if rk < self._screen() and (rk < ra or a is s[k]) and rk <= rb and tk > self.examined:
                self.examined = tk
                if not (self.director and _excluded(a, s[k], b)):
                    self._locate(ta, tb)

    def _close(self) -> None:
        """The segment is over (the run's end, or an event that changes the model): its last sample is a minimum when
        below the one before it. Why (issue 12): a crossing inside the last step leaves sigma_r / sigma_1 falling
        to zero and rising again to the step's end, so the end sample may be the lowest, and a minimum with one
        neighbour was never located (the N-four-bar, 40 cells, partitioning dopri5 rtol = atol = 1e-4 under
        OPENBLAS_CORETYPE=Prescott crossed at t = 19.92 in its last step [19.826, 20]: 20 crossings reported where its
        crank passed 21 times). Symmetrically the first sample of a segment is a minimum when below the next one
        (:meth:`_examine`). Either way the location and the rank decision tell a crossing inside from one beyond the
        segment's end (the located minimum keeps the generic rank: no crossing)."""
        if self.active and self.table is None and len(self.samples) > 1:
            self._examine(final=True)

    def _screen(self) -> float:
        """Samples below this (and below their neighbours) are located."""
        return SCREEN

    def _locate(self, ta: float, tb: float) -> None:
        f = self.form
        project = lambda t: solve_positions(f.model, self._position(t), t, ws=f.ws)    # noqa: E731
        sigma = lambda t: float(np.linalg.svd(self._A(t, project(t)), compute_uv=False)[self.generic - 1])  # noqa: E731
        try:
            mid = (ta + tb) / 2      # search in t - mid: scipy's bounded Brent stops at sqrt(eps) |x| relative
            t_star = mid + so.minimize_scalar(lambda x: sigma(mid + x) ** 2, bounds=(ta - mid, tb - mid),
                                              method="bounded", options={"xatol": LOCATE_XTOL}).x
            q_star = self._position(t_star)
            q_proj = project(t_star)
            rank = pivoted_qr(self._A(t_star, q_proj), CROSSING_TOL).rank
        except (MultibodyError, ValueError, np.linalg.LinAlgError):
            return
        if np.max(np.abs(q_proj - q_star)) > self.off_branch_limit():
            return      # the interpolant is not near the run's configuration: no evidence of a crossing
        self._record(t_star, rank)

    def off_branch_limit(self) -> float:
        """How far [m] the projection may move an interpolated configuration for a located minimum to count:
        OFF_BRANCH of the length scale L, or OFF_BRANCH_TOLERANCES units atol + rtol L of the run when larger."""
        rtol, atol = self.run_tolerances
        length = self.form.model.length_scale
        return max(OFF_BRANCH * length, OFF_BRANCH_TOLERANCES * (atol + rtol * length))

    def _record(self, t_star: float, rank: int) -> None:
        """A crossing at t_star if the rank there is below the generic one (once per time)."""
        if rank < self.generic and not any(abs(c["t"] - t_star) <= 1e-9 * max(1.0, abs(t_star))
                                           for c in self.crossings):
            self.crossings.append({"t": float(t_star), "rank": int(rank), "generic_rank": int(self.generic),
                                   "rank_drop": int(self.generic - rank)})
            if not self.form.passes_singular_configurations:
                raise SimulationError(
                    f"model '{self.form.model.name}': a singular configuration at t = {t_star:.9g} (rank "
                    f"{rank} of {self.generic}); the {self.form.name} formulation cannot vouch for its branch "
                    f"there (its dependent coordinates are not defined where A loses rank, paper 002 Sect. 3.3). "
                    f"Use lagrange, nullspace or projection through singular configurations.")

    def _clear_ahead(self, reach: float) -> bool:
        """True when the look-ahead (CrossingStep._ahead) cannot change the steering: Weyl's inequality excludes a
        crossing within ``reach`` after the last sample (the test of :meth:`_refine`, with A(t) - A(t1) ~ (t - t1)
        (A(t1) - A(t0)) / (t1 - t0) over the last two samples); or the parabola through the last three samples has
        its first zero ahead beyond AHEAD_MARGIN reaches, or within a tenth of the secant's zero d (the secant, which
        steers anyway, is right: the crossing step needs it within the gap of its nodes, >= 0.28 d). Why: without
        these the look-ahead cost a third of the CPU of compiled runs at tight tolerances (double four-bar, dopri5,
        rtol 1e-10: 0.50 -> 0.65 s; N-four-bar, 10 cells: 2.96 -> 3.97 s), whose steps are short against the time to
        the next crossing; with them their steps are those of before."""
        z, a, b = self.samples[-3:] if len(self.samples) > 2 else self.samples[-2:][:1] + self.samples[-2:]
        if b[0] > a[0] and b[1] > REFINE_SAFETY * _ell(a, b, self.director) * reach / (b[0] - a[0]):
            return True
        if not b[0] > a[0] > z[0]:
            return False
        slope = (b[1] - a[1]) / (b[0] - a[0])
        c = (slope - (a[1] - z[1]) / (a[0] - z[0])) / (b[0] - z[0])     # r1 + slope s + c s (s + t1 - t0)
        roots = np.roots([c, slope + c * (b[0] - a[0]), b[1]]) if c else np.array([-b[1] / slope if slope else -1.0])
        ahead = [x.real for x in roots if abs(x.imag) <= 1e-12 * abs(x) and x.real > 0.0]
        first = min(ahead, default=np.inf)
        return first > AHEAD_MARGIN * reach or (slope < 0.0 and abs(first + b[1] / slope) < 0.1 * first)

    def _ahead_ratio(self, t, q) -> float:
        """sigma_r / sigma_1 at an extrapolated configuration, r the run's generic rank (not raised by it: off Phi = 0
        the A of an overconstrained mechanism may have a larger rank than anywhere on it)."""
        s = np.linalg.svd(self._A(t, q), compute_uv=False)
        return float(s[self.generic - 1] / s[0]) if s.size and s[0] > 0 and self.generic > 0 else 1.0

    def _steer_ratios(self) -> tuple:
        """((t0, r0), (t1, r1), screen) for :meth:`steer`: the last two samples of a quantity that falls linearly to
        zero at a transversal crossing (here sigma_r / sigma_1) and the level below which it steers."""
        (t0, r0, *_), (t1, r1, *_) = self.samples[-2:]
        return (t0, r0), (t1, r1), SCREEN

    def summary(self) -> dict:
        """The crossings of the run (its last segment closed first, :meth:`_close`)."""
        self._close()
        return {"singular_crossings": sorted(self.crossings, key=lambda c: c["t"]),
                "singular_crossings_monitored": bool(self.active or self.full_rank or self.crossings)}

    # -- spatial director models: the certificate of fast.spatial_monitor (issue 16) ---------------------------

    def _certified(self, step, q, v, dense) -> None:
        """``accepted`` on a director model with the packed table. Each piece between accepted states is first
        offered to the certificate (:class:`~multibody.fast.spatial_monitor.DirectorCertificate`: no rank drop
        fits in it, by interlacing and a relative perturbation bound, in one compiled call per step instead of
        ~5 SVDs), then cut into sub-pieces (:meth:`_cut`), then with rows chosen anew at its start
        (:meth:`_rechoose`); a piece none of these certifies gets the SVD monitor of the other models
        (:meth:`_uncertain`). No
        crossing is missed: a certified piece provably keeps rank >= r_g (up to the curvature safety factor
        REFINE_SAFETY that _refine's Weyl test uses too), and every other piece is sampled, refined and located
        exactly as before."""
        if self._first_start(step, dense):             # the first step's start is the first state
            self._restart_certificate(*self.last[:2])
        elif self.last is None:     # no start state (no dense output): start at the first step's end
            self.last = (step.t, q, v)
            self._restart_certificate(step.t, q)
            return
        t0, q0, _ = self.last
        self._add_piece(step.t, q, v, dense)
        self.last = (step.t, q, v)
        certified = self.cert is not None and (self.cert.advance(q) or self._cut(t0, step.t))
        if not (certified or self._rechoose(t0, q0, step.t, q)):
            self._uncertain(t0, q0, step.t, q)
        elif self.cert.worn(step.t - t0):      # rows chosen anew at q; the old ones stay where that fails
            old = self.cert
            if not self._restart_certificate(step.t, q, sampled=True):
                self.cert = old

    def _rechoose(self, ta, qa, tb, qb) -> bool:
        """The certificate with rows chosen anew at the piece's start (pivoted QR at qa), whole or cut: the rows of
        the last restart can lose their conditioning as the mechanism moves (the six-body linkage at h = 10 ms: the
        measure grew from 5 to 18 in 0.1 s while sigma_r / sigma_1 stayed 0.014)."""
        return self._restart_certificate(ta, qa, sampled=True) and (self.cert.advance(qb) or self._cut(ta, tb))

    def _cut(self, ta: float, tb: float) -> bool:
        """The certificate on k, then 2 k equal sub-pieces of [ta, tb] (positions on the piece's interpolant, _position;
        k from the whole piece's measure), before the SVD monitor: a long step (the linkage at h = 10 ms) is certified
        by a few more factors."""
        from ..fast.spatial_monitor import MAX_SUBPIECES
        k = self.cert.subpieces()
        return any(self.cert.refine([self._position(ta + (tb - ta) * i / c) for i in range(1, c)])
                   for c in (k, 2 * k) if 0 < c <= MAX_SUBPIECES)

    def _restart_certificate(self, t, q, sampled: bool = False) -> bool:
        """The certificate's rows at q: the independent rows of the pivoted QR of A, if as many as the generic
        rank (an SVD sample at q sets it, unless ``sampled`` already); else no certificate until the next
        uncertain piece."""
        from ..fast.spatial_monitor import DirectorCertificate
        if not sampled:
            self._sample(t, q)
        rows = pivoted_qr(self._A(t, q), self.tol).independent_rows
        self.cert = None
        if len(rows) == self.generic and self.generic > 0:
            self.cert = DirectorCertificate(self.table, rows, REFINE_SAFETY)
            if not self.cert.start(q):
                self.cert = None
        return self.cert is not None

    def _uncertain(self, ta, qa, tb, qb) -> None:
        """The SVD monitor on one piece [ta, tb] the certificate left: samples at both ends and inside (_refine),
        every local minimum below SCREEN located unless _excluded (the ends count as minima on their own
        side: the pieces next to this one are certified or examined themselves). Then new rows at tb."""
        s = [self._sample(ta, qa)]
        b = self._sample(tb, qb)
        s += self._refine(s[0], b) + [b]
        for k, x in enumerate(s):
            lo, hi = s[max(k - 1, 0)], s[min(k + 1, len(s) - 1)]
            if x[1] < self._screen() and x[1] <= lo[1] and x[1] <= hi[1] and not _excluded(lo, x, hi):
                self._locate(lo[0], hi[0])
        self._restart_certificate(tb, qb, sampled=True)
