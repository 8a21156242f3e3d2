"""Branch directions through a configuration: the tangent cone of the solution set of Phi(q) = 0
(paper 000 Sect. 2.5, N3: the admissible motions at a singular configuration, of which only some continue
into real motions).

At a regular configuration every admissible motion u (A u = 0, A = Phi_q, paper 000 eq. 25) is tangent to
the constraint manifold. At a singular configuration the null space of A is larger than the tangent space
of any branch, and a direction u = T c of the null space (T: orthonormal basis of the null space, (n, d))
is the tangent of a curve q(s) = q + s u + O(s^2) with Phi(q(s)) = 0 only if the second-order condition

    w_k^T Phi_qq[u, u] = c^T H_k c = 0,   H_k = T^T (sum_i W_ik d^2 Phi_i / dq^2) T   (k = 1 .. m - rank)

holds for every vector w_k of the left null space of A (W = [w_1 ...], A^T w_k = 0): the component of
Phi(q(s)) along w_k is s^2/2 w_k^T Phi_qq[u, u] + O(s^3) and no first-order correction of q can cancel it
(the range of A lacks that direction). Rows that are redundant everywhere (a duplicated joint) give H_k = 0
and no condition. The directions found are the *continuing* motion and the *new* motions of paper 000 at
the singular configurations of the modified four-bars; moving along any other null-space direction and
projecting back onto Phi = 0 lands O(s) away, on configurations that may belong to no branch (there the rank
can exceed the generic one: 12 instead of 11 on the modified double four-bar).

The second derivatives come from central differences of A along the columns of T (the model gives no
Hessians of Phi): H_k[a, b] = w_k^T (A(q + e T_a) - A(q - e T_a)) T_b / (2 e), error O(e^2).
"""
from __future__ import annotations

import numpy as np
import scipy.optimize as so

from ..assembly import Workspace
from ..linalg.rank import RankTolerance
from ..model.system import Model

#: central-difference step of the directional derivatives of A, relative to the model's length scale
DIFF_STEP = 1e-5
#: a form H_k counts as zero (an everywhere-redundant row) below this fraction of |A| / L
ZERO_FORM = 1e-6
#: c lies on the cone when sum_k (c^T H_k c)^2 <= CONE_TOL^2 sum_k |H_k|^2
CONE_TOL = 1e-6
#: at most this many representative directions (a cone of tangents gives a continuum)
MAX_DIRECTIONS = 8


def second_order_forms(model: Model, q: np.ndarray, T: np.ndarray, W: np.ndarray, t: float = 0.0, *,
                       ws: Workspace | None = None) -> np.ndarray:
    """H (k, d, d), H_k = T^T (sum_i W_ik Phi_i,qq) T symmetrised (module doc), by central differences."""
    ws = ws or Workspace(model)
    zero, e = np.zeros(model.n), DIFF_STEP * model.length_scale
    d = T.shape[1]
    H = np.empty((W.shape[1], d, d))
    for a in range(d):
        Ap = ws.velocity_constraints(t, q + e * T[:, a], zero)[1][: ws.m]      # holonomic rows only
        Am = ws.velocity_constraints(t, q - e * T[:, a], zero)[1][: ws.m]
        H[:, a, :] = W.T @ ((Ap - Am) @ T) / (2 * e)
    return 0.5 * (H + H.transpose(0, 2, 1))


def _cone_residual(c: np.ndarray, H: np.ndarray) -> float:
    c = c / np.linalg.norm(c)
    return float(np.sum(np.einsum("i,kij,j->k", c, H, c) ** 2))


def _candidates(d: int, rng: np.random.Generator) -> np.ndarray:
    """Unit vectors covering the half sphere S^{d-1} / +-: a fine circle for d = 2, random points else."""
    if d == 2:
        phi = np.linspace(0.0, np.pi, 721, endpoint=False)
        return np.stack([np.cos(phi), np.sin(phi)], axis=1)
    c = rng.standard_normal((4000 * d, d))
    return c / np.linalg.norm(c, axis=1, keepdims=True)


def cone_directions(H: np.ndarray) -> np.ndarray:
    """Unit c (b, d) with c^T H_k c = 0 for all k (up to CONE_TOL), at most MAX_DIRECTIONS, pairwise more
    than 10 degrees apart (+-c counted once). All of S^{d-1} when H is empty."""
    d = H.shape[1]
    if len(H) == 0:
        return np.eye(d)
    if d == 1:
        return np.ones((1, 1)) if np.all(np.abs(H) == 0) else np.zeros((0, 1))
    scale = float(np.sum(H ** 2))
    C = _candidates(d, np.random.default_rng(0))
    g = np.sum(np.einsum("ni,kij,nj->nk", C, H, C) ** 2, axis=1)
    if d == 2:            # the local minima along the circle (g is pi-periodic: the grid wraps around)
        starts = np.flatnonzero((g <= np.roll(g, 1)) & (g <= np.roll(g, -1)))
        starts = starts[np.argsort(g[starts])]
    else:
        starts = np.argsort(g)[:200]
    found: list[np.ndarray] = []
    far = np.cos(np.radians(10.0))
    for i in starts:
        if any(abs(C[i] @ f) >= far for f in found):
            continue
        res = so.minimize(_cone_residual, C[i], args=(H,), method="BFGS", options={"gtol": 1e-14})
        c = res.x / np.linalg.norm(res.x)
        if _cone_residual(c, H) > CONE_TOL ** 2 * scale:
            continue
        if all(abs(c @ f) < far for f in found):
            found.append(c)
        if len(found) == MAX_DIRECTIONS:
            break
    return np.array(found).reshape(-1, d)


def branch_tangents(model: Model, q: np.ndarray, T: np.ndarray, t: float = 0.0, *,
                    ws: Workspace | None = None, tol: RankTolerance = RankTolerance()) -> np.ndarray:
    """Unit tangents (n, b) of the solution branches of Phi = 0 through q, as combinations of the
    admissible motions T (n, d) (module doc); the left null space of the holonomic rows A = Phi_q comes
    from their SVD with the rank decision of linalg.rank (singular values above tol.rtol s_max)."""
    ws = ws or Workspace(model)
    A = ws.velocity_constraints(t, q, np.zeros(model.n))[1][: ws.m]
    if A.shape[0] == 0 or T.shape[1] == 0:
        return T
    U, s, _ = np.linalg.svd(A)
    W = U[:, int(np.count_nonzero(s > tol.rtol * s[0])):]
    H = second_order_forms(model, q, T, W, t, ws=ws)
    norms = np.sqrt(np.sum(H ** 2, axis=(1, 2)))
    H = H[norms > ZERO_FORM * s[0] / model.length_scale]
    return T @ cone_directions(H).T
