"""Singular crossings of large models (n >= assembly.SPARSE_MIN_COORDINATES) at the cost of a sparse
factorisation per sample (paper 000 Sect. 2.5; issue 12). :mod:`.crossings` watches sigma_r / sigma_1 from a
dense SVD, ~10 ms for the 242 x 243 Jacobian of the 81-bar N-four-bar; with Weyl's refinement and the projected
Brent search that made its 20 s run 157 s instead of 5 s.

Here the indicator is the pivot ratio rho = min_i D_i / max_i D_i of the symmetric (LDL^T, SuperLU in symmetric
mode, fill-reducing ordering, no pivoting) factorisation of S = A A^T, the matrix the sparse path factorises
anyway (linalg.sparse.factor_spd; ~0.5 ms for the N-four-bar). Why every crossing shows as a dip: for S symmetric
positive definite every pivot is D_k = 1 / [(S_kk)^-1]_kk >= lambda_min(S) = sigma_m(A)^2 > 0 (S_kk the leading
k x k block, an SPD matrix whose smallest eigenvalue is >= lambda_min(S) by interlacing), and prod D_k = det S =
prod sigma_i^2: where A loses rank det S = 0, so some pivot is 0 and rho = 0; away from it rho > 0. The D_k are
smooth functions of the configuration, so rho dips to zero and rises again across a crossing (the ordering
is fixed by the sparsity pattern). It is sampled at every accepted state and at ``INTERIOR`` points of each step
on the dense output (a dip narrower than that spacing could pass unseen: no Weyl bound here); a local minimum below
``SCREEN`` times the largest rho of the run is located by Brent's bounded search on log rho along the (unprojected)
dense output. That output is off the branch by the local error, so the time is then refined on the path projected
onto Phi = 0 (parabolic steps on sigma_r^2 from dense SVDs, smooth there: sigma_r is the modulus of a function
that changes sign) while a singular value of A there lies between CROSSING_TOL and ``AMBIGUOUS`` times the
largest (undecided), or where the rank there is still the generic one (the minimum of the unprojected output may lie
away from that of the projected path: the N-four-bar with 40 cells, dop853 at rtol 1e-4 / atol 1e-6, crossed at
t = 8.584 in one partitioning step whose output the projection moved by 6.7e-3 m, and the crossing was dropped as a
near miss), at most ``REFINE`` steps; then the singular values with crossings.CROSSING_TOL decide the
rank (measured on the N-four-bar without refinement: rank 242 of 242 at rtol 1e-4 where the crossing drops it to
202, and 203 instead of 202 once in 20 crossings at rtol 1e-7; its generic s_r / s_1 is 1.7e-2). Cost per step:
(1 + INTERIOR) sparse factorisations (measured: ~10% of a 100-bar chain's run, 9.9 s against 9.0 s CPU at rtol
1e-6); per crossing: ~40 sparse ones, one projection and one dense SVD, and three more of each per refinement step.

The crossing step (CrossingMonitor.steer; issue 12, tight tolerances) is steered by sigma_min / sigma_max of A at the
last two accepted states, once the pivot ratio is below the screen (formulations.lagrange_sparse.conditioning, one
shift-invert Lanczos estimate each, ~1 ms): one step across each crossing, its stages away from where the rank
decisions fade (the N-four-bar with 40 cells at rtol 1e-12: smallest step 7e-4 s, before 3e-8 s). Both samples are
states of this approach: at the first state below the screen its predecessor is sampled too. (Before, the older
sample was the last one below the screen, of the previous crossing where a long step had jumped the screen: no
steer, and partitioning's window stepped across the crossing at t = 4.6528 of the N-four-bar (40 cells, dop853, rtol
1e-10, atol 1e-12) with a stage next to it; the projection behind it removed 2e3 tolerances of velocity and left
3.8e-8 J of energy error, 1.1e-6 m of tip error at 20 s, 4.5 times the yardstick; issue 12.)

Models whose A is rank deficient from the start (redundant rows) have det S = 0 everywhere: the indicator says
nothing there, and such runs keep ``singular_crossings_monitored: false``.
"""
from __future__ import annotations

import numpy as np
import scipy.optimize as so
import scipy.sparse.linalg as spla

from ..errors import MultibodyError
from ..formulations.lagrange_sparse import conditioning
from ..kinematics import solve_positions
from .crossings import CROSSING_TOL, LOCATE_XTOL, CrossingMonitor

