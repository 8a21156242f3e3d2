"""The rank-revealing Newton iterations of one generalized-alpha step in one compiled call (issue 12): the readable
reference, which defines the numbers, is :func:`.generalized_alpha_rank.rank_attempt` (Arnold & Bruels 2007,
Multibody Syst. Dyn. 18:185-202, eq. 15 with the constraint rows replaced by the kept right singular vectors V_k^T
of A = U S V^T, Golub & Van Loan, Matrix Computations, 4th ed., Sect. 5.5.4: the minimum-norm multipliers
lambda = U_k mu); tests/test_generalized_alpha_crossing.py checks that both take the same steps.

For the models the compiled kernels of :mod:`multibody.fast` support (builder primitives, constant mass, constant
forces; the same as :mod:`.generalized_alpha_kernels`): Phi and the entries of A from
:func:`multibody.fast.step_kernels.constraint_phi` and :func:`multibody.fast.entries.constraint_entries`, A dense
(m, n), its SVD by LAPACK gesdd (numba's np.linalg.svd), M + K_t / beta' from the Newton loop's own matrix
assembly (:func:`.generalized_alpha_kernels._matrix`, K_t analytic or by coloured differences) into a dense
layout, and the bordered system [[M + K_t / beta', V_k], [V_k^T, 0]] solved by Gaussian elimination with partial
pivoting (:func:`.generalized_alpha_band.band_factor` with the half bandwidth of the whole matrix: the dense LU of
Golub & Van Loan Sect. 3.4, as LAPACK's gesv, singular only at an exactly zero pivot). No loop over joints in Python:
one call per step attempt. Cost per iteration O(m n^2) for the SVD and O((n + k)^3) for the LU: ~30 us for the
modified four-bars, against ~0.5 ms for the NumPy reference.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..fast.entries import constraint_entries
from ..fast.step_kernels import constraint_phi
from .generalized_alpha_band import band_factor, band_solve
from .generalized_alpha_kernels import CONVERGED, NOT_CONVERGED, _amax, _magnitude, _matrix, _predict
from .generalized_alpha_rank import NOISE_SAFETY, PIN, ROUNDOFF_UNITS


@njit(cache=True)
def _dense_A(vals, rows, cols, count, n, A):
    """A (m, n) from its entries (the column n of the time is left out)."""
    A[:, :] = 0.0
    for e in range(count):
        if cols[e] < n:
            A[rows[e], cols[e]] += vals[e]


@njit(cache=True)
def _rows(A, pin, floor, generic):
    """(U_k, s_k, V_k, V_p) of generalized_alpha_rank.pinned_rows, V_p cut to the generic rank's pinned directions
    (the reference's Vp[:, : generic - k])."""
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    k = 0
    if s.shape[0] and s[0] > 0:
        cut = max(pin * s[0], floor)
        for i in range(s.shape[0]):
            k += s[i] > cut
    p = max(generic - k, 0)
    return (np.ascontiguousarray(U[:, :k]), s[:k].copy(), np.ascontiguousarray(Vt[:k].T),
            np.ascontiguousarray(Vt[k:k + p].T))


@njit(cache=True)
def _bordered_solve(H, Vk, rhs):
    """rhs <- [[H, V_k], [V_k^T, 0]]^-1 rhs by LU with partial pivoting (module doc); False at a zero pivot."""
    n, k = H.shape[0], Vk.shape[1]
    size = n + k
    w = size - 1
    W = np.zeros((size, 3 * w + 1))
    lower, piv = np.zeros((size, max(w, 1))), np.zeros(size, np.int64)
    for i in range(n):
        for j in range(n):
            W[i, j - i + w] = H[i, j]
        for j in range(k):
            W[i, n + j - i + w] = Vk[i, j]
            W[n + j, i - n - j + w] = Vk[i, j]
    if not band_factor(W, piv, lower, w, 0.0):
        return False
    band_solve(W, piv, lower, w, rhs)
    return True


@njit(cache=True)
def _stiffness(qe, ve, lam, beta_p, pk, mass, kpat, scale, ent, dense, H):
    """H = M + K_t / beta' at qe (generalized_alpha_kernels._matrix into the dense layout of ``dense``)."""
    W, iperm, w = dense
    n = H.shape[0]
    g0, gp = np.empty(n), np.empty(n)
    _matrix(qe, ve, lam, beta_p, pk, mass, kpat, scale, ent, g0, gp, dense)
    for i in range(n):
        for j in range(n):
            H[i, j] = W[i, j - i + w]


@njit(cache=True)
def _balance(a1, lam1, force, M_a, f, rows, ent, count, A, phi, tol, length_scale):
    """(r, c, reaction, balanced) at an iterate: lam1 made minimum-norm in place, the pinned directions' reaction
    carried from ``force``, the residual r = M a + A^T lambda + carried - f and the kept rows c = U_k^T Phi (the
    reference's balance test, with the residual's round-off floor)."""
    Uk, sk, Vk, Vp = rows
    vals, erows, ecols = ent
    n = a1.shape[0]
    lam1[:] = Uk @ (Uk.T @ lam1) if sk.shape[0] else np.zeros(lam1.shape[0])
    reaction = A.T @ lam1
    if Vp.shape[1]:
        reaction += Vp @ (Vp.T @ force)
    r = M_a + reaction - f
    forces = max(max(_amax(M_a), _amax(reaction)), max(_amax(f), np.finfo(np.float64).tiny))
    c = Uk.T @ phi if sk.shape[0] else np.zeros(0)
    floor = ROUNDOFF_UNITS * np.finfo(np.float64).eps * _magnitude(vals, erows, ecols, count, lam1, n, np.empty(n))
    balanced = _amax(r) <= max(tol * forces, floor) and _amax(c) <= tol * length_scale
    return r, c, reaction, balanced


@njit(cache=True)
def rank_step(state, h, par, control, model, kpat, dense, kept_h, H, ent, force, generic, out, reaction):
    """Newton iterations of one step with the rank-revealing solve (reference generalized_alpha_rank.rank_attempt).

    state (q, v, a, abar, lam); par (alpha_m, alpha_f, beta, gamma); control (increment tolerance, max iterations,
    contraction, length scale, the noise floor's step floor_h: 0 for h); model (packed primitives, offsets, mass triplets, force, shift f(t1) of driven rows);
    dense (W, iperm, w): the dense layout of the iteration matrix; H (n, n) = M + K_t / beta' kept for the step
    kept_h[0] (0: none); force (n,): the reaction at the step's start; out (q1, v1, a1, abar1, lam1); reaction (n,)
    gets the step's. Returns (status, iterations, factorizations, kept directions)."""
    q, v, a, abar, lam = state
    alpha_m, alpha_f, beta, gamma = par
    tol, max_it, contraction, length_scale, floor_h = control
    pk, poff, mass, f, shift = model
    mrows, mcol, mval = mass
    q1, v1, a1, abar1, lam1 = out
    n, m = q.shape[0], lam.shape[0]
    beta_p, gamma_p = (1 - alpha_m) / (h * h * beta * (1 - alpha_f)), gamma / (h * beta)
    _predict(state, h, par, out)
    M = np.zeros((n, n))
    for e in range(mval.shape[0]):
        M[mrows[e], mcol[e]] += mval[e]
    M_max, balance = _amax(np.abs(M).ravel()), tol * max(max(_amax(f), _amax(M @ a1)), np.finfo(np.float64).tiny)
    qe, ve, A, phi = np.zeros(n + 1), np.zeros(n + 1), np.zeros((m, n)), np.empty(m)
    prim, pval, mcols, mloc, mvec = pk
    vals, erows, ecols = ent
    last, size, iterations, factorizations, kept = np.inf, np.inf, 0, 0, 0
    for _ in range(int(max_it) + 1):
        qe[:n], ve[:n] = q1, v1
        count = constraint_entries(qe, ve, prim, pval, mcols, mloc, mvec, vals, erows, ecols)
        _dense_A(vals, erows, ecols, count, n, A)
        constraint_phi(qe, ve, prim, pval, poff, mcols, mloc, mvec, shift, phi)
        d = np.finfo(np.float64).eps * max(_amax(q1), length_scale)
        beta_f = beta_p * (h / min(floor_h, h)) ** 2 if floor_h > 0 else beta_p     # the noise floor's beta'
        rows = _rows(A, PIN, NOISE_SAFETY * (beta_f * M_max * d * d / balance) ** (1 / 3), generic)
        kept = rows[1].shape[0]
        r, c, rc, balanced = _balance(a1, lam1, force, M @ a1, f, rows, ent, count, A, phi, tol, length_scale)
        reaction[:] = rc
        if balanced and size <= tol * max(length_scale, _amax(q1)):
            for i in range(n):
                abar1[i] = (alpha_f * a[i] - alpha_m * abar[i] + (1 - alpha_f) * a1[i]) / (1 - alpha_m)
            return CONVERGED, iterations, factorizations, kept
        x, ok = _newton_increment(qe, ve, lam1, beta_p, r, c, rows, last, contraction, pk, mass, kpat, length_scale,
                                  ent, dense, kept_h, h, H)
        factorizations += 1
        size = _amax(x[:n])
        if not ok or not np.isfinite(size):
            return NOT_CONVERGED, iterations, factorizations, kept
        last = size
        for i in range(n):
            q1[i] += x[i]
            v1[i] += gamma_p * x[i]
            a1[i] += beta_p * x[i]
        if kept:
            lam1[:] += beta_p * (rows[0] @ (x[n:] / rows[1]))
        iterations += 1
    return NOT_CONVERGED, iterations, factorizations, kept


@njit(cache=True)
def _newton_increment(qe, ve, lam1, beta_p, r, c, rows, last, contraction, pk, mass, kpat, scale, ent, dense,
                      kept_h, h, H):
    """(x, ok): the increment (dq, d nu) of the reference's iteration, with H kept while the increments contract
    by ``contraction`` and rebuilt at the iterate (Newton) otherwise."""
    Uk, sk, Vk, Vp = rows
    n = r.shape[0]
    rhs = np.concatenate((-r / beta_p, -c / sk))
    fresh = kept_h[0] != h
    if fresh:
        _stiffness(qe, ve, lam1, beta_p, pk, mass, kpat, scale, ent, dense, H)
    x = rhs.copy()
    ok = _bordered_solve(H, Vk, x)
    if not fresh and ok and _amax(x[:n]) > contraction * last:      # too slow: Newton here
        _stiffness(qe, ve, lam1, beta_p, pk, mass, kpat, scale, ent, dense, H)
        x = rhs.copy()
        ok = _bordered_solve(H, Vk, x)
    kept_h[0] = h if ok else 0.0
    return x, ok


class CompiledRankAttempt:
    """``(stepper, h, force, generic, floor_h) -> (y, a, abar, lambda, kept rows, reaction) or None`` by
    :func:`rank_step`,
    with the packing of a :class:`.generalized_alpha_kernels.CompiledAttempt` (the same model arrays); keeps
    M + K_t / beta' between calls (the reference's stepper._rank_matrix). A LinAlgError of numba's SVD (gesdd not
    converging) is raised to the caller, which takes the step with the NumPy reference instead."""

    def __init__(self, attempt):
        self.base, n, m = attempt, attempt.n, attempt.m
        size, w = n + m, n + m - 1
        self.dense = (np.zeros((size, 2 * w + 1)), np.arange(size, dtype=np.int64), w)
        self.H, self.kept_h = np.zeros((n, n)), np.zeros(1)

    def __call__(self, stepper, h, force, generic, floor_h=0.0):
        b, p, c, n, m = self.base, stepper.par, stepper.newton, self.base.n, self.base.m
        b.pack.drive(stepper.t + h, b.shift, b.dshift, b.ddf)
        q, v = stepper.y[:n], stepper.y[n:]
        out, reaction = (np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(m)), np.empty(n)
        status, iterations, factorizations, kept = rank_step(
            (q, v, stepper.a, stepper.abar, stepper.lam), h, (p.alpha_m, p.alpha_f, p.beta, p.gamma),
            (c.increment, float(c.max_iterations), c.contraction, float(stepper.model.length_scale), float(floor_h)),
            (b.pk, b.pack.poff, b.mass, b.pack.f, b.shift), b.kpat, self.dense, self.kept_h, self.H, b.ent,
            np.ascontiguousarray(force, dtype=float), int(generic), out, reaction)
        stepper.iterations += iterations
        stepper.factorizations += factorizations
        if status != CONVERGED:
            return None
        q1, v1, a1, abar1, lam1 = out
        return np.concatenate([q1, v1]), a1, abar1, lam1, kept, reaction
