"""Variable-topology benchmarks of paper 002: joint locking with momentum-consistent jumps.

- ``three-r-pendulum-locking``: the planar 3R pendulum of paper 002 Sect. 6 with its data (q1 from the
  x-axis); ``three-r-pendulum-locking-vertical``: the same with q1 from the downward vertical (the text does
  not say which; Fig. 1 is not in it);
- ``robot-emergency-stop``: a 6-DOF industrial arm (Universal Robots UR5, URDF shipped by the
  ``example-robot-data`` package) whose first three joints are locked in turn, in the spirit of
  paper 002 Sect. 7 (the RX130L data of the paper are not published). Its joint-space dynamics come
  from Pinocchio (M(q) by CRBA, h(q, v) = C v + g by RNEA): ``pip install 'multibody[robots]'``.
  Data: the UR5's link data are the URDF's; the gear ratio 100 is the paper's; the rotor inertia and
  the initial state (ROBOT_Q0, ROBOT_V0, a moving arm) are invented. Motor angles = 100 x joint angles.
"""
from __future__ import annotations

import importlib.metadata
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..errors import ModelError
from ..simulation.events import lock_at
from ..model.chain import serial_chain
from ..model.system import matrix_system

# paper 002 Sect. 6: solid aluminium links, 1 m long, 0.2 m x 0.2 m cross section
LINK_LENGTH, LINK_WIDTH, ALUMINIUM_DENSITY = 1.0, 0.2, 2700.0
LINK_MASS = ALUMINIUM_DENSITY * LINK_LENGTH * LINK_WIDTH ** 2                 # 108 kg
LINK_INERTIA = LINK_MASS * (LINK_LENGTH ** 2 + LINK_WIDTH ** 2) / 12.0        # 9.36 kg m^2 (transverse)
LINK_INERTIA_AXIAL = LINK_MASS * 2 * LINK_WIDTH ** 2 / 12.0                   # 0.72 kg m^2 (long axis)
PENDULUM_EVENTS = (lock_at(0.8, "q2"), lock_at(1.3, "q3"))


def three_r_pendulum(*, base_angle: float = 0.0, name: str = "three-r-pendulum-locking"):
    """Planar 3R pendulum of paper 002 Sect. 6: three 1 m aluminium links (108 kg, 9.36 kg m^2).

    Relative joint angles q = (q1, q2, q3) (:func:`~multibody.model.chain.serial_chain`: q1 from the
    global x-axis, q2, q3 relative to the previous link), gravity 9.81 m/s^2 along -y, released from
    rest at q = (pi/6, pi/6, pi/6). The planar motion turns about the joint axes, perpendicular to the
    links, so the inertia that enters is the transverse Theta_22 = Theta_33 = m (L^2 + b^2) / 12 =
    9.36 kg m^2; Theta_11 = 0.72 kg m^2 is about the link's long axis and does not enter. The paper's
    Fig. 1 (not in the text) fixes where q1 is measured from; ``base_angle`` = -pi/2 measures it from
    the downward vertical instead of the x-axis.
    """
    n = 3
    return serial_chain(name, lengths=[LINK_LENGTH] * n, masses=[LINK_MASS] * n,
                        inertias=[LINK_INERTIA] * n, base_angle=base_angle, gravity=(0.0, -9.81),
                        q0=[np.pi / 6] * n, source="paper 002 Sect. 6")


def three_r_pendulum_locking(**kw):
    """Planar 3R pendulum of paper 002 Sect. 6; joint 2 locked at 0.8 s, joint 3 at 1.3 s."""
    return three_r_pendulum(**kw)


def three_r_pendulum_locking_vertical(**kw):
    """The 3R pendulum with the other reading of paper 002 Fig. 1: q1 measured from the downward vertical
    (base_angle = -pi/2), released from rest at q = (pi/6, pi/6, pi/6) as well."""
    return three_r_pendulum(**{"base_angle": -np.pi / 2, "name": "three-r-pendulum-locking-vertical", **kw})


