"""Point-mass pendulums of paper 000 Sect. 3.1 (eq. 29), with the constraint once or twice."""
from __future__ import annotations

import numpy as np

from ..errors import ModelError
from ..model.system import matrix_system

G = 9.81


def _circle(length):
    """Phi = x^2 + z^2 - l^2 with A = [2x, 2z] and gamma = -2 (x'^2 + z'^2) (paper 000 eqs 29c, 30)."""
    return dict(phi=lambda q, t: np.array([q[0] ** 2 + q[1] ** 2 - length ** 2]),
                jacobian=lambda q, t: np.array([[2 * q[0], 2 * q[1]]]),
                phi_t=lambda q, t: np.zeros(1),
                gamma=lambda q, v, t: np.array([-2.0 * (v[0] ** 2 + v[1] ** 2)]))


def pendulum(*, mass: float = 1.0, length: float = 1.0, angle: float = 0.0, redundant: bool = False):
    """Point-mass pendulum in Cartesian coordinates (x, z), paper 000 eq. 29 (after ref. [22] there).

    Mass ``mass``, length ``length``, gravity 9.81 m/s^2 along -z; released from rest at the polar
    angle ``angle`` measured from +x (default horizontal, x = l, z = 0). With ``redundant=True``
    the constraint x^2 + z^2 - l^2 = 0 is written twice (eqs 29c, 29d): m = n = 2, rank 1.
    """
    for what, value in (("mass", mass), ("length", length)):
        if not (np.isfinite(value) and value > 0):
            raise ModelError(f"pendulum: the {what} must be a positive number, got {value!r}.")
    rod = dict(name="rod", **_circle(length))
    constraints = [rod] + ([dict(rod, name="rod-copy")] if redundant else [])
    q0 = length * np.array([np.cos(angle), np.sin(angle)])
    return matrix_system("pendulum-redundant" if redundant else "pendulum", ["x", "z"],
                         mass=mass * np.eye(2), forces=lambda q, v, t: np.array([0.0, -mass * G]),
                         potential=lambda q: mass * G * q[1], constraints=constraints, q0=q0,
                         source="paper 000 Sect. 3.1, eq. 29")


def pendulum_redundant(**kw):
    """The pendulum of paper 000 eq. 29 with its constraint written twice (eqs 29c and 29d)."""
    return pendulum(redundant=True, **kw)
