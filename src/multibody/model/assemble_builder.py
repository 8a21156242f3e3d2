"""Freezing a ModelBuilder into a Model: coordinates, marker sets and one constraint group per
primitive type (so that evaluation loops over joint types, never over joints)."""
from __future__ import annotations

from types import MappingProxyType

import numpy as np

from ..errors import ModelError
from .constraints import Angle, Coincident, CoordinateDriver, Distance, LineProjection
from .forces import ConstantForce, GeneralizedForce, PointForce, SpringDampers
from .markers import MarkerSet
from .system import BodyInfo, Model, _generic_group, check_model

GROUND = "ground"

_COMPONENTS = ("x", "y", "theta")


def build_model(mb) -> Model:
    bodies = [b for b in mb._bodies.values() if b.kind != "ground"]
    if not bodies:
        raise ModelError(f"Model '{mb.name}' has no bodies: add one with add_body, add_bar or add_point_mass.")
    names, col = [], 0
    for b in bodies:
        b.index = col
        comps = _COMPONENTS if b.kind == "planar" else _COMPONENTS[:2]
        names += [f"{b.name}.{c}" for c in comps]
        col += len(comps)
    n = col
    cols_of = {b.name: _cols(b, n) for b in mb._bodies.values()}

    def markers(pairs, vector=False):
        cols = np.array([cols_of[body] for body, _ in pairs], dtype=int).reshape(-1, 3)
        local = np.array([loc for _, loc in pairs], dtype=float).reshape(-1, 2)
        for (body, loc) in pairs:
            if mb._bodies[body].kind == "point" and not vector and np.any(np.abs(loc) > 0):
                raise ModelError(f"Model '{mb.name}': a joint point on point mass '{body}' must be the point "
                                 f"itself, got offset {loc.tolist()}.")
        return MarkerSet(cols, local, is_vector=vector)

    groups = _constraint_groups(mb, markers, cols_of, names, n)
    forces = _forces(mb, markers, cols_of, n)
    q0 = np.concatenate([_coords(b) for b in bodies]) if bodies else np.zeros(0)
    v0 = np.concatenate([_coords(b, vel=True) for b in bodies]) if bodies else np.zeros(0)
    mass = np.concatenate([[b.mass, b.mass, b.inertia][: 3 if b.kind == "planar" else 2] for b in bodies])
    index = {nm: i for i, nm in enumerate(names)}
    infos = tuple(BodyInfo(b.name, b.kind, tuple(c if c < n else -1 for c in cols_of[b.name]), b.mass,
                           b.inertia, b.outline) for b in bodies)
    model = Model(mb.name, tuple(names), groups, forces, q0, v0, mass_matrix=np.diag(mass),
                  hold=tuple(_indices(mb, mb._hold, index)),
                  velocity_given=tuple(_indices(mb, mb._velocity_given, index)),
                  configurations=MappingProxyType({k: _configuration(mb, k, poses, bodies)
                                                   for k, poses in mb._configurations.items()}),
                  bodies=infos, length_scale=_length_scale(mb, bodies), source=mb.source,
                  joint_bodies=MappingProxyType({**{j.name: _joint_bodies(j) for j in mb._joints},
                                                 **{k[0]: (GROUND, k[1]) for k in mb._knife_edges}}),
                  nonholonomic=_pfaffian_groups(mb, markers, cols_of, n))
    return check_model(model)


def _pfaffian_groups(mb, markers, cols_of, n):
    """One KnifeEdge group for all knife edges, one GenericPfaffian per user constraint (paper 003)."""
    from .nonholonomic import KnifeEdge
    from .system import pfaffian_group

    groups = []
    if mb._knife_edges:
        ke = mb._knife_edges
        groups.append(KnifeEdge(tuple(f"{k[0]}.normal" for k in ke), np.array([cols_of[k[1]] for k in ke]),
                                point=markers([(k[1], k[2]) for k in ke]),
                                normal=markers([(k[1], k[3]) for k in ke], vector=True)))
    return tuple(groups) + tuple(pfaffian_group(c, n, mb.name) for c in mb._pfaffians)


def _joint_bodies(j):
    """(a, b) of a joint; a coordinate driver acts on the body owning its coordinate."""
    if j.kind == "driver-coordinate":
        return (j.a, j.data["coordinate"].rpartition(".")[0])
    return (j.a, j.b)


def _cols(b, n):
    if b.kind == "ground":
        return (n, n, n)
    return (b.index, b.index + 1, b.index + 2 if b.kind == "planar" else n)


def _coords(b, vel=False):
    x = b.vel if vel else b.pose
    return x if b.kind == "planar" else x[:2]


def _indices(mb, coords, index):
    out = []
    for c in coords:
        if c not in index:
            raise ModelError(f"Model '{mb.name}': '{c}' is not a coordinate of the model.")
        out.append(index[c])
    return out


