"""Compiled kinematic-tree maps of the reduced energy-momentum step (issue 16: spatial models): the
reparametrisation q_{n+1} = F_{q_n}(mu) (paper 004 eqs 44, 95, 118, 126, 136, 154, 188-189) and the null-space
matrix P(qa) = P_int(qa) P_ext(qa) (eqs 29, 57-60, 68, 83-84, 113, 121, 133, 149, 184-186), line for line the
NumPy reference :mod:`multibody.model.director_tree` (whose docstring states the recursion), in complex
arithmetic so that the reduced Newton (:mod:`.em_reduced_kernels`) takes its Jacobians by complex step as the
reference does.

The tree comes packed by :mod:`.em_tree` as one tuple ``tr``:
``(cols (b, 12), kind (J,), parent (J,), child (J,), start (J,), vec (J, 5, 3) = X1, X2, n, m1, m2,
frame_of (J,), root_body (R,), root_start (R,), root_Q (R, 3, 3), root_framed (R,), joint_unknowns)``:
kind 0..4 = S, R, C, P, E; the ground is body index b; ``frame_of[j]`` the root whose pair frame the E pair j's
normal gap uses (``_normal_gap``) or -1; ``root_Q`` the pair frames of this step (``pair_frames``), used where
``root_framed``; ``joint_unknowns`` 1 for ``Tree.unknowns == "joint"``.
"""
from __future__ import annotations

import cmath

import numpy as np
from numba import njit

S, R, C, P, E = 0, 1, 2, 3, 4
DOF = (3, 1, 2, 1, 3)


@njit(cache=True)
def _mm(A, B):
    out = np.zeros((3, 3), dtype=np.complex128)
    for i in range(3):
        for j in range(3):
            out[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]
    return out


@njit(cache=True)
def _mv(A, x):
    out = np.zeros(3, dtype=np.complex128)
    for i in range(3):
        out[i] = A[i, 0] * x[0] + A[i, 1] * x[1] + A[i, 2] * x[2]
    return out


@njit(cache=True)
def _cross(a, b):
    out = np.zeros(3, dtype=np.complex128)
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]
    return out


@njit(cache=True)
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True)
def _skew(a):
    W = np.zeros((3, 3), dtype=np.complex128)
    W[0, 1], W[0, 2], W[1, 0] = -a[2], a[1], a[2]
    W[1, 2], W[2, 0], W[2, 1] = -a[0], -a[1], a[0]
    return W


@njit(cache=True)
def geometry(q, cols):
    """phi (b + 1, 3) and D (b + 1, 3, 3) (D[:, :, I] = d_I) of q (n,); entry b is the ground."""
    nb = cols.shape[0]
    phi = np.zeros((nb + 1, 3), dtype=np.complex128)
    D = np.zeros((nb + 1, 3, 3), dtype=np.complex128)
    for b in range(nb):
        for k in range(3):
            phi[b, k] = q[cols[b, k]]
            for i in range(3):
                D[b, k, i] = q[cols[b, 3 + 3 * i + k]]
    for k in range(3):
        D[nb, k, k] = 1.0
    return phi, D


@njit(cache=True)
def _expm_minus_identity(th):
    """exp(th^) - I = c1 th^ + c2 (th^)^2 (Rodrigues, eq. 43; series below |th|^2 = 1e-6 as rotations.py)."""
    s = th[0] * th[0] + th[1] * th[1] + th[2] * th[2]
    if s.real < 1e-6:
        c1 = 1 - s / 6 + s * s / 120 - s ** 3 / 5040
        c2 = 0.5 - s / 24 + s * s / 720 - s ** 3 / 40320
    else:
        x = cmath.sqrt(s)
        half = cmath.sin(x / 2) / (x / 2)
        c1, c2 = cmath.sin(x) / x, 0.5 * half * half
    W = _skew(th)
    return c1 * W + c2 * _mm(W, W)


@njit(cache=True)
def _axis_minus_identity(angle, n):
    """exp(angle n^) - I = sin(a) n^ + 2 sin^2(a/2) (n^)^2 for a unit axis n."""
    W = _skew(n)
    h = cmath.sin(angle / 2)
    return cmath.sin(angle) * W + 2 * h * h * _mm(W, W)


