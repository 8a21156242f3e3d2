"""Compiled (numba) right-hand sides of the null-space formulation (paper 000; issue 16): one call per evaluation,
one constraint evaluation at the positions (A = Phi_q and each marker's frame, :func:`position_pass`) and one at
the velocities (gamma and, for ``--basis flow``, A' T, :func:`rate_pass`), no temporaries: every work array is a
view of one float buffer (layout :func:`sizes`), the model of one int buffer (:func:`views`), so that a call from
Python unboxes five arrays. The readable references, which define the numbers (tests/test_fast_nullspace.py checks
the agreement), are ``ContinuationNullSpace._chart_dynamics`` (``--basis continuation``, eqs 9-11 in the frozen
chart) and ``NullSpace._dynamics`` / ``NullSpace.rhs`` (``--basis flow``, eqs 9-11 and T' = -A^+ A' T, eq. 15);
the primitives are those of :func:`.kernels.assemble`.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .kernels import ANGLE, COINCIDENT, COORDINATE_DRIVER, DISTANCE, _add_row, cholesky, cholesky_solve
from .nullspace_kernels import _matvec, pinv_apply, smooth_pinv

#: entries of the int buffer's header: P primitives, K markers, n, m, f, r (generic rank), diag, d (Gram size),
#: then the 25 offsets of the float buffer's parts (:func:`sizes`, cumulated)
HEADER = 8 + 25


@njit(cache=True)
def sizes(P, K, n, m, nf, r, d):
    """The lengths of the float buffer's parts, in order: pval, mloc, M, f, (rel, tau), ddf, dshift, x (power
    iteration warm start), Kg (Gram factor), qe, V ((f + 1) velocity columns), A, Gam ((f + 1) rates), geo (marker
    frames), acc (x''), X (the continuation's X or the flow's T), z, G, ATt, c, b, MX, Kr, rhs."""
    return (P, 2 * K, n * n, n, 2, m, m, d, d * d, n + 1, (n + 1) * (nf + 1), m * (n + 1), (nf + 1) * m, 4 * K, n,
            n * nf, nf, m * r, nf * m, max(n, m), n, n * nf, nf * nf, n)


def int_buffer(prim, mcols, mvec, n, m, nf, r, diag, d):
    """The int buffer of :func:`views` and the offsets of the float buffer's parts (its length: the last)."""
    P, K = prim.shape[0], mcols.shape[0]
    off = np.concatenate([[0], np.cumsum(sizes(P, K, n, m, nf, r, d))])
    if len(off) != HEADER - 8:
        raise ValueError(f"the float buffer has {len(off) - 1} parts, HEADER counts {HEADER - 9}")
    ints = np.concatenate([[P, K, n, m, nf, r, int(bool(diag)), d], off, prim.ravel(), mcols.ravel(), mvec])
    return ints.astype(np.int64), off


@njit(cache=True)
def views(ints, floats):
    """The model and work arrays as views of the int buffer (header, prim, mcols, mvec; :func:`int_buffer`) and the
    float buffer."""
    P, K, n, m, nf, r, d = ints[0], ints[1], ints[2], ints[3], ints[4], ints[5], ints[7]
    o = HEADER
    prim = ints[o:o + 5 * P].reshape(P, 5)
    mcols = ints[o + 5 * P:o + 5 * P + 3 * K].reshape(K, 3)
    mvec = ints[o + 5 * P + 3 * K:o + 5 * P + 4 * K]
    off = ints[8:HEADER]
    pval, mloc = floats[off[0]:off[1]], floats[off[1]:off[2]].reshape(K, 2)
    M, f, ddf, dshift = floats[off[2]:off[3]].reshape(n, n), floats[off[3]:off[4]], floats[off[5]:off[6]], \
        floats[off[6]:off[7]]
    xw, Kg, qe = floats[off[7]:off[8]], floats[off[8]:off[9]].reshape(d, d), floats[off[9]:off[10]]
    V, A = floats[off[10]:off[11]].reshape(n + 1, nf + 1), floats[off[11]:off[12]].reshape(m, n + 1)
    Gam, geo = floats[off[12]:off[13]].reshape(nf + 1, m), floats[off[13]:off[14]].reshape(K, 4)
    acc, X, z = floats[off[14]:off[15]], floats[off[15]:off[16]].reshape(n, nf), floats[off[16]:off[17]]
    G, ATt, c = floats[off[17]:off[18]].reshape(m, r), floats[off[18]:off[19]].reshape(nf, m), floats[off[19]:off[20]]
    b, MX, Kr, rhs = floats[off[20]:off[21]], floats[off[21]:off[22]].reshape(n, nf), \
        floats[off[22]:off[23]].reshape(nf, nf), floats[off[23]:off[24]]
    model = (prim, pval, mcols, mloc, mvec, M, ints[6] != 0, f, floats[off[4]], floats[off[4] + 1], ddf, dshift)
    return model, (xw, Kg, qe, V, A, Gam, geo, acc, X, z, G, ATt, c, b, MX, Kr, rhs)