def _constraint_groups(mb, markers, cols_of, names, n):
    js = mb._joints
    by = lambda *kinds: [j for j in js if j.kind in kinds]   # noqa: E731
    groups = []
    pins = by("revolute", "weld")
    if pins:
        groups.append(Coincident(tuple(f"{j.name}.{c}" for j in pins for c in "xy"),
                                 np.concatenate([[(*cols_of[j.a], *cols_of[j.b])] * 2 for j in pins]),
                                 pi=markers([(j.a, j.data["on_a"]) for j in pins]),
                                 pj=markers([(j.b, j.data["on_b"]) for j in pins])))
    rods = by("distance")
    if rods:
        groups.append(Distance(tuple(f"{j.name}.length" for j in rods),
                               np.array([(*cols_of[j.a], *cols_of[j.b]) for j in rods]),
                               pi=markers([(j.a, j.data["on_a"]) for j in rods]),
                               pj=markers([(j.b, j.data["on_b"]) for j in rods]),
                               length=np.array([j.data["length"] for j in rods])))
    angles = by("weld", "prismatic", "driver-revolute")
    if angles:
        offset = np.array([0.0 if j.kind.startswith("driver") else
                           mb._bodies[j.b].pose[2] - mb._bodies[j.a].pose[2] for j in angles])
        groups.append(Angle(tuple(f"{j.name}.angle" for j in angles),
                            np.array([(cols_of[j.a][2], cols_of[j.b][2]) for j in angles]), offset=offset,
                            motions=tuple((i, j.data["motion"]) for i, j in enumerate(angles)
                                          if "motion" in j.data)))
    lines = by("prismatic", "driver-prismatic")
    if lines:
        dirs = []
        for j in lines:
            th = mb._bodies[j.a].pose[2]
            c, s = np.cos(th), np.sin(th)
            local_axis = np.array([c * j.data["axis"][0] + s * j.data["axis"][1],
                                   -s * j.data["axis"][0] + c * j.data["axis"][1]])
            dirs.append(local_axis if j.kind.startswith("driver") else np.array([-local_axis[1], local_axis[0]]))
        groups.append(LineProjection(
            tuple(f"{j.name}.{'slide' if j.kind.startswith('driver') else 'normal'}" for j in lines),
            np.array([(*cols_of[j.a], *cols_of[j.b]) for j in lines]),
            e=markers([(j.a, d) for j, d in zip(lines, dirs)], vector=True),
            pi=markers([(j.a, j.data["on_a"]) for j in lines]),
            pj=markers([(j.b, j.data["on_b"]) for j in lines]), offset=np.zeros(len(lines)),
            motions=tuple((i, j.data["motion"]) for i, j in enumerate(lines) if "motion" in j.data)))
    coords = by("driver-coordinate")
    if coords:
        idx = _indices(mb, [j.data["coordinate"] for j in coords], {nm: i for i, nm in enumerate(names)})
        groups.append(CoordinateDriver(tuple(f"{j.name}.value" for j in coords), np.array(idx)[:, None],
                                       offset=np.zeros(len(coords)),
                                       motions=tuple((i, j.data["motion"]) for i, j in enumerate(coords))))
    groups += [_generic_group(c, n, mb.name) for c in mb._constraints]
    return tuple(groups)


def _forces(mb, markers, cols_of, n):
    forces = []
    g = np.zeros(n + 1)
    for b in mb._bodies.values():
        if b.kind != "ground":
            g[b.index:b.index + 2] = b.mass * mb.gravity
    if np.any(g):
        forces.append(ConstantForce(g))
    if mb._springs:
        a, b, la, lb, k, c, l0 = zip(*mb._springs)
        forces.append(SpringDampers(markers(list(zip(a, la))), markers(list(zip(b, lb))),
                                    np.array(k), np.array(c), np.array(l0)))
    for kind, body, local, fun in mb._user_forces:
        if kind == "point":
            forces.append(PointForce(markers([(body, local)]), fun, n=n, what=f"force on body '{body}'"))
        else:
            forces.append(GeneralizedForce(_torque(fun, cols_of[body][2], n), n=n, what=f"torque on body '{body}'"))
    return tuple(forces)


def _torque(fun, col, n):
    def generalized(t, q, v):
        out = np.zeros(n)
        out[col] = np.asarray(fun(t, q, v), dtype=float).item()   # one number (else: the error names it)
        return out
    return generalized


def _configuration(mb, name, poses, bodies):
    parts = []
    for b in bodies:
        if b.name not in poses:
            raise ModelError(f"Configuration '{name}' of model '{mb.name}' does not give body '{b.name}'.")
        pose = np.asarray(poses[b.name], dtype=float).reshape(-1)
        parts.append(pose[:3] if b.kind == "planar" else pose[:2])
    return np.concatenate(parts)


def _length_scale(mb, bodies):
    """A characteristic length: the largest joint offset or body distance (used for tolerances)."""
    sizes = [np.linalg.norm(j.data[k]) for j in mb._joints for k in ("on_a", "on_b") if k in j.data]
    sizes += [j.data["length"] for j in mb._joints if "length" in j.data]
    sizes += [np.linalg.norm(b.pose[:2]) for b in bodies]
    sizes = [s for s in sizes if s > 0]
    return float(max(sizes)) if sizes else 1.0