@njit(cache=True)
def _root_rotation(tr, r, theta):
    """R - I of root r: exp(theta^), or (I + A)(I + B)(I + C) - I along its pair frame Q (eq. 44)."""
    if tr[10][r] == 0:
        return _expm_minus_identity(theta)
    Q = tr[9][r]
    A = _axis_minus_identity(theta[0], Q[:, 0].copy())
    B = _axis_minus_identity(theta[1], Q[:, 1].copy())
    Cm = _axis_minus_identity(theta[2], Q[:, 2].copy())
    AB = _mm(A, B)
    return A + B + Cm + AB + _mm(A, Cm) + _mm(B, Cm) + _mm(AB, Cm)


@njit(cache=True)
def _mv_to(A, x, out):
    for i in range(3):
        out[i] = A[i, 0] * x[0] + A[i, 1] * x[1] + A[i, 2] * x[2]


@njit(cache=True)
def _frame_correction(D, X, K, Dn, G):
    """K <- -1/2 D' (D'^T D' - I), D' = D + X D: one Newton-Schulz step back onto orthonormal frames
    (director_tree._frame_correction); Dn, G scratch (3, 3)."""
    for i in range(3):
        for j in range(3):
            Dn[i, j] = D[i, j] + (X[i, 0] * D[0, j] + X[i, 1] * D[1, j] + X[i, 2] * D[2, j])
    for i in range(3):
        for j in range(3):
            G[i, j] = Dn[0, i] * Dn[0, j] + Dn[1, i] * Dn[1, j] + Dn[2, i] * Dn[2, j]
        G[i, i] -= 1.0
    for i in range(3):
        for j in range(3):
            K[i, j] = -0.5 * (Dn[i, 0] * G[0, j] + Dn[i, 1] * G[1, j] + Dn[i, 2] * G[2, j])


@njit(cache=True)
def _turn_child(Xp, angle, n, Xc, W):
    """Xc <- R_p (E + I) - I = Xp E + Xp + E with E = exp(angle n^) - I = sin(a) n^ + 2 sin^2(a/2) (n^)^2, in the
    reference's order of operations (W scratch (3, 3))."""
    h = cmath.sin(angle / 2)
    s, c2 = cmath.sin(angle), 2 * h * h
    W[:, :] = 0
    W[0, 1], W[0, 2], W[1, 0] = -n[2], n[1], n[2]
    W[1, 2], W[2, 0], W[2, 1] = -n[0], -n[1], n[0]
    E = np.empty((3, 3), dtype=np.complex128)
    for i in range(3):
        for j in range(3):
            E[i, j] = s * W[i, j] + c2 * (W[i, 0] * W[0, j] + W[i, 1] * W[1, j] + W[i, 2] * W[2, j])
    for i in range(3):
        for j in range(3):
            Xc[i, j] = (Xp[i, 0] * E[0, j] + Xp[i, 1] * E[1, j] + Xp[i, 2] * E[2, j]) + Xp[i, j] + E[i, j]


@njit(cache=True)
def _normal_gap(tr, j, mu, nn, gap, Xp):
    """n' . gap, in closed form in the parent's pair frame (director_tree._normal_gap)."""
    r = tr[6][j]
    if r < 0:
        return _dot(gap, nn) + _dot(_mv(Xp, nn), gap)
    Q, st = tr[9][r], tr[8][r]
    th_t, th_g = mu[st + 3], mu[st + 4]
    gt, gg, gn = _dot(gap, Q[:, 0]), _dot(gap, Q[:, 1]), _dot(gap, Q[:, 2])
    return cmath.cos(th_g) * (cmath.cos(th_t) * gn + cmath.sin(th_t) * gg) - cmath.sin(th_g) * gt


