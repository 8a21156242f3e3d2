"""Joint reactions of spatial pairs and drivers in director coordinates (paper 004 eq. 36; issue 23).

With M q'' + A^T lam = f the generalized constraint force of the rows R_j of joint j is
Q_j = -A[R_j]^T lam[R_j] (as for planar joints, :mod:`.reactions`). On the director coordinates of
a body, Q = (Q_phi, Q_1, Q_2, Q_3), eq. (36) of paper 004 gives its resultant force and its moment
about the centre of mass (the projection P_int^T Q; the part of Q in range(G_int^T), which the
rigidity constraints absorb, projects to zero):

    F = Q_phi,     M = sum_I d_I x Q_I.

The ground's share follows from action and reaction (the rows of every pair and driver are invariant
under a common rigid motion of both bodies): F_ground = -F_b, moment about the global origin
M_ground = -(M_b + phi_b x F_b). Joint-frame components are E^T F and E^T M with E = D_p [m1, m2, n]
the pair's frame {m1, m2, n} (eqs 96, 97: n the axis, fixed in the parent p; for a spherical pair the
frame of its default axis e3): "M_n" of a driver is the driving torque about the axis on that body,
"F_n" the driving force along it (moments are about the body's centre of mass, so a pair's force
contributes (p - phi) x F to them).

Labels: "<joint>.on_<body>.<component>" with the components of :data:`COMPONENTS`; a driver is a
joint of its own ("<joint>-driver"), whose reaction is the driving torque (about the axis) or force
(along it). The interface is that of :class:`.reactions.ReactionMap` (``labels``, ``generalized``,
``finish``, ``values``), so the recorder, the CSV files and the uniqueness flags of paper 003
(:mod:`.solvability`) treat spatial models like planar ones.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..linalg.rotations import cross
from ..model.director import LowerPairs, SpatialBodies
from ..model.system import Model
from .reactions import joint_rows

COMPONENTS = ("Fx", "Fy", "Fz", "Mx", "My", "Mz", "F_m1", "F_m2", "F_n", "M_m1", "M_m2", "M_n")
GROUND = "ground"


@dataclass(frozen=True)
class SpatialReactionMap:
    """rows_of (m + h, J) indicator of joint rows; joint (E,), cols (E, 12) director columns (n for the
    ground), partner (E,), ground (E,) as in :class:`.reactions.ReactionMap`; labels (12 E,);
    pcols (E, 12) the columns of the pair's parent, frame (E, 3, 3) its [m1, m2, n] in the parent's frame."""

    rows_of: np.ndarray
    joint: np.ndarray
    cols: np.ndarray
    partner: np.ndarray
    ground: np.ndarray
    labels: tuple[str, ...]
    n: int
    pcols: np.ndarray
    frame: np.ndarray

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

    def generalized_stack(self, A, lam) -> np.ndarray:
        """(k, E, 12): :meth:`generalized` of k states, A (k, m + h, n) and lam (k, m + h), in one product."""
        Q = np.zeros((len(A), self.n + 1, self.rows_of.shape[1]))
        Q[:, : self.n] = -(np.swapaxes(A, 1, 2) @ (lam[:, :, None] * self.rows_of))
        out = Q[:, self.cols, self.joint[:, None]]
        out[~np.all(np.isfinite(lam), axis=1)] = np.nan
        return out

    def finish(self, q, Qe) -> np.ndarray:
        """(k, E, 12) reactions of k states from q (k, n) and :meth:`generalized` (k, E, 12)."""
        qe = np.concatenate([q, np.zeros((len(q), 1))], axis=1)
        x = qe[:, self.cols]                                                 # (k, E, 12)
        D = _directors(x, self.cols == self.n)
        E = _directors(qe[:, self.pcols], self.pcols == self.n) @ self.frame
        F = Qe[..., :3].copy()
        M = sum(cross(D[..., :, I], Qe[..., 3 + 3 * I:6 + 3 * I]) for I in range(3))
        g, p = self.ground, self.partner[self.ground]
        F[:, g] = -F[:, p]
        M[:, g] = -(M[:, p] + cross(x[:, p, :3], F[:, p]))
        Et = np.swapaxes(E, -1, -2)
        return np.concatenate([F, M, np.einsum("keij,kej->kei", Et, F), np.einsum("keij,kej->kei", Et, M)], axis=2)


def _directors(x, ground):
    """D (k, E, 3, 3) (D[..., :, I] = d_I) of coordinates x (k, E, 12); identity where ground (E, 12)."""
    D = np.swapaxes(x[..., 3:].reshape(x.shape[:-1] + (3, 3)), -1, -2)
    D[:, ground[:, 0]] = np.eye(3)
    return D


def _pair_frames(model):
    """{pair or driver name: (parent index, [m1, m2, n] (3, 3) in the parent's frame)}."""
    out = {}
    for g in model.constraints:
        if isinstance(g, LowerPairs):
            for k, name in enumerate(g.joint_names):
                out[name] = (int(g.parent[k]), np.column_stack([g.m1[k], g.m2[k], g.n[k]]))
    for g in model.constraints:
        for label, pair in zip(g.labels, getattr(g, "pairs", ())):
            if pair in out:
                out[label.rpartition(".")[0]] = out[pair]
    return out


def spatial_reaction_map(model: Model) -> SpatialReactionMap | None:
    """The map of a model built with SpatialModelBuilder (``Model.joint_bodies`` and one
    SpatialBodies group), else None."""
    groups = [g for g in model.constraints if isinstance(g, SpatialBodies)]
    if len(groups) != 1 or not model.joint_bodies:
        return None
    bodies = groups[0]
    body_cols = {name: bodies.body_cols[i] for i, name in enumerate(bodies.names)}
    body_cols[GROUND] = np.full(12, model.n)
    found = joint_rows(model, body_cols)
    if found is None:
        return None
    index, rows_of, ent = found
    frames = _pair_frames(model)
    parent = [frames.get(j, (-1, np.eye(3))) for j, _ in ent]
    pcols = [bodies.body_cols[i] if i >= 0 else body_cols[GROUND] for i, _ in parent]
    return SpatialReactionMap(rows_of=rows_of, joint=np.array([index[j] for j, _ in ent]),
                              cols=np.array([body_cols[b] for _, b in ent], dtype=int),
                              partner=np.arange(len(ent)) ^ 1, ground=np.array([b == GROUND for _, b in ent]),
                              labels=tuple(f"{j}.on_{b}.{c}" for j, b in ent for c in COMPONENTS), n=model.n,
                              pcols=np.array(pcols, dtype=int), frame=np.array([f for _, f in parent]))
