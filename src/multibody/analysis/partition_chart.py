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
|d ln M_d| over the step for k = 1 (Q_i = 1 / (M^-1(i, i) M_d)). A chart is *flat* where nu_I is zero to round-off
(nu_I <= FLAT): its quality is constant along the motion, so it never nears its own singular point and the rebuilt
velocity's derivatives are the geometry's alone (the crank angle of a parallelogram chain, the rotation angle of a
physical pendulum). :func:`choose` keeps an admissible flat set (among flat sets the projective criterion decides
with the hysteresis SwitchPolicy.ratio, paper 001 Sect. 4), switches to one where it appears, and where no admissible
set is flat applies paper 001's own rule: the best set by eq. 23 once the current one falls below ratio times it.
(Comparing the nu of charts that are not flat, as the first version did, chattered: nu of a chart whose quality
passes an extremum is small for one step, so the "flattest" set hopped from one coordinate to the next; measured with
benchmarks/partition_rule.py: the four-bar in relative coordinates 17 to 40 switches against paper 001's 6, the
cylindrical pair 300 steps against 211.)

Admissibility, derived. A chart integrates well only while its own round-off stays below the tolerance. With
rho_I = sqrt(Q_I) the set's distance to its singular point (the smallest singular value of the scaled columns Z[:, I],
module analysis.partition; for k = 1 the cosine of the angle between the coordinate direction and the tangent space),
the rebuilt velocity v = D^T v_I goes through C_D^-1 once and its derivative along the motion (the acceleration's
terms D^T v_I' and dD^T/dt v_I, eqs 9-14) twice: a relative round-off eps of q or v_I moves v by ~eps / rho_I and the
acceleration a by ~eps / rho_I^2 = eps / Q_I of themselves (for k = 1 the first is a bound: |delta v|_M^2 =
M_d delta v_I^2 = delta v_I^2 / (M^-1(i, i) Q_i) and |v_I| <= sqrt(M^-1(i, i)) |v|_M by Cauchy-Schwarz in the metric
M^-1, so |delta v|_M <= eps |v|_M / sqrt(Q_i)). The step's error estimate h sum_i e_i K_i differences the stages'
accelerations: their round-off puts noise h |a| eps / Q_I <= |v| eps / Q_I into it (h |a| <= |v|: a step changes the
velocity by less than itself), which no step size removes and the local error control cannot tell from the truncation
error of the physical state it measures (formulations.velocity_error). A set is admissible when that noise is below
the tolerance, eps / Q_I <= rtol: Q_I >= :func:`admissible_floor` (rtol) = eps / rtol. The loss against the best chart
is then bounded by construction: the admissible chart's round-off exceeds the best one's by at most rtol |v| in the
estimate (eps / Q_I - eps / Q_best <= eps / Q_I <= rtol). It is the singular window's rule (formulations
.crossing_window: the lagrange equations take over where eps / rho^2 of the whole Jacobian's sigma_r / sigma_1 rho
reaches rtol / 16) without its margin 16: the window's rho falls towards zero across a step next to the crossing,
a flat chart's quality is constant. The floor is 2.2e-4 at rtol 1e-12 and 2.2e-10 at rtol 1e-6; the crank angle has
Q = 1 / 36 = 0.028 on the double four-bar and 1 / (12 (41 / 3 + 40)) = 1.55e-3 on the N-four-bar with 40 cells
(M^-1(i, i) = 12 / (m L^2), M_d = 41 m L^2 / 3 + 40 m L^2), admissible down to rtol 1.4e-13. It replaces the earlier
ADMISSIBLE = 1e-2 of the best set's quality, which was argued (round-off amplified by at most sqrt(100) = 10 over the
best chart) but not tied to the tolerance the run must meet.
"""
from __future__ import annotations

import numpy as np

from .partition import Criterion

#: a relative change of a set's quality over a step below this counts as none: the quality is computed by Cholesky
#: factors and an SVD, which leave relative round-off far above eps in it; sqrt(eps) is far below any chart's change
#: that matters (the coupler's x of the double four-bar: 1e-2 per step at its best, 0.1 near its switch)
FLAT = float(np.sqrt(np.finfo(float).eps))
#: rtol assumed by a formulation until the run tells it its own (simulation.step_watch)
DEFAULT_RTOL = 1e-6


def admissible_floor(rtol: float) -> float:
    """The smallest quality Q_I = sigma_min(Z[:, I])^2 of an admissible set at relative tolerance rtol: eps / rtol
    (module docstring: the round-off eps / Q_I its accelerations put into the error estimate stays below rtol)."""
    return float(np.finfo(float).eps / max(rtol, 1e-300))


def variation(old: Criterion, new: Criterion, independent) -> float:
    """nu_I = |ln(Q_I(new) / Q_I(old))| (module docstring), at least FLAT; inf where either quality vanishes."""
    q_old, q_new = old.quality(independent), new.quality(independent)
    if q_old <= 0 or q_new <= 0:
        return np.inf
    return max(abs(float(np.log(q_new / q_old))), FLAT)


def flattest(old: Criterion, new: Criterion, floor: float = admissible_floor(DEFAULT_RTOL)) -> tuple[int, ...]:
    """The admissible set of the flattest coordinates: coordinates ordered by the change of their own cos^2 alpha
    (eq. 23 a) over the step (ties at FLAT by cos^2 alpha, larger first), taken greedily while the chosen columns
    of Z keep sigma_min^2 >= floor (:func:`admissible_floor`); the criterion's best set if none is found."""
    k = new.k
    if k == 0:
        return ()
    with np.errstate(divide="ignore", invalid="ignore"):
        nu = np.abs(np.log(new.cos2_alpha / old.cos2_alpha))
    nu = np.where(np.isfinite(nu), np.maximum(nu, FLAT), np.inf)
    chosen: list[int] = []
    for i in np.lexsort((-new.cos2_alpha, nu)):
        if not np.isfinite(nu[i]):
            break
        trial = chosen + [int(i)]
        if np.linalg.svd(new.Z[:, trial], compute_uv=False)[-1] ** 2 >= floor:
            chosen = trial
            if len(chosen) == k:
                return tuple(sorted(chosen))
    return new.best()


def is_flat(old: Criterion, new: Criterion, independent, floor: float) -> bool:
    """True if the set is admissible (quality >= floor) and its chart flat over the step (nu_I <= FLAT)."""
    return new.quality(independent) >= floor and variation(old, new, independent) <= FLAT


def choose(old: Criterion, new: Criterion, current, ratio: float,
           floor: float = admissible_floor(DEFAULT_RTOL)) -> tuple[int, ...]:
    """The independent set after a step from the configuration of ``old`` to that of ``new`` (module docstring):
    an admissible flat ``current`` unless a flat set is better by the criterion by more than 1 / ``ratio``; else the
    flattest admissible set if it is flat; else paper 001's rule (the best set if ``current`` fell below ``ratio``
    times it)."""
    current = tuple(current)
    if new.k == 0:
        return current
    cand = flattest(old, new, floor)
    cand_flat = is_flat(old, new, cand, floor)
    if is_flat(old, new, current, floor):
        return cand if cand_flat and new.quality(current) < ratio * new.quality(cand) else current
    if cand_flat:
        return cand
    best = new.best()
    return best if new.quality(current) < ratio * new.quality(best) else current