@njit(cache=True)
def _child_translation(tr, j, phi, D, X, K, dphi, mu, w):
    """dphi of tree joint j's child (director_tree._child_translation); w scratch (10, 3)."""
    kind, p, c, s, vec = tr[1][j], tr[2][j], tr[3][j], tr[4][j], tr[5][j]
    Xp = X[p]
    nn, m1, m2, rp, rc, gap, t = w[0], w[1], w[2], w[3], w[4], w[5], w[6]
    _mv_to(D[p], vec[2], nn)
    _mv_to(D[p], vec[3], m1)
    _mv_to(D[p], vec[4], m2)
    _mv_to(D[p], vec[0], rp)
    _mv_to(D[c], vec[1], rc)
    d = dphi[c]
    for i in range(3):
        gap[i] = (phi[c, i] + rc[i]) - (phi[p, i] + rp[i])
        d[i] = (dphi[p, i] + _row(Xp, i, rp) + _row(K[p], i, vec[0]) - _row(X[c], i, rc) - _row(K[c], i, vec[1]))
    Rp = Xp.copy()
    for i in range(3):
        Rp[i, i] += 1.0
    if kind == E and tr[11] == 1:
        normal = _normal_gap(tr, j, mu, nn, gap, Xp)
        for i in range(3):
            d[i] = ((d[i] + mu[s] * _row(Rp, i, m1)) + mu[s + 1] * _row(Rp, i, m2)) - normal * _row(Rp, i, nn)
        return
    if kind == C or kind == P:
        a, b = _dot(gap, m1), _dot(gap, m2)
        for i in range(3):
            t[i] = a * m1[i] + b * m2[i]                       # Pi gap
    elif kind == E:
        a = _dot(gap, nn)
        for i in range(3):
            t[i] = a * nn[i]
    else:
        t[:] = gap
    r = w[7]
    for i in range(3):
        r[i] = gap[i] - t[i]
    for i in range(3):
        d[i] = (d[i] + _row(Xp, i, r)) - t[i]              # the reference's order of operations
    for i in range(3):
        if kind == C or kind == P:
            d[i] += mu[s] * _row(Rp, i, nn)
        elif kind == E:
            d[i] += mu[s] * _row(Rp, i, m1)
            d[i] += mu[s + 1] * _row(Rp, i, m2)


@njit(cache=True)
def _row(A, i, x):
    """(A x)_i."""
    return A[i, 0] * x[0] + A[i, 1] * x[1] + A[i, 2] * x[2]


@njit(cache=True)
def reparametrize(qn, mu, tr, dq):
    """dq (n,) <- F_{q_n}(mu) - q_n (director_tree.reparametrize: product of exponentials, eq. 188)."""
    cols = tr[0]
    nb = cols.shape[0]
    phi, D = geometry(qn, cols)
    X = np.zeros((nb + 1, 3, 3), dtype=np.complex128)
    K = np.zeros((nb + 1, 3, 3), dtype=np.complex128)
    dphi = np.zeros((nb + 1, 3), dtype=np.complex128)
    A, B, w = np.empty((3, 3), dtype=np.complex128), np.empty((3, 3), dtype=np.complex128), \
        np.empty((10, 3), dtype=np.complex128)
    for r in range(tr[7].shape[0]):
        b, s = tr[7][r], tr[8][r]
        X[b] = _root_rotation(tr, r, mu[s + 3:s + 6])
        _frame_correction(D[b], X[b], K[b], A, B)
        dphi[b] = mu[s:s + 3]
    for j in range(tr[1].shape[0]):
        kind, p, c, s = tr[1][j], tr[2][j], tr[3][j], tr[4][j]
        if kind == S:
            X[c] = _expm_minus_identity(mu[s:s + 3])
        elif kind == P:
            X[c] = X[p]
        else:
            _mv_to(D[p], tr[5][j][2], w[9])
            _turn_child(X[p], mu[s + DOF[kind] - 1], w[9], X[c], A)
        _frame_correction(D[c], X[c], K[c], A, B)
        _child_translation(tr, j, phi, D, X, K, dphi, mu, w)
    for b in range(nb):
        for k in range(3):
            dq[cols[b, k]] = dphi[b, k]
            for i in range(3):
                dq[cols[b, 3 + 3 * i + k]] = _row(X[b], k, D[b, :, i]) + K[b, k, i]


