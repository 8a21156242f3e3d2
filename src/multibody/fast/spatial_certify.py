"""The reaction-uniqueness flags of paper 003 (eqs 7, 21-27) at a stack of stored states of a spatial director model,
certified from the left null basis that the minimum-norm multipliers are made with (issue 16: the pivoted QR per
stored state, 0.43 ms of the six-body linkage's 0.7 ms per stored state, is not needed where this certifies).

Per state C ((m, n), A of the state), N ((p, m), orthonormal rows up to round-off, |C^T N^T| small) and the
certificate of fast.spatial_record.certificate (|C^T N^T|_F^2, b, |X|_F^2, the residual's round-off bound, C's
squared norms, the pairs' sums of N's rows times C):

1. sigma_r(C) >= sigma_min(X), r = m - p, X = C[active] (r of C's rows): by Courant-Fischer, sigma_r(C) is the
   largest over r-dimensional subspaces V of min over unit u in V of |C^T u|, and on the subspace of vectors zero
   outside the active rows |C^T u| = |X^T u|. Then sigma_min(X)^2 >= sigma^2 = 1 / (b (1 + gamma_3r))
   - (2 gamma_(r+1) + gamma_n) |X|_F^2 with b >= |L^-1|_inf |L^-1|_1 >= |L^-1|_2^2 (computed, hence the
   1 + gamma_3r): the computed Gram matrix is X X^T + F, |F|_2 <= gamma_n |X|_F^2, its computed Cholesky factor L
   has L L^T = X X^T + F + E with |E|_2 <= gamma_(r+1) |L|_F^2 <= 2 gamma_(r+1) |X|_F^2 (Higham, Accuracy and
   Stability of Numerical Algorithms, 2nd ed., Thm 10.3), and lambda_min moves by at most |E + F|_2 (Weyl). Where
   sigma^2 is not positive nothing is certified.
2. The exact left singular space U_p of the p smallest singular values: for any orthonormal W (p, m),
   |C^T W^T|_F^2 = sum_i sigma_i^2 |u_i^T W^T|^2 >= sigma_r^2 |sin Theta|_F^2, so sin Theta(N, U_p) <= rho / sigma with
   rho = |C^T N^T|_F plus its round-off (fast.spatial_record.certificate) and N's deviation from
   orthonormality; then min over orthogonal G of |N - U_p^T G|_2 <= 2 sin(Theta/2) <= sqrt 2 sin Theta = delta.
3. Every tested quantity is a row-wise 2-norm over the basis of a linear image of N, unchanged by G: the pair's
   max_i |N_i| (multipliers), max_j |(C_X^T N_X^T)_j| (eq. 27), and each reaction component's |c(N)| (reactions
   linear in lambda, analysis.spatial_reactions). Each moves by at most (its map's norm) * delta between N and
   U_p: |C_X|_F for eq. 27, and for a reaction entry of joint j on body b
   K = |C[R_j]|_F (1 + |D_b|_F + |D_b'|_F + |x_b| + |x_b'|) max(1, |D_parent|_F |frame|_F)
   (b' the partner: its force and moment about the origin enter the ground's; the frame components E^T F, E^T M
   with E = D_parent frame), plus the round-off of its evaluation (gamma_(m + 16) K).
4. A test is decided when its interval lies on one side of the reference's threshold (qr |C|_2, |C|_2 bracketed as
   in fast.spatial_flags; for p > 1 the largest entry of a row lies within 1/sqrt(p) of its 2-norm). The rank r is
   decided when every pivot of an exact pivoted QR, |R_kk| >= sigma_k / sqrt(n - k + 1) >= sigma / sqrt(n) for
   k <= r (the bound of analysis.solvability._unit_block), is above rank |C|_2, and sigma_(r+1) <= rho (step 2) is
   below it by a factor n: C's rank at paper 003's threshold is r. (For a C of exact rank r the QR's last pivots
   vanish; the factor n keeps a C whose sigma_(r+1) nears the threshold, where a pivoted QR's |R_(r+1, r+1)| may
   exceed sigma_(r+1), for the reference.)

Where all tests of a state are decided, its flags are those of the exact C's left singular space U_p at paper 003's
thresholds; the reference's pivoted QR computes that space (exactly so where C has exact rank r, as the six-body
linkage's loop closure, whose redundant row is structural: sigma_m / sigma_1 ~ 1e-17 along a run), so the flags are
the reference's unless its own round-off moved a tested quantity across the interval. Else the state takes the
reference (SpatialReactionFlags.record). tests/test_spatial_record.py compares both at every stored state.
"""
from __future__ import annotations

