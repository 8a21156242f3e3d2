"""Nonholonomic and overconstrained models of paper 003: the mobile robot with a trolley (Sect. 4),
a door on two hinges and a knife-edge sled.

Mobile robot (our geometry; the paper's dimensions are in its appendix, not in the text we have).
Platform frame: x forward, y to the left; lengths in m, masses in kg.

- platform ``platform`` (body 1), centre (0, 0), 20 kg; fixed knife edges W3 at (0, +c), W4 at (0, -c)
  rolling along x (a common axle through the centre, c = 0.3);
- wheel carriers ``wheel1`` (body 2) at (+a, 0) and ``wheel2`` (body 3) at (-a, 0) (a = 0.4), pinned to
  the platform at their centres by revolutes B and C, each carrying a knife edge (W1, W2) at the pin,
  rolling along the carrier's x axis; steering arms of length e = 0.1 point to the centre, tips at
  (+-(a - e), 0);
- tie rods ``rod4``, ``rod5`` (bodies 4, 5) from the arm tips (revolutes D, E) straight up (+y) to the
  rack pins (revolutes F, G) at (+-(a - e), g), g = 0.15;
- rack ``rack`` (body 6) centred at (0, g), sliding along the platform y axis (translational joint H,
  2 rows) driven by d(t) (``H-driver``: 1 row; d > 0 moves the rack to the left and steers right);
- trolley ``trolley`` (body 7) pinned to the platform at (-0.6, 0) (revolute A), centre at (-1.0, 0),
  with knife edge W5 at its centre rolling along its axis.

n = 21, m = 7 x 2 + 2 + 1 = 17, h = 5, like the paper. Why C is redundant: the linkage is symmetric
under x -> -x (the rack moves along the symmetry axis), so the carriers turn by -delta and +delta and
the normals of W1 and W2 always meet on the y axis, which is the common axle of W3 and W4: all four
wheels admit the rotation about that one point (exact Ackermann condition for every d), so W1..W4
restrict the platform's 3 velocities by rank 2 instead of 4 (W3 and W4 give identical rows; W1, W2
and W3 are dependent through the carrier pins B and C). rank C = 17 + 2 + 1 (trolley) = 20, p = 2,
1 DOF (the forward speed). Hand analysis of the left null space: one null vector is W3 - W4; the
other combines W1, B, W2, C and W3 (the edge force of a carrier passes through its pin, so the
linkage does not take part). Hence reactions in B, C, W1..W4 are not unique and those in A, D, E, F,
G, H, the driver and W5 are - the paper's verdict (Sect. 4.2).
"""
from __future__ import annotations

import numpy as np

from ..model.builder import ModelBuilder
from ..model.motion import Motion

A_WHEEL, C_AXLE, E_ARM, G_RACK, HITCH, TROLLEY = 0.4, 0.3, 0.1, 0.15, 0.6, 1.0
D_MAX = 0.04          # m, largest rack displacement of the default steering manoeuvre


def _bump(t, t0, t1):
    """(b, b', b'') of b = sin^4(pi s), s = (t - t0) / (t1 - t0) on [t0, t1], 0 outside (C2-smooth)."""
    T = t1 - t0
    s = np.clip((t - t0) / T, 0.0, 1.0)
    S, Cs, k = np.sin(np.pi * s), np.cos(np.pi * s), np.pi / T
    return S ** 4, 4 * k * S ** 3 * Cs, 4 * k * k * (3 * S ** 2 * Cs ** 2 - S ** 4)


def steering(amplitude: float = D_MAX) -> Motion:
    """d(t): steer right on [0.5, 2.5] s, straight, steer left on [4.5, 6.5] s (paper 003 Fig. 2 in
    spirit): d = amplitude (b(t; 0.5, 2.5) - b(t; 4.5, 6.5))."""
    def part(k):
        return lambda t: amplitude * (_bump(t, 0.5, 2.5)[k] - _bump(t, 4.5, 6.5)[k])
    return Motion(part(0), part(1), part(2), f"steering right/left, amplitude {amplitude} m")