@njit(cache=True)
def position_pass(qe, prim, pval, mcols, mloc, mvec, A, geo):
    """A (m, n + 1) = Phi_q at qe (n + 1,) (the rows of kernels.assemble, paper 000 eq. 6) and geo (K, 4): each
    marker's rotated body vector u = R(theta) s' and its position (u plus the body's origin; u for a direction)."""
    for k in range(geo.shape[0]):
        th = qe[mcols[k, 2]]
        c, s = np.cos(th), np.sin(th)
        ux = c * mloc[k, 0] - s * mloc[k, 1]
        uy = s * mloc[k, 0] + c * mloc[k, 1]
        geo[k, 0], geo[k, 1], geo[k, 2], geo[k, 3] = ux, uy, ux, uy
        if mvec[k] == 0:
            geo[k, 2] += qe[mcols[k, 0]]
            geo[k, 3] += qe[mcols[k, 1]]
    A[:, :] = 0.0
    for p in range(prim.shape[0]):
        kind, r, a, b, e = prim[p, 0], prim[p, 1], prim[p, 2], prim[p, 3], prim[p, 4]
        if kind == ANGLE:
            A[r, a] -= 1.0
            A[r, b] += 1.0
        elif kind == COORDINATE_DRIVER:
            A[r, a] += 1.0
        elif kind == COINCIDENT:
            _add_row(A, r, a, mcols, mvec, 1.0, 0.0, -geo[a, 1], geo[a, 0])
            _add_row(A, r, b, mcols, mvec, -1.0, 0.0, -geo[b, 1], geo[b, 0])
            _add_row(A, r + 1, a, mcols, mvec, 0.0, 1.0, -geo[a, 1], geo[a, 0])
            _add_row(A, r + 1, b, mcols, mvec, 0.0, -1.0, -geo[b, 1], geo[b, 0])
        elif kind == DISTANCE:
            L = pval[p]
            dx, dy = geo[a, 2] - geo[b, 2], geo[a, 3] - geo[b, 3]
            _add_row(A, r, a, mcols, mvec, dx / L, dy / L, -geo[a, 1], geo[a, 0])
            _add_row(A, r, b, mcols, mvec, -dx / L, -dy / L, -geo[b, 1], geo[b, 0])
        else:  # LINE_PROJECTION: e = marker e (direction on the body of p_i)
            dx, dy, ex, ey = geo[b, 2] - geo[a, 2], geo[b, 3] - geo[a, 3], geo[e, 2], geo[e, 3]
            _add_row(A, r, e, mcols, mvec, dx, dy, -geo[e, 1], geo[e, 0])
            _add_row(A, r, a, mcols, mvec, -ex, -ey, -geo[a, 1], geo[a, 0])
            _add_row(A, r, b, mcols, mvec, ex, ey, -geo[b, 1], geo[b, 0])


@njit(cache=True)
def _velocity(k, j, mcols, mvec, geo, V):
    """Marker k's velocity (2) and theta rate under velocity column j of V (n + 1, c)."""
    w = V[mcols[k, 2], j]
    vx, vy = -geo[k, 1] * w, geo[k, 0] * w
    if mvec[k] == 0:
        vx += V[mcols[k, 0], j]
        vy += V[mcols[k, 1], j]
    return vx, vy, w


