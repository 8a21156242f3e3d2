"""Independent coordinates chosen by the flatness of their chart (issue 12; partitioning with dop853 at tight tolerances).

Why. Coordinate partitioning (paper 001 Sect. 2) integrates the motion in the chart of its independent coordinates
q_I: the velocity is rebuilt as v = D(q)^T v_I (eqs 7, 9), D = [I; -C_D^-1 C_I], and the reduced equations (eqs 12-14)
carry the chart's curvature through xi = C_D^-1 gamma. The projective criterion (eq. 23, :mod:`.partition`) rates a set
by its conditioning at one configuration: cos^2 alpha, the share of the coordinate direction that lies in the tangent
space. Since the local error is measured on the physical state [q, v] (formulations.velocity_error, issue 12), the
conditioning no longer decides how accurate a step is; the chart's nonlinearity does. A Runge-Kutta step's local error
holds the derivatives of the rebuilt velocity with respect to q, which grow like powers of 1 / s_min(C_D) as the
set approaches its own singular point, where q_I is stationary along the motion; a chart whose reduced mass
M_d = D M D^T stays constant along the motion has none of these terms (its connection, M_d^-1 dM_d / dq_I, vanishes).
Measured on the double four-bar (dop853, rtol = atol = 1e-12, one step of 0.045 s against 300 steps of the same ODE):
with the coupler's x independent (cos^2 alpha 0.25 of its 0.33, the criterion's choice) the true local error was 0.19,
0.55 and 1.7 tolerances at t = 0.38, 0.42, 0.47 s (crank angle 1.1 to 0.9 rad, x stationary at 0), the estimate
0.19, 0.37, 4.4; with the crank angle (cos^2 alpha 0.028, constant on the branch) 0.011, 0.013, 0.017 against
estimates 0.52, 0.72, 0.94, the ratio of lagrange's steps. dop853's estimate is the embedded fifth-order solution's
error; it bounds the eighth-order error only where the higher derivatives are small, and near x's singular point
they are not: the run gained 8.4e-11 J in the one step 0.4235 -> 0.4721 s (lagrange's worst step: 1.9e-11 J), and
its crank-tip error over 10 s was 6.6 times the exact reduction's; with the crank angle as independent coordinate
(switching off) it was 0.39 times, in 266 steps instead of 335.

What. After each accepted step the change of every set's quality (sigma_min(Z[:, I])^2, cos^2 alpha_i for k = 1)
over that step measures its chart's nonlinearity where the motion goes: nu_I = |ln(Q_I(t_new) / Q_I(t_old))|, which is
|d ln M_d| over the step for k = 1 (Q_i = 1 / (M^-1(i, i) M_d)). :func:`choose` keeps the current set unless a set
whose chart changed less than SwitchPolicy.ratio times as much exists (the criterion's hysteresis applied to nu); among
charts flat to round-off (nu <= FLAT) the projective criterion decides as in paper 001 Sect. 4. The criterion keeps
its role as the judge of admissibility: a set below ADMISSIBLE times the best set's quality is never chosen (its
rebuilt velocity would carry the velocity's round-off amplified by more than sqrt(1 / ADMISSIBLE) = 10 over the best
set's), and a current set below it is left for the flattest admissible one.
"""
from __future__ import annotations

import numpy as np

from .partition import Criterion

#: a relative change of a set's quality over a step below this counts as none: the quality is computed by Cholesky
#: factors and an SVD, which leave relative round-off far above eps in it; sqrt(eps) is far below any chart's change
#: that matters (the coupler's x of the double four-bar: 1e-2 per step at its best, 0.1 near its switch)
FLAT = float(np.sqrt(np.finfo(float).eps))
#: a set whose quality is below this fraction of the best set's is not admissible for :func:`choose`
ADMISSIBLE = 1e-2


def variation(old: Criterion, new: Criterion, independent) -> float:
    """nu_I = |ln(Q_I(new) / Q_I(old))| (module docstring), at least FLAT; inf where either quality vanishes."""
    q_old, q_new = old.quality(independent), new.quality(independent)
    if q_old <= 0 or q_new <= 0:
        return np.inf
    return max(abs(float(np.log(q_new / q_old))), FLAT)


def flattest(old: Criterion, new: Criterion, floor: float = ADMISSIBLE) -> tuple[int, ...]:
    """The admissible set of the flattest coordinates: coordinates ordered by the change of their own cos^2 alpha
    (eq. 23 a) over the step (ties at FLAT by cos^2 alpha, larger first), taken greedily while the chosen columns
    of Z keep sigma_min^2 >= floor times the best set's quality; the criterion's best set if none is found."""
    k = new.k
    if k == 0:
        return ()
    with np.errstate(divide="ignore", invalid="ignore"):
        nu = np.abs(np.log(new.cos2_alpha / old.cos2_alpha))
    nu = np.where(np.isfinite(nu), np.maximum(nu, FLAT), np.inf)
    limit = floor * new.quality(new.best())
    chosen: list[int] = []
    for i in np.lexsort((-new.cos2_alpha, nu)):
        if not np.isfinite(nu[i]):
            break
        trial = chosen + [int(i)]
        if np.linalg.svd(new.Z[:, trial], compute_uv=False)[-1] ** 2 >= limit:
            chosen = trial
            if len(chosen) == k:
                return tuple(sorted(chosen))
    return new.best()


def choose(old: Criterion, new: Criterion, current, ratio: float, floor: float = ADMISSIBLE) -> tuple[int, ...]:
    """The independent set after a step from the configuration of ``old`` to that of ``new`` (module docstring):
    ``current`` unless it fell below ``floor`` times the best quality or the flattest admissible set changed less
    than ``ratio`` times as much over the step (both flat: the projective criterion with the same ratio)."""
    current = tuple(current)
    if new.k == 0:
        return current
    best = new.best()
    limit = floor * new.quality(best)
    cand = flattest(old, new, floor)
    if new.quality(current) < limit:
        return cand if new.quality(cand) >= limit else best
    nu_cur, nu_cand = variation(old, new, current), variation(old, new, cand)
    if nu_cand < ratio * nu_cur:
        return cand
    if nu_cur <= FLAT and nu_cand <= FLAT and new.quality(current) < ratio * new.quality(cand):
        return cand
    return current
