"""The projection's last correction near a singular configuration with its residuals in extended precision (issue 12).

Why. Next to a singular configuration the index-1 equations (Phi'' = 0) keep a run on the level set Phi = c it
started on, and c is the round-off with which the projection after a step evaluated Phi: ~eps L (measured
c ~ 4e-17 on the N-four-bar with 10 cells). Along the vanishing singular direction (left singular vector u_w,
singular value s_w = rho s_max, rho ~ |t - t*| omega) the level set Phi_w = c lies c / s_w off the branch, so
its tangent, the velocity the velocity projection and the equations then give, is ~c omega / rho^2 off the
branch's velocity (paper 000 Sect. 3: the level sets near a crossing are hyperbolas whose arms turn onto the
other branch). Measured on that run (lagrange, dopri5, rtol 1e-12, atol 1e-14): the velocity was 2e-10 off the
exact one (theta'' = -k cos theta) at 1e-3 s before the crossing, 4e-8 at 1e-4 s, 4.5e-6 at 1e-5 s, and the
steps followed the hyperbola down to 2e-8 s (h ~ 0.05 |t - t*|; 300 steps per crossing, the step-size
collapse check 5 % away). No step size and no rank decision removes that: it is the answer of the equations
for the state they are given.

What. The round-off of Phi, not the conditioning of A, sets c: a Gauss-Newton step dq = -A_pin^+ Phi
(linalg.rank.pinned_solve) needs A only approximately but Phi exactly. :func:`polish` evaluates the residuals
Phi(q) and A(q) v + Phi_t in extended precision and corrects q and v with the double-precision SVD of A: c falls
to the residuals' round-off and to the rounding of q to double along the vanishing direction, which moves Phi_w
only by s_w ulp(q). Two arithmetics (``ARITHMETIC``):

- ``"double-double"`` (the default and the only one a run takes by itself, every IEEE double platform):
  formulations.extended_residuals evaluates the planar primitives with error-free transformations
  (linalg.double_double, relative error ~1e-31), cos and sin of the angles included: a double cos is faithful only
  to ~1 ulp, which moves Phi by ~1e-16 L, as much as the round-off c it must remove. cos / sin are taken once per
  call at the projected q (a Cody-Waite reduction, a table at j / 64, Taylor) and carried to the corrected
  q = q_0 + d by the angle-sum formulas (|d| <= 1e-8: cos d = 1 - d^2 / 2, sin d = d - d^3 / 6 to < 5e-34). The
  spatial director constraints (quadratic in q) go through formulations.extended_spatial (TwoProduct and
  double-double sums, ~1e-30 of the largest term), a user's Generic rows through formulations.extended_generic:
  the user's own double-double function where given, else double (the same on every platform, said there).
- ``"long double"``: numpy's long double (x86-64's 80-bit, eps_x = 1.1e-19; the constraint groups evaluate in the
  precision of the arrays they are given). On Windows and Apple-silicon macOS long double is double, so this
  arithmetic removes nothing there; kept only for comparison (benchmarks/extended_precision.py, the tests): a run
  never chooses it by itself, so its result does not depend on the platform's long double.

Measured. Long double on the same run: the velocity stays within 4e-12 of the exact one down to 2e-4 s from the
crossing (2e-10 at 1e-3 s before), and together with the crossing step (simulation.crossings.CrossingMonitor.steer)
the steps stay >= 7.9e-4 s. A state 1e-9 off the N-four-bar's branch at 3e-3 rad from the crossing, projected and
polished: velocity 2.2e-16 off the branch's with double-double (the comparison's own rounding), 9e-15 (3 cells) and
3e-13 (10 cells) with long double, 5.5e-11 and 3.8e-10 without the polish.
"""
from __future__ import annotations

import numpy as np

from ..linalg import double_double as dd
from .extended_residuals import Trig, covered, gains, needs_trig, residuals

#: corrections of q and of v in long double (Gauss-Newton: each multiplies the residual by ~ its own round-off)
POSITION_STEPS = 2
VELOCITY_STEPS = 2
#: in double-double one of each: the first correction leaves ~ c (eps sigma_max / sigma_w) ~ 1e-28 (the double SVD's
#: relative error in the pinned directions) plus the quadratic term |Phi''| dq^2 ~ 1e-24, below the rounding of q
#: to double (sigma_w ulp(q))
DD_STEPS = 1
#: polish only where the smallest pinned singular value of A is below this fraction of the largest (the crossing
#: monitor's screen, simulation.crossings.SCREEN): above it the level set's velocity is <= 25 eps off the branch's
POLISH_BELOW = 0.2
#: "double-double" (portable, the default) or "long double" (wider than double on x86-64 only); see the module text
ARITHMETIC = "double-double"


def extended_available(arithmetic: str | None = None) -> bool:
    """True where the arithmetic carries more digits than double: double-double everywhere, numpy's long double on
    x86-64 Linux (64-bit mantissa) but not where it is double (Windows, Apple-silicon macOS)."""
    if (arithmetic or ARITHMETIC) == "double-double":
        return True
    return np.finfo(np.longdouble).eps < np.finfo(float).eps / 100