#: dense-output samples inside each step (besides the accepted states)
INTERIOR = 1
#: a local minimum of rho below SCREEN times the largest rho seen in the run is located. Half: with 0.05, dop853 at
#: rtol 1e-4 (steps of 0.25 s, samples 0.13 s apart) lost 7 of the N-four-bar's 20 crossings, whose nearest samples
#: lay 0.3 rad of crank angle away (rho 0.06 of its largest); rho ~ sin^2 theta there, so a crossing whose nearest
#: sample is within 45 degrees shows. A located minimum that is no crossing (a near miss) keeps the rank and is dropped.
SCREEN = 0.5
#: parabolic refinement steps of the located time on the projected path (sigma_r^2 is locally a parabola)
REFINE = 3
#: singular values of A at the located configuration between CROSSING_TOL and AMBIGUOUS times the largest leave
#: the rank undecided (the location is not close enough to tell a vanishing one from a small generic one): refine
AMBIGUOUS = 1e-4
#: pivot ratio at the start below which A counts as rank deficient (redundant rows): unmonitored
REDUNDANT = 1e-14
#: pivot ratio (times the largest of the run) below which sigma_min / sigma_max is estimated for the crossing step
STEER_SCREEN = 0.05
#: sigma_min / sigma_max below which the crossing step is steered (CrossingMonitor.steer; the dense monitor's SCREEN
#: is relative to a generic ratio of order one, the N-four-bar's generic ratio is 1.7e-2)
STEER_BELOW = 2e-3


def pivot_ratio(A) -> float:
    """min D / max D of the symmetric SuperLU factorisation of A A^T (0.0 if it fails: A rank deficient)."""
    try:
        lu = spla.splu((A @ A.T).tocsc(), permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                       options={"SymmetricMode": True})
    except RuntimeError:
        return 0.0
    d = np.abs(lu.U.diagonal())
    return float(d.min() / d.max()) if d.size and d.max() > 0 and np.all(np.isfinite(d)) else 0.0


