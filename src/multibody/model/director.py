"""Spatial rigid bodies in director coordinates and lower kinematic pairs (paper 004, Sects 3-4).

A body has 12 coordinates q = (phi, d1, d2, d3) (eq. 21): centre of mass and the principal body
frame ("directors"); its mass matrix is constant, M = diag(M_phi I, E_1 I, E_2 I, E_3 I) (eq. 23),
with E_I the principal values of the Euler tensor E = 1/2 tr(J) I - J (eq. 158). Rigidity gives six
internal constraints (eq. 24). Joints add the external constraints of Sect. 4.5.

Every constraint of this formulation is at most quadratic in q (paper 004 Sect. 1 and 4.3), so all
are stored in one vectorised form, :class:`QuadraticConstraints`: row k is

    Phi_k = 1/2 x_k^T H_k x_k + g_k^T x_k + c_k,   x_k = q[cols_k]   (w = 12 or 24 entries)

so that Phi_q = H x + g (the paper's eqs 25, 81, 101, 120, 130, 140 entry by entry), gamma =
-v^T H v exactly, and the discrete Jacobian of the energy-momentum scheme is the mid-point Jacobian
(eqs 38, 67). Evaluation is a few einsums over all rows of a group: no Python loop per joint.

Orientation rows of the R, C and E pairs are n^1 . a^2_k - eta_k with two child-fixed unit vectors
a^2_k perpendicular to the axis (the paper's d^2_1, d^2_2 when the axis is d^2_3, eqs 100, 119, 139);
this generalisation keeps the rows independent whatever the child's body frame.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..linalg.rotations import cross
from .constraints import ConstraintGroup

#: rows per pair kind and relative degrees of freedom r (paper 004 Table I)
PAIR_ROWS = {"S": 3, "R": 5, "C": 4, "P": 5, "E": 3}
PAIR_DOF = {"S": 3, "R": 1, "C": 2, "P": 1, "E": 3}
#: labels of the relative coordinates reported per pair kind (Figs 14, 18, 25)
PAIR_COORDS = {"S": (), "R": ("theta",), "C": ("u", "theta"), "P": ("u",), "E": ("u1", "u2", "theta")}
_ROW_NAMES = {"S": ("x", "y", "z"), "R": ("x", "y", "z", "axis1", "axis2"),
              "C": ("m1", "m2", "axis1", "axis2"), "P": ("m1", "m2", "d12", "d23", "d31"),
              "E": ("n", "axis1", "axis2")}


@dataclass(frozen=True)
class QuadraticConstraints(ConstraintGroup):
    """Rows Phi_k = 1/2 x^T H_k x + g_k^T x + c_k with x = q[cols_k]: H (r, w, w), g (r, w), c (r,)."""

    H: np.ndarray = field(kw_only=True)
    g: np.ndarray = field(kw_only=True)
    c: np.ndarray = field(kw_only=True)

    def values(self, qe: np.ndarray):
        """phi (..., r), jac (..., r, w) at the extended coordinates qe (..., n + 1), real or complex."""
        x = qe[..., self.cols]
        Hx = np.einsum("rij,...rj->...ri", self.H, x)
        phi = 0.5 * np.einsum("...ri,...ri->...r", x, Hx) + np.einsum("ri,...ri->...r", self.g, x) + self.c
        return phi, Hx + self.g

    def _evaluate(self, qe, ve):
        phi, jac = self.values(qe)
        v = ve[self.cols]
        return phi, jac, -np.einsum("ri,rij,rj->r", v, self.H, v)

    def dense_jacobian(self, qe: np.ndarray) -> np.ndarray:
        """Phi_q (..., r, n) at qe (..., n + 1), real or complex (column n, the ground, dropped; the
        columns of a row are distinct apart from the ground's, so assignment is exact)."""
        _, jac = self.values(qe)
        out = np.zeros(jac.shape[:-2] + (self.rows, qe.shape[-1]), dtype=jac.dtype)
        out[..., np.arange(self.rows)[:, None], self.cols] = jac
        return out[..., :-1]

    def hessian_sum(self, lam: np.ndarray, n: int) -> np.ndarray:
        """sum_k lam_k Phi_k,qq (n, n): the geometric stiffness of the constraint forces."""
        out = np.zeros((n + 1, n + 1))
        w = self.cols.shape[1]
        rows = np.broadcast_to(self.cols[:, :, None], (self.rows, w, w))
        cols = np.broadcast_to(self.cols[:, None, :], (self.rows, w, w))
        np.add.at(out, (rows, cols), lam[:, None, None] * self.H)
        return out[:n, :n]


@dataclass(frozen=True)
class SpatialBodies(QuadraticConstraints):
    """The internal constraints (eq. 24) of all spatial bodies, and what the bodies are.

    names (b,), body_cols (b, 12) coordinate columns (phi, d1, d2, d3), mass (b,), euler (b, 3)
    principal values E_I, outlines: body-frame points (k, 3) per body for drawing."""

    names: tuple[str, ...] = field(kw_only=True)
    body_cols: np.ndarray = field(kw_only=True)
    mass: np.ndarray = field(kw_only=True)
    euler: np.ndarray = field(kw_only=True)
    outlines: tuple = field(kw_only=True, default=())

    @property
    def inertia(self) -> np.ndarray:
        """Principal inertias J_I = tr(E) - E_I (eq. 20), (b, 3)."""
        return self.euler.sum(axis=1, keepdims=True) - self.euler

    def frames(self, q: np.ndarray):
        """phi (b, 3) and directors D (b, 3, 3) with D[:, :, I] = d_I."""
        x = q[self.body_cols]
        return x[:, :3], x[:, 3:].reshape(-1, 3, 3).transpose(0, 2, 1)

    def momenta(self, q: np.ndarray, v: np.ndarray):
        """Linear momentum (3,) and angular momentum about the origin (3,) of all bodies:
        L = sum phi x M_phi v_phi + sum_I d_I x E_I v_I (the momentum map of the director
        formulation; equals M~ omega of eq. 173 for consistent velocities)."""
        x, xd = q[self.body_cols], v[self.body_cols]
        p = self.mass[:, None] * xd[:, :3]
        L = cross(x[:, :3], p)
        for I in range(3):
            L += cross(x[:, 3 + 3 * I: 6 + 3 * I], self.euler[:, I, None] * xd[:, 3 + 3 * I: 6 + 3 * I])
        return p.sum(axis=0), L.sum(axis=0)


@dataclass(frozen=True)
class LowerPairs(QuadraticConstraints):
    """All lower pairs of one kind J in {S, R, C, P, E} (Sect. 4.5), vectorised over k joints.

    parent, child (k,): body indices (parent -1 = ground, whose frame is the inertial one);
    X1, X2 (k, 3): joint points in parent / child body frame (eq. 79); n, m1, m2 (k, 3): the
    orthonormal frame {m1, m2, n} of eqs 96-97 in parent components; a2 (k, 2, 3): child vectors
    of the orientation rows; ref (k, 3): parent components of a2_1 at the start (zero of theta)."""

    kind: str = field(kw_only=True)
    joint_names: tuple[str, ...] = field(kw_only=True)
    parent: np.ndarray = field(kw_only=True)
    child: np.ndarray = field(kw_only=True)
    X1: np.ndarray = field(kw_only=True)
    X2: np.ndarray = field(kw_only=True)
    n: np.ndarray = field(kw_only=True)
    m1: np.ndarray = field(kw_only=True)
    m2: np.ndarray = field(kw_only=True)
    a2: np.ndarray = field(kw_only=True)
    ref: np.ndarray = field(kw_only=True)

    def coordinate_labels(self) -> tuple[str, ...]:
        return tuple(f"{j}.{c}" for j in self.joint_names for c in PAIR_COORDS[self.kind])

    def relative_coordinates(self, bodies: SpatialBodies, q: np.ndarray) -> np.ndarray:
        """The relative joint coordinates (u, u1, u2, theta as in eqs 98, 116, 138, 152), flattened
        (k * r_coords,); theta in (-pi, pi] (unwrap over time for plots)."""
        phi, D = _frames_with_ground(bodies, q)
        Dp, Dc = D[self.parent], D[self.child]
        n, m1, m2 = (np.einsum("kij,kj->ki", Dp, a) for a in (self.n, self.m1, self.m2))
        d = (phi[self.child] + np.einsum("kij,kj->ki", Dc, self.X2)
             - phi[self.parent] - np.einsum("kij,kj->ki", Dp, self.X1))
        r = np.einsum("kij,kj->ki", Dp, self.ref)
        a = np.einsum("kij,kj->ki", Dc, self.a2[:, 0])
        theta = np.arctan2(np.einsum("ki,ki->k", n, cross(r, a)), np.einsum("ki,ki->k", r, a))
        u = np.einsum("ki,ki->k", n, d)
        cols = {"S": [], "R": [theta], "C": [u, theta], "P": [u],
                "E": [np.einsum("ki,ki->k", m1, d), np.einsum("ki,ki->k", m2, d), theta]}[self.kind]
        return np.stack(cols, axis=1).ravel() if cols else np.zeros(0)


def _frames_with_ground(bodies: SpatialBodies, q):
    """phi (b + 1, 3), D (b + 1, 3, 3) with the ground (identity frame at the origin) as index -1."""
    phi, D = bodies.frames(q)
    return np.concatenate([phi, np.zeros((1, 3))]), np.concatenate([D, np.eye(3)[None]])


def complement(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors m1, m2 with {m1, m2, n} a right-handed orthonormal frame (m1 from the
    coordinate axis least aligned with n, so m1 = e1, m2 = e2 for n = e3 as in Sect. 5.3)."""
    e = np.eye(3)[np.argmin(np.abs(n))]
    m1 = e - (e @ n) * n
    m1 /= np.linalg.norm(m1)
    return m1, cross(n, m1)


# ----------------------------------------------------------------------------- row construction
def _point_map(X: np.ndarray) -> np.ndarray:
    """(3, 12): q_body -> phi + X_i d_i (eq. 16)."""
    return np.hstack([np.eye(3)] + [X[i] * np.eye(3) for i in range(3)])


def _vector_map(u: np.ndarray) -> np.ndarray:
    """(3, 12): q_body -> u_i d_i (eqs 96, 97)."""
    return np.hstack([np.zeros((3, 3))] + [u[i] * np.eye(3) for i in range(3)])


def _pair(A1, A2):
    """(3, 24) map of x = [q_parent, q_child] from a parent (3, 12) and a child (3, 12) map."""
    return np.hstack([A1, A2])


def _bilinear(A, B):
    """H of the row (A x).(B x): H = A^T B + B^T A (so that 1/2 x^T H x = (A x).(B x))."""
    return A.T @ B + B.T @ A


def pair_rows(kind, X1, X2, n, m1, m2, a2):
    """H (r, 24, 24) and g (r, 24) of one pair of kind J (eqs 80, 100, 119, 129, 139); the constant
    terms (eta) are set from the initial configuration by the caller."""
    Z = np.zeros((3, 12))
    p = _pair(-_point_map(X1), _point_map(X2))                    # p2 - p1 (eq. 99)
    nv = _pair(_vector_map(n), Z)
    rows_H, rows_g = [], []
    if kind in ("S", "R"):
        for k in range(3):
            rows_H.append(np.zeros((24, 24)))
            rows_g.append(p[k])
    if kind in ("C", "P"):
        for m in (m1, m2):
            rows_H.append(_bilinear(_pair(_vector_map(m), Z), p))
            rows_g.append(np.zeros(24))
    if kind == "E":
        rows_H.append(_bilinear(nv, p))
        rows_g.append(np.zeros(24))
    if kind in ("R", "C", "E"):
        for k in range(2):
            rows_H.append(_bilinear(nv, _pair(Z, _vector_map(a2[k]))))
            rows_g.append(np.zeros(24))
    if kind == "P":
        e = np.eye(3)
        for i, j in ((0, 1), (1, 2), (2, 0)):                    # d1_1.d2_2, d1_2.d2_3, d1_3.d2_1
            rows_H.append(_bilinear(_pair(_vector_map(e[i]), Z), _pair(Z, _vector_map(e[j]))))
            rows_g.append(np.zeros(24))
    return np.array(rows_H), np.array(rows_g)


def internal_rows():
    """H (6, 12, 12), g (6, 12), c (6,) of the internal constraints, eq. (24)."""
    e = np.eye(3)
    H, c = [], []
    for i, j, scale, const in ((0, 0, .5, -.5), (1, 1, .5, -.5), (2, 2, .5, -.5), (0, 1, 1, 0),
                               (0, 2, 1, 0), (1, 2, 1, 0)):
        H.append(scale * _bilinear(_vector_map(e[i]), _vector_map(e[j])))
        c.append(const)
    return np.array(H), np.zeros((6, 12)), np.array(c)


GROUND_Q = np.concatenate([np.zeros(3), np.eye(3).ravel()])   # the ground's (phi, d1, d2, d3)


def fold_ground(H, g, c):
    """Rows over x = [q_ground, q_child] with the ground part fixed at GROUND_Q: returns H, g, c
    over the same 24 entries with the ground block moved into g and c (and zero there)."""
    xg = GROUND_Q
    g2 = g[:, 12:] + np.einsum("rij,j->ri", H[:, 12:, :12], xg)
    c2 = c + g[:, :12] @ xg + 0.5 * np.einsum("i,rij,j->r", xg, H[:, :12, :12], xg)
    H2 = np.zeros_like(H)
    H2[:, 12:, 12:] = H[:, 12:, 12:]
    g_out = np.zeros_like(g)
    g_out[:, 12:] = g2
    return H2, g_out, c2