@njit(cache=True)
def rate_pass(V, nc, prim, pval, mcols, mvec, geo, Gam):
    """Gam[j] (m,) = Gamma(V[:, 0], V[:, j]), j < nc, with Gamma the symmetric bilinear form whose diagonal is gamma
    (kernels.assemble: gamma(v) = -A'(v) v, paper 000 eq. 6): Gam[0] = gamma(v) and Gam[j] = -A'(v) V[:, j], the
    polarisation (gamma(v + t) - gamma(v - t)) / 4 of linalg.tangent.jacobian_rate_times without its cancellation.
    Marker terms: velocity b w (+ the origin's), convective -u w_0 w_j; geo from :func:`position_pass`."""
    for p in range(prim.shape[0]):
        kind, r, a, b, e = prim[p, 0], prim[p, 1], prim[p, 2], prim[p, 3], prim[p, 4]
        if kind == ANGLE or kind == COORDINATE_DRIVER:
            for j in range(nc):
                Gam[j, r] = 0.0
            continue
        vix, viy, wi = _velocity(a, 0, mcols, mvec, geo, V)
        vjx, vjy, wj = _velocity(b, 0, mcols, mvec, geo, V)
        for j in range(nc):
            tix, tiy, si = _velocity(a, j, mcols, mvec, geo, V)
            tjx, tjy, sj = _velocity(b, j, mcols, mvec, geo, V)
            cix, ciy = -geo[a, 0] * wi * si, -geo[a, 1] * wi * si
            cjx, cjy = -geo[b, 0] * wj * sj, -geo[b, 1] * wj * sj
            if kind == COINCIDENT:
                Gam[j, r] = -(cix - cjx)
                Gam[j, r + 1] = -(ciy - cjy)
            elif kind == DISTANCE:
                dx, dy = geo[a, 2] - geo[b, 2], geo[a, 3] - geo[b, 3]
                ddx, ddy, tdx, tdy = vix - vjx, viy - vjy, tix - tjx, tiy - tjy
                Gam[j, r] = -(ddx * tdx + ddy * tdy + dx * (cix - cjx) + dy * (ciy - cjy)) / pval[p]
            else:  # LINE_PROJECTION
                vex, vey, we = _velocity(e, 0, mcols, mvec, geo, V)
                tex, tey, se = _velocity(e, j, mcols, mvec, geo, V)
                cex, cey = -geo[e, 0] * we * se, -geo[e, 1] * we * se
                dx, dy, ex, ey = geo[b, 2] - geo[a, 2], geo[b, 3] - geo[a, 3], geo[e, 2], geo[e, 3]
                ddx, ddy, tdx, tdy = vjx - vix, vjy - viy, tjx - tix, tjy - tiy
                Gam[j, r] = -(cex * dx + cey * dy + ((vex * tdx + vey * tdy) + (tex * ddx + tey * ddy))
                              + ex * (cjx - cix) + ey * (cjy - ciy))


@njit(cache=True)
def _reduced_solve(X, M, diag, f, b, z, MX, Kr, rhs):
    """z (f,) = (X^T M X)^-1 X^T (f - M b) (Cholesky; MX, Kr, rhs workspaces); False if X^T M X is not positive
    definite."""
    n, nf = X.shape
    for i in range(n):
        rhs[i] = f[i]
        if diag:
            rhs[i] -= M[i, i] * b[i]
            for j in range(nf):
                MX[i, j] = M[i, i] * X[i, j]
        else:
            for j in range(n):
                rhs[i] -= M[i, j] * b[j]
            for j in range(nf):
                s = 0.0
                for l in range(n):
                    s += M[i, l] * X[l, j]
                MX[i, j] = s
    for a in range(nf):
        s = 0.0
        for i in range(n):
            s += X[i, a] * rhs[i]
        z[a] = s
        for c in range(nf):
            s = 0.0
            for i in range(n):
                s += X[i, a] * MX[i, c]
            Kr[a, c] = s
    if cholesky(Kr, nf) <= 0.0:
        return False
    cholesky_solve(Kr, z, nf)
    return True


