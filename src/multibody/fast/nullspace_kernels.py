"""Compiled (numba) kernels of the null-space formulation (paper 000; issue 16 item 1): the smooth pseudo-inverse
its right-hand sides use (:func:`smooth_pinv`; the right-hand sides themselves are in :mod:`.nullspace_rhs_kernels`),
the constraint evaluation of the compiled workspace, the local error on the physical state and the singular tracker's objective; the
packed model is that of :mod:`.kernels` (:class:`.packed.PackedModel`).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .kernels import assemble, cholesky, cholesky_solve
from .project_kernels import project_positions
from .step_kernels import MIN_NORM_PIVOT_RATIO, constraint_phi, gram_cholesky, normal_solve

#: the regularised pseudo-inverse is formed from the Cholesky factor of the Gram matrix while its smallest
#: pivot ratio (an optimistic estimate of 1 / cond(B)^2) is >= this; below it from the SVD, as the reference does
#: everywhere (structurally redundant rows, singular configurations)
GRAM_PIVOT_RATIO = 1e-3

#: where the SVD shows a singular configuration near (the singular value of the generic rank below this times the
#: largest) the kernels decline and the formulation runs its reference: there the motion is sensitive to round-off
#: (a step may land on another branch's tangent) and the singular-configuration tests of issue 12 were tuned on the
#: reference's numbers (measured: with the compiled SVD there, 2 of 8 tight-tolerance runs of the double four-bar
#: stopped on a projection jump, the reference none)
DECLINE_RATIO = 1e-3

#: power iterations for the largest eigenvalue of the Gram matrix (mu = rel s_max): the Rayleigh quotient's
#: relative error after k iterations is ~ (lambda_2 / lambda_1)^(2k); it enters only the penalty (mu / s)^2
POWER_ITERATIONS = 30

#: sweeps of jacobi_singular_values (the fallback of singular_value): one-sided Jacobi converges quadratically once
#: the rows are nearly orthogonal, in ~6-10 sweeps for the matrices met here; more leave ok False
JACOBI_SWEEPS = 60


@njit(cache=True)
def evaluate(qe, ve, prim, pval, poff, mcols, mloc, mvec, shift, ddf, A, gamma, phi):
    """Phi (m,) (minus ``shift`` = f(t)), A (m, n + 1) and gamma (m,) (plus ``ddf`` = f''(t)) at qe, ve (n + 1,):
    the Workspace's ``constraints`` for the builder primitives (model.constraints; paper 000 eq. 6)."""
    assemble(qe, ve, prim, pval, mcols, mloc, mvec, A, gamma)
    for i in range(gamma.shape[0]):
        gamma[i] += ddf[i]
    constraint_phi(qe, ve, prim, pval, poff, mcols, mloc, mvec, shift, phi)


@njit(cache=True)
def _largest_eigenvalue(K, x):
    """The largest eigenvalue of the symmetric positive semi-definite K (d, d): Rayleigh quotient after
    POWER_ITERATIONS power iterations from x (d,), the caller's previous eigenvector estimate (warm start: along
    one step the matrix hardly changes), which is left normalised in x; an all-zero x starts from a ramp."""
    d = K.shape[0]
    nx = 0.0
    for i in range(d):
        nx += x[i] * x[i]
    if nx == 0.0 or not np.isfinite(nx):
        for i in range(d):
            x[i] = 1.0 + 1e-3 * i
    y = np.empty(d)
    lam, last = 0.0, -1.0
    for _ in range(POWER_ITERATIONS):
        nx, ny, yy = 0.0, 0.0, 0.0
        for i in range(d):
            s = 0.0
            for j in range(d):
                s += K[i, j] * x[j]
            y[i] = s
            nx += x[i] * x[i]
            ny += x[i] * s
            yy += s * s
        if yy == 0.0:
            return 0.0
        lam, scale = ny / nx, 1.0 / np.sqrt(yy)
        for i in range(d):
            x[i] = y[i] * scale
        if abs(lam - last) <= 1e-15 * lam:
            break
        last = lam
    return lam


