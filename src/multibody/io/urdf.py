"""URDF robots as spatial director models: Pinocchio parses the URDF, we write the tree as model-file data.

Pinocchio (``pip install 'multibody[robots]'``) reads the URDF (``buildModelFromUrdf``): it merges links
joined by fixed joints into one body (inertias combined) and gives every movable joint its placement,
axis and the inertia of the body it carries. At the configuration ``q`` (default: all joints 0) each
movable joint becomes a pair of the spatial builder (revolute and continuous -> revolute R, prismatic
-> prismatic P; paper 004 Sect. 4.5) at its global origin and axis, and each body a rigid body in
director coordinates with its mass, its centre of mass and its inertia tensor about the centre of mass
in global components (I_global = R I_c R^T). Gravity is Pinocchio's (URDF: 9.81 m/s^2 along -z).
Joint limits, damping and friction are not imported (the builder has no limits).

The result is model-file data (:mod:`.model_file`), so a model file can add loop-closing joints on top
(``urdf = "robot.urdf"`` plus ``[[joints]]`` between URDF links) and ``multibody import-urdf`` writes it.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import MultibodyError
from .validate import FORMAT

_MAPPED = "revolute, continuous, prismatic and fixed joints"


def pinocchio_model(path):
    """(pinocchio module, its Model of the URDF at ``path``); MultibodyError when either is missing."""
    path = Path(path)
    try:
        import pinocchio as pin
    except ImportError:
        raise MultibodyError("URDF import needs Pinocchio: pip install 'multibody[robots]'.") from None
    if not path.is_file():
        raise MultibodyError(f"URDF file '{path}' does not exist.")
    try:
        return pin, pin.buildModelFromUrdf(str(path))
    except Exception as exc:   # Pinocchio's parser reports malformed files as RuntimeError/ValueError
        raise MultibodyError(f"URDF file '{path}' could not be read by Pinocchio: {exc}") from None


def urdf_data(path, q=None) -> dict:
    """Model-file data (kind "spatial") of the URDF robot at the joint configuration ``q``: Pinocchio's
    configuration vector, or {joint name: angle [rad] | slide [m]} (default all zero)."""
    pin, model = pinocchio_model(path)
    data = model.createData()
    q = _configuration(pin, model, q, path)
    pin.forwardKinematics(model, data, q)
    names = _body_names(pin, model)
    bodies, joints = [], []
    for i in range(1, model.njoints):
        kind, axis = _kind(model, i, path)
        placement, inertia = data.oMi[i], model.inertias[i]
        if not inertia.mass > 0:
            raise MultibodyError(f"URDF file '{path}': link '{names[i]}' (after joint '{model.names[i]}') has no "
                                 "mass; give it an <inertial> (the director formulation needs positive masses).")
        R = placement.rotation
        bodies.append({"name": names[i], "mass": float(inertia.mass),
                       "inertia": (R @ inertia.inertia @ R.T).tolist(),
                       "position": placement.act(inertia.lever).tolist()})
        joints.append({"name": model.names[i], "type": kind,
                       "bodies": [names[model.parents[i]], names[i]],
                       "point": placement.translation.tolist(), "axis": (R @ axis).tolist()})
    return {"format": FORMAT, "name": Path(path).stem, "source": f"URDF {Path(path).name} (Pinocchio)",
            "kind": "spatial", "gravity": np.asarray(model.gravity.linear, float).tolist(),
            "bodies": bodies, "joints": joints}


def _configuration(pin, model, q, path):
    if q is None or not isinstance(q, dict):
        return pin.neutral(model) if q is None else np.asarray(q, dtype=float)
    out = pin.neutral(model)
    for name, value in q.items():
        if not model.existJointName(name):
            raise MultibodyError(f"URDF file '{path}' has no joint '{name}' (joints: {', '.join(model.names[1:])}).")
        joint = model.joints[model.getJointId(name)]
        if joint.nq == 2:      # continuous: (cos, sin)
            out[joint.idx_q: joint.idx_q + 2] = np.cos(value), np.sin(value)
        else:
            out[joint.idx_q] = value
    return out


def _body_names(pin, model) -> list[str]:
    """The name of the link each joint carries (the first body frame after the joint); 'ground' for 0."""
    names = ["ground"] + [model.names[i] for i in range(1, model.njoints)]
    for frame in model.frames:
        i = frame.parentJoint
        if frame.type == pin.FrameType.BODY and i > 0 and names[i] == model.names[i]:
            names[i] = frame.name
    return names


def _kind(model, i, path):
    """(kind, axis in the joint frame) from the joint's motion subspace S (6 x nv: linear; angular)."""
    joint = model.joints[i]
    jdata = joint.createData()
    q = np.zeros(joint.nq)
    if joint.nq == 2:            # continuous joints are (cos, sin) in Pinocchio
        q[0] = 1.0
    joint.calc(jdata, q)
    S = np.asarray(jdata.S, dtype=float).reshape(6, -1)
    if joint.nv != 1:
        raise MultibodyError(f"URDF file '{path}': joint '{model.names[i]}' ({joint.shortname()}) has {joint.nv} "
                             f"degrees of freedom; the import maps {_MAPPED}.")
    linear, angular = S[:3, 0], S[3:, 0]
    if np.linalg.norm(angular) > 0 and np.linalg.norm(linear) == 0:
        return "revolute", angular / np.linalg.norm(angular)
    if np.linalg.norm(angular) == 0 and np.linalg.norm(linear) > 0:
        return "prismatic", linear / np.linalg.norm(linear)
    raise MultibodyError(f"URDF file '{path}': joint '{model.names[i]}' ({joint.shortname()}) is neither a pure "
                         f"rotation nor a pure translation; the import maps {_MAPPED}.")
