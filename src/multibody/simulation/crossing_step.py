"""The crossing step (issue 12): one Runge-Kutta step across each singular configuration a run passes, chosen from the
smooth motion so that the crossing lies in the middle of the widest gap between the tableau's nodes
(:func:`crossing_node`), and the crossings ahead of a long step found on the extrapolated motion
(:meth:`CrossingStep._ahead`). A mixin of :class:`~.crossings.CrossingMonitor`, whose samples of sigma_r / sigma_1
(paper 000 Sect. 2.5) it steers by; the reasons and measurements are in the docstrings of
:meth:`CrossingStep.steer` and :meth:`CrossingStep._ahead`, and docs/guide/singular.md.
"""
from __future__ import annotations

import functools

import numpy as np
import scipy.optimize as so

from ..formulations.singular import hermite

#: the crossing step (CrossingMonitor.steer) is this fraction of the step the controller proposes
CROSSING_FRACTION = 0.5
#: ... and is taken when the extrapolated crossing lies within this factor of its reach (the controller's next
#: proposal may grow by up to its max_factor)
STEER_SLACK = 1.2
#: samples of sigma_r / sigma_1 ahead of the last accepted state (CrossingMonitor._ahead) when the last two do not
#: predict a crossing within the reach of the next step
AHEAD = 3
#: ... and only when the parabola through the last three samples reaches zero within this many reaches (the dense
#: monitor's CrossingMonitor._clear_ahead; a margin for the parabola's error, argued, not derived)
AHEAD_MARGIN = 2.0


def crossing_node(tableau) -> tuple[float, float]:
    """(c*, g): the middle c* of the widest gap between the nodes c_i of a Runge-Kutta tableau (its start 0 and end 1
    included) and half that gap, as fractions of the step: a crossing placed at c* h lies g h from every stage
    (dopri5: 0.55 and 0.25, between 3/10 and 4/5; dop853: 0.467 and 0.133, between 1/3 and 3/5)."""
    return _node(tuple(np.asarray(tableau.c, float)))


@functools.lru_cache(maxsize=16)
def _node(nodes: tuple) -> tuple[float, float]:
    c = np.unique(np.clip(np.r_[nodes, 0.0, 1.0], 0.0, 1.0))
    i = int(np.argmax(np.diff(c)))
    return float(c[i] + c[i + 1]) / 2, float(c[i + 1] - c[i]) / 2


