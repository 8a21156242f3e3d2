"""Compiled kernels of the per-step work of the Lagrange formulation (issue 7 item 1: no Python overhead
per step): the projection after an accepted step, the tangent-space error filter and the per-step output
(multipliers, constraint violation) for models the compiled right-hand side supports
(:func:`multibody.fast.lagrange.supported`).

Readable references, which define the numbers (tests/test_fast_step.py checks the agreement):

- projection: :func:`multibody.kinematics.solve_positions` (Gauss-Newton, dq = -A^+ Phi, paper 000
  eq. 5 context) and :func:`multibody.kinematics.solve_velocities` (v += A^+ (-(A v + Phi_t)));
- error filter: ``Lagrange._tangent_error`` with :func:`multibody.linalg.row_space_filter`
  ((I - A^+ A) x; Hairer, Lubich & Wanner, Geometric Numerical Integration, Sect. IV.4);
- output: ``Lagrange.accelerations`` (multipliers: the minimum-norm solution of A^T lam = f - M q'',
  paper 003 eqs 4-9) and the violations of ``simulation.recorder.Recorder``.

Every pseudo-inverse here is :func:`normal_solve`: the normal equations G = A A^T by Cholesky, used only
while the smallest pivot ratio of G is >= ``MIN_NORM_PIVOT_RATIO``. Then no singular value of A is near
the reference's cut-offs (sqrt(eps) or 1e-13 times s_max: s_min / s_max >~ 0.03 here), so both compute
the same mathematical quantity and differ by round-off, <~ eps / ratio = 2e-13 relative. Below the ratio
(near a singular configuration, redundant rows) the kernels report it and the caller runs the NumPy
reference (SVD) itself, so those rare steps give exactly the reference's numbers.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .kernels import ANGLE, COINCIDENT, COORDINATE_DRIVER, DISTANCE, _marker, assemble, cholesky, cholesky_solve

#: the normal-equation (Cholesky) pseudo-inverse is used while min_j L_jj^2 / max_j G_jj >= this ratio
#: for G = A A^T (an optimistic estimate of 1 / cond(A)^2, so cond(A) <~ 30); its round-off is then
#: <~ eps / ratio = 2e-13 relative; below it the caller uses the SVD of the NumPy reference
MIN_NORM_PIVOT_RATIO = 1e-3


@njit(cache=True)
def constraint_phi(qe, ve, prim, pval, poff, mcols, mloc, mvec, shift, phi):
    """Phi (m,) of the builder primitives (model.constraints module table) at qe (n + 1,), minus
    ``shift`` (m,) = f(t) of the prescribed motions; ``poff`` (P,) the constant offsets c."""
    for p in range(prim.shape[0]):
        kind, r, a, b, c = prim[p, 0], prim[p, 1], prim[p, 2], prim[p, 3], prim[p, 4]
        if kind == ANGLE:
            phi[r] = qe[b] - qe[a] - poff[p]
        elif kind == COORDINATE_DRIVER:
            phi[r] = qe[a] - poff[p]
        else:
            pix, piy = _marker(a, mcols, mloc, mvec, qe, ve)[:2]
            pjx, pjy = _marker(b, mcols, mloc, mvec, qe, ve)[:2]
            if kind == COINCIDENT:
                phi[r] = pix - pjx
                phi[r + 1] = piy - pjy
            elif kind == DISTANCE:
                L, dx, dy = pval[p], pix - pjx, piy - pjy
                phi[r] = (dx * dx + dy * dy - L * L) / (2.0 * L)
            else:  # LINE_PROJECTION: e = marker c
                ex, ey = _marker(c, mcols, mloc, mvec, qe, ve)[:2]
                phi[r] = ex * (pjx - pix) + ey * (pjy - piy) - poff[p]
    for i in range(phi.shape[0]):
        phi[i] -= shift[i]


@njit(cache=True)
def gram_cholesky(A, n, tau, G):
    """G (k, k) <- lower Cholesky factor of A A^T for A (k, n + 1) (column n unused); False if its
    smallest pivot ratio is below tau (ill-conditioned or rank deficient: use the reference)."""
    k = A.shape[0]
    for i in range(k):
        for j in range(i + 1):
            s = 0.0
            for l in range(n):
                s += A[i, l] * A[j, l]
            G[i, j] = s
    return k == 0 or cholesky(G, k) >= tau


@njit(cache=True)
def normal_solve(A, n, G, b, transpose, x):
    """With G from :func:`gram_cholesky`: x (n,) = A^+ b = A^T (A A^T)^-1 b for b (k,), or, transpose,
    x[:k] = (A^T)^+ b = (A A^T)^-1 A b for b (n,) (A of full row rank)."""
    k = A.shape[0]
    y = np.empty(k)
    for i in range(k):
        s = 0.0
        if transpose:
            for l in range(n):
                s += A[i, l] * b[l]
        else:
            s = b[i]
        y[i] = s
    cholesky_solve(G, y, k)
    if transpose:
        x[:k] = y
        return
    x[:n] = 0.0
    for i in range(k):
        for l in range(n):
            x[l] += A[i, l] * y[i]


@njit(cache=True)
def _gauss_newton(q, qe, ve, prim, pval, mcols, mloc, mvec, tau, A, gamma, G, phi, dx):
    """In place: q -= A^+ Phi with A assembled at qe (paper 000 eq. 5, the minimum-norm step); False if
    A A^T is ill-conditioned (:func:`gram_cholesky`)."""
    n = q.shape[0]
    assemble(qe, ve, prim, pval, mcols, mloc, mvec, A, gamma)
    if not gram_cholesky(A, n, tau, G):
        return False
    normal_solve(A, n, G, phi, False, dx)
    for j in range(n):
        q[j] -= dx[j]
    return True


@njit(cache=True)
def worst_violation(phi):
    """max_i |phi_i|, or inf if some entry is not finite."""
    worst = 0.0
    for i in range(phi.shape[0]):
        if not np.isfinite(phi[i]):
            return np.inf
        worst = max(worst, abs(phi[i]))
    return worst


@njit(cache=True)
def project(q, v, prim, pval, poff, mcols, mloc, mvec, shift, dshift, limit, iterations, polish, tau,
            qe, ve, A, gamma, phi, G, dx):
    """In place: q (n,) onto Phi(q, t) = 0 by at most ``iterations`` Gauss-Newton steps
    q -= A^+ Phi (stop when max |Phi| <= limit) and ``polish`` more (kinematics.POLISH_STEPS),
    then v (n,) += A^+ (-(A v + Phi_t)) with
    Phi_t = -dshift (kinematics.solve_positions / solve_velocities, all coordinates free).
    Returns False if the positions did not converge or A A^T was ill-conditioned (:func:`gram_cholesky`);
    q and v are then partly updated and the caller runs the reference instead."""
    n = q.shape[0]
    qe[n] = 0.0
    ve[:] = 0.0
    converged = False
    for _ in range(iterations):
        qe[:n] = q
        constraint_phi(qe, ve, prim, pval, poff, mcols, mloc, mvec, shift, phi)
        worst = worst_violation(phi)
        if not np.isfinite(worst):
            return False
        if worst <= limit:
            converged = True
            break
        if not _gauss_newton(q, qe, ve, prim, pval, mcols, mloc, mvec, tau, A, gamma, G, phi, dx):
            return False
    if not converged:
        return False
    for _ in range(polish):
        qe[:n] = q
        constraint_phi(qe, ve, prim, pval, poff, mcols, mloc, mvec, shift, phi)
        if not _gauss_newton(q, qe, ve, prim, pval, mcols, mloc, mvec, tau, A, gamma, G, phi, dx):
            return False
    qe[:n] = q
    ve[:n] = v
    assemble(qe, ve, prim, pval, mcols, mloc, mvec, A, gamma)
    for i in range(phi.shape[0]):     # phi <- -(A v + Phi_t)
        s = 0.0
        for j in range(n):
            s += A[i, j] * v[j]
        phi[i] = dshift[i] - s
    if not gram_cholesky(A, n, tau, G):
        return False
    normal_solve(A, n, G, phi, False, dx)
    for j in range(n):
        v[j] += dx[j]
    return True


@njit(cache=True)
def tangent_error(y, err, weight, forced, prim, pval, mcols, mloc, mvec, tau, qe, ve, A, gamma, G, ax, dx, out):
    """err (N,) with the parts of its position and velocity errors err[:n], err[n:2n] that lie in the
    row space of A(q) (q = y[:n]) scaled by ``weight``: x -> (x - A^+ A x) + weight A^+ A x; the
    projection is applied twice (classical re-orthogonalisation, "twice is enough"), so the tangent
    part carries round-off ~ eps cond(A), as the SVD projector of the reference does; plus, counted whole on the
    velocity part where ``forced``, the change the tangential position error forces (:func:`forced_change`). Result in ``out``
    (N,); returns False (out not valid) if A A^T is ill-conditioned (:func:`gram_cholesky`)."""
    n = qe.shape[0] - 1
    out[:] = err
    if not _gram_at(y, prim, pval, mcols, mloc, mvec, tau, qe, ve, A, gamma, G):
        return False
    tangent, normal, u = np.empty(n), np.empty(n), np.empty(n)
    for part in range(2):
        tangent[:] = err[part * n: (part + 1) * n]
        normal[:] = 0.0
        for _ in range(2):      # twice: the second pass removes the round-off the first left (cond^2 eps)
            for i in range(A.shape[0]):
                s = 0.0
                for j in range(n):
                    s += A[i, j] * tangent[j]
                ax[i] = s
            normal_solve(A, n, G, ax, False, dx)
            for j in range(n):
                tangent[j] -= dx[j]
                normal[j] += dx[j]
        for j in range(n):
            out[part * n + j] = tangent[j] + weight * normal[j]
        if part == 0:
            u[:] = tangent      # the tangential position error
    if forced:
        forced_change(y, u, prim, pval, mcols, mloc, mvec, qe, ve, A, gamma, G, ax, dx)
        for j in range(n):
            out[n + j] += dx[j]
    return True


@njit(cache=True)
def _gram_at(y, prim, pval, mcols, mloc, mvec, tau, qe, ve, A, gamma, G):
    """A at q = y[:n] (zero velocity, kernels.assemble) and G the Cholesky factor of A A^T (:func:`gram_cholesky`);
    False where A A^T is ill-conditioned."""
    n = qe.shape[0] - 1
    qe[:n] = y[:n]
    qe[n] = 0.0
    ve[:] = 0.0
    assemble(qe, ve, prim, pval, mcols, mloc, mvec, A, gamma)
    return gram_cholesky(A, n, tau, G)


@njit(cache=True)
def forced_change(y, u, prim, pval, mcols, mloc, mvec, qe, ve, A, gamma, G, rate, dv):
    """dv (n,) <- -A^+ A'(v) u, the velocity change that the tangential position error u forces on the projected motion
    (Lagrange._forced_change, formulations.velocity_error.turn_velocity_change; paper 000 eq. 15, paper 003 eqs 4-9),
    v = y[n:2n]: A'(v) u = -(gamma(v + c u) - gamma(v - c u)) / (4 c), c = |v| / |u| (kernels.assemble at qe, where A
    was assembled, so A keeps its values); A^+ by the normal equations with G the Cholesky factor of A A^T (A of full
    row rank: r = m, the generic rank). As fast.nullspace_kernels._turn's ``gram`` branch."""
    n = u.shape[0]
    dv[:] = 0.0
    v = y[n:2 * n]
    size, speed = np.sqrt(np.sum(u * u)), np.sqrt(np.sum(v * v))
    if size == 0.0 or speed == 0.0 or A.shape[0] == 0:
        return
    c = speed / size
    rate[:] = 0.0
    for sign in (1.0, -1.0):
        for j in range(n):
            ve[j] = v[j] + sign * c * u[j]
        ve[n] = 0.0
        assemble(qe, ve, prim, pval, mcols, mloc, mvec, A, gamma)
        for i in range(rate.shape[0]):
            rate[i] -= sign * gamma[i] / (4.0 * c)
    normal_solve(A, n, G, rate, False, dv)
    for j in range(n):
        dv[j] = -dv[j]


