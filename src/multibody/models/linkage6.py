"""The six-body linkage of paper 004 Sect. 5.4.2 (Figs 21-25): six bodies and six revolute joints in a
closed chain; body 0 fixed, so n = 5 x 12 = 60 and m = 30 internal + 30 joint constraints of which 59
are independent (1 DOF, Wittenburg 1977).

Geometry (derived from the paper's data, the figure itself is not in the text): the initial
configuration forms a cube [0, L]^3. The six joint axes run along six cube edges through the
vertices of the skew hexagon P0 = (0,L,0), P1 = (0,0,0), P2 = (0,0,L), P3 = (L,0,L), P4 = (L,L,L),
P5 = (L,L,0); the axis at P_k is the cube edge at P_k that the hexagon does not use (z, x, y, z, x,
y), so consecutive axes are perpendicular and skew at distance L, and body k is the link from P_k to
P_(k+1). Each body is the tetrahedron P_k, P_(k+1), P_(k+1) + aL i_(k+1), P_k + aL o_k (i, o: unit
vectors along the axis pointing into / out of the cube), a = tan(gamma): for body 0 this is
(0,L,0), (0,0,0), (aL,0,0), (0,L,-aL) -- mass rho a^2 L^3 / 6, centre of mass (aL/4, L/2, -aL/4) and
the inertia tensor printed in the paper (the mirror hexagon y -> L - y gives the opposite signs of
J_12 and J_23, which is how the orientation was decided; checked in tests/test_spatial.py); bodies 1, 3, 5 come out as
mirror images of body 0 and bodies 2, 4 as copies, as the paper states.

Initial velocities: v = P^o(q0) P^oc theta1' with P^oc spanning the null space of the closure
Jacobian times the open-chain null-space matrix (eq. 192); computed, not assumed, and compared with
eq. (191) in the tests.
"""
from __future__ import annotations

import numpy as np

from ..linalg.rank import pivoted_qr
from ..model.director_builder import SpatialModelBuilder
from ..model.director_tree import build_tree, null_space_matrix
from ..assembly import Workspace

RHO, LENGTH, GAMMA, G = 1000.0, 0.1, 0.16 * np.pi, 9.81
THETA1_RATE = 30.0


def hexagon(L=LENGTH):
    """Vertices P_k (6, 3) and joint axes a_k (6, 3) (unit, pointing into the cube)."""
    P = L * np.array([[0, 1, 0], [0, 0, 0], [0, 0, 1], [1, 0, 1], [1, 1, 1], [1, 1, 0]], float)
    axes = np.eye(3)[[2, 0, 1, 2, 0, 1]]
    inward = np.where(np.einsum("ki,ki->k", P, axes) > 0, -1.0, 1.0)[:, None] * axes
    return P, inward


def tetrahedron(vertices, rho):
    """Mass, centre of mass (3,) and inertia tensor about it (3, 3) of a homogeneous tetrahedron."""
    v = np.asarray(vertices, float)
    vol = abs(np.linalg.det(v[1:] - v[0])) / 6
    mass = rho * vol
    com = v.mean(axis=0)
    s = v.sum(axis=0)
    second = mass / 20 * (v.T @ v + np.outer(s, s))          # int x x^T dm about the origin
    E = second - mass * np.outer(com, com)                   # Euler tensor about the centre of mass
    return mass, com, np.trace(E) * np.eye(3) - E


def bodies(L=LENGTH, gamma=GAMMA, rho=RHO):
    """[(vertices (4, 3), mass, com, J)] for bodies 0..5 in the initial (cube) configuration."""
    a = np.tan(gamma)
    P, inward = hexagon(L)
    out = []
    for k in range(6):
        k1 = (k + 1) % 6
        verts = np.array([P[k], P[k1], P[k1] + a * L * inward[k1], P[k] - a * L * inward[k]])
        out.append((verts,) + tetrahedron(verts, rho))
    return out


def six_body_linkage(extras=None):
    """Six-body linkage, closed chain of six revolute joints, 1 DOF (paper 004 Sect. 5.4.2).

    ``extras(builder, P, inward)``: adds elements before the build (the cost benchmark of issue 23)."""
    P, inward = hexagon()
    b = SpatialModelBuilder("six-body-linkage", source="Betsch & Leyendecker 2006, Part II, Sect. 5.4.2")
    for k, (verts, mass, com, J) in enumerate(bodies()[1:], start=1):
        b.add_body(f"body{k}", mass=mass, inertia=J, position=com, outline=verts[[0, 1, 2, 0, 3, 1, 3, 2]])
    names = [None] + [f"body{k}" for k in range(1, 6)]
    for k in range(1, 6):
        b.revolute(f"joint{k}", names[k - 1], names[k], point=P[k], axis=-inward[k])
    b.revolute("joint6", None, "body5", point=P[0], axis=-inward[0])   # loop closure (eq. 190)
    b.gravity(G)
    if extras is not None:
        extras(b, P, inward)
    model = b.build()
    tree = build_tree(model)
    Po = null_space_matrix(tree, model.q0)                     # (60, 5), eq. (185)
    A = Workspace(model).constraints(0.0, model.q0, np.zeros(model.n))[1]
    closure = A[tree.closure_rows(model)] @ Po                 # (5, 5), rank 4
    p = pivoted_qr(closure).null_space[:, 0]
    p = p / p[0]                                               # theta1' = 1 (eq. 191)
    return model.with_initial(v0=THETA1_RATE * Po @ p)