@njit(cache=True)
def continuation_rhs(y, ints, floats, Q1, T):
    """(y' = [x', w'] (n + f,), path) of ``--basis continuation`` in the chart Q1 (n, r), T (n, f)
    (ContinuationNullSpace._chart_dynamics; paper 000 eqs 9-11): X = T - Q1 G^+ A T, G = A Q1,
    x' = X w - Q1 G^+ Phi_t (Phi_t = -dshift), X^T M X w' = X^T (f - M b), b = Q1 G^+ gamma, x'' = X w' + b;
    x'' and X are left in the buffer's acc and X. path: 0 Cholesky, 1 SVD pseudo-inverse (smooth_pinv); nothing
    valid, the caller runs the reference: -1 X^T M X not positive definite, -2 a singular configuration near, -3 a
    chart or state whose shape is not that of the buffers (nothing is written out of them)."""
    (prim, pval, mcols, mloc, mvec, M, diag, f, rel, tau, ddf, dshift), work = views(ints, floats)
    xw, Kg, qe, V, A, Gam, geo, acc, X, z, G, ATt, c, b, MX, Kr, rhs = work
    n, nf, r, m = M.shape[0], T.shape[1], Q1.shape[1], A.shape[0]
    out = np.empty(n + nf)
    if nf != X.shape[1] or r != G.shape[1] or y.shape[0] != n + nf:
        return out, -3                              # not the buffers' shapes: the reference runs
    qe[:n] = y[:n]
    qe[n] = 0.0
    position_pass(qe, prim, pval, mcols, mloc, mvec, A, geo)
    G[:, :] = 0.0
    ATt[:, :] = 0.0
    for i in range(m):
        for l in range(n):
            a = A[i, l]
            if a != 0.0:
                for j in range(r):
                    G[i, j] += a * Q1[l, j]
                for j in range(nf):
                    ATt[j, i] += a * T[l, j]
    path, P = smooth_pinv(G, rel, tau, xw, Kg, r)
    if path == 2:
        return out, -2
    cr = c[:r]
    for j in range(nf):                             # X = T - Q1 G^+ (A T)
        pinv_apply(G, path, Kg, P, ATt[j], cr)
        for i in range(n):
            s = 0.0
            for l in range(r):
                s += Q1[i, l] * cr[l]
            X[i, j] = T[i, j] - s
    xdot = out[:n]
    _matvec(X, y[n:], xdot, False)
    if np.any(dshift != 0.0):
        pinv_apply(G, path, Kg, P, dshift, cr)
        _matvec(Q1, cr, xdot, True)
    V[:n, 0] = xdot
    V[n, 0] = 0.0
    rate_pass(V, 1, prim, pval, mcols, mvec, geo, Gam)
    for i in range(m):
        Gam[0, i] += ddf[i]
    pinv_apply(G, path, Kg, P, Gam[0], cr)
    _matvec(Q1, cr, b, False)
    if not _reduced_solve(X, M, diag, f, b, out[n:], MX, Kr, rhs):
        return out, -1
    acc[:] = b
    _matvec(X, out[n:], acc, True)
    return out, path