class SparseCrossingMonitor(CrossingMonitor):
    """:class:`~.crossings.CrossingMonitor` with the sparse pivot-ratio indicator (module docstring)."""

    def restart(self, form) -> None:
        super().restart(form)
        self.ratios = []                # (t, sigma_min / sigma_max) at accepted states near a crossing (steer)
        self.active, self.rho_max = 0 < form.ws.m and not self.full_rank, 0.0
        self.generic = form.ws.m

    def _sample(self, t, q) -> tuple:
        rho = pivot_ratio(self.form.ws.sparse_constraints(t, q, np.zeros_like(q))[1])
        if self.rho_max == 0.0 and rho < REDUNDANT:     # rank deficient at the first sample: redundant rows
            self.active = False
        self.rho_max = max(self.rho_max, rho)
        return t, rho, None, 1.0

    def _refine(self, a: tuple, b: tuple, depth: int = 0) -> list:
        ts = a[0] + (b[0] - a[0]) * np.arange(1, INTERIOR + 1) / (INTERIOR + 1)
        return [self._sample(t, self._position(t)) for t in ts]

    def _screen(self) -> float:
        return SCREEN * self.rho_max

    def accepted(self, step, y_end) -> None:
        prev = self.last
        super().accepted(step, y_end)
        if self.active and self.samples and self.samples[-1][1] < STEER_SCREEN * self.rho_max:   # near a crossing
            if prev is not None and (not self.ratios or self.ratios[-1][0] != prev[0]):
                self.ratios = [(prev[0], self._conditioning(*prev[:2]))]    # the approach's first two states
            t, q = self.last[:2]
            self.ratios = self.ratios[-1:] + [(t, self._conditioning(t, q))]

    def _conditioning(self, t, q) -> float:
        return conditioning(self.form.ws.sparse_constraints(t, q, np.zeros_like(q))[1])

    def _steer_ratios(self) -> tuple:
        """sigma_min / sigma_max of A at the last two accepted states whose pivot ratio was below the screen
        (CrossingMonitor.steer; formulations.lagrange_sparse.conditioning, ~1 ms each): it falls linearly to zero at
        a transversal crossing. Not the pivot ratio rho itself: sqrt(rho) / (sigma_min / sigma_max) drifts near the
        crossing (on the N-four-bar the crossing extrapolated from it came 3.6e-4 s after the step's start against
        6.4e-4 s, the crossing step ended beyond the crossing, and its error was 5e4 tolerances)."""
        if len(self.ratios) < 2 or self.ratios[-1][0] != self.last[0]:
            return (0.0, 0.0), (0.0, 0.0), 0.0         # nothing to steer by
        return self.ratios[-2], self.ratios[-1], STEER_BELOW

    def _looks_ahead(self, r1: float, screen: float, t1: float, t: float) -> bool:
        """Wherever sigma_min / sigma_max does not steer (above STEER_BELOW, or not sampled: the pivot ratio above
        STEER_SCREEN), the next step looks ahead (CrossingStep._ahead): the pivot ratio bounds nothing (no Weyl
        here), and a step may reach from there to the crossing. Why (issue 12): N-four-bar, 40 cells, partitioning
        dop853 rtol 1e-6 / atol 1e-8 (Prescott; the window's steps of lagrange, 0.26 s): from t = 4.388, 1 rad of
        crank before the crossing, one step ended 4e-4 s before it (sigma_min / sigma_max 2.2e-5), with stages next
        to it: 5.7e-5 of the reduced energy (5 tolerances) in that step, and so at each of the next crossings: tip
        3.35e-3 m, x1.14 the envelope (9.3e-5 m before the window's bound made the steps longer)."""
        return not r1 < screen and self.last is not None and self.last[0] == t

    def _ahead(self, t1: float, r1: float, reach: float) -> float:
        """The crossing ahead within ``reach`` of the last accepted state (CrossingStep._first_dip, shared): sqrt(rho),
        ~ sigma_min / sigma_max up to a smooth factor and so ~ |t - t*| at a transversal crossing, on the last piece
        extrapolated, after the last step's two samples (a crossing just ahead of the state shows as a dip there).
        Four sparse factorisations per step (~2 ms at N = 40), and a Brent search where a dip shows."""
        if len(self.samples) < 2 or not self.pieces or self.last is None or self.pieces[-1][1] != self.last[0]:
            return np.inf
        (tp, rp, *_), (tl, rl, *_) = self.samples[-2:]
        return self._first_dip(tl, reach, [tp, tl], [np.sqrt(rp), np.sqrt(rl)], self._ahead_ratio)

    def _ahead_ratio(self, t, q) -> float:
        """sqrt of the pivot ratio at an extrapolated configuration (:func:`pivot_ratio`)."""
        return float(np.sqrt(pivot_ratio(self.form.ws.sparse_constraints(t, q, np.zeros_like(q))[1])))

    def _locate(self, ta: float, tb: float) -> None:
        f = self.form
        log_rho = lambda t: np.log(max(self._sample(t, self._position(t))[1], 1e-300))    # noqa: E731
        try:
            mid = (ta + tb) / 2
            t_star = mid + so.minimize_scalar(lambda x: log_rho(mid + x), bounds=(ta - mid, tb - mid),
                                              method="bounded", options={"xatol": LOCATE_XTOL}).x
            d, q_proj = 1e-3 * (tb - ta), self._project(t_star)
            for k in range(REFINE + 1):      # the dense output is off the branch by the local error: refine
                s = np.linalg.svd(self._A(t_star, q_proj), compute_uv=False)
                s = s / s[0]
                dropped = np.count_nonzero(s > CROSSING_TOL.rtol) < self.generic
                if k == REFINE or (dropped and not np.any((s > CROSSING_TOL.rtol) & (s <= AMBIGUOUS))):
                    break       # decided; a generic rank is refined too: the interpolant may be far off (below)
                t_new, q_proj = self._parabola(t_star, ta, tb, d)
                d, t_star = max(abs(t_new - t_star), 1e-12 * max(1.0, abs(t_star))), t_new
            rank = int(np.count_nonzero(s > CROSSING_TOL.rtol))
        except (MultibodyError, ValueError, np.linalg.LinAlgError):
            return
        if np.max(np.abs(q_proj - self._position(t_star))) > self.off_branch_limit():
            return
        self._record(t_star, rank)

    def _project(self, t):
        """The dense output's configuration at t projected onto Phi = 0."""
        return solve_positions(self.form.model, self._position(t), t, ws=self.form.ws)

    def _parabola(self, t, ta, tb, d):
        """One parabolic step on sigma_r^2 of the projected path through t - d, t, t + d (dense SVDs): (t*, q)."""
        def sig2(t):
            return float(np.linalg.svd(self._A(t, self._project(t)), compute_uv=False)[self.generic - 1]) ** 2

        lo, hi = max(ta, t - d), min(tb, t + d)
        y0, y1, y2 = sig2(lo), sig2(t), sig2(hi)
        a = ((y2 - y1) / (hi - t) - (y1 - y0) / (t - lo)) / (hi - lo) if lo < t < hi else 0.0
        if a > 0:
            b = (y2 - y1) / (hi - t) - a * (hi - t)     # slope at t of the parabola through the three points
            t = float(np.clip(t - b / (2 * a), ta, tb))     # the vertex: sigma_r^2 is a parabola at a crossing
        return t, self._project(t)
