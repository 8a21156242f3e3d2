"""ModelBuilder: planar rigid bodies, point masses, joints, drivers and forces -> an immutable Model.

Coordinates: a planar rigid body has (x, y, theta) of its centre of mass, a point mass (x, y); they are
named "body.x", "body.y", "body.theta". Joint points are given either in body-fixed coordinates
(``on_a``, ``on_b``) or as one global point ``at`` of the initial (guessed) configuration.

Joint coordinates used by drivers: revolute theta_b - theta_a; prismatic the slide
e_a . (p_b - p_a) along the axis from the joint point on a.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelError
from ..linalg.rotations import rotate
from .motion import Motion
from .system import Model


@dataclass
class _Body:
    name: str
    kind: str          # "ground" | "planar" | "point"
    mass: float
    inertia: float
    pose: np.ndarray   # (3,) x, y, theta (theta 0 for points)
    vel: np.ndarray    # (3,)
    outline: np.ndarray
    index: int = -1    # first coordinate column


@dataclass
class _Joint:
    name: str
    kind: str
    a: str
    b: str
    data: dict = field(default_factory=dict)


GROUND = "ground"


class ModelBuilder:
    """Collects bodies, joints and forces; :meth:`build` validates and freezes them into a Model."""

    ground = GROUND

    def __init__(self, name: str, *, gravity=(0.0, 0.0), source: str = ""):
        self.name = name
        self.gravity = _finite(gravity, 2, "gravity", name)
        self.source = source
        self._bodies: dict[str, _Body] = {GROUND: _Body(GROUND, "ground", 0.0, 0.0, np.zeros(3),
                                                          np.zeros(3), np.zeros((0, 2)))}
        self._joints: list[_Joint] = []
        self._springs: list[tuple] = []
        self._user_forces: list = []
        self._hold: list[str] = []
        self._velocity_given: list[str] = []
        self._configurations: dict[str, dict] = {}
        self._constraints: list[dict] = []
        self._knife_edges: list[tuple] = []     # (name, body, local point, local unit normal)
        self._pfaffians: list[dict] = []

    # ----------------------------------------------------------------- bodies
    def add_body(self, name, *, mass, inertia, position=(0.0, 0.0), angle=0.0, velocity=(0.0, 0.0),
                 angular_velocity=0.0, outline=None) -> str:
        """A planar rigid body: mass, moment of inertia about the centre of mass, initial pose guess.

        outline: body-fixed points (k, 2) drawn in figures (default: the centre of mass only)."""
        self._check_new(name)
        _positive(mass, f"mass of body '{name}'")
        _positive(inertia, f"moment of inertia of body '{name}'")
        pose = np.r_[_finite(position, 2, f"position of body '{name}'", self.name),
                     _finite(angle, 1, f"angle of body '{name}'", self.name)]
        vel = np.r_[_finite(velocity, 2, f"velocity of body '{name}'", self.name),
                    _finite(angular_velocity, 1, f"angular velocity of body '{name}'", self.name)]
        shape = np.zeros((1, 2)) if outline is None else np.asarray(outline, float).reshape(-1, 2)
        self._bodies[name] = _Body(name, "planar", float(mass), float(inertia), pose, vel, shape)
        return name

    def add_bar(self, name, *, length, mass, position, angle, velocity=(0.0, 0.0), angular_velocity=0.0):
        """A uniform slender bar (inertia m L^2 / 12) drawn as a line; body-fixed x along the bar."""
        _positive(length, f"length of bar '{name}'")
        _positive(mass, f"mass of bar '{name}'")
        inertia = float(mass) * float(length) ** 2 / 12 if float(length) < 1e150 else np.inf
        if not np.isfinite(inertia):
            raise ModelError(f"Bar '{name}' in model '{self.name}': mass {mass} and length {length} give an "
                             "inertia beyond the floating-point range.")
        return self.add_body(name, mass=mass, inertia=inertia, position=position,
                             angle=angle, velocity=velocity, angular_velocity=angular_velocity,
                             outline=[(-length / 2, 0.0), (length / 2, 0.0)])

    def add_point_mass(self, name, *, mass, position=(0.0, 0.0), velocity=(0.0, 0.0)) -> str:
        self._check_new(name)
        _positive(mass, f"mass of point mass '{name}'")
        pose = np.r_[_finite(position, 2, f"position of point mass '{name}'", self.name), 0.0]
        vel = np.r_[_finite(velocity, 2, f"velocity of point mass '{name}'", self.name), 0.0]
        self._bodies[name] = _Body(name, "point", float(mass), 0.0, pose, vel, np.zeros((1, 2)))
        return name

    # ----------------------------------------------------------------- joints
    def revolute(self, name, a, b, *, at=None, on_a=None, on_b=None) -> str:
        """Pin joint: the point on a coincides with the point on b (2 rows: x, y)."""
        return self._add_joint(name, "revolute", a, b, at=at, on_a=on_a, on_b=on_b)

    def weld(self, name, a, b, *, at=None, on_a=None, on_b=None) -> str:
        """Fixed joint: coincident points and constant relative angle (3 rows: x, y, angle)."""
        return self._add_joint(name, "weld", a, b, at=at, on_a=on_a, on_b=on_b)

    def prismatic(self, name, a, b, *, axis, at=None, on_a=None, on_b=None) -> str:
        """Translational joint along ``axis`` (a global direction at the initial configuration):
        constant relative angle and the point on b stays on the line through the point on a (2 rows)."""
        ax = _finite(axis, 2, f"axis of joint '{name}'", self.name)
        if np.linalg.norm(ax) == 0:
            raise ModelError(f"Joint '{name}' in model '{self.name}': the axis must not be zero.")
        return self._add_joint(name, "prismatic", a, b, at=at, on_a=on_a, on_b=on_b,
                               axis=ax / np.linalg.norm(ax))

    def distance(self, name, a, b, *, on_a=None, on_b=None, at_a=None, at_b=None, length=None) -> str:
        """A massless rod between a point of a and a point of b (1 row); length defaults to the
        initial distance."""
        self._check_joint(name, a, b)
        la = self._local(a, on_a, at_a, name)
        lb = self._local(b, on_b, at_b, name)
        if length is None:
            length = float(np.linalg.norm(self._global(a, la) - self._global(b, lb)))
        _positive(length, f"length of distance joint '{name}'")
        self._joints.append(_Joint(name, "distance", a, b, dict(on_a=la, on_b=lb, length=float(length))))
        return name

    def driver(self, joint: str, motion: Motion, *, name=None) -> str:
        """Prescribe the coordinate of a revolute or prismatic joint as a function of time (1 row)."""
        target = next((j for j in self._joints if j.name == joint), None)
        if target is None or target.kind not in ("revolute", "prismatic"):
            known = [j.name for j in self._joints if j.kind in ("revolute", "prismatic")]
            raise ModelError(f"Driver on '{joint}' in model '{self.name}': no revolute or prismatic joint "
                             f"of that name (known: {', '.join(known) or 'none'}).")
        _check_motion(motion, joint)
        dname = name or f"{joint}-driver"
        self._joints.append(_Joint(dname, f"driver-{target.kind}", target.a, target.b,
                                   dict(target.data, motion=motion)))
        return dname

    def drive_coordinate(self, coordinate: str, motion: Motion, *, name=None) -> str:
        """Prescribe one coordinate ("body.x", "body.theta", ...) as a function of time (1 row)."""
        _check_motion(motion, coordinate)
        dname = name or f"{coordinate}-driver"
        self._joints.append(_Joint(dname, "driver-coordinate", GROUND, GROUND, dict(coordinate=coordinate,
                                                                                   motion=motion)))
        return dname

    def constraint(self, name, phi, *, jacobian=None, phi_t=None, gamma=None, rows=None, extended=None) -> str:
        """A user holonomic constraint Phi(q, t) on the model's coordinates (see ``Generic``)."""
        if not callable(phi):
            raise ModelError(f"Constraint '{name}' in model '{self.name}': phi must be callable.")
        self._constraints.append(dict(name=name, phi=phi, jacobian=jacobian, phi_t=phi_t, gamma=gamma,
                                      extended=extended, **({"rows": rows} if rows else {})))
        return name

    def knife_edge(self, name, body, *, direction, at=None, on=None) -> str:
        """A knife edge (paper 003 eqs 30-31): the contact point of ``body`` (global ``at`` or body-fixed
        ``on``) may move only along ``direction`` (a global direction at the initial configuration,
        fixed in the body); 1 nonholonomic row "name.normal" n . v_K = 0."""
        if any(k[0] == name for k in self._knife_edges) or any(c["name"] == name for c in self._pfaffians):
            raise ModelError(f"Model '{self.name}': a nonholonomic constraint named '{name}' already exists.")
        self._check_joint(name, GROUND, body)
        if self._bodies[body].kind != "planar":
            raise ModelError(f"Knife edge '{name}' in model '{self.name}': body '{body}' must be a planar rigid "
                             "body (the edge turns with it).")
        d = _finite(direction, 2, f"direction of knife edge '{name}'", self.name)
        if np.linalg.norm(d) == 0:
            raise ModelError(f"Knife edge '{name}' in model '{self.name}': the direction must not be zero.")
        local_d = rotate(np.array([-self._bodies[body].pose[2]]), (d / np.linalg.norm(d))[None, :])[0]
        normal = np.array([-local_d[1], local_d[0]])
        self._knife_edges.append((name, body, self._local(body, on, at, name), normal))
        return name

    def pfaffian(self, name, psi, *, psi_t=None, gamma=None, rows=None) -> str:
        """A user nonholonomic constraint Psi(q, t) v + psi_t(q, t) = 0 on the model's coordinates
        (see :class:`~multibody.model.nonholonomic.GenericPfaffian`); rows "name.0", "name.1", ..."""
        if not callable(psi):
            raise ModelError(f"Nonholonomic constraint '{name}' in model '{self.name}': psi must be callable.")
        if any(k[0] == name for k in self._knife_edges) or any(c["name"] == name for c in self._pfaffians):
            raise ModelError(f"Model '{self.name}': a nonholonomic constraint named '{name}' already exists.")
        self._pfaffians.append(dict(name=name, psi=psi, psi_t=psi_t, gamma=gamma, rows=rows))
        return name

    # ----------------------------------------------------------------- forces
    def spring_damper(self, name, a, b, *, stiffness, damping=0.0, free_length=None, on_a=None, on_b=None,
                      at_a=None, at_b=None) -> str:
        """A linear spring-damper between a point of body a and one of body b (bodies or "ground"):
        tension F = stiffness (l - free_length) + damping l' along the line between the points
        (model.forces.SpringDampers); points as for joints (``at`` global, ``on`` body-fixed); the free
        length defaults to the initial distance. The spring has the potential 1/2 k (l - l0)^2, the
        damper dissipates (the run's energy_balance_rel accounts for it)."""
        self._check_joint(name, a, b)
        la, lb = self._local(a, on_a, at_a, name), self._local(b, on_b, at_b, name)
        if free_length is None:
            free_length = float(np.linalg.norm(self._global(a, la) - self._global(b, lb)))
        if stiffness < 0 or damping < 0 or free_length < 0:
            raise ModelError(f"Spring-damper '{name}' in model '{self.name}': stiffness, damping and free "
                             "length must be non-negative.")
        self._springs.append((a, b, la, lb, float(stiffness), float(damping), float(free_length)))
        return name

    def force(self, body, fun, *, on=None, at=None) -> None:
        """A force F(t, q, v) -> (fx, fy) in the global frame at a point of ``body``."""
        self._check_body(body, "force")
        self._user_forces.append(("point", body, self._local(body, on, at, "force"), fun))

    def torque(self, body, fun) -> None:
        """A torque tau(t, q, v) -> float on a planar rigid body."""
        self._check_body(body, "torque")
        if self._bodies[body].kind != "planar":
            raise ModelError(f"Torque on '{body}' in model '{self.name}': only planar rigid bodies take torques.")
        self._user_forces.append(("torque", body, None, fun))

    # ----------------------------------------------------------------- initial data
    def hold(self, *coordinates: str) -> None:
        """Coordinates kept at their given value when the initial configuration is assembled."""
        self._hold.extend(coordinates)

    def set_velocity(self, coordinate: str, value: float) -> None:
        """Give the initial velocity of a coordinate; the others follow from A v + Phi_t = 0."""
        body, comp = self._split(coordinate)
        value = _finite(value, 1, f"velocity of '{coordinate}'", self.name)
        self._velocity_given.append(coordinate)
        self._bodies[body].vel[("x", "y", "theta").index(comp)] = value

    def add_configuration(self, name: str, poses: dict) -> None:
        """A named configuration: {body: (x, y, theta)} for every movable body."""
        self._configurations[name] = poses

    def build(self) -> Model:
        from .assemble_builder import build_model   # the freezing logic lives in its own module
        return build_model(self)

    # ----------------------------------------------------------------- helpers
    def _split(self, coordinate):
        body, _, comp = coordinate.rpartition(".")
        if (body not in self._bodies or comp not in ("x", "y", "theta") or body == GROUND
                or (comp == "theta" and self._bodies[body].kind == "point")):
            raise ModelError(f"Model '{self.name}': '{coordinate}' is not a coordinate (use 'body.x', "
                             "'body.y' or 'body.theta').")
        return body, comp

    def _check_new(self, name):
        if not isinstance(name, str) or not name:
            raise ModelError(f"Model '{self.name}': body names must be non-empty strings, got {name!r}.")
        if name in self._bodies:
            raise ModelError(f"Model '{self.name}': a body named '{name}' already exists.")

    def _check_body(self, body, where):
        if body not in self._bodies:
            known = ", ".join(b for b in self._bodies)
            raise ModelError(f"{where} in model '{self.name}' refers to unknown body '{body}' (known: {known}).")

    def _check_joint(self, name, a, b):
        if any(j.name == name for j in self._joints) or any(k[0] == name for k in self._knife_edges):
            raise ModelError(f"Model '{self.name}': a joint named '{name}' already exists.")
        self._check_body(a, f"Joint '{name}'")
        self._check_body(b, f"Joint '{name}'")
        if a == b:
            raise ModelError(f"Joint '{name}' in model '{self.name}' connects body '{a}' to itself.")

    def _global(self, body, local):
        p = self._bodies[body].pose
        return p[:2] + rotate(np.array([p[2]]), local[None, :])[0]

    def _local(self, body, local, at, where):
        if (local is None) == (at is None):
            raise ModelError(f"'{where}' in model '{self.name}': give the point on '{body}' either in body "
                             "coordinates or as a global point, exactly one of the two.")
        if local is not None:
            return _finite(local, 2, f"point of '{where}' on '{body}'", self.name)
        g = _finite(at, 2, f"point of '{where}'", self.name)
        p = self._bodies[body].pose
        return rotate(np.array([-p[2]]), (g - p[:2])[None, :])[0]

    def _add_joint(self, name, kind, a, b, *, at, on_a, on_b, **data):
        self._check_joint(name, a, b)
        if at is not None and (on_a is not None or on_b is not None):
            raise ModelError(f"Joint '{name}' in model '{self.name}': give 'at' or 'on_a'/'on_b', not both.")
        la = self._local(a, on_a, at, name)
        lb = self._local(b, on_b, at, name)
        if kind in ("weld", "prismatic"):
            for body in (a, b):
                if self._bodies[body].kind == "point":
                    raise ModelError(f"Joint '{name}' ({kind}) in model '{self.name}': body '{body}' is a "
                                     "point mass and has no orientation to constrain.")
        self._joints.append(_Joint(name, kind, a, b, dict(on_a=la, on_b=lb, **data)))
        return name


def _finite(x, size, what, model):
    try:
        arr = np.asarray(x, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        arr = np.full(size + 1, np.nan)    # not numbers: the message below names them
    if arr.size != size or not np.all(np.isfinite(arr)):
        raise ModelError(f"Model '{model}': {what} must be {size} finite number(s), got {x!r}.")
    return arr if size > 1 else arr[0]


def _positive(x, what):
    try:
        ok = np.isfinite(float(x)) and float(x) >= np.finfo(float).tiny   # a subnormal: 1/x overflows
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ModelError(f"The {what} must be a positive finite number, got {x!r}.")


def _check_motion(motion, where):
    if not isinstance(motion, Motion):
        raise ModelError(f"Driver on '{where}': the motion must be a multibody.Motion "
                         f"(Motion.constant_rate, Motion.polynomial, ...), got {type(motion).__name__}.")