@njit(cache=True)
def _pair_columns(tr, j, T, Dp, rc, n):
    """Add the twist columns (v, omega) of pair j's own unknowns to its child's rows of T."""
    kind, c, s, vec = tr[1][j], tr[3][j], tr[4][j], tr[5][j]
    m1, m2 = _mv(Dp, vec[3]), _mv(Dp, vec[4])
    turn = _cross(rc, n)
    if kind == C or kind == P:
        T[c, :3, s] += _cross(m1, m2)
    elif kind == E:
        T[c, :3, s] += _cross(m2, n)
        T[c, :3, s + 1] += _cross(n, m1)
    if kind != P:
        k = s + DOF[kind] - 1
        T[c, :3, k] += turn
        T[c, 3:, k] += n


@njit(cache=True)
def _carry(T, p, c, arm, d, turn):
    """The child's twist rows from the parent's: v_c = v_p - arm x w_p (all columns), and w_c = w_p if turn."""
    a0, a1, a2 = arm[0], arm[1], arm[2]
    for k in range(d):
        w0, w1, w2 = T[p, 3, k], T[p, 4, k], T[p, 5, k]
        T[c, 0, k] = T[p, 0, k] - (a1 * w2 - a2 * w1)
        T[c, 1, k] = T[p, 1, k] - (a2 * w0 - a0 * w2)
        T[c, 2, k] = T[p, 2, k] - (a0 * w1 - a1 * w0)
        if turn:
            T[c, 3, k], T[c, 4, k], T[c, 5, k] = w0, w1, w2


@njit(cache=True)
def _twist_child(tr, j, phi, D, T):
    """The child's rows of P_ext: the parent's twist carried across joint j plus the pair's columns."""
    kind, p, c, s, vec = tr[1][j], tr[2][j], tr[3][j], tr[4][j], tr[5][j]
    rp, rc, n = _mv(D[p], vec[0]), _mv(D[c], vec[1]), _mv(D[p], vec[2])
    d = T.shape[2]
    if kind == S:
        _carry(T, p, c, rp, d, False)
        for i in range(3):
            e = np.zeros(3, dtype=np.complex128)
            e[i] = 1.0
            T[c, :3, s + i] += _cross(rc, e)
            T[c, 3 + i, s + i] = 1.0
        return
    joint = kind == R or (kind == E and tr[11] == 1)
    arm = rp - rc if joint else phi[c] - phi[p]
    _carry(T, p, c, arm, d, True)
    if kind == E and joint:
        g = phi[c] + rc - phi[p] - rp
        kk = _cross(g, n) / _dot(n, n)
        for k in range(d):
            T[c, :3, k] += n * _dot(kk, T[p, 3:, k])
    _pair_columns(tr, j, T, D[p], rc, n)


@njit(cache=True)
def null_space(qa, tr, d):
    """P(qa) = P_int(qa) P_ext(qa) (n, d) (director_tree.null_space_matrix; eqs 29, 60, 68, 185)."""
    cols = tr[0]
    nb = cols.shape[0]
    phi, D = geometry(qa, cols)
    T = np.zeros((nb + 1, 6, d), dtype=np.complex128)
    for r in range(tr[7].shape[0]):
        b, s = tr[7][r], tr[8][r]
        for i in range(6):
            T[b, i, s + i] = 1.0
        if tr[10][r] == 1:
            T[b, 3:, s + 3:s + 6] = tr[9][r]
    for j in range(tr[1].shape[0]):
        _twist_child(tr, j, phi, D, T)
    out = np.zeros((qa.shape[0], d), dtype=np.complex128)
    for b in range(nb):
        for k in range(d):
            w0, w1, w2 = T[b, 3, k], T[b, 4, k], T[b, 5, k]
            for i in range(3):                   # v_phi = v, v_I = omega x d_I (eq. 29)
                out[cols[b, i], k] = T[b, i, k]
                x0, x1, x2 = D[b, 0, i], D[b, 1, i], D[b, 2, i]
                out[cols[b, 3 + 3 * i], k] = w1 * x2 - w2 * x1
                out[cols[b, 4 + 3 * i], k] = w2 * x0 - w0 * x2
                out[cols[b, 5 + 3 * i], k] = w0 * x1 - w1 * x0
    return out
