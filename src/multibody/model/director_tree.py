"""Kinematic trees of spatial bodies: null-space matrices P = P_int P_ext and the reparametrisation
q_{n+1} = F_{q_n}(mu) of the discrete null space method (paper 004 Sects 3.2-4.5, 5.4).

The tree is read from a Model built by :class:`~.director_builder.SpatialModelBuilder`: bodies
reached from the ground through joints (parent -> child) hang from the ground, every other
connected set of bodies from a free root body (unknowns u_phi, theta, eq. 44). Joints that would
close a loop are *closure joints* (eq. 190), treated in :mod:`multibody.integrate.energy_momentum`.

Twist recursion along the tree (eqs 57, 84, 107/113, 122, 132/133, 143/149, 179-184), with all
vectors evaluated at the configuration ``qa`` (the mid-point q_{n+1/2} for the discrete matrices;
at a configuration on the manifold they equal the continuous ones):

    S:  v_c = v_p + w_p x rho_p - tau x rho_c,             w_c = tau                       (83)
    R:  v_c = v_p + w_p x (rho_p - rho_c) + th' rho_c x n,  w_c = w_p + th' n               (121)
    C:  v_c = v_p + w_p x (phi_c - phi_p) + u' (m1 x m2) + th' rho_c x n,  w_c = w_p + th' n (113)
    P:  v_c = v_p + w_p x (phi_c - phi_p) + u' (m1 x m2),   w_c = w_p                       (133)
    E:  v_c = v_p + w_p x (phi_c - phi_p) + u1' (m2 x n) + u2' (n x m1) + th' rho_c x n,
        w_c = w_p + th' n                                                                  (149)
    E with ``Tree.unknowns == "joint"`` (issue 18; same range, so the same discrete solution):
        v_c = v_p + w_p x (rho_p - rho_c) + n ((w_p x g) . n) / (n . n) + u1' (m2 x n) + u2' (n x m1)
              + th' rho_c x n,  g = p_c - p_p, and a root parent turns along its pair frame (pair_frames)

and q' = P_int(qa) t with P_int of eq. (29). All functions are complex-safe (complex-step Newton
Jacobians). The recursion is sequential along the tree by nature (one step per tree joint); each
step is a handful of 3x3 products.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ModelError
from ..linalg.rotations import cross, rodrigues_coefficients, skew
from .director import PAIR_DOF, LowerPairs, SpatialBodies


@dataclass(frozen=True)
class TreeJoint:
    kind: str
    name: str
    group: int          # index of its LowerPairs group in model.constraints
    index: int          # joint index inside the group
    parent: int
    child: int
    X1: np.ndarray
    X2: np.ndarray
    n: np.ndarray
    m1: np.ndarray
    m2: np.ndarray
    start: int          # first column of its unknowns in mu


@dataclass(frozen=True)
class Tree:
    """bodies; roots (free root bodies) with their mu start; joints in tree order; closures; d;
    ``unknowns``: "paper" (the relative coordinates of eqs 143, 149, 154) or "joint" (the planar pairs'
    in-plane unknowns move the child's joint point in the parent's plane without being carried by the
    parent's rotation; see :func:`twist_matrix`)."""

    bodies: SpatialBodies
    roots: tuple[tuple[int, int], ...]
    joints: tuple[TreeJoint, ...]
    closures: tuple[TreeJoint, ...]
    d: int
    unknowns: str = "paper"
    frames: dict = None     # root body -> (Q (3, 3), planar joint): rotation unknowns along Q's columns (pair_frames)

    def closure_rows(self, model) -> np.ndarray:
        """Row indices (in the model's constraint order) of the closure joints' constraints."""
        offsets = np.cumsum([0] + [g.rows for g in model.constraints])
        rows = []
        for j in self.closures:
            r = model.constraints[j.group].rows // len(model.constraints[j.group].joint_names)
            rows.extend(range(offsets[j.group] + j.index * r, offsets[j.group] + (j.index + 1) * r))
        return np.array(rows, dtype=int)


def spatial_parts(model) -> tuple[SpatialBodies, list[tuple[int, LowerPairs]]]:
    """The bodies and the pairs of a spatial model; driver rows (groups with motions, issue 23) are
    not part of the tree and are left out."""
    bodies = [g for g in model.constraints if isinstance(g, SpatialBodies)]
    other = [g for g in model.constraints if not isinstance(g, (SpatialBodies, LowerPairs)) and not g.motions]
    if len(bodies) == 1 and other:
        raise ModelError(f"model '{model.name}': the kinematic tree of the energy-momentum integrator knows bodies, "
                         f"pairs and drivers only, not the rows {', '.join(g.labels[0] for g in other)}, ...")
    if len(bodies) != 1:
        raise ModelError(f"model '{model.name}' is not a spatial director model (build it with "
                         "SpatialModelBuilder): the energy-momentum integrator needs its bodies and pairs.")
    return bodies[0], [(i, g) for i, g in enumerate(model.constraints) if isinstance(g, LowerPairs)]


def build_tree(model) -> Tree:
    """The kinematic tree of a spatial model (breadth first from the ground, then free roots)."""
    bodies, groups = spatial_parts(model)
    pending = [(gi, k, g) for gi, g in groups for k in range(len(g.joint_names))]
    placed, roots, joints, closures, d = {-1}, [], [], [], 0
    nb = len(bodies.names)
    while pending:
        progress = False
        for item in list(pending):
            gi, k, g = item
            p, c = int(g.parent[k]), int(g.child[k])
            if p in placed:
                pending.remove(item)
                progress = True
                tj = TreeJoint(g.kind, g.joint_names[k], gi, k, p, c, g.X1[k], g.X2[k], g.n[k], g.m1[k],
                               g.m2[k], d)
                if c in placed:
                    closures.append(tj)
                else:
                    joints.append(tj)
                    placed.add(c)
                    d += PAIR_DOF[g.kind]
        if not progress:   # a body not reachable yet: make the parent of a pending joint a free root
            gi, k, g = pending[0]
            root = int(g.parent[k])
            if root in placed:
                raise ModelError(f"model '{model.name}': cannot order the joints into a tree.")
            roots.append((root, d))
            placed.add(root)
            d += 6
    for b in range(nb):
        if b not in placed:
            roots.append((b, d))
            d += 6
    return Tree(bodies, tuple(roots), tuple(joints), tuple(closures), d)


def _geometry(tree: Tree, q):
    """phi (..., b + 1, 3) and D (..., b + 1, 3, 3) (D[..., :, I] = d_I) of q (..., n); the last
    entry is the ground (origin, identity frame), index -1 of the joints."""
    x = q[..., tree.bodies.body_cols]
    nb, batch = x.shape[-2], q.shape[:-1]
    phi = np.zeros(batch + (nb + 1, 3), dtype=q.dtype)
    D = np.zeros(batch + (nb + 1, 3, 3), dtype=q.dtype)
    phi[..., :nb, :] = x[..., :3]
    D[..., :nb, :, :] = np.swapaxes(x[..., 3:].reshape(x.shape[:-1] + (3, 3)), -1, -2)
    D[..., nb, 0, 0] = D[..., nb, 1, 1] = D[..., nb, 2, 2] = 1.0
    return phi, D


def twist_matrix(tree: Tree, qa: np.ndarray) -> np.ndarray:
    """P_ext (..., 6 b, d): the body twists t = (v_phi, omega) as linear functions of the generalized
    velocities, evaluated at qa (..., n) (eqs 59, 69, 184); see the module docstring."""
    phi, D = _geometry(tree, qa)
    nb, batch = len(tree.bodies.names), qa.shape[:-1]
    T = np.zeros(batch + (nb + 1, 6, tree.d), dtype=qa.dtype)     # entry nb: the ground (zero twist)
    for b, s in tree.roots:
        T[..., b, :, s:s + 6] = np.eye(6)
        if tree.frames and b in tree.frames:
            T[..., b, 3:, s + 3:s + 6] = tree.frames[b][0]
    for j in tree.joints:                # sequential along the tree: a child needs its parent's twist
        p, c, s = j.parent, j.child, j.start
        rp, rc, n = D[..., p, :, :] @ j.X1, D[..., c, :, :] @ j.X2, D[..., p, :, :] @ j.n
        vp, wp = T[..., p, :3, :], T[..., p, 3:, :]
        if j.kind == "S":
            T[..., c, :3, :] = vp - skew(rp) @ wp
            T[..., c, :3, s:s + 3] += skew(rc)
            T[..., c, 3:, s:s + 3] = np.eye(3)
            continue
        joint = j.kind == "R" or (j.kind == "E" and tree.unknowns == "joint")
        arm = rp - rc if joint else phi[..., c, :] - phi[..., p, :]
        T[..., c, :3, :] = vp - skew(arm) @ wp
        T[..., c, 3:, :] = wp
        if j.kind == "E" and joint:     # the normal velocity of the tilt, n ((w_p x g) . n) / (n . n)
            g = phi[..., c, :] + rc - phi[..., p, :] - rp
            k = cross(g, n) / np.einsum("...i,...i->...", n, n)[..., None]
            T[..., c, :3, :] += n[..., :, None] * (k[..., None, :] @ wp)
        for k, (tv, tw) in enumerate(_pair_columns(j, D[..., p, :, :], rc, n)):
            T[..., c, :3, s + k] += tv
            T[..., c, 3:, s + k] += tw
    return T[..., :nb, :, :].reshape(batch + (6 * nb, tree.d))


def _pair_columns(j, Dp, rc, n) -> list:
    """The twist columns (v, omega) of a pair's own unknowns (twist_matrix), only those of its kind (issue 16:
    the products of the other kinds are not formed)."""
    if j.kind == "R":
        return [(cross(rc, n), n)]
    m1, m2 = Dp @ j.m1, Dp @ j.m2
    zero = 0 * n
    if j.kind == "C":
        return [(cross(m1, m2), zero), (cross(rc, n), n)]
    if j.kind == "P":
        return [(cross(m1, m2), zero)]
    return [(cross(m2, n), zero), (cross(n, m1), zero), (cross(rc, n), n)]


def internal_null_space(tree: Tree, qa: np.ndarray, Text: np.ndarray) -> np.ndarray:
    """P_int(qa) @ Text (..., n, k): velocities v_phi = v, v_I = omega x d_I (eqs 29, 54, 186)."""
    nb, batch = len(tree.bodies.names), qa.shape[:-1]
    _, D = _geometry(tree, qa)
    T = Text.reshape(batch + (nb, 6, Text.shape[-1]))
    out = np.empty(batch + (nb, 12, T.shape[-1]), dtype=np.result_type(qa, Text))
    out[..., :3, :] = T[..., :3, :]
    for I in range(3):
        out[..., 3 + 3 * I: 6 + 3 * I, :] = -skew(D[..., :nb, :, I]) @ T[..., 3:, :]
    full = np.zeros(batch + (qa.shape[-1], T.shape[-1]), dtype=out.dtype)
    full[..., tree.bodies.body_cols.ravel(), :] = out.reshape(batch + (12 * nb, T.shape[-1]))
    return full


def null_space_matrix(tree: Tree, qa: np.ndarray) -> np.ndarray:
    """P(qa) = P_int(qa) P_ext(qa) (..., n, d), eqs 60, 68, 185 (discrete when qa = q_{n+1/2})."""
    return internal_null_space(tree, qa, twist_matrix(tree, qa))


def _expm_minus_identity(theta):
    """exp(theta^) - I = c1 theta^ + c2 (theta^)^2 (Rodrigues, eq. 43) without cancellation."""
    W = skew(theta)
    c1, c2 = rodrigues_coefficients(np.einsum("...i,...i->...", theta, theta))
    return c1[..., None, None] * W + c2[..., None, None] * (W @ W)


def _axis_minus_identity(angle, n):
    """exp(angle n^) - I = sin(a) n^ + 2 sin^2(a/2) (n^)^2 for a unit axis n (no cancellation)."""
    W = skew(n)
    return np.sin(angle)[..., None, None] * W + (2 * np.sin(angle / 2) ** 2)[..., None, None] * (W @ W)


def reparametrize(tree: Tree, qn: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """The increment q_{n+1} - q_n = F_{q_n}(mu) - q_n (..., n) for mu (..., d) (eqs 44, 95, 118, 126,
    136, 154, 188-189), without cancellation: with X = R - I carried per body, roots move by
    (u, exp(theta)), each child rotates by its parent's increment times exp(theta n_n^) (product of
    exponentials) and its centre of mass follows from the joint (``_child_translation``):
    dphi_c = dphi_p + X_p (rho_p + gap) - X_c rho_c + (relative translation along n' or m1', m2'),
    with gap = p_c - p_p at t_n, less the gap's round-off in the constrained directions."""
    phi, D = _geometry(tree, qn)
    nb, batch = len(tree.bodies.names), mu.shape[:-1]
    dtype = np.result_type(qn, mu)
    X = np.zeros(batch + (nb + 1, 3, 3), dtype=dtype)          # R - I; the ground entry stays 0
    K = np.zeros(batch + (nb + 1, 3, 3), dtype=dtype)          # round-off correction of the new frames
    dphi = np.zeros(batch + (nb + 1, 3), dtype=dtype)
    for b, s in tree.roots:
        X[..., b, :, :] = _root_rotation(tree, b, mu[..., s + 3:s + 6])
        K[..., b, :, :] = _frame_correction(D[b], X[..., b, :, :])
        dphi[..., b, :] = mu[..., s:s + 3]
    for j in tree.joints:                # sequential along the tree (product of exponentials, eq. 188)
        p, c, s = j.parent, j.child, j.start
        nn = D[p] @ j.n
        Xp = X[..., p, :, :]
        if j.kind == "S":
            X[..., c, :, :] = _expm_minus_identity(mu[..., s:s + 3])
        elif j.kind == "P":
            X[..., c, :, :] = Xp
        else:
            E = _axis_minus_identity(mu[..., s + PAIR_DOF[j.kind] - 1], nn)
            X[..., c, :, :] = Xp @ E + Xp + E                    # R_p (E + I) - I
        K[..., c, :, :] = _frame_correction(D[c], X[..., c, :, :])
        dphi[..., c, :] = _child_translation(tree, j, phi, D, X, K, dphi[..., p, :], mu)
    dq = np.zeros(batch + qn.shape, dtype=dtype)
    dD = X[..., :nb, :, :] @ D[:nb] + K[..., :nb, :, :]
    x = np.concatenate([dphi[..., :nb, :], np.swapaxes(dD, -1, -2).reshape(batch + (nb, 9))], axis=-1)
    dq[..., tree.bodies.body_cols.ravel()] = x.reshape(batch + (12 * nb,))
    return dq


def pair_frames(tree: Tree, qn: np.ndarray) -> dict:
    """Rotation frames of the root bodies with a planar child (``unknowns == "joint"``): Q = [t, g, n] at q_n
    with n the plane's normal, g the unit in-plane direction from the parent's to the child's joint point
    (m1 when they coincide) and t = n x g. With R = exp(th_t t^) exp(th_g g^) exp(th_n n^)
    (``_root_rotation``), n' . gap = |gap| cos(th_g) sin(th_t): the far child's normal displacement is
    nearly linear in the tilt th_t, whereas exp(theta^) has the cross term (theta.n)(theta.gap)/2 that
    made Newton diverge once |gap| ~ 1e4 m (planar pair, t = 50 s at dt = 0.01)."""
    if tree.unknowns != "joint":
        return {}
    phi, D = _geometry(tree, qn)
    roots, frames = {b for b, _ in tree.roots}, {}
    for j in tree.joints:
        if j.kind != "E" or j.parent not in roots or j.parent in frames:
            continue
        n, m1 = D[j.parent] @ j.n, D[j.parent] @ j.m1
        gap = phi[j.child] + D[j.child] @ j.X2 - phi[j.parent] - D[j.parent] @ j.X1
        gap = gap - (gap @ n) * n
        size = np.linalg.norm(gap)
        g = gap / size if size > 1e-9 * max(1.0, np.max(np.abs(qn))) else m1
        frames[j.parent] = (np.column_stack([cross(n, g), g, n]), j.name)
    return frames


def _root_rotation(tree: Tree, b: int, theta):
    """R - I of a root body: exp(theta^) (eq. 44), or along its pair frame Q = [t, g, n] (pair_frames) the
    product exp(th_t t^) exp(th_g g^) exp(th_n n^) = (I + A)(I + B)(I + C), expanded without cancellation."""
    if not tree.frames or b not in tree.frames:
        return _expm_minus_identity(theta)
    Q = tree.frames[b][0]
    A, B, C = (_axis_minus_identity(theta[..., k], Q[:, k]) for k in range(3))
    return A + B + C + A @ B + A @ C + B @ C + A @ B @ C


def _normal_gap(tree: Tree, j: TreeJoint, mu, nn, gap, Xp):
    """n' . gap with n' = R_p n. In the parent's pair frame (pair_frames) it is evaluated in closed form,
    n' = cos(th_g) (cos(th_t) n + sin(th_t) g) - sin(th_g) t, free of the cancellation of
    (R_p - I) n . gap, whose terms are ~|theta| |gap| (1e-12 m of rounding at |gap| = 4e4 m: the Newton
    residual's floor times the lever exceeded its tolerance)."""
    frame = tree.frames.get(j.parent) if tree.frames else None
    if frame is None or frame[1] != j.name:
        return gap @ nn + np.einsum("...i,i->...", Xp @ nn, gap)
    Q = frame[0]
    start = next(s for b, s in tree.roots if b == j.parent)
    th_t, th_g = mu[..., start + 3], mu[..., start + 4]
    gt, gg, gn = gap @ Q[:, 0], gap @ Q[:, 1], gap @ Q[:, 2]
    return np.cos(th_g) * (np.cos(th_t) * gn + np.sin(th_t) * gg) - np.sin(th_g) * gt


def _frame_correction(D, X):
    """K with D' = D + X D + K orthonormal to round-off: exp(theta^) in floating point is orthogonal only to
    round-off, and its bias repeats when the increment does (a body spinning at a constant rate): |d_I| of the
    cylindrical pair's sleeve drifted by 1.5e-12 in 3000 steps and the energy with it. One Newton-Schulz step
    D' <- D' (3 I - D'^T D') / 2 puts the frame on Q again (Sect. 4.4, Phi_int(F(mu)) = 0); K is round-off
    sized, its derivative zero at an orthonormal D."""
    Dn = D + X @ D
    return -0.5 * (Dn @ (np.swapaxes(Dn, -1, -2) @ Dn - np.eye(3)))


def _child_translation(tree: Tree, j: TreeJoint, phi, D, X, K, dphi_p, mu):
    """dphi_c of a tree joint's child (reparametrize). The joint points p = phi + rho satisfy
    p_c' - p_p' = R_p (gap - Pi gap) + (relative translation), gap = p_c - p_p at t_n and Pi the
    projector on the constrained directions (S, R: I; C, P: m1, m2; E: n), so Phi_ext(q_{n+1}) = 0 to
    round-off whatever Phi(q_n) (F maps onto Q, Sect. 4.4) and the pair's rows cannot creep.
    With ``tree.unknowns == "joint"`` the E pair's child joint point moves by the parent's joint-point
    displacement plus s1 m1' + s2 m2' (m' = R_p m at t_n) and the normal correction that keeps it in the
    tilted plane, -(n' . gap) n': the in-plane gap is not swung about p_p by the parent's rotation."""
    p, c, s = j.parent, j.child, j.start
    Xp, Xc = X[..., p, :, :], X[..., c, :, :]
    nn, m1, m2 = D[p] @ j.n, D[p] @ j.m1, D[p] @ j.m2
    rp, rc = D[p] @ j.X1, D[c] @ j.X2
    gap = (phi[c] + rc) - (phi[p] + rp)
    Rp = Xp + np.eye(3)
    d = dphi_p + Xp @ rp + K[..., p, :, :] @ j.X1 - Xc @ rc - K[..., c, :, :] @ j.X2
    if j.kind == "E" and tree.unknowns == "joint":
        normal = _normal_gap(tree, j, mu, nn, gap, Xp)                       # n' . gap
        return (d + mu[..., s, None] * (Rp @ m1) + mu[..., s + 1, None] * (Rp @ m2)
                - normal[..., None] * (Rp @ nn))
    fixed = {"C": [m1, m2], "P": [m1, m2], "E": [nn]}.get(j.kind)           # Pi gap along these
    pi_gap = sum((gap @ a) * a for a in fixed) if fixed else gap
    d = d + Xp @ (gap - pi_gap) - pi_gap                                   # R_p (gap - Pi gap) - gap
    free = {"C": [nn], "P": [nn], "E": [m1, m2]}.get(j.kind, [])
    for k, a in enumerate(free):
        d = d + mu[..., s + k, None] * (Rp @ a)
    return d


def predictor(tree: Tree, qn: np.ndarray, dq: np.ndarray) -> np.ndarray:
    """Initial Newton guess mu for the increment dq ~ dt v_n: the least-squares generalized velocity
    times dt, with every rotation entry w mapped to the rotation of the mid-point rule,
    2 atan(|w| / 2) w / |w| (the Cayley angle; for steps where |w| is not small this is what keeps
    Newton in the basin of the discrete solution, e.g. the top at dt = 0.05, Table II)."""
    P = null_space_matrix(tree, qn)
    mu = np.linalg.lstsq(P, dq, rcond=None)[0]
    for sl in rotation_slots(tree):
        w = np.linalg.norm(mu[sl])
        if w > 0:
            mu[sl] *= 2 * np.arctan(w / 2) / w
    return mu


def rotation_slots(tree: Tree) -> list:
    """The slices of mu that are rotation angles (roots' theta, S pairs' theta, the R/C/E pairs' angle)."""
    slots = [slice(s + 3, s + 6) for _, s in tree.roots]
    for j in tree.joints:
        if j.kind == "S":
            slots.append(slice(j.start, j.start + 3))
        elif j.kind != "P":
            k = j.start + PAIR_DOF[j.kind] - 1
            slots.append(slice(k, k + 1))
    return slots
