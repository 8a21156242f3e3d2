"""SpatialModelBuilder: spatial rigid bodies (director coordinates) and lower pairs -> an ordinary Model.

The Model it builds is the same immutable :class:`~multibody.model.system.Model` as the planar
builder's: constant mass matrix (eq. 23), one :class:`~.director.SpatialBodies` group with the
internal constraints (eq. 24) and one :class:`~.director.LowerPairs` group per pair kind (Sect. 4.5),
gravity as a :class:`~.forces.ConstantForce` (potential eq. 159). Any formulation (``lagrange`` with a
Runge-Kutta method) runs it unchanged; the energy-momentum integrator reads the joint topology from
the groups.

Joints are given at the initial configuration in global terms (joint point, axis); the builder turns
them into body-frame components (eqs 79, 96, 97). ``body1`` may be None or "ground"; ``body2`` is the
child in the kinematic tree that the reduced energy-momentum scheme walks from the ground or from a
free root body, so list joints parent -> child.

Elements (issue 23; frozen by :mod:`.director_elements`): spring-dampers and torsion spring-dampers
(:mod:`.director_forces`), drivers of pair coordinates (:mod:`.director_drivers`), user forces and
torques, user constraints and Pfaffian rows (:class:`~.constraints.Generic`,
:class:`~.nonholonomic.GenericPfaffian`), held coordinates.
"""
from __future__ import annotations

from types import MappingProxyType

import numpy as np

from ..errors import ModelError
from ..linalg.rotations import cross, inertia_to_euler, principal_frame
from .director import (GROUND_Q, PAIR_ROWS, _ROW_NAMES, LowerPairs, SpatialBodies, complement, fold_ground,
                       internal_rows, pair_rows)
from .forces import ConstantForce
from .system import Model, _generic_group, check_model, pfaffian_group


def _unit(a, what):
    a = np.asarray(a, dtype=float).reshape(3)
    norm = np.linalg.norm(a)
    if not np.isfinite(norm) or norm == 0:
        raise ModelError(f"{what} must be a nonzero finite 3-vector, got {a}.")
    return a / norm


