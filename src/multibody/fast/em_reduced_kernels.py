"""The reduced energy-momentum step's Newton iteration in one compiled call (issue 16; paper 004 Sects 4.3-4.5,
5.4: P^T R_q(F_{q_n}(mu)) = 0, closed loops by eq. 190): line for line ``ReducedNewton._reduced_newton``
(:mod:`multibody.integrate.em_reduced`) and ``EnergyMomentumStepper._reduced_residual``, on the tree maps of
:mod:`.em_tree_kernels`. Jacobians by complex step as the reference (exact to round-off).

Residual (eqs 10, 68-74, 187, 190):  R_q = 2/dt dq M - ``mv2`` + ``force`` (mv2 = 2 M v_n, force = dt grad V,
uniform gravity; M as its non-zero entries ``mm`` = (k, i, M_ki)),
P = P(q_n + dq/2), and without closures P^T R_q; with the closure rows (entry table ``cl`` as
:mod:`.spatial_kernels`, dependent unknowns ``dep``, the others ``free``) B = G_c(q_mid) P, P^oc[free] = I,
P^oc[dep] = -B_dep^-1 B_free and [(P P^oc)^T R_q, s Phi_c(q_n + dq)].
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .em_tree_kernels import geometry, null_space, reparametrize
from .spatial_kernels import quad_eval


@njit(cache=True)
def reduced_residual(qn, mv2, force, mm, dt, mu, tr, cl, dep, free, cscale, res, dq):
    """res (d,) and dq (n,) <- the reduced residual and F_{q_n}(mu) - q_n at mu (d,) (complex)."""
    n, d = qn.shape[0], mu.shape[0]
    reparametrize(qn, mu, tr, dq)
    qm = qn + 0.5 * dq
    Pm = null_space(qm, tr, d)
    dqM = np.zeros(n, dtype=np.complex128)             # dq M from M's entries
    mk, mi, mv = mm
    for e in range(mk.shape[0]):
        dqM[mi[e]] += dq[mk[e]] * mv[e]
    r = np.empty(n, dtype=np.complex128)
    for i in range(n):                                   # the reference's order: 2/dt dq M - 2 M v_n + dt grad V
        r[i] = (2.0 / dt * dqM[i] - mv2[i]) + force[i]
    k_rows = dep.shape[0]
    if k_rows == 0:
        for a in range(d):
            res[a] = np.sum(Pm[:, a] * r)
        return
    hk, hi, hj, hv, gk, gi, gv, c = cl
    phi = np.empty(k_rows, dtype=np.complex128)
    G = np.empty((k_rows, n), dtype=np.complex128)
    quad_eval(qm, hk, hi, hj, hv, gk, gi, gv, c, phi, G)
    nf = free.shape[0]
    Bd, X = np.zeros((k_rows, k_rows), dtype=np.complex128), np.zeros((k_rows, nf), dtype=np.complex128)
    for a in range(k_rows):                              # B = G_c P: its dependent and free columns
        for i in range(n):
            g = G[a, i]
            if g != 0:
                for b in range(k_rows):
                    Bd[a, b] += g * Pm[i, dep[b]]
                for b in range(nf):
                    X[a, b] += g * Pm[i, free[b]]
    _solve_small(Bd, X)                                  # X = B_dep^-1 B_free
    Pr = np.zeros(d, dtype=np.complex128)                # P^T R_q
    for i in range(n):
        for a in range(d):
            Pr[a] += Pm[i, a] * r[i]
    for a in range(nf):
        s = Pr[free[a]]
        for b in range(k_rows):
            s -= Pr[dep[b]] * X[b, a]
        res[a] = s
    quad_eval(qn + dq, hk, hi, hj, hv, gk, gi, gv, c, phi, G)
    for a in range(k_rows):
        res[nf + a] = cscale * phi[a]


@njit(cache=True)
def _solve_small(A, X):
    """X <- A^-1 X by Gaussian elimination with partial pivoting (the pivot by the real parts' size: the
    complex-step parts are ~1e-30 and must not choose; A is k x k with k the closure's independent rows)."""
    k = A.shape[0]
    for col in range(k):
        piv = col
        for i in range(col + 1, k):
            if abs(A[i, col].real) > abs(A[piv, col].real):
                piv = i
        if A[piv, col] == 0:
            raise np.linalg.LinAlgError("singular matrix")
        if piv != col:
            for j in range(k):
                A[col, j], A[piv, j] = A[piv, j], A[col, j]
            for j in range(X.shape[1]):
                X[col, j], X[piv, j] = X[piv, j], X[col, j]
        for i in range(col + 1, k):
            f = A[i, col] / A[col, col]
            for j in range(col, k):
                A[i, j] -= f * A[col, j]
            for j in range(X.shape[1]):
                X[i, j] -= f * X[col, j]
    for col in range(k - 1, -1, -1):
        for j in range(X.shape[1]):
            t = X[col, j]
            for i in range(col + 1, k):
                t -= A[col, i] * X[i, j]
            X[col, j] = t / A[col, col]


@njit(cache=True)
def _scaled_max(res, closure, start, stop):
    out = 0.0
    for i in range(start, stop):      # real parts: along Newton mu is real and so is res (numba's complex abs
        out = max(out, abs(res[i].real / closure[i]))     # is slow)
    return out


@njit(cache=True)
def _jacobian(qn, mv2, force, mm, dt, mu, tr, cl, dep, free, cscale, h, J):
    """J (d, d) <- d res / d mu by complex step (exact)."""
    d = mu.shape[0]
    res, dq = np.empty(d, dtype=np.complex128), np.empty(qn.shape[0], dtype=np.complex128)
    for k in range(d):
        m = mu.copy()
        m[k] += 1j * h
        reduced_residual(qn, mv2, force, mm, dt, m, tr, cl, dep, free, cscale, res, dq)
        for a in range(d):
            J[a, k] = res[a].imag / h


@njit(cache=True)
def _polish(qn, mv2, force, mm, dt, mu, res, J, tr, cl, dep, free, cscale, dq):
    """Corrections with the last Jacobian while they at least halve (at most 3): ReducedNewton._polish."""
    step = np.linalg.solve(J, res.real.copy())
    for _ in range(3):
        for a in range(mu.shape[0]):
            mu[a] -= step[a]
        reduced_residual(qn, mv2, force, mm, dt, mu, tr, cl, dep, free, cscale, res, dq)
        new = np.linalg.solve(J, res.real.copy())
        if not np.max(np.abs(new)) < 0.5 * np.max(np.abs(step)):
            break
        step = new


@njit(cache=True)
def reduced_newton(qn, vn, M, force, mm, dt, tr, cl, dep, free, cscale, mu, tol, length, max_it, h, want_cond,
                   dq, out):
    """Newton on the reduced equations from mu (updated in place to the root), force = dt grad V, M the mass matrix
    (mm its entries): dq <- q_{n+1} - q_n; out <- (iterations or -1 when not converged or non-finite,
    condition number of the last Jacobian or NaN, the smallest |det| of the bodies' mid-point frames for
    ReducedNewton._consistent). Converged: dynamic rows <= tol scale (scale = max(|2 M v_n|, |dt grad V|) times
    the lever max_k |P(q_n)[:, k]|_1) and closure rows (divided by their scale) <= tol size (size = max(1,
    length, |q_n|)), or stalled (a last change of dq below 8 eps size with the residual within 1e4
    tolerances); then _polish."""
    d, n = mu.shape[0], qn.shape[0]
    mv2 = 2 * (M @ vn)
    P0 = null_space(qn, tr, d)           # real at the real q_n
    lever = 1.0
    for k in range(d):
        col = 0.0
        for i in range(n):
            col += abs(P0[i, k].real)
        lever = max(lever, col)
    scale = max(max(np.max(np.abs(mv2)), np.max(np.abs(force))), np.finfo(np.float64).tiny) * lever
    size = max(max(1.0, length), np.max(np.abs(qn.real)))
    split = d - dep.shape[0]
    closure = np.ones(d)
    if dep.shape[0] > 0:
        closure[split:] = cscale
    res, dqc = np.empty(d, dtype=np.complex128), np.empty(n, dtype=np.complex128)
    last = np.empty(n, dtype=np.complex128)
    J = np.zeros((d, d))
    out[0], out[1], out[2] = -1.0, np.nan, 1.0
    for it in range(max_it + 1):
        reduced_residual(qn, mv2, force, mm, dt, mu, tr, cl, dep, free, cscale, res, dqc)
        if not np.all(np.isfinite(res)):
            return
        done = _scaled_max(res, closure, 0, split) <= tol * scale and _scaled_max(res, closure, split, d) <= tol * size
        if not done and it > 0:
            done = (np.max(np.abs(dqc.real - last.real)) <= 8 * np.finfo(np.float64).eps * size
                    and _scaled_max(res, closure, 0, d) <= 1e4 * tol * scale)
        if done:
            if it > 0:
                _polish(qn, mv2, force, mm, dt, mu, res, J, tr, cl, dep, free, cscale, dqc)
            for i in range(n):
                dq[i] = dqc[i].real
            out[0], out[2] = it, _min_det(qn + 0.5 * dqc, tr[0])
            return
        if it == max_it:
            return
        _jacobian(qn, mv2, force, mm, dt, mu, tr, cl, dep, free, cscale, h, J)
        if want_cond:
            out[1] = np.linalg.cond(J)
        mu -= np.linalg.solve(J, res.real.copy())
        last[:] = dqc


@njit(cache=True)
def _min_det(q, cols):
    """min over bodies of |det D| (the mid-point frames' regularity, ReducedNewton._consistent)."""
    _, D = geometry(q, cols)
    out = np.inf
    for b in range(cols.shape[0]):
        A = D[b]
        det = (A[0, 0] * (A[1, 1] * A[2, 2] - A[1, 2] * A[2, 1]) - A[0, 1] * (A[1, 0] * A[2, 2] - A[1, 2] * A[2, 0])
               + A[0, 2] * (A[1, 0] * A[2, 1] - A[1, 1] * A[2, 0]))
        out = min(out, abs(det.real))
    return min(out, 1.0)


@njit(cache=True)
def null_space_at(q, tr, d):
    """P(q) (n, d), real (director_tree.null_space_matrix at a real configuration)."""
    return null_space(q + 0j, tr, d).real.copy()
