"""The generalized-alpha Newton iterations with a rank-revealing saddle-point solve (issue 12): redundant constraint
rows, and the steps next to a singular configuration, where A = Phi_q loses rank.

Why. The iteration matrix of :mod:`.generalized_alpha` (Arnold & Bruels 2007, Multibody Syst. Dyn. 18:185-202,
eq. 15), [[M + K_t / beta', A^T], [A, 0]], is singular whenever A is: for every vector w with A^T w = 0, (0, w) is in
its null space. With redundant rows (the modified four-bars' hinges, paper 000 Sect. 3.3) that is so at every
configuration; the motion is unique, the multipliers are not. At a singular configuration q* (paper 000 Sect. 2.5)
the r-th singular value sigma_r of A falls to zero linearly in |t - t*|, and the multipliers of the exact motion grow
like g_u / sigma_r along the vanishing left singular vector w while the force A^T lambda stays bounded (its limit g_u
u is not in the range of A(q*)^T): on the N-four-bar with 10 cells |lambda| = 7e5 at sigma_r / sigma_1 = 1.2e-5.

What. The singular value decomposition A = U S V^T at every iterate; the directions with s_i > PIN s_1 are kept
(k of them), the others are pinned: their rows U_p^T Phi = 0 are not imposed and their multipliers are zero, so the
multipliers are the minimum-norm ones, lambda = U_k mu (Golub & Van Loan, Matrix Computations, 4th ed., Sect.
5.5.4, the truncated SVD; the same directions linalg.rank.pinned_solve leaves to the integrator). With the scaled
unknowns d nu = S_k d mu / beta' the Newton system is

    [ M + (gamma' C_t + K_t) / beta'   V_k ] [ dq   ]   [ -r / beta'           ]
    [ V_k^T                            0   ] [ d nu ] = [ -S_k^-1 U_k^T Phi    ]

regular whenever M + K_t / beta' is positive definite on the null space of V_k^T, whatever the rank of A: the
constraint rows are orthonormal. For redundant rows (s_i ~ eps s_1) pinning is exact: U_p^T Phi vanishes with the
other rows (the rows are dependent). At a crossing the pinned row w^T Phi is quadratic in the distance to q* (the
branches meet there), and the step's position in that direction is the scheme's own prediction, accurate to the
local error. The reaction along the pinned direction, g_u u, is bounded although its multiplier is not; it is
carried from the step's start (the component of that reaction along the pinned right singular vectors), so the
motion keeps its force (dropping it changed the accelerations by O(g) on the pinned steps). It acts along u, which
is orthogonal to the null space of A and so to the branch's tangent. Which directions are pinned: those below PIN
s_1 (formulations.lagrange's pin), and those below the noise floor (:func:`noise_floor`), where a kept direction's
round-off, through beta' ~ 1 / h^2, leaves a residual above the balance test (~1e-4 s_1 at h = 1e-4 on the
four-bar chains, ~5e-4 s_1 at h = 1e-5). Inside a window of pinned steps the floor is that of the window's shortest
step (``floor_h``; generalized_alpha_crossing): a pinned row's residual w^T Phi, of the order of the local error, is
imposed at once when its direction is kept again, which moves q by w^T Phi / s and the accelerations by beta' w^T Phi
/ s; a floor that fell with a longer sub-step released 29 of the N-four-bar's 40 weak directions (40 cells) at once
and changed the accelerations by 17 times their size (h = 1.25e-5 to 2.5e-5, t = 0.7224). Directions are released
as their singular values grow past the floor, one by one, and the step that releases them restarts the scheme at its
positions with the state of :func:`consistent_state` (generalized_alpha_crossing, "Releasing pinned directions"): the
drift of a pinned position is removed as a position correction, not turned into accelerations by beta'.

Cost: one SVD of the dense A and one dense LU per iteration, M + K_t / beta' kept while the increments contract:
for the small models with redundant rows, every step, and for the few steps next to a crossing where the band or
sparse LU of the regular path fails. This module is the readable reference; the models the compiled kernels support
take the same iterations in one compiled call (:mod:`.generalized_alpha_rank_kernels`, the stepper alone ~0.14
against ~0.65 ms per step of the modified double four-bar at h = 1e-3).
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ..linalg.rank import svd

#: singular directions of A below PIN times the largest are pinned (module doc; formulations.lagrange.PIN)
PIN = 1e-4
#: the residual's own round-off: |r| may be this many units of eps times the sum of the magnitudes of the terms of
#: A^T lambda (near a crossing |lambda| ~ 1 / sigma_r, and the sum of large terms of both signs cannot be formed more
#: accurately; measured 3 eps |A|^T |lambda| on the N-four-bar at sigma_r / sigma_1 = 1.2e-5)
ROUNDOFF_UNITS = 64.0
EPS = np.finfo(float).eps
#: the noise floor of a kept direction (noise_floor) with this safety factor
NOISE_SAFETY = 2.0


def roundoff_floor(A, lam) -> float:
    """ROUNDOFF_UNITS eps max |A|^T |lambda|: the residual r = M a + A^T lambda - f cannot be smaller (dense or
    sparse A)."""
    if not lam.size:
        return 0.0
    mag = abs(A).T @ np.abs(lam)
    return ROUNDOFF_UNITS * EPS * float(np.max(mag)) if mag.size else 0.0


def pinned_rows(A: np.ndarray, pin: float = PIN, floor: float = 0.0) -> tuple:
    """(U_k, s_k, V_k, V_p): the singular triplets of A with s_i > max(pin s_1, floor) (A = U S V^T, LAPACK gesdd)
    and the right singular vectors of the others (pinned; at most min(m, n) of them); gesvd where gesdd does not
    converge (linalg.rank.svd)."""
    U, s, Vt = svd(A, full_matrices=False)
    k = int(np.count_nonzero(s > max(pin * s[0], floor))) if s.size and s[0] > 0 else 0
    return U[:, :k], s[:k], Vt[:k].T, Vt[k:].T


def rank_attempt(stepper, h: float, force: np.ndarray, generic: int, pin: float = PIN, floor_h: float = 0.0):
    """Newton iterations of one step of ``stepper`` (a generalized_alpha.GeneralizedAlpha) with the rank-revealing
    solve (module doc); (y, a, abar, lambda, kept rows, reaction force) or None when they do not converge.
    ``force``: the reaction force at the step's start (n,), whose components along the pinned directions of the
    ``generic`` rank are carried (module doc; not those of redundant rows, s_i ~ eps s_1, whose right singular
    vectors lie in the null space of A, where no reaction acts). The predictor, the convergence test and the update are those of
    ``GeneralizedAlpha._attempt``, and so is the rule of the kept matrix: M + K_t / beta' is kept over iterations and
    steps while the increments contract by NewtonControl.contraction, else rebuilt at the iterate (Newton); the rows
    V_k and the SVD are those of the iterate."""
    p, n, model, newton = stepper.par, stepper.n, stepper.model, stepper.newton
    q, v = stepper.y[:n], stepper.y[n:]
    beta_p = (1 - p.alpha_m) / (h * h * p.beta * (1 - p.alpha_f))
    beta_f = beta_p * (h / min(floor_h or h, h)) ** 2        # the noise floor's beta' (floor_h, module doc)
    gamma_p = p.gamma / (h * p.beta)
    t1 = stepper.t + h
    a1 = stepper.a.copy()
    abar1 = stepper._algorithmic(a1)
    q1 = q + h * v + h * h * ((0.5 - p.beta) * stepper.abar + p.beta * abar1)
    v1 = v + h * ((1 - p.gamma) * stepper.abar + p.gamma * abar1)
    lam1, size, last, kept = stepper.lam.copy(), np.inf, np.inf, 0
    f0 = stepper.ws.forces(t1, q1, v1)
    scale = max(_amax(f0), _amax(np.asarray(model.mass(q1), float) @ a1), np.finfo(float).tiny)   # the forces' size
    kept_matrix = getattr(stepper, "_rank_matrix", None)        # M + K_t / beta' of the last iterate, if h is the same
    H = kept_matrix[1] if kept_matrix is not None and kept_matrix[0] == h else None
    for _ in range(newton.max_iterations + 1):
        Phi, A = _dense_constraints(stepper, t1, q1, v1)
        M = np.asarray(model.mass(q1), float)
        Uk, sk, Vk, Vp = pinned_rows(A, pin, noise_floor(beta_f, M, q1, newton.increment * scale, model.length_scale))
        Vp = Vp[:, : max(generic - len(sk), 0)]
        kept, lam1 = len(sk), Uk @ (Uk.T @ lam1)         # the minimum-norm multipliers
        carried = Vp @ (Vp.T @ force)                    # the pinned directions' reaction, carried
        Ma, reaction, f = M @ a1, A.T @ lam1 + carried, stepper.ws.forces(t1, q1, v1)
        r = Ma + reaction - f
        forces = max(_amax(Ma), _amax(reaction), _amax(f), np.finfo(float).tiny)
        c = Uk.T @ Phi
        balanced = (_amax(r) <= max(newton.increment * forces, roundoff_floor(A, lam1))
                    and _amax(c) <= newton.increment * model.length_scale)
        if balanced and size <= newton.increment * max(model.length_scale, _amax(q1)):
            return np.concatenate([q1, v1]), a1, stepper._algorithmic(a1), lam1, kept, reaction
        fresh = H is None
        if fresh:
            H = M + _iteration_stiffness(stepper, t1, q1, v1, a1, lam1, beta_p, gamma_p)
        x = _solve(H, Vk, np.concatenate([-r / beta_p, -c / sk]))
        if not fresh and x is not None and _amax(x[:n]) > newton.contraction * last:   # too slow: Newton here
            H = M + _iteration_stiffness(stepper, t1, q1, v1, a1, lam1, beta_p, gamma_p)
            x = _solve(H, Vk, np.concatenate([-r / beta_p, -c / sk]))
        stepper.factorizations += 1
        if x is None or not np.isfinite(size := _amax(x[:n])):
            return None
        stepper._rank_matrix, last = (h, H), size
        dq = x[:n]
        q1, v1, a1 = q1 + dq, v1 + gamma_p * dq, a1 + beta_p * dq
        lam1 = lam1 + beta_p * (Uk @ (x[n:] / sk))
        stepper.iterations += 1
    return None


def consistent_state(stepper, t: float, q: np.ndarray, v: np.ndarray, kept: int, force: np.ndarray, generic: int):
    """(v, a, lambda, reaction) consistent with the ``kept`` largest singular directions of A = U S V^T at (t, q): v
    projected M-orthogonally onto their velocity constraints S_k V_k^T v + U_k^T Phi_t = 0 (the correction of least
    kinetic energy, Hairer, Lubich & Wanner, Geometric Numerical Integration, 2nd ed., Sect. VII.1), a and the
    minimum-norm lambda = U_k S_k^-1 nu from the index-1 equations of those rows (paper 000 eq. 3 with A a = gamma),
    [[M, V_k], [V_k^T, 0]] [a, nu] = [f - carried, S_k^-1 U_k^T gamma], the generic rank's other (pinned) directions
    with the reaction ``force`` carried (its component along V_p, as rank_attempt); the reaction is V_k nu + carried.
    The restart of a step that releases pinned directions (generalized_alpha_crossing)."""
    n = stepper.n
    _, A = _dense_constraints(stepper, t, q, v)
    U, s, Vt = svd(A, full_matrices=False)
    Uk, sk, Vk, Vp = U[:, :kept], s[:kept], Vt[:kept].T, Vt[kept:max(generic, kept)].T
    M = np.asarray(stepper.model.mass(q), float)
    Phi_t = np.asarray(stepper.ws.constraints(t, q, v)[2], float)
    MiV = np.linalg.solve(M, Vk)
    v = v - MiV @ np.linalg.solve(Vk.T @ MiV, Vk.T @ v + (Uk.T @ Phi_t) / sk)
    gamma = np.asarray(stepper.ws.constraints(t, q, v)[3], float)
    carried = Vp @ (Vp.T @ force)
    x = sla.solve(np.block([[M, Vk], [Vk.T, np.zeros((kept, kept))]]),
                  np.concatenate([stepper.ws.forces(t, q, v) - carried, (Uk.T @ gamma) / sk]))
    a, lam = x[:n], Uk @ (x[n:] / sk)
    return v, a, lam, Vk @ x[n:] + carried


def noise_floor(beta_p: float, M: np.ndarray, q: np.ndarray, balance: float, length: float) -> float:
    """NOISE_SAFETY (beta' |M| (eps max(|q|, L))^2 / balance)^(1/3): the smallest singular value of A whose direction
    can be kept (module doc). Why: Phi is evaluated with round-off d ~ eps |q|, so a kept direction of singular value
    s moves q by d / s at every iteration, the accelerations by beta' d / s, the multipliers by beta' |M| d / s^2, and
    their product through A' leaves a residual ~ beta' |M| d^2 / s^3 that no iteration removes (measured on the
    N-four-bar with 10 cells, h = 1e-4, sigma_r / sigma_1 = 3.2e-5: 5e-8 against the formula's 4e-8, where the
    balance test asks 2.3e-9); it must stay below the balance ``balance``. beta' ~ 1 / h^2: a shorter step pins a
    wider window (h = 1e-4 on the four-bar chains: ~1e-4 s_1; 1e-5: ~5e-4 s_1)."""
    d = EPS * max(_amax(q), length)
    return NOISE_SAFETY * (beta_p * float(np.abs(M).max()) * d * d / max(balance, np.finfo(float).tiny)) ** (1 / 3)


def _solve(H: np.ndarray, Vk: np.ndarray, rhs: np.ndarray):
    """The solution of [[H, V_k], [V_k^T, 0]] x = rhs (LAPACK LU), or None if it is singular."""
    k = Vk.shape[1]
    try:
        return sla.solve(np.block([[H, Vk], [Vk.T, np.zeros((k, k))]]), rhs, check_finite=True)
    except (np.linalg.LinAlgError, ValueError):
        return None


def _dense_constraints(stepper, t, q, v):
    """(Phi, A) at (t, q) as dense arrays."""
    Phi, A = stepper.ws.constraints(t, q, v)[:2]
    return np.asarray(Phi, float), np.asarray(A.toarray() if hasattr(A, "toarray") else A, float)


def _iteration_stiffness(stepper, t, q, v, a, lam, beta_p, gamma_p) -> np.ndarray:
    """(K_t + gamma' C_t) / beta' as a dense array (generalized_alpha._factor)."""
    S = stepper.tangent.stiffness(t, q, v, a, lam) / beta_p
    C = stepper.tangent.damping(t, q, v)
    if C is not None:
        S = S + (gamma_p / beta_p) * C
    return np.asarray(S.toarray() if hasattr(S, "toarray") else S, float)


def generic_rank(A: np.ndarray) -> int:
    """The rank of A by the rank decision of linalg.rank (s_i > sqrt(eps) s_1)."""
    from ..linalg.rank import RankTolerance
    s = np.linalg.svd(np.asarray(A.toarray() if hasattr(A, "toarray") else A, float), compute_uv=False)
    return int(np.count_nonzero(s > RankTolerance().rtol * s[0])) if s.size and s[0] > 0 else 0


def _amax(x) -> float:
    return float(np.abs(x).max()) if x.size else 0.0