def _residuals(model, ws, t, q, v):
    """(Phi(q), A(q) v + Phi_t) in long double, or None when a constraint group does not evaluate in it."""
    n = model.n
    qe, ve = np.zeros(n + 1, np.longdouble), np.zeros(n + 1, np.longdouble)
    qe[:n], ve[:n] = q, v
    phi, av = [], []
    for g, rows, cols in zip(model.constraints, ws.rows, ws.cols):
        val = g.evaluate(t, qe, ve)
        if np.asarray(val.phi).dtype != np.longdouble or np.asarray(val.jac).dtype != np.longdouble:
            return None
        J = np.zeros((g.rows, n + 1), np.longdouble)
        J[rows - rows.min(), cols] = val.jac
        phi.append(np.asarray(val.phi))
        av.append(J @ ve + np.asarray(val.phi_t, np.longdouble))
    return np.concatenate(phi), np.concatenate(av)


def _inverse(ws, t, q, pin):
    """r -> A_pin^+ r (double SVD of A at q), or None where A is well conditioned or has no pinned direction."""
    A = ws.constraints(t, q, np.zeros_like(q))[1]
    U, s, Wt = np.linalg.svd(A, full_matrices=False)
    k = int(np.count_nonzero(s > pin * s[0])) if s.size and s[0] > 0 else 0
    if k == 0 or s[-1] >= POLISH_BELOW * s[0]:
        return None         # well conditioned: the round-off of Phi moves v by <= eps / POLISH_BELOW^2 relative
    return lambda r: Wt[:k].T @ ((U[:, :k].T @ np.asarray(r, float)) / s[:k])


def polish(model, ws, t, q, v, pin: float, arithmetic: str | None = None):
    """(q, v) after minimum-norm Gauss-Newton corrections (paper 000 eq. 5) q -= A_pin^+ Phi(q), then
    v -= A_pin^+ (A(q) v + Phi_t) at the corrected q (DD_STEPS of each in double-double, POSITION_STEPS and
    VELOCITY_STEPS in long double), residuals in extended precision (``arithmetic``, default ARITHMETIC), A_pin the
    truncated SVD of A at q (directions with s_i > pin s_max, as the projection it follows:
    linalg.rank.pinned_solve); None where the model has nonholonomic rows, sigma_min / sigma_max >=
    POLISH_BELOW (nothing to gain) or the arithmetic does not apply (long double no wider than double, or a
    Generic group with long double; a constraint group of a class extended_residuals does not know; only Generic
    groups without their extended residuals, whose rows double-double cannot make more accurate)."""
    arithmetic = arithmetic or ARITHMETIC
    if arithmetic == "double-double" and not (covered(model) and gains(model)):
        return None
    if not extended_available(arithmetic) or ws.h or ws.m == 0:
        return None
    inverse = _inverse(ws, t, q, pin)
    if inverse is None:
        return None
    return (_polish_dd if arithmetic == "double-double" else _polish_long)(model, ws, t, q, v, inverse)


def _polish_long(model, ws, t, q, v, inverse):
    qx, vx = np.asarray(q, np.longdouble), np.asarray(v, np.longdouble)
    for _ in range(POSITION_STEPS):
        res = _residuals(model, ws, t, qx, vx)
        if res is None:
            return None
        qx = qx - inverse(res[0])
    q = qx.astype(float)
    for _ in range(VELOCITY_STEPS):
        vx = vx - inverse(_residuals(model, ws, t, q, vx)[1])
    return q, vx.astype(float)


def _polish_dd(model, ws, t, q, v, inverse):
    """polish in double-double: cos / sin (planar primitives only) once at the given q, carried to the corrections
    by the angle sums."""
    q0 = np.append(q, 0.0)
    with_trig = needs_trig(model)
    trig0 = Trig.at(dd.dd(q0)) if with_trig else None
    if with_trig and trig0 is None:
        return None
    qx, trig = dd.dd(q0), trig0
    for i in range(DD_STEPS):
        if i and with_trig:
            trig = trig0.shifted(dd.sub(qx, dd.dd(q0))) or Trig.at(qx)
        qx = dd.sub(qx, dd.dd(np.append(inverse(dd.to_float(residuals(model, t, qx, trig))), 0.0)))
    qe = np.append(dd.to_float(qx)[:-1], 0.0)
    trig = (trig0.shifted(dd.two_sum(qe, -q0)) or Trig.at(dd.dd(qe))) if with_trig else None
    vx, qe_dd, memo = dd.dd(np.append(v, 0.0)), dd.dd(qe), {}
    for _ in range(DD_STEPS):
        vx = dd.sub(vx, dd.dd(np.append(inverse(dd.to_float(residuals(model, t, qe_dd, trig, vx, memo))), 0.0)))
    return qe[:-1], dd.to_float(vx)[:-1]
