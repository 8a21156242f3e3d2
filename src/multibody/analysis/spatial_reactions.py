"""Joint reactions of spatial pairs and drivers in director coordinates (paper 004 eq. 36; issue 23).

With M q'' + A^T lam = f the generalized constraint force of the rows R_j of joint j is
Q_j = -A[R_j]^T lam[R_j] (as for planar joints, :mod:`.reactions`). On the director coordinates of
a body, Q = (Q_phi, Q_1, Q_2, Q_3), eq. (36) of paper 004 gives its resultant force and its moment
about the centre of mass (the projection P_int^T Q; the part of Q in range(G_int^T), which the
rigidity constraints absorb, projects to zero):

    F = Q_phi,     M = sum_I d_I x Q_I.

The ground's share follows from action and reaction (the rows of every pair and driver are invariant
under a common rigid motion of both bodies): F_ground = -F_b, moment about the global origin
M_ground = -(M_b + phi_b x F_b). Body-frame components are D_b^T F and D_b^T M (the ground's frame
is the global one).

Labels: "<joint>.on_<body>.<component>" with the components of :data:`COMPONENTS`; a driver is a
joint of its own ("<joint>-driver"), whose reaction is the driving torque (about the axis) or force
(along it). The interface is that of :class:`.reactions.ReactionMap` (``labels``, ``generalized``,
``finish``, ``values``), so the recorder, the CSV files and the uniqueness flags of paper 003
(:mod:`.solvability`) treat spatial models like planar ones.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model.director import SpatialBodies
from ..model.system import Model

COMPONENTS = ("Fx", "Fy", "Fz", "Mx", "My", "Mz", "Fx_body", "Fy_body", "Fz_body", "Mx_body", "My_body",
              "Mz_body")
GROUND = "ground"


@dataclass(frozen=True)
class SpatialReactionMap:
    """rows_of (m + h, J) indicator of joint rows; joint (E,), cols (E, 12) director columns (n for the
    ground), partner (E,), ground (E,) as in :class:`.reactions.ReactionMap`; labels (12 E,)."""

    rows_of: np.ndarray
    joint: np.ndarray
    cols: np.ndarray
    partner: np.ndarray
    ground: np.ndarray
    labels: tuple[str, ...]
    n: int

    def values(self, q, A, lam) -> np.ndarray:
        return self.table(q, A, lam).ravel()

    def table(self, q, A, lam) -> np.ndarray:
        return self.finish(np.asarray(q)[None], self.generalized(A, lam)[None])[0]

    def generalized(self, A, lam) -> np.ndarray:
        """(E, 12): Q_j at the director columns of each entry's body (NaN without multipliers)."""
        if lam is None or not np.all(np.isfinite(lam)):
            return np.full((len(self.joint), 12), np.nan)
        Q = np.zeros((self.n + 1, self.rows_of.shape[1]))
        Q[: self.n] = -(A.T @ (lam[:, None] * self.rows_of))
        return Q[self.cols, self.joint[:, None]]

    def finish(self, q, Qe) -> np.ndarray:
        """(k, E, 12) reactions of k states from q (k, n) and :meth:`generalized` (k, E, 12)."""
        qe = np.concatenate([q, np.zeros((len(q), 1))], axis=1)
        x = qe[:, self.cols]                                                 # (k, E, 12)
        D = np.swapaxes(x[..., 3:].reshape(x.shape[:-1] + (3, 3)), -1, -2)   # D[..., :, I] = d_I
        D[:, self.ground] = np.eye(3)
        F = Qe[..., :3].copy()
        M = sum(np.cross(D[..., :, I], Qe[..., 3 + 3 * I:6 + 3 * I]) for I in range(3))
        g, p = self.ground, self.partner[self.ground]
        F[:, g] = -F[:, p]
        M[:, g] = -(M[:, p] + np.cross(x[:, p, :3], F[:, p]))
        Dt = np.swapaxes(D, -1, -2)
        return np.concatenate([F, M, np.einsum("keij,kej->kei", Dt, F), np.einsum("keij,kej->kei", Dt, M)], axis=2)


def spatial_reaction_map(model: Model) -> SpatialReactionMap | None:
    """The map of a model built with SpatialModelBuilder (``Model.joint_bodies`` and one
    SpatialBodies group), else None."""
    groups = [g for g in model.constraints if isinstance(g, SpatialBodies)]
    if len(groups) != 1 or not model.joint_bodies:
        return None
    bodies = groups[0]
    body_cols = {name: bodies.body_cols[i] for i, name in enumerate(bodies.names)}
    body_cols[GROUND] = np.full(12, model.n)
    joints = [j for j in model.joint_bodies if all(b in body_cols for b in model.joint_bodies[j])]
    index = {j: k for k, j in enumerate(joints)}
    labels = model.velocity_labels
    rows_of = np.zeros((len(labels), len(joints)))
    for i, label in enumerate(labels):
        j = index.get(label.rpartition(".")[0])
        if j is not None:
            rows_of[i, j] = 1.0
    used = [j for j in joints if rows_of[:, index[j]].any()]
    if not used:
        return None
    ent = [(j, b) for j in used for b in model.joint_bodies[j]]
    return SpatialReactionMap(rows_of=rows_of, joint=np.array([index[j] for j, _ in ent]),
                              cols=np.array([body_cols[b] for _, b in ent], dtype=int),
                              partner=np.arange(len(ent)) ^ 1, ground=np.array([b == GROUND for _, b in ent]),
                              labels=tuple(f"{j}.on_{b}.{c}" for j, b in ent for c in COMPONENTS), n=model.n)