@njit(cache=True)
def smooth_pinv(B, rel, tau, x, K, rank):
    """The smooth pseudo-inverse B_mu^+ = W diag(s / (s^2 + mu^2)) U^T of B (p, k), mu = rel s_max
    (linalg.tangent.SmoothPinv). Identical in exact arithmetic to the Tikhonov forms (B^T B + mu^2 I)^-1 B^T
    (p >= k) and B^T (B B^T + mu^2 I)^-1 (p < k): path 0 leaves the Cholesky factor of that Gram matrix in K
    (min(p, k) square) while it is well conditioned (pivot ratio >= ``tau``: round-off <~ eps / tau relative),
    else path 1 returns P (k, p) from the SVD, as the reference does everywhere. s_max^2 by power iteration
    warm-started from x (:func:`_largest_eigenvalue`). Returns (path, P); apply with :func:`pinv_apply`. Path 2
    (nothing valid): the SVD shows s_rank < DECLINE_RATIO s_1, a singular configuration near."""
    p, k = B.shape
    tall = p >= k
    d = K.shape[0]
    for i in range(d):
        for j in range(i + 1):
            s = 0.0
            if tall:
                for l in range(p):
                    s += B[l, i] * B[l, j]
            else:
                for l in range(k):
                    s += B[i, l] * B[j, l]
            K[i, j] = s
            K[j, i] = s
    smax2 = _largest_eigenvalue(K, x)
    mu2 = rel * rel * smax2
    for i in range(d):
        K[i, i] += mu2
    if smax2 > 0.0 and cholesky(K, d) >= tau:
        return 0, np.zeros((0, 0))
    U, sv, Wt = np.linalg.svd(B, full_matrices=False)
    P = np.zeros((k, p))
    if sv.shape[0] == 0 or sv[0] == 0.0:
        return 1, P
    if rank > 0 and sv[rank - 1] < DECLINE_RATIO * sv[0]:
        return 2, P
    mu = rel * sv[0]
    sp = sv / (sv * sv + mu * mu)
    return 1, Wt.T @ (sp.reshape(-1, 1) * U.T)


@njit(cache=True)
def pinv_apply(B, path, K, P, v, out):
    """out (k,) = B_mu^+ v for v (p,), with (path, P) from :func:`smooth_pinv` and K its Cholesky factor."""
    p, k = B.shape
    if path == 1:
        for i in range(k):
            s = 0.0
            for j in range(p):
                s += P[i, j] * v[j]
            out[i] = s
        return
    if p >= k:                       # (B^T B + mu^2 I)^-1 B^T v
        for i in range(k):
            s = 0.0
            for j in range(p):
                s += B[j, i] * v[j]
            out[i] = s
        cholesky_solve(K, out, k)
        return
    c = v.copy()                     # B^T (B B^T + mu^2 I)^-1 v
    cholesky_solve(K, c, p)
    for i in range(k):
        s = 0.0
        for j in range(p):
            s += B[j, i] * c[j]
        out[i] = s


@njit(cache=True)
def _matvec(A, x, out, add):
    """out (p,) = A x (add: out += A x) for A (p, k) by loops (no BLAS call for these small sizes)."""
    for i in range(A.shape[0]):
        s = 0.0
        for j in range(A.shape[1]):
            s += A[i, j] * x[j]
        out[i] = out[i] + s if add else s


@njit(cache=True)
def _normal_part(A, n, gram, G, Wt, k, x, out):
    """out (n,) = A^+ A x, the part of x in the row space of A (m, n + 1; column n unused): by the normal equations
    applied twice (step_kernels.tangent_error: "twice is enough", round-off ~ eps cond(A)) where ``gram`` (G the
    Cholesky factor of A A^T), else from the first k rows of the SVD's Wt (linalg.rank.row_space_filter)."""
    out[:] = 0.0
    if gram:
        r, ax, dx = x.copy(), np.empty(A.shape[0]), np.empty(n)
        for _ in range(2):
            for i in range(A.shape[0]):
                s = 0.0
                for j in range(n):
                    s += A[i, j] * r[j]
                ax[i] = s
            normal_solve(A, n, G, ax, False, dx)
            for j in range(n):
                r[j] -= dx[j]
                out[j] += dx[j]
        return
    for i in range(k):
        c = 0.0
        for j in range(n):
            c += Wt[i, j] * x[j]
        for j in range(n):
            out[j] += Wt[i, j] * c