# ----------------------------------------------------------------------------- robot
ROBOT_URDF = "cmeel.prefix/share/example-robot-data/robots/ur_description/urdf/ur5_robot.urdf"
#: joint angles and rates when the emergency stop starts (a moving arm away from singularities)
ROBOT_Q0 = np.array([0.0, -1.0, 1.2, -0.8, 1.3, 0.4])
ROBOT_V0 = np.array([1.0, 0.8, -1.0, 1.5, -1.2, 2.0])
ROBOT_JOINTS = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint")
#: drive train (paper 002 Sect. 7: "motor angles ... related to the joint angles ... by a gear ratio of 100")
ROBOT_GEAR_RATIO = 100.0
#: rotor inertia per motor [kg m^2]: INVENTED (the paper gives none; the order of a 200-400 W servo
#: motor); reflected to the joint it adds G^2 J_rotor = 0.3 kg m^2 to each diagonal entry of M
ROBOT_ROTOR_INERTIA = 3.0e-5
ROBOT_EVENTS = (lock_at(0.05, ROBOT_JOINTS[0]), lock_at(0.10, ROBOT_JOINTS[1]),
                lock_at(0.15, ROBOT_JOINTS[2]))
_MISSING = ("the model 'robot-emergency-stop' needs the optional extra 'robots' (Pinocchio and the "
            "example-robot-data URDFs): pip install 'multibody[robots]'")


def have_robot_extra() -> bool:
    try:
        import pinocchio  # noqa: F401
        return robot_urdf().is_file()
    except (ImportError, ModelError):
        return False


def robot_urdf() -> Path:
    """Path of the UR5 URDF installed by the ``example-robot-data`` package."""
    try:
        return Path(importlib.metadata.distribution("example-robot-data").locate_file(ROBOT_URDF))
    except importlib.metadata.PackageNotFoundError:
        raise ModelError(_MISSING) from None


@lru_cache(maxsize=1)
def _pinocchio_model():
    try:
        import pinocchio as pin
    except ImportError:
        raise ModelError(_MISSING) from None
    path = robot_urdf()
    if not path.is_file():
        raise ModelError(f"{_MISSING} (no URDF at {path}).")
    model = pin.buildModelFromUrdf(str(path))
    # drive train: rotor kinetic energy 1/2 J_r (G q_i')^2 per joint, i.e. the armature G^2 J_r on the
    # diagonal of M (CRBA adds model.armature); the rotors' gyroscopic coupling is neglected (Spong's
    # simplified model of geared drives)
    model.rotorGearRatio[:] = ROBOT_GEAR_RATIO
    model.rotorInertia[:] = ROBOT_ROTOR_INERTIA
    model.armature[:] = ROBOT_GEAR_RATIO ** 2 * ROBOT_ROTOR_INERTIA
    return pin, model


def robot_dynamics():
    """(names, M(q), h(q, v), V(q)) of the UR5 with its drive train (gear ratio ROBOT_GEAR_RATIO, rotor
    inertia ROBOT_ROTOR_INERTIA) from Pinocchio: M by CRBA with the armature (upper triangle, mirrored),
    h = -(C(q, v) v + g(q)) = -nonLinearEffects (RNEA), V the potential energy of gravity."""
    pin, model = _pinocchio_model()
    data = model.createData()
    names = tuple(model.names[1:])

    def mass(q):
        M = pin.crba(model, data, np.ascontiguousarray(q, dtype=float))
        return np.triu(M) + np.triu(M, 1).T

    def forces(q, v, t):
        return -pin.nonLinearEffects(model, data, np.ascontiguousarray(q, float), np.ascontiguousarray(v, float))

    def potential(q):
        return float(pin.computePotentialEnergy(model, data, np.ascontiguousarray(q, float)))

    return names, mass, forces, potential


def robot_emergency_stop():
    """UR5 arm (example-robot-data URDF, Pinocchio dynamics); joints 1, 2, 3 locked at 0.05/0.1/0.15 s."""
    names, mass, forces, potential = robot_dynamics()
    return matrix_system("robot-emergency-stop", names, mass=mass, forces=forces, potential=potential,
                         q0=ROBOT_Q0, v0=ROBOT_V0,
                         source="paper 002 Sect. 7 scenario; UR5 URDF from example-robot-data; Pinocchio")
