"""Spatial mechanisms with springs, dampers and drivers (issue 23), built with SpatialModelBuilder.

- ``spatial-slider-crank``: a crank turning about e3 at the origin (R pair, driven at one revolution
  per second), a connecting rod with spherical pairs at both ends and a slider on a line parallel to
  e2 at x = c, z = h (P pair): a non-planar slider-crank whose slider position has the closed form
  :func:`slider_position`;
- ``rssr-spring``: an RSSR linkage (crank about e3, rocker about e1, coupler with two spherical
  pairs) held by a preloaded spring-damper from the ground to the rocker tip, under gravity;
- ``gimbal-lock``: a balanced gyroscope, a disc spinning about e1 in a gimbal that turns about the
  vertical e3; the gimbal's pair is locked at t = 0.5 s (:data:`GIMBAL_EVENTS`, paper 002): the
  gimbal stops, the spin stays (:data:`GIMBAL`).

Rods are slender cylinders of radius ROD_RADIUS: J = m (3 rho^2 + l^2)/12 across, m rho^2/2 along.
"""
from __future__ import annotations

import numpy as np

from ..model.director_builder import SpatialModelBuilder
from ..model.motion import Motion
from ..simulation.spatial_lock import lock_pair_at

G = 9.81
ROD_RADIUS = 0.01
#: spatial slider-crank data: crank radius r, rod length l, slider line x = c, z = h (SI units)
SLIDER_CRANK = dict(r=0.1, l=0.5, c=0.3, h=0.1, rate=2 * np.pi)


def _frame_along(e):
    """Right-handed directors with d3 along e."""
    d3 = np.asarray(e, float) / np.linalg.norm(e)
    k = np.argmin(np.abs(d3))
    d1 = np.eye(3)[k] - d3[k] * d3
    d1 /= np.linalg.norm(d1)
    return np.column_stack([d1, np.cross(d3, d1), d3])


def _rod(b, name, mass, p, q):
    """A slender rod from p to q (global points), d3 along it."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    length = float(np.linalg.norm(q - p))
    J = mass * (3 * ROD_RADIUS ** 2 + length ** 2) / 12
    b.add_body(name, mass=mass, inertia=[J, J, mass * ROD_RADIUS ** 2 / 2], position=0.5 * (p + q),
               directors=_frame_along(q - p), outline=np.array([p, q]))


def slider_position(theta, r=SLIDER_CRANK["r"], l=SLIDER_CRANK["l"], c=SLIDER_CRANK["c"], h=SLIDER_CRANK["h"]):
    """Closed form of the slider's y for the crank angle theta: the crank pin (r cos, r sin, 0) and
    the slider (c, y, h) are l apart, y = r sin theta + sqrt(l^2 - h^2 - (r cos theta - c)^2)."""
    theta = np.asarray(theta, float)
    return r * np.sin(theta) + np.sqrt(l ** 2 - h ** 2 - (r * np.cos(theta) - c) ** 2)


def spatial_slider_crank():
    """Spatial slider-crank driven at a constant rate of one revolution per second, under gravity."""
    d = SLIDER_CRANK
    pin, y0 = np.array([d["r"], 0, 0]), float(slider_position(0.0))
    s0 = np.array([d["c"], y0, d["h"]])
    b = SpatialModelBuilder("spatial-slider-crank", source="issue 23: spatial slider-crank, closed form "
                            "slider_position")
    _rod(b, "crank", 0.5, (0, 0, 0), pin)
    _rod(b, "rod", 1.0, pin, s0)
    b.add_body("slider", mass=2.0, inertia=[2e-3, 2e-3, 2e-3], position=s0,
               outline=s0 + 0.03 * np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0], [-1, -1, 0]]))
    b.revolute("crank-pin", None, "crank", point=(0, 0, 0), axis=(0, 0, 1))
    b.spherical("crank-rod", "crank", "rod", point=pin)
    b.prismatic("guide", None, "slider", point=s0, axis=(0, 1, 0))
    b.spherical("rod-slider", "rod", "slider", point=s0)
    b.driver("crank-pin", Motion.constant_rate(0.0, d["rate"]))
    b.gravity(G)
    return b.build()


def rssr_spring(damping=0.5):
    """RSSR linkage with a preloaded spring-damper on the rocker, released from rest under gravity."""
    A0, O2, B0 = np.array([0.1, 0, 0]), np.array([0.3, 0.3, 0.0]), np.array([0.3, 0.1, 0.1])
    b = SpatialModelBuilder("rssr-spring", source="issue 23: RSSR linkage with a spring-damper")
    _rod(b, "crank", 0.5, (0, 0, 0), A0)
    _rod(b, "coupler", 0.8, A0, B0)
    _rod(b, "rocker", 0.6, O2, B0)
    b.revolute("crank-pin", None, "crank", point=(0, 0, 0), axis=(0, 0, 1))
    b.spherical("crank-coupler", "crank", "coupler", point=A0)
    b.revolute("rocker-pin", None, "rocker", point=O2, axis=(1, 0, 0))
    b.spherical("coupler-rocker", "coupler", "rocker", point=B0)
    b.spring_damper("spring", None, "rocker", point1=(0.3, 0.0, 0.4), point2=B0, stiffness=200.0, damping=damping,
                    free_length=0.2)
    b.gravity(G)
    return b.build()


#: gimbal-lock data: disc (solid cylinder) mass, radius, thickness, spin s about e1; gimbal principal inertias
#: (e3 the vertical) and rate Omega; lock time. No body is flat, so M is positive definite (eq. 23).
GIMBAL = dict(mass=2.0, radius=0.1, thickness=0.02, spin=50.0, gimbal_mass=0.5, gimbal_J=(0.01, 0.012, 0.02),
              rate=2.0, t_lock=0.5)
GIMBAL_EVENTS = (lock_pair_at(GIMBAL["t_lock"], "gimbal-pin"),)


def gimbal_lock():
    """Balanced gyroscope whose gimbal (turning about the vertical) is locked at t = 0.5 s."""
    d = GIMBAL
    m, rho = d["mass"], d["radius"]
    J_perp = m * (3 * rho ** 2 + d["thickness"] ** 2) / 12         # solid cylinder about a diameter
    b = SpatialModelBuilder("gimbal-lock", source="issue 23: gimbal lock (paper 002 constraint activation)")
    ring = 0.15 * np.column_stack([np.zeros(13), np.cos(np.linspace(0, 2 * np.pi, 13)),
                                   np.sin(np.linspace(0, 2 * np.pi, 13))])
    b.add_body("gimbal", mass=d["gimbal_mass"], inertia=d["gimbal_J"], position=(0, 0, 0),
               omega=(0, 0, d["rate"]), outline=ring)
    disc = np.column_stack([np.zeros(13), rho * np.cos(np.linspace(0, 2 * np.pi, 13)),
                            rho * np.sin(np.linspace(0, 2 * np.pi, 13))])
    b.add_body("disc", mass=m, inertia=[m * rho ** 2 / 2, J_perp, J_perp], position=(0, 0, 0),
               omega=(d["spin"], 0, d["rate"]), outline=np.vstack([disc, [[0, 0, 0], [0.05, 0, 0]]]))
    b.revolute("gimbal-pin", None, "gimbal", point=(0, 0, 0), axis=(0, 0, 1))
    b.revolute("spin-axis", "gimbal", "disc", point=(0, 0, 0), axis=(1, 0, 0))
    b.gravity(G)
    return b.build()


__all__ = ["spatial_slider_crank", "rssr_spring", "gimbal_lock", "slider_position", "SLIDER_CRANK", "GIMBAL",
           "GIMBAL_EVENTS"]