class SpatialModelBuilder:
    """Collects spatial bodies, lower pairs and gravity; ``build()`` returns the Model."""

    def __init__(self, name: str, *, source: str = ""):
        self.name, self.source = name, source
        self.bodies, self.joints, self.g = [], [], None
        self.springs, self.torsion, self.drivers, self.loads = [], [], [], []
        self.user_constraints, self.pfaffians, self.held = [], [], []
        self._element_names = set()

    def add_body(self, name, *, mass, inertia, position, directors=None, velocity=(0, 0, 0),
                 omega=(0, 0, 0), outline=None) -> str:
        """A rigid body: mass, inertia about the centre of mass ((3,) principal values with the
        given directors, default the inertial axes; or a (3, 3) tensor in global components, whose
        principal frame becomes the directors), centre of mass, velocity and angular velocity;
        outline: global points at the initial configuration, drawn by the 3-D figures."""
        if any(b["name"] == name for b in self.bodies):
            raise ModelError(f"model '{self.name}': a body named '{name}' exists already.")
        if name == "ground":
            raise ModelError(f"model '{self.name}': 'ground' names the fixed frame; call the body otherwise.")
        if not (np.isfinite(mass) and mass > 0):
            raise ModelError(f"body '{name}': the mass must be positive, got {mass}.")
        J = np.asarray(inertia, dtype=float)
        if J.shape == (3, 3):
            principal, D = principal_frame(J)
        elif J.shape == (3,):
            principal = J
            D = np.eye(3) if directors is None else np.asarray(directors, dtype=float)
        else:
            raise ModelError(f"body '{name}': inertia must be (3,) principal values or a (3, 3) tensor.")
        euler = inertia_to_euler(principal)
        flat = np.abs(euler) <= 1e-12 * np.sum(np.abs(principal))     # on the triangle equality: a flat body
        if np.any(euler[~flat] < 0) or np.sum(flat) > 1:
            raise ModelError(f"body '{name}': principal inertias {principal} violate the triangle "
                             "inequality J_i <= J_j + J_k (the Euler tensor of eq. 158 must be positive "
                             "semi-definite; at most one zero, a flat body such as a thin disk).")
        euler = np.where(flat, 0.0, euler)
        if not np.allclose(D.T @ D, np.eye(3), atol=1e-12) or np.linalg.det(D) < 0:
            raise ModelError(f"body '{name}': the directors must be a right-handed orthonormal frame.")
        phi = np.asarray(position, dtype=float).reshape(3)
        pts = None if outline is None else (np.asarray(outline, float).reshape(-1, 3) - phi) @ D
        self.bodies.append(dict(name=name, mass=float(mass), euler=euler, D=D, phi=phi,
                                v=np.asarray(velocity, float).reshape(3),
                                w=np.asarray(omega, float).reshape(3), outline=pts))
        return name

    def _index(self, body, where):
        if body is None or body == "ground":      # "ground" as in the planar ModelBuilder
            return -1
        for i, b in enumerate(self.bodies):
            if b["name"] == body:
                return i
        raise ModelError(f"joint '{where}': unknown body '{body}' (bodies: "
                         f"{', '.join(b['name'] for b in self.bodies) or 'none'}).")

    def joint(self, kind, name, body1, body2, *, point, point2=None, axis=(0, 0, 1)):
        """A lower pair of kind S, R, C, P or E (Sect. 4.5) between body1 (None or "ground") and body2,
        at the global point (point2: the child's point when it differs, C/P/E pairs), axis n^1."""
        if kind not in PAIR_ROWS:
            raise ModelError(f"joint '{name}': unknown pair kind '{kind}' (S, R, C, P, E).")
        if any(j["name"] == name for j in self.joints):
            raise ModelError(f"model '{self.name}': a joint named '{name}' exists already.")
        i1, i2 = self._index(body1, name), self._index(body2, name)
        if i2 < 0:
            raise ModelError(f"joint '{name}': body2 must be a body, not the ground (swap the bodies).")
        p1 = np.asarray(point, float).reshape(3)
        p2 = p1 if point2 is None else np.asarray(point2, float).reshape(3)
        self.joints.append(dict(kind=kind, name=name, i1=i1, i2=i2, p1=p1, p2=p2,
                                axis=_unit(axis, f"axis of joint '{name}'")))

    def spherical(self, name, body1, body2, *, point):
        """Ball joint S at the global point (3 rows, paper 004 Sect. 4.5)."""
        self.joint("S", name, body1, body2, point=point)

    def revolute(self, name, body1, body2, *, point, axis):
        """Revolute pair R: a common point and a common axis (5 rows, paper 004 Sect. 4.5)."""
        self.joint("R", name, body1, body2, point=point, axis=axis)

    def cylindrical(self, name, body1, body2, *, point, axis, point2=None):
        """Cylindrical pair C: slides along and turns about the axis (4 rows, paper 004 Sect. 4.5)."""
        self.joint("C", name, body1, body2, point=point, point2=point2, axis=axis)

    def prismatic(self, name, body1, body2, *, point, axis, point2=None):
        """Prismatic pair P: slides along the axis only (5 rows, paper 004 Sect. 4.5)."""
        self.joint("P", name, body1, body2, point=point, point2=point2, axis=axis)

    def planar(self, name, body1, body2, *, point, axis, point2=None):
        """Planar pair E: moves in the plane normal to the axis (3 rows, paper 004 Sect. 4.5)."""
        self.joint("E", name, body1, body2, point=point, point2=point2, axis=axis)

    def gravity(self, g: float = 9.81, direction=(0, 0, -1)):
        """Uniform gravity of magnitude g [m/s^2] along direction (default -z)."""
        self.g = float(g) * _unit(direction, "gravity direction")

    # ------------------------------------------------------------------ elements (issue 23)
    def _new_element(self, name, what):
        if not isinstance(name, str) or not name or name in self._element_names:
            raise ModelError(f"model '{self.name}': {what} needs a new non-empty name, got {name!r}.")
        self._element_names.add(name)

    def _joint(self, joint, what):
        j = next((j for j in self.joints if j["name"] == joint), None)
        if j is None:
            raise ModelError(f"{what} in model '{self.name}': no joint '{joint}' (joints: "
                             f"{', '.join(j['name'] for j in self.joints) or 'none'}).")
        return j

    def spring_damper(self, name, body1, body2, *, point1, point2, stiffness, damping=0.0, free_length=None):
        """A linear spring-damper between the global points point1 on body1 and point2 on body2 (either
        may be None or "ground"): tension T = stiffness (l - free_length) + damping l' along the line of
        the points, potential 1/2 k (l - l0)^2; free_length defaults to the initial distance
        (model.director_forces.SpatialSpringDampers)."""
        self._new_element(name, "a spring-damper")
        i1, i2 = self._index(body1, name), self._index(body2, name)
        if i1 == i2:
            raise ModelError(f"spring-damper '{name}' in model '{self.name}' connects '{body1}' to itself.")
        self.springs.append(dict(name=name, i1=i1, i2=i2, p1=np.asarray(point1, float).reshape(3),
                                 p2=np.asarray(point2, float).reshape(3), stiffness=stiffness, damping=damping,
                                 free_length=free_length))
        return name

    def rotational_spring_damper(self, name, joint, *, stiffness, damping=0.0, free_angle=0.0):
        """A torsion spring-damper about the axis of the revolute or cylindrical pair ``joint``: torque
        -(k (theta - free_angle) + c theta') about the axis on the child (the opposite on the parent),
        theta from the initial configuration, potential 1/2 k (theta - free_angle)^2 with the angle
        difference taken in (-pi, pi) (model.director_forces.RotationalSpringDampers)."""
        j = self._joint(joint, f"rotational spring-damper '{name}'")
        if j["kind"] not in ("R", "C"):
            raise ModelError(f"rotational spring-damper '{name}' in model '{self.name}': joint '{joint}' is a "
                             f"{j['kind']} pair; only revolute (R) and cylindrical (C) pairs have an axis angle.")
        self._new_element(name, "a rotational spring-damper")
        self.torsion.append(dict(name=name, joint=j, stiffness=stiffness, damping=damping,
                                 free_angle=free_angle))
        return name

    def driver(self, joint, motion, *, coordinate=None, name=None):
        """Prescribe the angle theta (R, C; from the initial configuration, as the ``joints`` series) or
        the slide u = n . (p2 - p1) (P, C) of a pair by a Motion (model.director_drivers); a C pair
        needs ``coordinate`` "theta" or "u". Row label "<name>.theta" or "<name>.u"."""
        from .director_elements import check_driver
        j, coordinate = check_driver(self, joint, motion, coordinate)
        name = name or f"{joint}-driver"
        self._new_element(name, "a driver")
        self.drivers.append(dict(name=name, joint=j, motion=motion, coordinate=coordinate))
        return name

    def force(self, body, fun, *, point=None, name=None):
        """A global force F(t, q, v) -> (3,) at the global point (at the start) of body, default the
        centre of mass; generalized force [F; X_1 F; X_2 F; X_3 F] (model.director_forces)."""
        name = name or f"force-{len(self.loads)}"
        self._new_element(name, "a force")
        i = self._index(body, name)
        if i < 0:
            raise ModelError(f"force '{name}' in model '{self.name}': the ground takes no forces.")
        self.loads.append(dict(name=name, kind="force", i=i, fun=fun, point=point))
        return name

    def torque(self, body, fun, *, name=None):
        """A global torque tau(t, q, v) -> (3,) on body; generalized force 1/2 tau x d_I on d_I."""
        name = name or f"torque-{len(self.loads)}"
        self._new_element(name, "a torque")
        i = self._index(body, name)
        if i < 0:
            raise ModelError(f"torque '{name}' in model '{self.name}': the ground takes no torques.")
        self.loads.append(dict(name=name, kind="torque", i=i, fun=fun, point=None))
        return name

    def constraint(self, name, phi, *, jacobian=None, phi_t=None, gamma=None, rows=None, extended=None):
        """A user holonomic constraint Phi(q, t) on the director coordinates (rows "name.0", ...; see
        :class:`~multibody.model.constraints.Generic`: derivatives by complex step when not given)."""
        self._new_element(name, "a constraint")
        if not callable(phi):
            raise ModelError(f"constraint '{name}' in model '{self.name}': phi must be callable.")
        self.user_constraints.append(dict(name=name, phi=phi, jacobian=jacobian, phi_t=phi_t, gamma=gamma,
                                          extended=extended, **({"rows": rows} if rows else {})))
        return name

    def pfaffian(self, name, psi, *, psi_t=None, gamma=None, rows=None):
        """A user nonholonomic constraint Psi(q, t) v + psi_t = 0 (e.g. rolling without slipping; see
        :class:`~multibody.model.nonholonomic.GenericPfaffian`)."""
        self._new_element(name, "a nonholonomic constraint")
        if not callable(psi):
            raise ModelError(f"nonholonomic constraint '{name}' in model '{self.name}': psi must be callable.")
        self.pfaffians.append(dict(name=name, psi=psi, psi_t=psi_t, gamma=gamma, rows=rows))
        return name

    def hold(self, *coordinates):
        """Coordinates ("body.x", "body.d3z", ...) kept at their given value when the initial
        configuration is assembled."""
        self.held.extend(coordinates)

    def _elements(self, n, q0, v0):
        """The constraint groups of the drivers and the force elements of springs and loads."""
        from . import director_elements as de
        groups = de.driver_groups(self, self.drivers, n) if self.drivers else []
        forces = []
        if self.springs:
            forces.append(de.spring_dampers(self, self.springs, n))
        if self.torsion:
            forces.append(de.rotational_spring_dampers(self, self.torsion, n))
        if self.loads:
            forces.append(de.loads(self, self.loads, n, q0, v0))
        return groups, forces

    def _joint_bodies(self):
        """joint name -> (body1, body2) ("ground" for the ground) of pairs and drivers (reactions)."""
        name = lambda i: "ground" if i < 0 else self.bodies[i]["name"]  # noqa: E731
        out = {j["name"]: (name(j["i1"]), name(j["i2"])) for j in self.joints}
        out.update({d["name"]: out[d["joint"]["name"]] for d in self.drivers})
        return out

    # ------------------------------------------------------------------ build
    def build(self) -> Model:
        if not self.bodies:
            raise ModelError(f"model '{self.name}' has no bodies.")
        nb = len(self.bodies)
        n = 12 * nb
        q0 = np.concatenate([np.concatenate([b["phi"], b["D"].T.ravel()]) for b in self.bodies])
        v0 = np.concatenate([np.concatenate([b["v"], cross(b["w"], b["D"].T).ravel()]) for b in self.bodies])
        names = tuple(f"{b['name']}.{c}" for b in self.bodies
                      for c in ("x", "y", "z", "d1x", "d1y", "d1z", "d2x", "d2y", "d2z", "d3x", "d3y", "d3z"))
        mass = np.array([b["mass"] for b in self.bodies])
        euler = np.array([b["euler"] for b in self.bodies])
        M = np.diag(np.concatenate([np.repeat(np.concatenate([[m], e]), 3) for m, e in zip(mass, euler)]))
        extra_groups, extra_forces = self._elements(n, q0, v0)
        groups = [self._internal(nb, mass, euler)] + self._pairs(nb, q0) + extra_groups
        forces = ()
        if self.g is not None:
            f = np.zeros(n + 1)
            for i, m in enumerate(mass):
                f[12 * i: 12 * i + 3] = m * self.g
            forces = (ConstantForce(f),)
        forces += tuple(extra_forces)
        scale = max(1e-3, float(np.max(np.abs([b["phi"] for b in self.bodies]), initial=0.0)))
        unknown = [c for c in self.held if c not in names]
        if unknown:
            raise ModelError(f"model '{self.name}': cannot hold {', '.join(map(str, unknown))}: not coordinates "
                             "(use 'body.x', 'body.d1x', ...).")
        groups += [_generic_group(c, n, self.name) for c in self.user_constraints]
        model = Model(self.name, names, tuple(groups), forces, q0, v0, mass_matrix=M,
                      configurations=MappingProxyType({}), length_scale=scale, source=self.source,
                      joint_bodies=MappingProxyType(self._joint_bodies()),
                      hold=tuple(names.index(c) for c in self.held),
                      nonholonomic=tuple(pfaffian_group(c, n, self.name) for c in self.pfaffians))
        return check_model(model)

    def _internal(self, nb, mass, euler) -> SpatialBodies:
        H, g, c = internal_rows()
        body_cols = np.arange(12 * nb).reshape(nb, 12)
        labels = tuple(f"{b['name']}.rigid.{r}" for b in self.bodies
                       for r in ("d1d1", "d2d2", "d3d3", "d1d2", "d1d3", "d2d3"))
        return SpatialBodies(labels, np.repeat(body_cols, 6, axis=0), H=np.tile(H, (nb, 1, 1)),
                             g=np.tile(g, (nb, 1)), c=np.tile(c, nb), names=tuple(b["name"] for b in self.bodies),
                             body_cols=body_cols, mass=mass, euler=euler,
                             outlines=tuple(b["outline"] for b in self.bodies))

    def _pairs(self, nb, q0) -> list[LowerPairs]:
        out = []
        for kind in PAIR_ROWS:
            joints = [j for j in self.joints if j["kind"] == kind]
            if joints:
                out.append(self._pair_group(kind, joints, nb, q0))
        return out

    def _pair_group(self, kind, joints, nb, q0) -> LowerPairs:
        data = {k: [] for k in ("X1", "X2", "n", "m1", "m2", "a2", "ref", "H", "g", "c", "cols")}
        n_total = 12 * nb
        for j in joints:
            D1 = np.eye(3) if j["i1"] < 0 else self.bodies[j["i1"]]["D"]
            f1 = np.zeros(3) if j["i1"] < 0 else self.bodies[j["i1"]]["phi"]
            b2 = self.bodies[j["i2"]]
            X1, X2 = D1.T @ (j["p1"] - f1), b2["D"].T @ (j["p2"] - b2["phi"])
            nl = D1.T @ j["axis"]
            m1, m2 = complement(nl)
            a2 = np.array(complement(b2["D"].T @ j["axis"]))
            H, g = pair_rows(kind, X1, X2, nl, m1, m2, a2)
            c = np.zeros(len(H))
            pcols = np.full(12, n_total) if j["i1"] < 0 else np.arange(12 * j["i1"], 12 * j["i1"] + 12)
            if j["i1"] < 0:
                H, g, c = fold_ground(H, g, c)
            cols = np.concatenate([pcols, np.arange(12 * j["i2"], 12 * j["i2"] + 12)])
            x = np.append(q0, 0.0)[cols]
            val = 0.5 * np.einsum("i,rij,j->r", x, H, x) + g @ x + c
            eta_rows = np.arange(2 if kind in ("C", "P") else (1 if kind == "E" else 3), len(H))
            c[eta_rows] -= val[eta_rows]                          # eta_k consistent with q0 (eq. 100)
            for key, val_ in (("X1", X1), ("X2", X2), ("n", nl), ("m1", m1), ("m2", m2), ("a2", a2),
                              ("ref", D1.T @ b2["D"] @ a2[0]), ("H", H), ("g", g), ("c", c),
                              ("cols", np.tile(cols, (len(H), 1)))):
                data[key].append(val_)
        labels = tuple(f"{j['name']}.{r}" for j in joints for r in _ROW_NAMES[kind])
        arr = {k: np.concatenate(v) if k in ("H", "g", "c", "cols") else np.array(v) for k, v in data.items()}
        return LowerPairs(labels, arr["cols"], H=arr["H"], g=arr["g"], c=arr["c"], kind=kind,
                          joint_names=tuple(j["name"] for j in joints),
                          parent=np.array([j["i1"] for j in joints]), child=np.array([j["i2"] for j in joints]),
                          X1=arr["X1"], X2=arr["X2"], n=arr["n"], m1=arr["m1"], m2=arr["m2"], a2=arr["a2"],
                          ref=arr["ref"])


__all__ = ["SpatialModelBuilder", "complement", "GROUND_Q"]
