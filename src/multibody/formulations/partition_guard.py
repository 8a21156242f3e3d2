"""Partitioning's step guard (issue 12): no step of the equations in [q, v_I] reaches a configuration where the
independent coordinates it integrates have become a poor choice.

Why. The rebuilt velocity v = D(q)^T v_I + [0; eta] and the reduced equations (paper 001 eqs 7-14) go through
C_D^-1; the projective criterion's quality of the independent set I (sigma_min(Z[:, I])^2, cos^2 alpha_i of eq. 23 a
for k = 1; analysis.partition) tends to zero where C_D turns singular, e.g. where the one independent coordinate of a
1-DOF chain is stationary (the coupler's height at the crank's lowest point). The criterion is re-checked after every
accepted step (paper 001 Sect. 4) and switches the set there; a step of a loose tolerance, though, can run from a
good set past the point where it is singular before the check sees it. The right-hand side at the stages near that
point has a Lipschitz constant ~ 1 / quality, which the local error estimate does not resolve (measured before this
guard: double four-bar dop853 rtol 1e-6, a step from crank angle -1.77 to -2.69 rad with the coupler's x independent
ended at 0.24 of the best quality and lost 4.2e-4 of the energy, 35 tolerances; 12o's triple four-bar tip error
650 times the reduced run's).

What. Every right-hand side of the reduced equations records the quality of the set it integrates
(analysis.partition.set_quality, from the M_d it factors anyway). An attempt is accepted only if the quality at all
its stages and at its end state stays above QUALITY_FLOOR times the best quality at the step's start (the criterion of the last
after-step check); otherwise the attempt is rejected like one whose local error is too large, and the step size
controller shortens it (by its smallest factor, 1/5). So every accepted step ends where the set is still admissible
and well conditioned, and the after-step check switches (its threshold SwitchPolicy.ratio lies above the floor)
before the set can degrade further. QUALITY_FLOOR is below the switching ratio 0.7 so that the band between them
leaves room for a step that ends where the switch happens.

A rejected attempt costs its stages, so the guard also predicts (:meth:`PartitionGuard.predict`): after each accepted
step it extrapolates r = sqrt(quality) of the set, which falls like the distance to the set's singular point
(r ~ |sin phi| for the coupler's height at crank angle phi from its lowest point), linearly from the step's later
stages, and caps the next step (``limit``, applied by simulation.step_watch with the crossing window's) at the time r needs to
reach the quality sqrt(QUALITY_FLOOR * SwitchPolicy.ratio) times the best set's, the middle of the band on a
logarithmic scale. The prediction saves
rejections; the stage check alone decides what is accepted.
"""
from __future__ import annotations

import numpy as np

#: an attempt whose stages see the independent set's quality below this fraction of the best set's quality at the
#: step's start is rejected (below SwitchPolicy.ratio, 0.7 by default: the band between is where the switch happens)
QUALITY_FLOOR = 0.35
#: the error returned for a rejected attempt, relative to 1 + |y|: its scaled norm is >= this / max(rtol, atol)
REJECT_ERROR = 1e3


class PartitionGuard:
    """Stage qualities of the current attempt and the verdict on it (module docstring). ``reference``: the best
    quality at the step's start (None: no guard, e.g. switching disabled)."""

    def __init__(self, floor: float = QUALITY_FLOOR):
        self.floor = floor
        self.reference = None
        self.rejected = 0
        self.worst = np.inf         # smallest quality / reference of an accepted attempt's stage
        self._stages: list = []
        self._verdict = None
        self._accepted: list = []   # (t, quality) of the stages of the last attempt that held, for predict
        self.limit = None           # the predicted longest next step (None: no limit)

    def start(self, reference) -> None:
        """A new step begins at a state whose best set has quality ``reference`` (None: unguarded)."""
        self.reference = reference
        self._stages = []

    def predict(self, t: float, quality, best, switch: float) -> None:
        """After an accepted step ending at t where the set's quality is ``quality`` and the best set's ``best`` (None:
        a new set or an unguarded state: no limit); ``switch``: SwitchPolicy.ratio. The trend is the least-squares
        line of sqrt(quality) over the later half of the step's stages (the stage states are the step's own samples
        of the path) and its end."""
        samples, self._accepted, self.limit = self._accepted, [], None
        if quality is None or len(samples) < 2:
            return
        t0 = min(s[0] for s in samples)
        late = [(s_t, np.sqrt(max(s_q, 0.0))) for s_t, s_q in samples if s_t - t0 >= 0.5 * (t - t0)]
        late.append((t, float(np.sqrt(max(quality, 0.0)))))
        ts, rs = np.array(late).T
        if np.ptp(ts) <= 0:
            return
        slope, value = np.polyfit(ts - t, rs, 1)
        target = float(np.sqrt(np.sqrt(self.floor * switch) * best))
        if slope < 0 and value > target:
            self.limit = (target - value) / slope

    def stage(self, t: float, quality: float) -> None:
        if self.reference is not None:
            self._stages.append((t, quality))

    def holds(self, t_old: float, t_new: float, end=None) -> bool:
        """True if every stage of the attempt t_old -> t_new and its end state kept the set's quality above the floor
        (``end()``: the quality at the end state, asked once; DOP853's second estimate gets the first answer)."""
        if self._verdict is not None and self._verdict[:2] == (t_old, t_new):
            return self._verdict[2]
        if end is not None and self.reference is not None:
            self.stage(t_new, end())
        lo, hi = min(t_old, t_new), max(t_old, t_new)
        worst = min((q for t, q in self._stages if lo <= t <= hi), default=np.inf)
        ok = self.reference is None or worst >= self.floor * self.reference
        if ok and self.reference:
            self.worst = min(self.worst, worst / self.reference)
            self._accepted = [s for s in self._stages if lo <= s[0] <= hi]
        self.rejected += not ok
        self._stages, self._verdict = [], (t_old, t_new, ok)
        return ok

    def reject(self, y_old: np.ndarray, y_new: np.ndarray) -> np.ndarray:
        """An error vector whose scaled norm (integrate.controllers.error_norm) is at least
        REJECT_ERROR / max(rtol, atol): the attempt is rejected and the controller takes its smallest factor."""
        return REJECT_ERROR * (1.0 + np.maximum(np.abs(y_old), np.abs(y_new)))
