"""Compiled kernels of the spatial director models (issue 16: the cost of spatial models): the quadratic
constraints of paper 004 (eqs 24, 80, 100, 119, 129, 139; model.director.QuadraticConstraints) as one
table of non-zero entries over all rows, and the Newton iteration of the constrained energy-momentum step
(paper 004 eq. 10) on it.

Every constraint row is Phi_k = 1/2 q^T H_k q + g_k^T q + c_k, so (paper 004 Sect. 1)

    Phi_k = c_k + sum_e g_e q_i(e) + 1/2 sum_e H_e q_i(e) q_j(e),   Phi_q[k, i] = g_ki + sum_j H_kij q_j,
    sum_k lam_k Phi_k,qq = sum_e lam_k(e) H_e  (entry i(e), j(e)),

a loop over the stored entries e of all rows of all pairs at once (no Python loop over joints, and no
scatter of a dense (r, 24, 24) block per row). The readable reference is
:class:`multibody.model.director.QuadraticConstraints` (einsums over the rows of one group);
tests/test_fast_spatial.py checks the agreement.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .kernels import schur_solve


@njit(cache=True)
def quad_eval(q, hk, hi, hj, hv, gk, gi, gv, c, phi, G):
    """phi (m,) <- Phi(q), G (m, n) <- Phi_q(q) from the entry table (H entries hk, hi, hj, hv; g entries
    gk, gi, gv; constants c); paper 004 eqs 24-25 and Sect. 4.5 row by row."""
    for k in range(c.shape[0]):
        phi[k] = c[k]
    G[:, :] = 0.0
    for e in range(gk.shape[0]):
        phi[gk[e]] += gv[e] * q[gi[e]]
        G[gk[e], gi[e]] += gv[e]
    for e in range(hk.shape[0]):
        hq = hv[e] * q[hj[e]]
        G[hk[e], hi[e]] += hq
        phi[hk[e]] += 0.5 * q[hi[e]] * hq


@njit(cache=True)
def quad_hessian(lam, hk, hi, hj, hv, out):
    """out (n, n) <- sum_k lam_k Phi_k,qq (the geometric stiffness of the constraint forces, paper 004
    eq. 10's iteration matrix) for lam (m,) over all rows."""
    out[:, :] = 0.0
    for e in range(hk.shape[0]):
        out[hi[e], hj[e]] += lam[hk[e]] * hv[e]


@njit(cache=True)
def _residual(qn, vn, dq, lam, rows, M, Mv2, force, dt, tab, phi, G, Gm, res):
    """R = [2/dt M dq - 2 M v_n + dt grad V + dt G(q_mid)^T lam ; Phi(q_n + dq)] (paper 004 eq. 10 with
    v_{n+1/2} eliminated); leaves Gm = G(q_mid)[rows] and G = G(q_{n+1}) (all rows)."""
    n, r = qn.shape[0], rows.shape[0]
    hk, hi, hj, hv, gk, gi, gv, c = tab
    quad_eval(qn + 0.5 * dq, hk, hi, hj, hv, gk, gi, gv, c, phi, G)
    for a in range(r):
        Gm[a, :] = G[rows[a], :]
    quad_eval(qn + dq, hk, hi, hj, hv, gk, gi, gv, c, phi, G)
    Mdq = M @ dq
    for i in range(n):
        s = 2.0 / dt * Mdq[i] - Mv2[i] + force[i]
        for a in range(r):
            s += dt * Gm[a, i] * lam[a]
        res[i] = s
    for a in range(r):
        res[n + a] = phi[rows[a]]


@njit(cache=True)
def _max_abs(x, start, stop):
    out = 0.0
    for i in range(start, stop):
        out = max(out, abs(x[i]))
    return out


@njit(cache=True)
def constrained_newton(qn, vn, M, force, dt, rows, lam, tab, m, tol, length, max_it, want_cond, dq, out):
    """Newton on paper 004 eq. (10) for (dq = q_{n+1} - q_n, lam) from dq = dt v_n and lam (updated in place),
    as ``EnergyMomentumStepper._constrained_step``: converged when max |dynamic rows| <= tol scale (scale =
    max(|2 M v_n|, |force|), force = dt grad V) and max |Phi| <= tol size (size = max(1, length, |q_n|)), then one
    more correction with the last Jacobian. out <- (iterations or -1, condition number of the last iteration
    matrix or NaN)."""
    n, r = qn.shape[0], rows.shape[0]
    hk, hi, hj, hv = tab[0], tab[1], tab[2], tab[3]
    phi, G, Gm = np.empty(m), np.empty((m, n)), np.empty((r, n))
    res, full, Hs = np.empty(n + r), np.zeros(m), np.empty((n, n))
    J = np.zeros((n + r, n + r))
    Mv2 = 2.0 * (M @ vn)
    scale = max(max(np.max(np.abs(Mv2)), np.max(np.abs(force))), np.finfo(np.float64).tiny)
    size = max(max(1.0, length), np.max(np.abs(qn)))
    for i in range(n):
        dq[i] = dt * vn[i]
    out[0], out[1] = -1.0, np.nan
    for it in range(max_it + 1):
        _residual(qn, vn, dq, lam, rows, M, Mv2, force, dt, tab, phi, G, Gm, res)
        if _max_abs(res, 0, n) <= tol * scale and _max_abs(res, n, n + r) <= tol * size:
            if it > 0:
                dx = np.linalg.solve(J, res)
                dq -= dx[:n]
                lam -= dx[n:]
            out[0] = it
            return
        if it == max_it:
            return
        for a in range(r):
            full[rows[a]] = lam[a]
        quad_hessian(full, hk, hi, hj, hv, Hs)
        for i in range(n):
            for j in range(n):
                J[i, j] = 2.0 / dt * M[i, j] + 0.5 * dt * Hs[i, j]
            for a in range(r):
                J[i, n + a] = dt * Gm[a, i]
                J[n + a, i] = G[rows[a], i]
        if want_cond:
            out[1] = np.linalg.cond(J)
        dx = np.linalg.solve(J, res)
        dq -= dx[:n]
        lam -= dx[n:]


@njit(cache=True)
def quad_gamma(v, hk, hi, hj, hv, gamma):
    """gamma (m,) <- -v^T H_k v (paper 004: the constraints are quadratic, so Phi_k'' = H_k-terms exactly)."""
    gamma[:] = 0.0
    for e in range(hk.shape[0]):
        gamma[hk[e]] -= hv[e] * v[hi[e]] * v[hj[e]]


@njit(cache=True)
def lagrange_rhs(y, active, hk, hi, hj, hv, gk, gi, gv, c, Minv, diag, f, tau, phi, G, gamma, A, ga, B, S, lam, out):
    """y' = [v, q''] (2n,) of the Lagrange formulation (paper 003 eqs 4-9: M q'' + A^T lam = f, A q'' = gamma)
    for a spatial director model: Phi_q and gamma = -v^T H_k v of the ``active`` rows from the entry table, then
    the Schur complement solve of fast.kernels.schur_solve (constant M^-1 and f). False when that declines
    (ill-conditioned or dependent rows): the caller then takes the reference solve."""
    n = f.shape[0]
    q, v = y[:n], y[n:]
    quad_eval(q, hk, hi, hj, hv, gk, gi, gv, c, phi, G)
    quad_gamma(v, hk, hi, hj, hv, gamma)
    for a in range(active.shape[0]):
        for i in range(n):
            A[a, i] = G[active[a], i]
        ga[a] = gamma[active[a]]
    acc = np.empty(n)
    if not schur_solve(A, n, Minv, diag, f, ga, tau, B, S, lam, acc):
        return False
    for i in range(n):
        out[i] = v[i]
        out[n + i] = acc[i]
    return True
