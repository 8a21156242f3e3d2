"""The Newton iterations of one generalized-alpha step in one compiled call (issue 16 items 2-3: no Python
overhead per Newton iteration, cost O(n) per iteration for chains), for the models the compiled kernels of
:mod:`multibody.fast` support (builder primitives, constant mass matrix, constant forces:
:func:`multibody.fast.packed.model_supported`).

The readable reference, which defines the numbers, is ``GeneralizedAlpha._attempt`` with the Workspace
(:mod:`.generalized_alpha`: Arnold & Bruels 2007, Multibody Syst. Dyn. 18:185-202, Algorithm 1 and eq. 15,
the scaled iteration matrix, the same modified-Newton rule and convergence test); tests/test_generalized_alpha.py
checks that both give the same steps. Here Phi comes from :func:`multibody.fast.step_kernels.constraint_phi`,
the entries of A = Phi_q (paper 000 eq. 6) in a fixed sparse pattern from :func:`constraint_entries` (the
derivatives of :func:`multibody.fast.kernels.assemble`, entry by entry), K_t = d(A^T lambda)/dq by the same
coloured forward differences as :class:`.tangent_matrix.ResidualJacobian` (constant forces and mass: no other
term, no C_t). The (n + m) iteration matrix, its unknowns in reverse Cuthill-McKee order (George & Liu,
Computer Solution of Large Sparse Positive Definite Systems, 1981, Sect. 4.3), is a band matrix of half
bandwidth w (w = 5 for a planar chain, whatever its length); it is factored by band LU with partial pivoting
(Golub & Van Loan, Matrix Computations, 4th ed., Sect. 4.3.5: L keeps bandwidth w, U grows to 2 w) in
O(n w^2) and kept over iterations and steps while the increments contract.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.sparse.csgraph import reverse_cuthill_mckee

from ..fast.entries import constraint_entries, entry_count
from ..fast.kernels import ANGLE, COINCIDENT, COORDINATE_DRIVER, _marker
from ..fast.step_kernels import constraint_phi
from .generalized_alpha_band import band_factor, band_solve
from .generalized_alpha_rank import ROUNDOFF_UNITS

#: status codes of :func:`ga_attempt`
CONVERGED, NOT_CONVERGED, SINGULAR = 0, 1, 2


@njit(cache=True)
def _amax(x):
    out = 0.0
    for i in range(x.shape[0]):
        out = max(out, abs(x[i]))
    return out


@njit(cache=True)
def _reaction(vals, rows, cols, count, lam, n, out):
    """out (n,) = A^T lambda from the entries of A."""
    out[:] = 0.0
    for e in range(count):
        if cols[e] < n:
            out[cols[e]] += vals[e] * lam[rows[e]]


@njit(cache=True)
def _put(W, iperm, w, i, j, x):
    """J[i, j] += x in the band storage of the permuted matrix (band_factor)."""
    pi = iperm[i]
    W[pi, iperm[j] - pi + w] += x


@njit(cache=True)
def _coincident_stiffness(qe, ve, lam, beta_p, pk, band):
    """K_t / beta' of models whose constraints are Coincident, Angle and CoordinateDriver rows only: the rows
    of a Coincident pair, p_a - p_b = 0 with p = x + R(theta) s, have d(A^T lambda)/dq only in the theta-theta
    entries, K[th_a, th_a] = -(lambda_x, lambda_y) . R(th_a) s_a and +(...) . R(th_b) s_b for marker b (the
    derivative of the theta column b = R' s of A, R'' s = -R s); Angle and CoordinateDriver rows are linear."""
    prim, pval, mcols, mloc, mvec = pk
    W, iperm, w = band
    n = qe.shape[0] - 1
    for p in range(prim.shape[0]):
        if prim[p, 0] != COINCIDENT:
            continue
        r = prim[p, 1]
        for k, sign in ((prim[p, 2], 1.0), (prim[p, 3], -1.0)):
            th = mcols[k, 2]
            if th < n:
                bx, by = _marker(k, mcols, mloc, mvec, qe, ve)[2:4]      # b = (-uy, ux), u = R s
                _put(W, iperm, w, th, th, -sign * (lam[r] * by - lam[r + 1] * bx) / beta_p)


@njit(cache=True)
def _matrix(qe, ve, lam, beta_p, pk, mass, kpat, scale, ent, g0, gp, band):
    """The band storage of J = [[M + K_t / beta', A^T], [A, 0]] at qe (module doc); K_t analytic
    (_coincident_stiffness) when kpat says so (its last item), else by coloured differences."""
    prim, pval, mcols, mloc, mvec = pk
    mrows, mcol, mval = mass
    rows, cols, goff, members, moff, analytic = kpat
    vals, erows, ecols = ent
    W, iperm, w = band
    n = g0.shape[0]
    W[:, :] = 0.0
    for e in range(mval.shape[0]):
        _put(W, iperm, w, mrows[e], mcol[e], mval[e])
    if analytic:
        _coincident_stiffness(qe, ve, lam, beta_p, pk, band)
    else:
        _difference_stiffness(qe, ve, lam, beta_p, pk, kpat, scale, ent, g0, gp, band)
    count = constraint_entries(qe, ve, prim, pval, mcols, mloc, mvec, vals, erows, ecols)
    for e in range(count):
        if ecols[e] < n:
            _put(W, iperm, w, n + erows[e], ecols[e], vals[e])
            _put(W, iperm, w, ecols[e], n + erows[e], vals[e])


@njit(cache=True)
def _difference_stiffness(qe, ve, lam, beta_p, pk, kpat, scale, ent, g0, gp, band):
    """K_t / beta' = d(A^T lambda)/dq / beta' by coloured forward differences into the band (the columns of a
    group perturbed together; tangent_matrix.ResidualJacobian)."""
    prim, pval, mcols, mloc, mvec = pk
    rows, cols, goff, members, moff, analytic = kpat
    vals, erows, ecols = ent
    W, iperm, w = band
    n = g0.shape[0]
    count = constraint_entries(qe, ve, prim, pval, mcols, mloc, mvec, vals, erows, ecols)
    _reaction(vals, erows, ecols, count, lam, n, g0)
    eps = np.sqrt(np.finfo(np.float64).eps)
    step, q0 = np.zeros(n), qe[:n].copy()
    for c in range(goff.shape[0] - 1):
        for t in range(moff[c], moff[c + 1]):
            j = members[t]
            qe[j] = q0[j] + eps * max(abs(q0[j]), scale)
            step[j] = qe[j] - q0[j]
        constraint_entries(qe, ve, prim, pval, mcols, mloc, mvec, vals, erows, ecols)
        _reaction(vals, erows, ecols, count, lam, n, gp)
        for t in range(moff[c], moff[c + 1]):
            qe[members[t]] = q0[members[t]]
        for t in range(goff[c], goff[c + 1]):
            i, j = rows[t], cols[t]
            _put(W, iperm, w, i, j, (gp[i] - g0[i]) / step[j] / beta_p)


@njit(cache=True)
def _magnitude(vals, rows, cols, count, lam, n, out):
    """max of out (n,) = |A|^T |lambda|: the sum of the magnitudes of the terms of A^T lambda."""
    out[:] = 0.0
    for e in range(count):
        if cols[e] < n:
            out[cols[e]] += abs(vals[e] * lam[rows[e]])
    return _amax(out)


@njit(cache=True)
def _residual(qe, ve, a, lam, pk, poff, mass, f, shift, ent, phi, Ma, reac, mag, rhs, beta_p, tol, length_scale):
    """rhs (n + m,) = (-r / beta', -Phi), r = M a + A^T lambda - f; returns ``balanced`` (reference _residual, with
    the residual's round-off floor of generalized_alpha_rank.roundoff_floor; mag: work array (n,))."""
    prim, pval, mcols, mloc, mvec = pk
    mrows, mcol, mval = mass
    vals, erows, ecols = ent
    n, m = a.shape[0], phi.shape[0]
    count = constraint_entries(qe, ve, prim, pval, mcols, mloc, mvec, vals, erows, ecols)
    constraint_phi(qe, ve, prim, pval, poff, mcols, mloc, mvec, shift, phi)
    _reaction(vals, erows, ecols, count, lam, n, reac)
    Ma[:] = 0.0
    for e in range(mval.shape[0]):
        Ma[mrows[e]] += mval[e] * a[mcol[e]]
    rmax = 0.0
    for i in range(n):
        r = Ma[i] + reac[i] - f[i]
        rmax = max(rmax, abs(r))
        rhs[i] = -r / beta_p
    for k in range(m):
        rhs[n + k] = -phi[k]
    scale = max(max(_amax(Ma), _amax(reac)), max(_amax(f), np.finfo(np.float64).tiny))
    floor = ROUNDOFF_UNITS * np.finfo(np.float64).eps * _magnitude(vals, erows, ecols, count, lam, n, mag)
    return rmax <= max(tol * scale, floor) and _amax(phi) <= tol * length_scale


@njit(cache=True)
def _solve(band, lower, piv, rhs, xb, x):
    """x = J^-1 rhs with the band factors (unknowns permuted to the band order and back)."""
    W, iperm, w = band
    for i in range(rhs.shape[0]):
        xb[iperm[i]] = rhs[i]
    band_solve(W, piv, lower, w, xb)
    for i in range(rhs.shape[0]):
        x[i] = xb[iperm[i]]


@njit(cache=True)
def _predict(state, h, par, out):
    """The predictor of the reference: a_n+1 = a_n, and q, v, abar from the generalized-alpha formulas."""
    q, v, a, abar, lam = state
    alpha_m, alpha_f, beta, gamma = par
    q1, v1, a1, abar1, lam1 = out
    for i in range(q.shape[0]):
        a1[i] = a[i]
        abar1[i] = (alpha_f * a[i] - alpha_m * abar[i] + (1 - alpha_f) * a[i]) / (1 - alpha_m)
        q1[i] = q[i] + h * v[i] + h * h * ((0.5 - beta) * abar[i] + beta * abar1[i])
        v1[i] = v[i] + h * ((1 - gamma) * abar[i] + gamma * abar1[i])
    lam1[:] = lam


@njit(cache=True)
def ga_attempt(state, h, par, control, model, kpat, band, lower, piv, lu_h, ent, out):
    """Newton iterations of one step (reference ``GeneralizedAlpha._attempt``).

    state (q, v, a, abar, lam); par (alpha_m, alpha_f, beta, gamma); control (increment tolerance, max
    iterations, contraction, length scale, singular pivot ratio); model (packed primitives, offsets, mass
    triplets, force, shift f(t1) of driven rows); band (W, iperm, w), lower, piv: the kept factor, of the step
    lu_h[0] (0: none); ent: the entry arrays of A; out (q1, v1, a1, abar1, lam1).
    Returns (status, iterations, factorizations)."""
    q, v, a, abar, lam = state
    alpha_m, alpha_f, beta, gamma = par
    tol, max_it, contraction, length_scale, singular_pivot = control
    pk, poff, mass, f, shift = model
    q1, v1, a1, abar1, lam1 = out
    n, m = q.shape[0], lam.shape[0]
    beta_p = (1 - alpha_m) / (h * h * beta * (1 - alpha_f))
    gamma_p = gamma / (h * beta)
    _predict(state, h, par, out)
    qe, ve = np.zeros(n + 1), np.zeros(n + 1)
    phi, Ma, reac, g0, gp, mag = np.empty(m), np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    rhs, x, xb = np.empty(n + m), np.empty(n + m), np.empty(n + m)
    have = lu_h[0] == h
    last, size, iterations, factorizations = np.inf, np.inf, 0, 0
    for _ in range(int(max_it) + 1):
        qe[:n], ve[:n] = q1, v1
        balanced = _residual(qe, ve, a1, lam1, pk, poff, mass, f, shift, ent, phi, Ma, reac, mag, rhs, beta_p, tol,
                             length_scale)
        if balanced and size <= tol * max(length_scale, _amax(q1)):
            for i in range(n):
                abar1[i] = (alpha_f * a[i] - alpha_m * abar[i] + (1 - alpha_f) * a1[i]) / (1 - alpha_m)
            return CONVERGED, iterations, factorizations
        fresh = not have
        for attempt in range(2):
            if not have:
                _matrix(qe, ve, lam1, beta_p, pk, mass, kpat, length_scale, ent, g0, gp, band)
                factorizations += 1
                lu_h[0] = h
                if not band_factor(band[0], piv, lower, band[2], singular_pivot):
                    lu_h[0] = 0.0
                    return SINGULAR, iterations, factorizations
                have = True
            _solve(band, lower, piv, rhs, xb, x)
            if fresh or attempt == 1 or _amax(x[:n]) <= contraction * last:
                break
            have = False                    # too slow: Newton at this iterate
        size = _amax(x[:n])
        if not np.isfinite(size):
            return NOT_CONVERGED, iterations, factorizations
        for i in range(n):
            q1[i] += x[i]
            v1[i] += gamma_p * x[i]
            a1[i] += beta_p * x[i]
        for k in range(m):
            lam1[k] += beta_p * x[n + k]
        iterations += 1
        last = size
    return NOT_CONVERGED, iterations, factorizations


class CompiledAttempt:
    """``(stepper, h, singular_pivot) -> (status, iterations, factorizations, (q1, v1, a1, abar1, lam1))`` by
    :func:`ga_attempt` for a :class:`.generalized_alpha.GeneralizedAlpha` on a model the compiled kernels
    support; K_t's coloured pattern from ``colouring`` (a tangent_matrix.ResidualJacobian); the band order of
    the unknowns is found once (reverse Cuthill-McKee); keeps the factor and work arrays between calls."""

    def __init__(self, pack, colouring, n: int, m: int):
        self.pack, self.n, self.m = pack, n, m
        self.pk = (pack.prim, pack.pval, pack.mcols, pack.mloc, pack.mvec)
        M = sp.coo_matrix(pack.M)
        self.mass = (M.row.astype(np.int64), M.col.astype(np.int64), M.data.astype(float))
        count = entry_count(pack)
        self.ent = (np.zeros(count), np.zeros(count, np.int64), np.zeros(count, np.int64))
        K = colouring
        order = np.argsort(K.colour[K.cols], kind="stable")
        members = np.argsort(K.colour, kind="stable")
        groups = np.arange(K.n_groups + 1)
        analytic = bool(np.isin(pack.prim[:, 0], (COINCIDENT, ANGLE, COORDINATE_DRIVER)).all())
        self.kpat = (K.rows[order], K.cols[order], np.searchsorted(K.colour[K.cols][order], groups),
                     members.astype(np.int64), np.searchsorted(K.colour[members], groups), analytic)
        self.band = self._band(M, K)
        k, w = n + m, self.band[2]
        self.lower, self.piv, self.lu_h = np.zeros((k, max(w, 1))), np.zeros(k, np.int64), np.zeros(1)
        self.shift, self.dshift, self.ddf = np.zeros(m), np.zeros(m), np.zeros(m)

    def _band(self, M, K):
        """(W, iperm, w): band storage (k, 3 w + 1) for the pattern of J in reverse Cuthill-McKee order."""
        n, m = self.n, self.m
        qe = np.zeros(n + 1)
        vals, rows, cols = self.ent
        count = constraint_entries(qe, qe, *self.pk, vals, rows, cols)
        keep = cols[:count] < n
        r, c = np.r_[M.row, K.rows, n + rows[:count][keep]], np.r_[M.col, K.cols, cols[:count][keep]]
        P = sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(n + m, n + m))
        P = (P + P.T + sp.identity(n + m)).tocsr()
        perm = reverse_cuthill_mckee(P, symmetric_mode=True)
        iperm = np.empty(n + m, np.int64)
        iperm[perm] = np.arange(n + m)
        P = P.tocoo()
        w = int(np.abs(iperm[P.row] - iperm[P.col]).max()) if P.nnz else 0
        return np.zeros((n + m, 3 * w + 1)), iperm, w

    def __call__(self, stepper, h, singular_pivot):
        p, c, n, m = stepper.par, stepper.newton, self.n, self.m
        self.pack.drive(stepper.t + h, self.shift, self.dshift, self.ddf)
        q, v = stepper.y[:n], stepper.y[n:]
        out = (np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(m))
        ls = float(stepper.model.length_scale)
        status, iterations, factorizations = ga_attempt(
            (q, v, stepper.a, stepper.abar, stepper.lam), h, (p.alpha_m, p.alpha_f, p.beta, p.gamma),
            (c.increment, float(c.max_iterations), c.contraction, ls, singular_pivot),
            (self.pk, self.pack.poff, self.mass, self.pack.f, self.shift), self.kpat, self.band, self.lower,
            self.piv, self.lu_h, self.ent, out)
        return status, iterations, factorizations, out