@njit(cache=True)
def physical_error(y, err, nf, flow, T, weight, rel, prim, pval, mcols, mloc, mvec, qe, ve, A, gamma, G, r, dq, out):
    """out (2 n,) <- the null-space formulations' local error on the physical state [x, v] at the step's end y
    (NullSpaceEquations.error_measure, formulations.velocity_error): dx = err[:n]; dv = T (dw + K w), K the skew part
    of T^T dT (``flow`` with its stage basis, velocity_error.stage_velocity_change: T (n, nf) the state's, w, dT, dw
    from y and err) or T dw (T the chart (n, nf)); the parts of dx and dv in the row space of
    A(x) weighted by ``weight`` (the row space of the SVD's singular values above rel s_1, by the normal equations
    where A A^T is well conditioned: linalg.rank.row_space_filter's projector); plus (both bases) the velocity change
    -A_r^+ A'(v) u the tangential part u of dx forces (velocity_error.turn_velocity_change, v = T w, r the generic
    rank: :func:`_turn`), the tangential part of dx first bounded by its two parts where dq (nf,) is given (the estimate
    of the independent coordinates, formulations.flow_error.independent_part; empty: not). A (m, n + 1) holds only
    holonomic rows and no prescribed motion (the caller's condition)."""
    n = qe.shape[0] - 1
    u = err[n:n + nf].copy()                        # dw + K w
    if flow:
        for j in range(nf):
            for k in range(nf):
                s = 0.0
                for i in range(n):
                    s += T[i, j] * err[n + nf + i * nf + k] - err[n + nf + i * nf + j] * T[i, k]
                u[j] += 0.5 * s * y[n + k]
    for i in range(n):
        out[i] = err[i]
        dv = 0.0
        for j in range(nf):
            dv += T[i, j] * u[j]
        out[n + i] = dv
    qe[:n] = y[:n]
    qe[n] = 0.0
    ve[:] = 0.0
    assemble(qe, ve, prim, pval, mcols, mloc, mvec, A, gamma)
    gram = gram_cholesky(A, n, MIN_NORM_PIVOT_RATIO, G)
    Us, s, Wt, k = np.zeros((0, 0)), np.zeros(0), np.zeros((0, n)), 0
    if not gram:
        Us, s, Wt = np.linalg.svd(np.ascontiguousarray(A[:, :n]), full_matrices=False)
        if s.shape[0] and s[0] > 0.0:
            for i in range(s.shape[0]):
                if s[i] > rel * s[0]:
                    k += 1
    normal, u = np.empty(n), np.empty(n)
    for half in range(2):
        _normal_part(A, n, gram, G, Wt, k, out[half * n:(half + 1) * n].copy(), normal)
        for j in range(n):
            out[half * n + j] -= (1.0 - weight) * normal[j]
            if half == 0:
                u[j] = err[j] - normal[j]
    if dq.shape[0] == nf and nf > 0:
        _independent_part(T, u, dq, out)
    k = r if gram else min(k, r)
    _turn(y, nf, T, u, prim, pval, mcols, mloc, mvec, qe, ve, A, gamma, G, gram, Us, s, Wt, k, out)


@njit(cache=True)
def _independent_part(T, u, dq, out):
    """u (n,) and out[:n] += T (|dq| + |c - dq| - c), c = T^T u (formulations.flow_error.independent_part)."""
    n, nf = T.shape
    for j in range(nf):
        c = 0.0
        for i in range(n):
            c += T[i, j] * u[i]
        d = abs(dq[j]) + abs(c - dq[j]) - c
        for i in range(n):
            u[i] += T[i, j] * d
            out[i] += T[i, j] * d


@njit(cache=True)
def _turn(y, nf, T, u, prim, pval, mcols, mloc, mvec, qe, ve, A, gamma, G, gram, Us, s, Wt, k, out):
    """out[n:] += -A_r^+ A'(v) u, v = T w (velocity_error.turn_velocity_change): A'(v) u = -(gamma(v + c u) -
    gamma(v - c u)) / (4 c), c = |v| / |u| (kernels.assemble at qe, the step's end, so A keeps its values); A_r^+ by
    the normal equations (``gram``: A of full row rank) or from the SVD's first k = min(above rel s_1, r) triplets."""
    n = u.shape[0]
    v = np.zeros(n)
    _matvec(T, y[n:n + nf], v, False)
    size, speed = np.sqrt(np.sum(u * u)), np.sqrt(np.sum(v * v))
    if size == 0.0 or speed == 0.0 or k == 0:
        return
    c = speed / size
    rate = np.zeros(A.shape[0])
    for sign in (1.0, -1.0):
        ve[:n] = v + sign * c * u
        ve[n] = 0.0
        assemble(qe, ve, prim, pval, mcols, mloc, mvec, A, gamma)
        rate -= sign * gamma / (4.0 * c)
    dv = np.zeros(n)
    if gram:
        normal_solve(A, n, G, rate, False, dv)
    else:
        for i in range(k):
            a = 0.0
            for j in range(A.shape[0]):
                a += Us[j, i] * rate[j]
            for j in range(n):
                dv[j] += Wt[i, j] * a / s[i]
    for j in range(n):
        out[n + j] -= dv[j]


