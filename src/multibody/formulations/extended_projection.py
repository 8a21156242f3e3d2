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
Phi(q) and A(q) v + Phi_t in numpy's extended precision (x86 80-bit long double, eps_x = 1.1e-19; the constraint
groups evaluate in the precision of the arrays they are given) and corrects q and v with the double-precision
SVD of A: c falls to the long double round-off and to the rounding of q to double along the vanishing direction,
which moves Phi_w only by s_w ulp(q). Measured on the same run: the velocity stays within 4e-12 of the exact
one down to 2e-4 s from the crossing (2e-10 at 1e-3 s before), and together with the crossing step
(simulation.crossings.CrossingMonitor.steer) the steps stay >= 7.9e-4 s.
"""
from __future__ import annotations

import numpy as np

#: corrections of q and of v (Gauss-Newton: each multiplies the residual by ~ its own round-off)
POSITION_STEPS = 2
VELOCITY_STEPS = 2
#: polish only where the smallest pinned singular value of A is below this fraction of the largest (the crossing
#: monitor's screen, simulation.crossings.SCREEN): above it the level set's velocity is <= 25 eps off the branch's
POLISH_BELOW = 0.2


def extended_available() -> bool:
    """True where numpy's long double carries more digits than double (x86-64 Linux: 64-bit mantissa)."""
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


def polish(model, ws, t, q, v, pin: float):
    """(q, v) after POSITION_STEPS minimum-norm Gauss-Newton corrections (paper 000 eq. 5) q -= A_pin^+ Phi(q) and
    VELOCITY_STEPS corrections v -= A_pin^+ (A(q) v + Phi_t), residuals in long double, A_pin the truncated SVD of
    A at q (directions with s_i > pin s_max, as the projection it follows: linalg.rank.pinned_solve); None where
    long double is not wider than double, the model has nonholonomic rows, a constraint group does not evaluate in
    long double, or sigma_min / sigma_max >= POLISH_BELOW (nothing to gain)."""
    if not extended_available() or ws.h or ws.m == 0:
        return None
    A = ws.constraints(t, q, np.zeros_like(q))[1]
    U, s, Wt = np.linalg.svd(A, full_matrices=False)
    k = int(np.count_nonzero(s > pin * s[0])) if s.size and s[0] > 0 else 0
    if k == 0 or s[-1] >= POLISH_BELOW * s[0]:
        return None         # well conditioned: the round-off of Phi moves v by <= eps / POLISH_BELOW^2 relative
    inverse = lambda r: Wt[:k].T @ ((U[:, :k].T @ r.astype(float)) / s[:k])     # noqa: E731
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