def mobile_robot(*, speed: float = 1.0, amplitude: float = D_MAX, steer: Motion | None = None):
    """Mobile robot with a trolley on knife edges (paper 003 Sect. 4, our geometry, see the module
    docstring): n = 21, m = 17, h = 5, rank C = 20, p = 2; starts straight at ``speed`` m/s along x;
    no applied forces (gravity acts normal to the plane), the steering rack is driven by d(t)
    (:func:`steering` with ``amplitude``, or the Motion ``steer``)."""
    a, c, e, g = A_WHEEL, C_AXLE, E_ARM, G_RACK
    mb = ModelBuilder("mobile-robot", source="paper 003 Sect. 4")
    mb.add_body("platform", mass=20.0, inertia=1.2, velocity=(speed, 0.0),
                outline=[(0.5, 0.35), (-0.5, 0.35), (-0.5, -0.35), (0.5, -0.35), (0.5, 0.35)])
    for k, x in (("1", a), ("2", -a)):
        mb.add_body(f"wheel{k}", mass=1.0, inertia=0.01, position=(x, 0.0), velocity=(speed, 0.0),
                    outline=[(-0.1, 0.0), (0.1, 0.0), (0.0, 0.0), (-np.sign(x) * e, 0.0)])
    for k, x in (("4", a - e), ("5", -(a - e))):
        mb.add_bar(f"rod{k}", length=g, mass=0.2, position=(x, g / 2), angle=np.pi / 2, velocity=(speed, 0.0))
    mb.add_body("rack", mass=0.5, inertia=0.02, position=(0.0, g), velocity=(speed, 0.0),
                outline=[(-(a - e), 0.0), (a - e, 0.0)])
    mb.add_body("trolley", mass=8.0, inertia=0.5, position=(-TROLLEY, 0.0), velocity=(speed, 0.0),
                outline=[(0.4, 0.0), (-0.4, 0.0), (-0.4, 0.25), (-0.4, -0.25)])
    mb.revolute("A", "platform", "trolley", at=(-HITCH, 0.0))
    mb.revolute("B", "platform", "wheel1", at=(a, 0.0))
    mb.revolute("C", "platform", "wheel2", at=(-a, 0.0))
    mb.revolute("D", "wheel1", "rod4", at=(a - e, 0.0))
    mb.revolute("E", "wheel2", "rod5", at=(-(a - e), 0.0))
    mb.revolute("F", "rod4", "rack", at=(a - e, g))
    mb.revolute("G", "rod5", "rack", at=(-(a - e), g))
    mb.prismatic("H", "platform", "rack", axis=(0.0, 1.0), at=(0.0, g))
    mb.driver("H", steer if steer is not None else steering(amplitude))
    for name, body, at in (("W1", "wheel1", (a, 0.0)), ("W2", "wheel2", (-a, 0.0)), ("W3", "platform", (0.0, c)),
                           ("W4", "platform", (0.0, -c)), ("W5", "trolley", (-TROLLEY, 0.0))):
        mb.knife_edge(name, body, at=at, direction=(1.0, 0.0))
    mb.set_velocity("platform.x", speed)
    return mb.build()


def door_two_hinges(*, width: float = 0.8, height: float = 2.0, mass: float = 30.0,
                    hinges=(0.3, 1.7)):
    """A door on two hinges (the classic overconstrained case), modelled in the plane of the door.

    The door (a rectangle ``width`` x ``height``, x horizontal away from the wall, y up, gravity -y)
    hangs on two hinges on the hinge line x = 0 at heights ``hinges``; its swing about that line is out
    of the plane, so in the plane each hinge holds the door point fixed (a revolute: 2 rows).
    n = 3, m = 4, rank 3, p = 1, 0 DOF (the door hangs at rest). Hand analysis (statics): the
    horizontal hinge forces are unique, F1x = -F2x = m g w / (2 (y2 - y1)) (a couple balancing the
    weight's moment), the vertical ones only in their sum F1y + F2y = m g: which hinge carries the
    weight is not determined by a rigid model. Pairs hinge1, hinge2: reactions not unique (their y
    components), multipliers not unique; the Fx components unique."""
    mb = ModelBuilder("door-two-hinges", gravity=(0.0, -9.81), source="paper 003 Sect. 1 (classic case)")
    w, hgt = width, height
    mb.add_body("door", mass=mass, inertia=mass * (w * w + hgt * hgt) / 12, position=(w / 2, hgt / 2),
                outline=[(-w / 2, -hgt / 2), (w / 2, -hgt / 2), (w / 2, hgt / 2), (-w / 2, hgt / 2),
                         (-w / 2, -hgt / 2)])
    mb.revolute("hinge1", "ground", "door", at=(0.0, hinges[0]))
    mb.revolute("hinge2", "ground", "door", at=(0.0, hinges[1]))
    return mb.build()


def knife_edge_sled(*, speed: float = 1.0, turn_rate: float = 0.5, offset: float = 0.0,
                    mass: float = 2.0, inertia: float = 0.1):
    """A sled on one knife edge (Chaplygin sled; paper 003 eqs 30-31), no forces. The edge is at
    ``offset`` from the centre of mass along the body x axis, rolling along x. n = 3, h = 1.

    Exact motion for offset 0: with u the speed along the edge and w the yaw rate, m u' = 0 and
    J w' = 0 (the edge force is normal and passes through the centre of mass), so the centre moves on
    a circle of radius u / w at constant speed and turn rate. For offset b != 0:
    m u' = -m b w^2, (J + m b^2) w' = m b u w; the energy m u^2 / 2 + (J + m b^2) w^2 / 2 is conserved."""
    mb = ModelBuilder("knife-edge-sled", source="paper 003 eqs 30-31")
    mb.add_body("sled", mass=mass, inertia=inertia, velocity=(speed, -offset * turn_rate),
                angular_velocity=turn_rate, outline=[(-0.3, -0.1), (0.3, -0.1), (0.3, 0.1), (-0.3, 0.1),
                                                     (-0.3, -0.1)])
    mb.knife_edge("edge", "sled", on=(offset, 0.0), direction=(1.0, 0.0))
    for comp in ("x", "y", "theta"):
        mb.set_velocity(f"sled.{comp}", {"x": speed, "y": -offset * turn_rate, "theta": turn_rate}[comp])
    return mb.build()