@njit(cache=True)
def crossing_sigma(t, hist_t, hist_x, hist_v, r, prim, pval, poff, mcols, mloc, mvec, shift, limit, drift, iterations,
                   polish, pin, qe, ve, A, gamma, phi):
    """(sigma_r of A at x(t), ok): x(t) the cubic Hermite interpolant of the three accepted states (hist_t (3,),
    hist_x, hist_v (3, n)) on the piece containing t, projected onto Phi = 0 (project_kernels.project_positions with
    the arguments of fast.packed.CompiledWorkspace.solve_positions); the singular tracker's objective
    (formulations.singular: SingularTracker._position, _sigmas). ok False where the projection failed (or, never for a
    finite A, neither SVD could vouch for sigma_r: :func:`singular_value`), and the tracker runs its reference."""
    k = 0 if t <= hist_t[1] else 1
    h = hist_t[k + 1] - hist_t[k]
    s = (t - hist_t[k]) / h
    h00, h10 = 2 * s ** 3 - 3 * s ** 2 + 1, s ** 3 - 2 * s ** 2 + s
    h01, h11 = -2 * s ** 3 + 3 * s ** 2, s ** 3 - s ** 2
    x = h00 * hist_x[k] + h10 * h * hist_v[k] + h01 * hist_x[k + 1] + h11 * h * hist_v[k + 1]
    if not project_positions(x, prim, pval, poff, mcols, mloc, mvec, shift, limit, drift, iterations, polish, pin, qe,
                             ve, A, gamma, phi):
        return 0.0, False
    n = x.shape[0]
    qe[:n] = x
    qe[n] = 0.0
    ve[:] = 0.0
    assemble(qe, ve, prim, pval, mcols, mloc, mvec, A, gamma)
    return singular_value(np.ascontiguousarray(A[:, :n]), r)


@njit(cache=True)
def singular_value(M, r):
    """(sigma_r of M (m, k), ok): LAPACK's divide and conquer (gesdd, numba's np.linalg.svd); where it fails to converge
    (numba raises ValueError, seen in the singular tracker's objective, issue 12) one-sided Jacobi
    (:func:`jacobi_singular_values`, which converges for every finite matrix); ok False only for a non-finite M."""
    try:
        return np.linalg.svd(M)[1][r - 1], True
    except Exception:       # noqa: BLE001 -- numba catches no narrower class here
        pass
    sv, ok = jacobi_singular_values(M)
    return sv[r - 1], ok


@njit(cache=True)
def jacobi_singular_values(M):
    """(singular values of M (m, k), descending; ok): one-sided Jacobi (Hestenes 1958; Demmel, Applied Numerical Linear
    Algebra, Alg. 5.5, applied to the rows): plane rotations from the left make the rows of G = Q M pairwise orthogonal,
    and then the singular values are their norms. Cyclic sweeps converge for every finite M (Forsythe & Henrici 1960),
    with high relative accuracy for the small singular values (Demmel & Veselic 1992); ok False for a non-finite M or
    if JACOBI_SWEEPS sweeps leave a pair not orthogonal to working precision."""
    G = M.copy()
    m, k = G.shape
    sv = np.zeros(m)
    if not np.all(np.isfinite(G)):
        return sv, False
    eps, done = np.finfo(np.float64).eps, False
    for _ in range(JACOBI_SWEEPS):
        done = True
        for i in range(m - 1):
            for j in range(i + 1, m):
                a, b, c = 0.0, 0.0, 0.0
                for x in range(k):
                    a += G[i, x] * G[i, x]
                    b += G[j, x] * G[j, x]
                    c += G[i, x] * G[j, x]
                if abs(c) <= eps * np.sqrt(a * b):
                    continue
                done = False
                zeta = (b - a) / (2.0 * c)
                t = (1.0 if zeta >= 0.0 else -1.0) / (abs(zeta) + np.sqrt(1.0 + zeta * zeta))
                cs = 1.0 / np.sqrt(1.0 + t * t)
                sn = cs * t
                for x in range(k):
                    gi, gj = G[i, x], G[j, x]
                    G[i, x], G[j, x] = cs * gi - sn * gj, sn * gi + cs * gj
        if done:
            break
    for i in range(m):
        sv[i] = np.sqrt(np.sum(G[i] * G[i]))
    return np.sort(sv)[::-1], done