@njit(cache=True)
def violations(y, shift, dshift, prim, pval, poff, mcols, mloc, mvec, qe, ve, A, phi):
    """(max |Phi|, max |A v + Phi_t|) at y = [q, v] (simulation.recorder.Recorder), with qe, ve (n + 1,) and
    A (m, n + 1) already evaluated at y by the right-hand-side kernel; Phi_t = -dshift."""
    n = qe.shape[0] - 1
    constraint_phi(qe, ve, prim, pval, poff, mcols, mloc, mvec, shift, phi)
    pos, vel = 0.0, 0.0
    for i in range(phi.shape[0]):
        s = -dshift[i]
        for j in range(n):
            s += A[i, j] * y[n + j]
        pos, vel = max(pos, abs(phi[i])), max(vel, abs(s))
    return pos, vel


@njit(cache=True)
def multipliers(A, M, f, vdot, tau, G, r, lam):
    """lam (m,) <- (A^T)^+ (f - M vdot), the minimum-norm multipliers of Lagrange.accelerations, by the
    normal equations; False (lam not valid) if A A^T is ill-conditioned (:func:`gram_cholesky`)."""
    n = M.shape[0]
    if not gram_cholesky(A, n, tau, G):
        return False
    for k in range(n):
        s = f[k]
        for j in range(n):
            s -= M[k, j] * vdot[j]
        r[k] = s
    normal_solve(A, n, G, r, True, lam)
    return True