class CrossingStep:
    """``steer(stepper)`` after every accepted step (simulation.step_watch): the crossing step and the step before it.
    Needs of the monitor: ``samples``, ``pieces``, ``active``, ``form``, ``resume``, ``_steer_ratios()`` and
    ``_ahead_ratio(t, q)``, ``_clear_ahead(reach)``."""

    def steer(self, stepper) -> None:
        """The crossing step (issue 12; paper 000 Sect. 2.5: sigma_r of A vanishes at the singular configuration and,
        at a transversal crossing, grows like |t - t*| on both sides): when the samples' sigma_r / sigma_1, falling
        linearly towards a transversal crossing, extrapolate to zero within the next two proposed steps of an
        adaptive Runge-Kutta stepper, its next step is chosen from the smooth motion so that one step carries the run
        across, the crossing in the middle of the widest gap between the tableau's nodes (:func:`crossing_node`).
        Why: next to the crossing the rank decisions of the acceleration solve and the projection fade (linalg.rank:
        s_i between 1e-6 and 1e-4 s_max), so a stage evaluated there sees equations that change within ~1e-4 s, and
        the state follows the level set of the projection's round-off (formulations.extended_projection, which
        removes most of it); a step controller that reaches the
        crossing by growing steps lands stages there, is rejected and creeps up to it with steps ~0.05 |t - t*|
        (down to 2e-8 s on the N-four-bar at rtol 1e-12, atol 1e-14). The motion itself is smooth: one dopri5 step
        of 1e-3 s across the crossing from the exact state is 4e-15 m and 7e-14 m/s off the exact solution
        (N-four-bar, 10 cells). The crossing step is CROSSING_FRACTION of the proposed step, so that its error
        estimate, larger across the crossing (3.5 against 0.6 for 3e-3 s from the exact state at rtol 1e-12), stays
        below 1 (h^5: 1/32); the step before it is shortened to end where that step begins. A rejected crossing
        step falls back to the controller's own steps. Needs sigma_r / sigma_1 below SCREEN at two samples
        (:meth:`_steer_ratios`; the sparse monitor: sigma_min / sigma_max at its last two accepted states); not for
        a formulation that stops at a crossing (minimal: stages beyond it would be Newton's pick of a branch).
        The step after an accepted crossing step is the one the controller proposed before it, not the controller's
        proposal from the crossing step's error: a stage next to the crossing carries the solve's round-off, amplified
        by 1 / sigma_r, into that estimate (double four-bar, dop853, rtol 1e-5: its 5th-order part differs by 6%
        between BLAS kernels, and err^(-1/8) carried that into the next steps; issue 12)."""
        resume, self.resume = self.resume, None
        if resume is not None and stepper.t == resume[0]:       # the crossing step was accepted as chosen
            stepper.h = stepper.direction * min(resume[1], stepper.max_step)
        if (not self.active or len(self.samples) < 2 or getattr(stepper, "fixed_step", 1) is not None
                or not self.form.passes_singular_configurations):   # minimal stops at the crossing instead
            return
        (t0, r0), (t1, r1), screen = self._steer_ratios()
        node, half_gap = crossing_node(stepper.tableau)
        h = abs(stepper.h)                                       # the proposed step
        lead = node * CROSSING_FRACTION * h                      # the crossing step's start before the crossing
        d = r1 * (t1 - t0) / (r0 - r1) if r1 < r0 and r1 < screen and t1 > t0 else np.inf   # time to the crossing
        if self._looks_ahead(r1, screen, t1, stepper.t):    # the secant comes late or not at all: the earlier
            d = min(d, self._ahead(t1, r1, (h + lead) * STEER_SLACK))
        if not (np.isfinite(d) and d > 0.0 and half_gap > 0.0):
            return
        if d <= lead * STEER_SLACK:
            stepper.h = stepper.direction * d / node             # the crossing step
            self.resume = (stepper.t + stepper.h, h)
        elif d < (h + lead) * STEER_SLACK:
            stepper.h = stepper.direction * min(h, d - lead)     # the step before it

    def _ahead(self, t1: float, r1: float, reach: float) -> float:
        """Time from t1 to the crossing ahead within ``reach`` (inf: none seen), on the last piece's cubic Hermite
        interpolant extrapolated: sigma_r / sigma_1 sampled at AHEAD + 1 equal intervals of the reach (one beyond it,
        to bracket a crossing at its end); its first interior local minimum is refined by Brent's bounded search
        between its neighbours and counts when it lies below half of them (the V of a transversal crossing,
        sigma_r ~ |t - t*|; a near miss or a generic dip does not). Why (issue 12): two samples next to the ratio's maximum are flat, so their secant predicts no crossing,
        while a step at a loose tolerance reaches from there across it (double four-bar, dop853, rtol = atol = 1e-4:
        four of its ten crossings fell inside ordinary steps of 0.47 s, whose crank velocity error was 1.3-1.8
        tolerances against an estimate of 0.2-0.4, and they carried the run's tip error); and the secant of two
        falling samples ahead, on the concave flank, predicts the crossing too late (the step before the crossing
        step then contained it). The configurations are extrapolated (off Phi = 0 by O(reach^4)): that moves the
        predicted time, which the crossing step corrects, since it is chosen from the accepted states once they are
        close (:meth:`steer`)."""
        if not self.pieces or self.pieces[-1][1] != t1 or self._clear_ahead(reach):
            return np.inf
        return self._first_dip(t1, reach, [t1], [r1], self._ahead_ratio)

    def _looks_ahead(self, r1: float, screen: float, t1: float, t: float) -> bool:
        """Whether :meth:`steer` looks ahead (:meth:`_ahead`): the dense monitor where its last sample, at the
        stepper's state, is below the screen (sigma_r / sigma_1 samples everywhere else exclude a crossing by Weyl)."""
        return r1 < screen and t1 == t

    def _first_dip(self, t1: float, reach: float, t_known: list, r_known: list, ratio_at) -> float:
        """Time from t1 to the first V-shaped dip of ``ratio_at(t, q)`` (a quantity ~ |t - t*| at a transversal crossing)
        within ``reach`` (inf: none): sampled on the last piece's cubic Hermite interpolant extrapolated at AHEAD + 1
        equal intervals of the reach, after the known samples (t_known, r_known; the last at t1); the first interior
        local minimum refined by Brent's bounded search between its neighbours (not behind t1) counts when it lies
        below half of them, and, bracketed by a known sample behind t1, clearly ahead of t1 (else that crossing is
        behind, the monitor's). Shared by the dense and the sparse monitor (simulation.crossings_sparse)."""
        ta, tb, _, qa, va, qb, vb = self.pieces[-1]
        ratio = lambda t: ratio_at(t, hermite(t, ta, qa, va, tb, qb, vb))     # noqa: E731
        ahead = t1 + reach * np.arange(1, AHEAD + 2) / AHEAD
        ts, rs = list(t_known) + list(ahead), list(r_known) + [ratio(t) for t in ahead]
        for k in range(1, len(ts) - 1):          # the first dip: the next crossing
            if rs[k] <= min(rs[k - 1], rs[k + 1]):
                lo, xatol = max(ts[k - 1], t1), 1e-3 * reach
                best = so.minimize_scalar(lambda t: ratio(t) ** 2, bounds=(lo, ts[k + 1]), method="bounded",
                                          options={"xatol": xatol})
                if np.sqrt(best.fun) < 0.5 * min(rs[k - 1], rs[k + 1]) and (ts[k - 1] >= t1 or best.x > t1 + 2 * xatol):
                    return best.x - t1 if best.x <= t1 + reach else np.inf
        return np.inf
