"""Compiled kernels of the spatial director models (issue 16: the cost of spatial models): the quadratic
constraints of paper 004 (eqs 24, 80, 100, 119, 129, 139; model.director.QuadraticConstraints) as one
table of non-zero entries over all rows (the constrained energy-momentum step's Newton on it:
:mod:`.em_constrained_kernels`).

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
