"""Spatial examples of paper 004 (Betsch & Leyendecker, Part II, Sect. 5) with the paper's data.

- ``gyro-top``: symmetric top on a spherical pair with the ground, steady precession (Sect. 5.1);
- ``cylindrical-pair``: free flight of a C pair (Sect. 5.2);
- ``planar-pair``: free flight of an E pair (Sect. 5.3);
- ``six-body-linkage``: closed chain of six bodies and six revolute joints (Sect. 5.4.2).

Initial velocities are v = P(q0) nu0 with the null-space matrix of the pair (eqs 170, 174, 176, 192).
"""
from __future__ import annotations

import numpy as np

from ..model.director_builder import SpatialModelBuilder
from ..model.director_tree import build_tree, null_space_matrix
from ..linalg.rotations import axis_rotation, expm_so3

G = 9.81


# ----------------------------------------------------------------------------- gyro top (5.1)
def top_data(theta=np.pi / 3, omega_p=10.0):
    """Data of Sect. 5.1: cone H = 0.1, R = 0.05, rho = 2700, L = 3H/4; steady-precession spin
    rate omega_s of eq. (165) with the reduced inertias of eq. (168)."""
    H, R, rho = 0.1, 0.05, 2700.0
    L = 0.75 * H
    mass = rho * np.pi * R ** 2 * H / 3
    J1 = 3 * mass / 80 * (4 * R ** 2 + H ** 2)
    J3 = 3 * mass / 10 * R ** 2
    M1, M3 = J1 + mass * L ** 2, J3
    omega_s = mass * G * L / (M3 * omega_p) + (M1 - M3) / M3 * omega_p * np.cos(theta)
    return dict(H=H, R=R, L=L, mass=mass, J=np.array([J1, J1, J3]), theta=theta, omega_p=omega_p,
                omega_s=omega_s)


def top_exact(t, data=None):
    """The analytic steady precession: directors D(t) (k, 3, 3) = exp(w_p t e3^) D0 exp(w_s t e3^)
    and centre of mass phi(t) = L d3(t) (k, 3) (eqs 169, 171)."""
    data = data or top_data()
    t = np.atleast_1d(np.asarray(t, float))
    D0 = expm_so3(data["theta"] * np.eye(3)[0])
    e3 = np.broadcast_to(np.eye(3)[2], (len(t), 3))
    D = axis_rotation(data["omega_p"] * t, e3) @ D0 @ axis_rotation(data["omega_s"] * t, e3)
    return D, data["L"] * D[:, :, 2]


def gyro_top():
    """Gyro top in steady precession (paper 004 Sect. 5.1: theta = pi/3, omega_p = 10)."""
    c = top_data()
    D0 = expm_so3(c["theta"] * np.eye(3)[0])
    d3 = D0[:, 2]
    omega = c["omega_p"] * np.eye(3)[2] + c["omega_s"] * d3
    ang = np.linspace(0, 2 * np.pi, 17)
    rim = (c["H"] * d3)[None] + c["R"] * (np.cos(ang)[:, None] * D0[:, 0] + np.sin(ang)[:, None] * D0[:, 1])
    outline = np.vstack([np.zeros(3), rim, np.zeros(3)])
    b = SpatialModelBuilder("gyro-top", source="Betsch & Leyendecker 2006, Part II, Sect. 5.1")
    phi = c["L"] * d3
    b.add_body("top", mass=c["mass"], inertia=c["J"], position=phi, directors=D0,
               velocity=np.cross(omega, phi), omega=omega, outline=outline)
    b.spherical("pivot", None, "top", point=(0, 0, 0))
    b.gravity(G)
    return b.build()


# ----------------------------------------------------------------------------- free pairs (5.2, 5.3)
def _with_velocities(model, nu):
    """v0 = P(q0) nu (eqs 174, 176)."""
    tree = build_tree(model)
    return model.with_initial(v0=null_space_matrix(tree, model.q0) @ np.asarray(nu, float))


def _box(center, half):
    s = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1], [-1, -1]], float)
    lo = [np.column_stack([s * half[:2], np.full(5, z)]) for z in (-half[2], half[2])]
    return np.vstack([lo[0], lo[1]]) + center


def _tube(center, radius, half_length, k=12):
    a = np.linspace(0, 2 * np.pi, k + 1)
    ring = np.column_stack([radius * np.cos(a), radius * np.sin(a), np.zeros(k + 1)])
    top, bot = ring + [0, 0, half_length], ring - [0, 0, half_length]
    return np.vstack([bot, top[::-1][:1], top, bot[:1]]) + center


def cylindrical_pair():
    """Free flight of a cylindrical pair (paper 004 Sect. 5.2, Figs 11-14)."""
    b = SpatialModelBuilder("cylindrical-pair", source="Betsch & Leyendecker 2006, Part II, Sect. 5.2")
    b.add_body("cylinder", mass=4.0, inertia=[304, 304, 8], position=(0, 0, 0),
               outline=_tube(np.zeros(3), 2.0, 15.0))
    b.add_body("sleeve", mass=3.0, inertia=[18.75, 18.75, 19.5], position=(0, 0, -11),
               outline=_tube(np.array([0, 0, -11.0]), 3.0, 3.0))
    b.cylindrical("slide", "cylinder", "sleeve", point=(0, 0, 0), point2=(0, 0, -11), axis=(0, 0, 1))
    return _with_velocities(b.build(), [0, 50, 0, 1, 1.5, 0, 35.5, -100])


def planar_pair():
    """Free flight of a planar pair: pyramid sliding on a plate (paper 004 Sect. 5.3, Figs 15-18)."""
    b = SpatialModelBuilder("planar-pair", source="Betsch & Leyendecker 2006, Part II, Sect. 5.3")
    b.add_body("plate", mass=5.0, inertia=[5125 / 48, 5125 / 48, 640 / 3], position=(5, 5, 5),
               outline=_box(np.array([5, 5, 5.0]), np.array([8, 8, 0.25])))
    apex = np.array([-2, -2, 5.25 + 3.0])
    base = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1], [-1, -1]]) + [-2, -2]
    pyr = np.vstack([np.column_stack([base, np.full(5, 5.25)]), apex, [-1, -3, 5.25], apex, [-1, -1, 5.25],
                     apex, [-3, -1, 5.25]])
    b.add_body("pyramid", mass=2.0, inertia=[43 / 40, 43 / 40, 4 / 5], position=(-2, -2, 6.25), outline=pyr)
    b.planar("slide", "plate", "pyramid", point=(5, 5, 5.25), point2=(-2, -2, 5.25), axis=(0, 0, 1))
    return _with_velocities(b.build(), [0, 0, 0, -20, -20, 10, 150, -120, 60])


from .linkage6 import six_body_linkage  # noqa: E402  (kept in its own module: geometry derivation)

__all__ = ["gyro_top", "cylindrical_pair", "planar_pair", "six_body_linkage", "top_data", "top_exact"]
