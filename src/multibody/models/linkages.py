"""Driven planar linkages with closed-form position analysis: slider-crank and four-bar."""
from __future__ import annotations

import numpy as np

from ..model.builder import ModelBuilder
from ..model.motion import Motion

G = (0.0, -9.81)


def slider_crank(*, crank: float = 0.2, rod: float = 0.6, omega: float = 2 * np.pi, phi0: float = np.pi / 3):
    """Centred slider-crank driven at constant crank rate (Nikravesh, Computer-Aided Analysis of
    Mechanical Systems, 1988, Sect. 4.6; Freudenstein-type closed form).

    Crank (length r = ``crank``, 1 kg) hinged to ground at the origin, connecting rod (length l,
    2 kg), slider (0.5 kg) on a prismatic joint along the x-axis. The crank angle is prescribed,
    phi(t) = phi0 + omega t; the slider position is x_s = r cos phi + sqrt(l^2 - r^2 sin^2 phi).
    """
    mb = ModelBuilder("slider-crank", gravity=G, source="Nikravesh 1988, slider-crank")
    p1 = crank * np.array([np.cos(phi0), np.sin(phi0)])
    xs = crank * np.cos(phi0) + np.sqrt(rod ** 2 - (crank * np.sin(phi0)) ** 2)
    beta = np.arctan2(-p1[1], xs - p1[0])
    mb.add_bar("crank", length=crank, mass=1.0, position=p1 / 2, angle=phi0)
    mb.add_bar("rod", length=rod, mass=2.0, position=(p1 + [xs, 0]) / 2, angle=beta)
    mb.add_body("slider", mass=0.5, inertia=1e-3, position=(xs, 0.0), angle=0.0,
                outline=[(-0.05, -0.03), (0.05, -0.03), (0.05, 0.03), (-0.05, 0.03), (-0.05, -0.03)])
    mb.revolute("O", "ground", "crank", at=(0, 0))
    mb.revolute("A", "crank", "rod", at=p1)
    mb.revolute("B", "rod", "slider", at=(xs, 0.0))
    mb.prismatic("P", "ground", "slider", axis=(1, 0), at=(xs, 0.0))
    mb.driver("O", Motion.constant_rate(phi0, omega))
    return mb.build()


def slider_position(phi, crank=0.2, rod=0.6):
    """Closed-form slider position of the centred slider-crank at crank angle phi."""
    return crank * np.cos(phi) + np.sqrt(rod ** 2 - (crank * np.sin(phi)) ** 2)


FOUR_BAR = dict(a=0.2, b=0.6, c=0.5, d=0.5)   # crank, coupler, rocker, ground (Grashof crank-rocker)


def rocker_angle(theta2, a=0.2, b=0.6, c=0.5, d=0.5):
    """Rocker angle theta4 of the open four-bar from Freudenstein's equation
    K1 cos theta4 - K2 cos theta2 + K3 = cos(theta2 - theta4), K1 = d/a, K2 = d/c,
    K3 = (a^2 - b^2 + c^2 + d^2) / (2 a c) (Freudenstein 1955; Norton, Design of Machinery, eq. 4.10).
    """
    K1, K2, K3 = d / a, d / c, (a * a - b * b + c * c + d * d) / (2 * a * c)
    A = np.cos(theta2) - K1 - K2 * np.cos(theta2) + K3
    B = -2 * np.sin(theta2)
    C = K1 - (K2 + 1) * np.cos(theta2) + K3
    return 2 * np.arctan2(-B - np.sqrt(B * B - 4 * A * C), 2 * A)


def four_bar(*, omega: float = 2 * np.pi, theta0: float = np.pi / 4):
    """Grashof crank-rocker four-bar (crank a = 0.2, coupler b = 0.6, rocker c = 0.5, ground d = 0.5 m;
    uniform bars, 1 kg/m), crank driven at constant rate; positions follow Freudenstein's equation
    (:func:`rocker_angle`, open assembly)."""
    a, b, c, d = (FOUR_BAR[k] for k in "abcd")
    t4 = rocker_angle(theta0)
    A = a * np.array([np.cos(theta0), np.sin(theta0)])
    B = np.array([d, 0.0]) + c * np.array([np.cos(t4), np.sin(t4)])
    mb = ModelBuilder("four-bar", gravity=G, source="Freudenstein 1955; Norton, Design of Machinery, ch. 4")
    mb.add_bar("crank", length=a, mass=a, position=A / 2, angle=theta0)
    mb.add_bar("coupler", length=b, mass=b, position=(A + B) / 2, angle=np.arctan2(*(B - A)[::-1]))
    mb.add_bar("rocker", length=c, mass=c, position=(B + [d, 0]) / 2, angle=t4)
    mb.revolute("O2", "ground", "crank", at=(0, 0))
    mb.revolute("A", "crank", "coupler", at=A)
    mb.revolute("B", "coupler", "rocker", at=B)
    mb.revolute("O4", "rocker", "ground", at=(d, 0))
    mb.driver("O2", Motion.constant_rate(theta0, omega))
    return mb.build()
