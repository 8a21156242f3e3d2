"""Joint reactions from the multipliers: the force and torque each joint exerts on each of its bodies.

With M q'' + A^T lam = f (A = Phi_q, our convention; paper 001 eq. 1 with lam -> -lam) the
generalized constraint force of the rows R_j of joint j is

    Q_j = -A[R_j]^T lam[R_j]   (n,).

The rows of a joint involve only the columns of its two bodies, so the entries of Q_j at the
(x, y, theta) columns of body b are the resultant force (Fx, Fy) the joint exerts on b, in the global
frame, and its moment Mz about b's reference point (the centre of mass of a builder body): for a
pin at body point p, Q_b = J_p^T F = (F, (p - r_b) x F) (virtual work). The ground has no columns:
its share follows from action and reaction, valid for every builder joint because their Phi is
invariant under a common rigid motion of both bodies: F_ground = -F_b and the moment about the
global origin M_ground = -(M_b + r_b x F_b). Body-frame components are R(theta_b)^T F.

Where A is rank deficient (redundant constraints) the multipliers are the minimum-norm ones and so are
these reactions: paper 003 says which of them are nonetheless unique.

Labels: "<joint>.on_<body>.<component>", component one of Fx, Fy, Mz, Fx_body, Fy_body; joints
come from ``Model.joint_bodies`` and the row labels "joint.component" (rows of unnamed user
constraints are left out). Output only: one vectorised evaluation per state, no loop over joints.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..model.system import Model
from ..linalg.rotations import rotate

COMPONENTS = ("Fx", "Fy", "Mz", "Fx_body", "Fy_body")
GROUND = "ground"


@dataclass(frozen=True)
class ReactionMap:
    """Index arrays of the E (joint, body) entries of a model.

    rows_of (m, J) 0/1 indicator: row i belongs to joint j; joint (E,) joint index; cols (E, 3) body
    columns (n where absent: ground, rotation of a point mass); partner (E,) the other entry of the
    same joint; ground (E,) True for the ground side; labels (5 E,)."""

    rows_of: np.ndarray
    joint: np.ndarray
    cols: np.ndarray
    partner: np.ndarray
    ground: np.ndarray
    labels: tuple[str, ...]
    n: int

    def values(self, q: np.ndarray, A: np.ndarray, lam: np.ndarray | None) -> np.ndarray:
        """(5 E,) reactions in label order at configuration q (n,), A (m, n), lam (m,)."""
        return self.table(q, A, lam).ravel()

    def table(self, q: np.ndarray, A: np.ndarray, lam: np.ndarray | None) -> np.ndarray:
        """(E, 5): Fx, Fy, Mz (global), Fx_body, Fy_body for every entry."""
        return self.finish(np.asarray(q)[None], self.generalized(A, lam)[None])[0]

    def generalized(self, A: np.ndarray, lam: np.ndarray | None) -> np.ndarray:
        """(E, 3): the entries (x, y, theta columns of its body) of Q_j = -A[R_j]^T lam[R_j] for every
        entry (NaN if lam is missing or not finite); ground entries are filled in by :meth:`finish`.
        A dense (m, n) or scipy sparse (its entries gathered, not a product with the (m, J) indicator: 20 ms a state
        at 1000 bars); :meth:`generalized_entries` takes A as entry triplets."""
        if lam is None or not np.isfinite(lam).all():
            return np.full((len(self.joint), 3), np.nan)
        target, row, col = self.terms       # only the terms that reach the table (issue 16: per stored state)
        vals = A[row, col] if isinstance(A, np.ndarray) else np.asarray(A.tocsr()[row, col]).ravel()
        return self._table(target, vals * lam[row])

    def generalized_entries(self, vals: np.ndarray, lam: np.ndarray | None, targets: tuple) -> np.ndarray:
        """:meth:`generalized` with A as entry triplets (vals, rows, cols), duplicates summed (fast.entries), and
        ``targets`` = :meth:`entry_targets` of their (rows, cols)."""
        if lam is None:
            return np.full((len(self.joint), 3), np.nan)
        return self.generalized_entries_batch(vals[None], lam[None], targets)[0]

    def generalized_entries_batch(self, vals: np.ndarray, lam: np.ndarray, targets: tuple) -> np.ndarray:
        """(k, E, 3): :meth:`generalized_entries` of k states, vals (k, entries), lam (k, m) (NaN for a state whose
        multipliers are not finite); one bincount, each state's sums in the same order as alone."""
        entry, row, target = targets
        k, width = len(lam), 3 * len(self.joint)
        terms = vals[:, entry] * lam[:, row]
        out = -np.bincount((target + width * np.arange(k)[:, None]).ravel(), terms.ravel(), k * width)
        out = out.reshape(k, -1, 3)
        out[~np.isfinite(lam).all(axis=1)] = np.nan
        return out

    def _table(self, target: np.ndarray, terms: np.ndarray) -> np.ndarray:
        """(E, 3) = -(sum of the terms A_ic lam_i of each target); zero where none (ground, a point mass's theta)."""
        return -np.bincount(target, weights=terms, minlength=3 * len(self.joint)).reshape(-1, 3)

    @cached_property
    def terms(self) -> tuple:
        """(target, row, col): every term A[row, col] lam[row] of the table of :meth:`generalized`, target = 3 k + p
        for entry k's column position p (its body's column col = cols[k, p] < n, row a row of its joint)."""
        row, k = np.nonzero(self.rows_of[:, self.joint])              # the rows of each entry's joint
        target = (3 * k[:, None] + np.arange(3)).ravel()
        row, col = np.repeat(row, 3), self.cols[k].ravel()
        keep = col < self.n
        return target[keep], row[keep], col[keep]

    def entry_targets(self, rows: np.ndarray, cols: np.ndarray) -> tuple:
        """(entry, row, target): the entries e of A given as (rows[e], cols[e]) that reach the table (not a row of no
        joint, not the ground column), their rows and their targets (:attr:`terms`); once per entry pattern."""
        target, row, col = self.terms
        where = dict(zip(zip(row.tolist(), col.tolist()), target.tolist()))
        found = np.array([where.get(rc, -1) for rc in zip(np.asarray(rows).tolist(), np.asarray(cols).tolist())],
                         dtype=np.int64)
        entry = np.flatnonzero(found >= 0)
        return entry, np.asarray(rows)[entry], found[entry]

    def finish(self, q: np.ndarray, Qe: np.ndarray) -> np.ndarray:
        """(k, E, 5) reactions of k states from q (k, n) and :meth:`generalized` (k, E, 3): ground
        entries by action and reaction, body-frame components; elementwise, so a batch of states gives
        the same numbers as one state at a time (simulation.recorder.Recorder defers this part to the end of a run)."""
        qe = np.concatenate([q, np.zeros((len(q), 1))], axis=1)
        F, Mz = Qe[:, :, :2].copy(), Qe[:, :, 2].copy()                   # (k, E, 2), (k, E)
        g, p = self.ground, self.partner[self.ground]
        r = qe[:, self.cols[p, :2]]
        F[:, g] = -F[:, p]
        Mz[:, g] = -(Mz[:, p] + r[..., 0] * F[:, p, 1] - r[..., 1] * F[:, p, 0])
        Fb = rotate(-qe[:, self.cols[:, 2]].ravel(), F.reshape(-1, 2)).reshape(F.shape)
        return np.concatenate([F, Mz[..., None], Fb], axis=2)