import numpy as np

EPS = np.finfo(float).eps
#: relative distance from a threshold below which the vectorised B_X is recomputed in the reference's order (its
#: round-off is ~n eps relative, 1e-14; the bracket of |C|_2 gets the same safety factor for the SVD's round-off)
AMBIGUOUS = 1e-9


def bracket(C: np.ndarray) -> tuple:
    """(lo, hi) (k,) for a stack C (k, m, n): lo <= |C_s|_2 <= hi (:func:`bracket_of` its squared norms)."""
    C2 = C * C
    rows = C2.sum(axis=2)
    return bracket_of(rows.sum(axis=1), rows.max(axis=1, initial=0.0), C2.sum(axis=1).max(axis=1, initial=0.0),
                      C.shape[1:])


def bracket_of(fro2, rowmax, colmax, shape) -> tuple:
    """(lo, hi) from |C|_F^2 and the largest squared row and column norms of C (shape (m, n)): lo from
    |C|_F / sqrt(min(m, n)) and the largest row and column norm, hi = |C|_F (Golub & Van Loan, Sect. 2.3.2), each
    widened by AMBIGUOUS."""
    fro = np.sqrt(fro2)
    lo = np.maximum(fro / np.sqrt(max(min(shape), 1)), np.sqrt(np.maximum(rowmax, colmax)))
    return lo * (1 - AMBIGUOUS), fro * (1 + AMBIGUOUS)


def gamma(j: int) -> float:
    """gamma_j = j eps / (1 - j eps) (Higham, Sect. 3.1)."""
    return j * EPS / (1 - j * EPS)


def null_bounds(C, N, info) -> tuple:
    """(delta (k,), rho (k,), sigma (k,), fp (k,)) of step 1-2 (delta = inf where sigma is not certified); fp the
    relative round-off of a product with N."""
    k, m, n = C.shape
    p = N.shape[1]
    res2, b, xfro2, slack = info[:, :4].T
    r = m - p
    with np.errstate(divide="ignore", invalid="ignore"):
        sigma2 = 1.0 / (b * (1 + gamma(3 * r))) - (2 * gamma(r + 1) + gamma(n)) * xfro2
    ok = np.isfinite(sigma2) & (sigma2 > 0)
    sigma = np.sqrt(np.where(ok, sigma2, 0.0))
    gram = N @ np.swapaxes(N, 1, 2) - np.eye(p)
    orth = np.sqrt(np.einsum("kij,kij->k", gram, gram)) + gamma(m) * p
    fp = gamma(m + 16) * np.sqrt(p) * (1 + orth)
    rho = (np.sqrt(res2) + slack) * (1 + orth)
    with np.errstate(divide="ignore", invalid="ignore"):
        delta = np.where(ok, np.sqrt(2.0) * rho / np.where(ok, sigma, 1.0) + 2 * orth, np.inf)
    return delta, rho, sigma, fp


def decided(value, err, thr_lo, thr_hi, p) -> tuple:
    """(unique, decided) of a row-norm ``value`` +- ``err`` against the threshold in [thr_lo, thr_hi]."""
    unique = value + err <= thr_lo
    return unique, unique | ((value - err) / np.sqrt(max(p, 1)) > thr_hi)


def entry_norms(rmap, Q) -> np.ndarray:
    """(k, E) the factor of |C[R_j]|_F in K (step 3) of every reaction entry."""
    k, n = Q.shape
    qe = np.concatenate([Q, np.zeros((k, 1))], axis=1)
    x = qe[:, rmap.cols]
    ground, pground = rmap.cols[:, 3] == n, rmap.pcols[:, 3] == n
    D = np.where(ground, np.sqrt(3.0), np.linalg.norm(x[..., 3:], axis=2))
    pos = np.linalg.norm(x[..., :3], axis=2)
    Dp = np.where(pground, np.sqrt(3.0), np.linalg.norm(qe[:, rmap.pcols][..., 3:], axis=2))
    frame = np.linalg.norm(rmap.frame, axis=(1, 2))
    part = rmap.partner
    return (1 + D + D[:, part] + pos + pos[:, part]) * np.maximum(1.0, Dp * frame)