@njit(cache=True)
def stage_basis(An, path, Kg, P, T, ATt, c, r, rel):
    """T (n, f) <- X (X^T X)^(-1/2), X = T - A_mu^+ (A T) restricted to the r (generic rank) largest singular values
    of A (NullSpaceEquations._velocity, linalg.tangent.polar_factor; App. A with the stage's smooth
    pseudo-inverse, :func:`.nullspace_kernels.smooth_pinv`, mu = rel s_1). With redundant rows (m > r) from the SVD
    of A, else by ``pinv_apply`` (every singular value is then one of the r); ATt (f, m) and c (n,) are work arrays."""
    n, nf, m = T.shape[0], T.shape[1], An.shape[0]
    if m > r:
        _, sv, Wt = np.linalg.svd(np.ascontiguousarray(An), full_matrices=False)
        mu2 = (rel * sv[0]) ** 2
        for i in range(min(r, sv.shape[0])):
            g = sv[i] * sv[i] / (sv[i] * sv[i] + mu2)
            for j in range(nf):
                s = 0.0
                for l in range(n):
                    s += Wt[i, l] * T[l, j]
                for l in range(n):
                    T[l, j] -= g * s * Wt[i, l]
        _polar(T)
        return
    for j in range(nf):
        for i in range(m):
            s = 0.0
            for l in range(n):
                s += An[i, l] * T[l, j]
            ATt[j, i] = s
        pinv_apply(An, path, Kg, P, ATt[j], c)
        for i in range(n):
            T[i, j] -= c[i]
    _polar(T)


@njit(cache=True)
def _polar(T):
    """T (n, f) <- T (T^T T)^(-1/2) (App. A's polar factor)."""
    lam, V = np.linalg.eigh(T.T @ T)
    W = V / np.sqrt(lam)
    T[:, :] = T @ (W @ V.T)


@njit(cache=True)
def flow_rhs(y, ints, floats):
    """(y' = [x', w', vec(T')] (n + f + n f,), path) of ``--basis flow`` at y = [x, w, vec(T)] (NullSpace.rhs; paper
    000 eqs 9-11, 15): x' = T w - A^+ Phi_t, x'' = T z + A^+ gamma with T^T M T z = T^T (f - M A^+ gamma),
    T' = -A^+ A' T (:func:`rate_pass`), w' = z + T'^T x', with T the stage basis (NullSpace._velocity: App. A of the
    state's T at x, :func:`stage_basis`); x'', T and z are left in the buffer's acc, X and z. path as in
    :func:`continuation_rhs`."""
    (prim, pval, mcols, mloc, mvec, M, diag, f, rel, tau, ddf, dshift), work = views(ints, floats)
    xw, Kg, qe, V, A, Gam, geo, acc, T, z, G, ATt, c, b, MX, Kr, rhs = work
    n, m, nf, r = M.shape[0], A.shape[0], T.shape[1], ints[5]
    out = np.empty(y.shape[0])
    if y.shape[0] != n + nf + n * nf:
        return out, -3                              # not the buffers' shapes: the reference runs
    qe[:n] = y[:n]
    qe[n] = 0.0
    position_pass(qe, prim, pval, mcols, mloc, mvec, A, geo)
    An = A[:, :n]
    path, P = smooth_pinv(An, rel, tau, xw, Kg, r)
    if path == 2:
        return out, -2
    cn = c[:n]
    for i in range(n):
        for j in range(nf):
            T[i, j] = y[n + nf + i * nf + j]
    stage_basis(An, path, Kg, P, T, ATt, cn, r, rel)
    for i in range(n):
        s = 0.0
        for j in range(nf):
            V[i, j + 1] = T[i, j]
            s += T[i, j] * y[n + j]
        out[i] = s
        V[i, 0] = s
    V[n, :] = 0.0
    if np.any(dshift != 0.0):
        pinv_apply(An, path, Kg, P, dshift, cn)
        for i in range(n):
            out[i] += cn[i]
            V[i, 0] = out[i]
    rate_pass(V, nf + 1, prim, pval, mcols, mvec, geo, Gam)
    for i in range(m):
        Gam[0, i] += ddf[i]
    pinv_apply(An, path, Kg, P, Gam[0], acc)         # A^+ gamma
    if not _reduced_solve(T, M, diag, f, acc, z, MX, Kr, rhs):
        return out, -1
    for j in range(nf):                             # T' = -A^+ (A' T), w' = z + T'^T x'
        pinv_apply(An, path, Kg, P, Gam[j + 1], cn)
        s = 0.0
        for i in range(n):
            out[n + nf + i * nf + j] = cn[i]
            s += cn[i] * out[i]
        out[n + j] = z[j] + s
    _matvec(T, z, acc, True)
    return out, path