def joint_rows(model: Model, body_cols: dict):
    """(index: joint -> column, rows_of (rows, joints): 1 where a row of C = [Phi_q; Psi] belongs to the joint
    (its label ``joint.component``; knife edges are pairs too, paper 003), ent: (joint, body) of every joint with
    rows, in order) over the joints whose bodies are in ``body_cols``; None if no joint has rows."""
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
    return index, rows_of, [(j, b) for j in used for b in model.joint_bodies[j]]


def reaction_map(model: Model) -> ReactionMap | None:
    """The ReactionMap of a model built with joints (``Model.joint_bodies``), else None."""
    if not model.joint_bodies or not model.bodies:
        return None
    body_cols = {b.name: tuple(c if c >= 0 else model.n for c in b.cols) for b in model.bodies}
    body_cols[GROUND] = (model.n,) * 3
    found = joint_rows(model, body_cols)
    if found is None:
        return None
    index, rows_of, ent = found
    out_labels = tuple(f"{j}.on_{b}.{c}" for j, b in ent for c in COMPONENTS)
    return ReactionMap(rows_of=rows_of, joint=np.array([index[j] for j, _ in ent]),
                       cols=np.array([body_cols[b] for _, b in ent], dtype=int),
                       partner=np.arange(len(ent)) ^ 1, ground=np.array([b == GROUND for _, b in ent]),
                       labels=out_labels, n=model.n)


def joint_reactions(model: Model, q: np.ndarray, A: np.ndarray, lam: np.ndarray) -> dict[str, float]:
    """{label: value} of all joint reactions at a state (see the module docstring); empty for a
    model without joints. A (m, n) = Phi_q at q, lam (m,) the multipliers."""
    rmap = reaction_map(model)
    if rmap is None:
        return {}
    return dict(zip(rmap.labels, rmap.values(np.asarray(q, float), A, lam).tolist()))