def reaction_norms(flags, Q, C, N, S) -> np.ndarray:
    """(k, 12 E): the 2-norm over the basis rows of N of every reaction component of lambda = N_l (null_variation
    of analysis.solvability for each state, with the rows' norm in place of the largest entry); S (k, p, pairs, n) the
    pairs' sums of fast.spatial_record.certificate (a joint's generalized force -C[R_j]^T N[R_j] is its pair's:
    SpatialReactionFlags.joint_pair)."""
    rmap = flags.rmap
    k, p, m = N.shape
    n = Q.shape[1]
    gen = np.zeros((k, p, n + 1, rmap.rows_of.shape[1]))
    if flags.joint_pair is not None:
        gen[:, :, :n] = -np.swapaxes(S[:, :, flags.joint_pair], 2, 3)
    else:
        gen[:, :, :n] = -(np.swapaxes(C, 1, 2)[:, None] @ (N[..., None] * rmap.rows_of))
    Qe = gen[:, :, rmap.cols, rmap.joint[:, None]]                   # (k, p, E, 12)
    out = rmap.finish(np.repeat(Q, p, axis=0), Qe.reshape(k * p, *Qe.shape[2:]))
    return np.linalg.norm(out.reshape(k, p, -1), axis=1)


def certify(flags, Q, C, N, cert) -> list:
    """[flags dict or None] per state (None: not decided, take the reference); updates flags' summary entries.
    ``cert`` = (info, rowsq, S) of fast.spatial_record.certificate."""
    k, m, n = C.shape
    p, tol = N.shape[1], flags.tol
    info, rowsq, S = cert
    lo, hi = bracket_of(info[:, 4], rowsq.max(axis=1, initial=0.0), info[:, 5], (m, n))
    delta, rho, sigma, fp = null_bounds(C, N, info)
    with np.errstate(divide="ignore", invalid="ignore"):
        rank_ok = (sigma / np.sqrt(n) > tol.rank * hi) & (n * rho <= tol.rank * lo)
    if p == 0:
        return [flags._all_unique() if ok else None for ok in rank_ok]
    member = flags.member                                              # (pairs, m) 0/1
    rown = np.linalg.norm(N, axis=1)                                   # (k, m)
    mu, md = decided((member[None] * rown[:, None]).max(axis=2), (delta + fp)[:, None], tol.qr, tol.qr, p)
    B = np.linalg.norm(S, axis=1).max(axis=2, initial=0.0)
    cx = np.sqrt(rowsq @ member.T)
    pu, pd = decided(B, cx * (delta + fp)[:, None], tol.qr * lo[:, None], tol.qr * hi[:, None], p)
    ok = rank_ok & md.all(axis=1) & pd.all(axis=1)
    ru = np.ones((k, 0), bool)
    if flags.rmap is not None:
        rmap, factor = flags.rmap, max(1.0, flags.model.length_scale)
        jf = np.sqrt(rowsq @ rmap.rows_of)[:, rmap.joint]
        K = np.repeat(jf * entry_norms(rmap, Q), 12, axis=1)
        ru, rd = decided(reaction_norms(flags, Q, C, N, S), K * (delta + fp)[:, None],
                         tol.qr * factor * lo[:, None], tol.qr * factor * hi[:, None], p)
        ok &= rd.all(axis=1)
    if ok.any():
        flags.redundancy = max(flags.redundancy, p)
        flags.non_unique.update(name for name, u in zip(flags.names, pu[ok].all(axis=0)) if not u)
    made = {}       # equal flags share one read-only dict (as ReactionFlags._all_unique)
    return [_flags(flags, mu[s], ru[s], made) if ok[s] else None for s in range(k)]


def _flags(flags, mult_unique, reactions_unique, made) -> dict:
    """The series of one decided state (as SpatialReactionFlags.record), the same dict for the same flags."""
    key = (mult_unique.tobytes(), reactions_unique.tobytes())
    if key not in made:
        out = {"multipliers_unique": (mult_unique.astype(float) @ flags.member, flags.labels)}
        if flags.rmap is not None:
            out["reactions_unique"] = (reactions_unique.astype(float), flags.rmap.labels)
        for values, _ in out.values():
            values.flags.writeable = False
        made[key] = out
    return made[key]
