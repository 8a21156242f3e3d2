"""Freezing the elements of a :class:`~.director_builder.SpatialModelBuilder` (spring-dampers, torsion
spring-dampers, drivers, forces, torques) into force elements and constraint groups, one per element
kind, vectorised over the elements (issue 23). Points and axes are global at the initial
configuration; body-frame components follow as in eqs 79, 96, 97 of paper 004."""
from __future__ import annotations

import numpy as np

from ..errors import ModelError
from ..linalg.rotations import cross
from .director import (GROUND_Q, LowerPairs, SpatialBodies, _bilinear, _pair, _point_map, _vector_map, complement,
                       fold_ground)
from .director_drivers import AngleDriver, SlideDriver
from .director_forces import RotationalSpringDampers, SpatialLoads, SpatialSpringDampers
from .motion import Motion


def slot(i: int, n: int):
    """Columns (12,) and base (12,) of body i (-1: the ground, dummy column n, base its frame)."""
    if i < 0:
        return np.full(12, n), GROUND_Q.copy()
    return np.arange(12 * i, 12 * i + 12), np.zeros(12)


def frame(builder, i: int):
    """phi (3,) and directors D (3, 3) of body i at the initial configuration (ground: origin, I)."""
    if i < 0:
        return np.zeros(3), np.eye(3)
    return builder.bodies[i]["phi"], builder.bodies[i]["D"]


def local(builder, i, point):
    phi, D = frame(builder, i)
    return D.T @ (np.asarray(point, float).reshape(3) - phi)


def axis_frame(builder, joint):
    """Body-frame vectors of a joint with an axis: n_l (parent), r_l (parent: the child's reference
    vector a at the start, the zero of theta), w_l = n_l x r_l (parent), a_l (child)."""
    _, D1 = frame(builder, joint["i1"])
    _, D2 = frame(builder, joint["i2"])
    n_l = D1.T @ joint["axis"]
    a_l = complement(D2.T @ joint["axis"])[0]
    r_l = D1.T @ D2 @ a_l
    return n_l, r_l, cross(n_l, r_l), a_l


def _slots(i1, i2, n):
    (c1, b1), (c2, b2) = slot(i1, n), slot(i2, n)
    return np.concatenate([c1, c2]), np.concatenate([b1, b2])


def _coefficients(items, n, what):
    out = {k: np.array([float(it[k]) for it in items]) for k in ("stiffness", "damping")}
    for it in items:
        if not (np.isfinite(it["stiffness"]) and np.isfinite(it["damping"]) and it["stiffness"] >= 0
                and it["damping"] >= 0):
            raise ModelError(f"{what} '{it['name']}': stiffness and damping must be finite and non-negative, "
                             f"got {it['stiffness']} and {it['damping']}.")
    return out


def spring_dampers(builder, items, n) -> SpatialSpringDampers:
    """One SpatialSpringDampers of all translational spring-dampers."""
    B, cols, base, free = [], [], [], []
    for it in items:
        X1, X2 = local(builder, it["i1"], it["p1"]), local(builder, it["i2"], it["p2"])
        B.append(_pair(-_point_map(X1), _point_map(X2)))
        c, b = _slots(it["i1"], it["i2"], n)
        cols.append(c)
        base.append(b)
        l0 = float(np.linalg.norm(it["p2"] - it["p1"]))
        free.append(l0 if it["free_length"] is None else float(it["free_length"]))
        if not (np.isfinite(free[-1]) and free[-1] >= 0):
            raise ModelError(f"spring-damper '{it['name']}': the free length must be finite and non-negative.")
        if l0 == 0:
            raise ModelError(f"spring-damper '{it['name']}': its two points coincide at the start; the line of "
                             "action is undefined there.")
    return SpatialSpringDampers(tuple(it["name"] for it in items), np.array(cols), np.array(base),
                                free=np.array(free), B=np.array(B), **_coefficients(items, n, "spring-damper"))


def rotational_spring_dampers(builder, items, n) -> RotationalSpringDampers:
    """One RotationalSpringDampers of all torsion spring-dampers (free angle from the initial
    configuration: r rotated by theta_free about n)."""
    H, cols, base = [], [], []
    for it in items:
        j = it["joint"]
        _, r_l, w_l, a_l = axis_frame(builder, j)
        th = float(it["free_angle"])
        if not np.isfinite(th):
            raise ModelError(f"rotational spring-damper '{it['name']}': the free angle must be finite.")
        H.append(angle_forms(np.cos(th) * r_l + np.sin(th) * w_l, np.cos(th) * w_l - np.sin(th) * r_l, a_l))
        c, b = _slots(j["i1"], j["i2"], n)
        cols.append(c)
        base.append(b)
    return RotationalSpringDampers(tuple(it["name"] for it in items), np.array(cols), np.array(base),
                                   free=np.zeros(len(items)), H=np.array(H),
                                   **_coefficients(items, n, "rotational spring-damper"))


def _folded(H, g, i1, i2, n):
    """Rows over [q_parent, q_child] with the ground folded in when the parent is the ground."""
    c = np.zeros(len(H))
    if i1 < 0:
        H, g, c = fold_ground(H, g, c)
    return H, g, c, _slots(i1, i2, n)[0]


def slide_row(i1, i2, n_l, X1, X2, n):
    """H (24, 24), g (24,), c, cols (24,) of u = n . (p2 - p1) (eqs 98, 116) for parent i1, child i2."""
    Z = np.zeros((3, 12))
    h = _bilinear(_pair(_vector_map(n_l), Z), _pair(-_point_map(X1), _point_map(X2)))[None]
    H, g, c, cols = _folded(h, np.zeros((1, 24)), i1, i2, n)
    return H[0], g[0], c[0], cols


def angle_forms(r_l, w_l, a_l):
    """H (2, 24, 24) of (s, c) = (a . w, a . r) = 1/2 x^T H x over x = [q_parent, q_child] (director_drivers)."""
    Z = np.zeros((3, 12))
    child = _pair(Z, _vector_map(a_l))
    return np.array([_bilinear(_pair(_vector_map(v), Z), child) for v in (w_l, r_l)])


def angle_rows(i1, i2, r_l, w_l, a_l, n):
    """H (2, 24, 24), g (2, 24), c (2,), cols (24,) of (s, c) with the ground folded in."""
    return _folded(angle_forms(r_l, w_l, a_l), np.zeros((2, 24)), i1, i2, n)


def slide_group(labels, rows, motions, pairs) -> SlideDriver:
    H, g, c, cols = (np.array(x) for x in zip(*rows))
    return SlideDriver(tuple(labels), cols, H=H, g=g, c=c, motions=tuple(enumerate(motions)), pairs=tuple(pairs))


def angle_group(labels, rows, motions, pairs) -> AngleDriver:
    H, g, c, cols = (np.array(x) for x in zip(*rows))
    return AngleDriver(tuple(labels), cols, H=H, g=g, c=c, motions=tuple(enumerate(motions)), pairs=tuple(pairs))


def driver_groups(builder, items, n) -> list:
    """A SlideDriver group of the slide drivers, an AngleDriver group of the angle drivers."""
    out = []
    slides = [it for it in items if it["coordinate"] == "u"]
    if slides:
        rows = []
        for it in slides:
            j = it["joint"]
            X1, X2 = local(builder, j["i1"], j["p1"]), local(builder, j["i2"], j["p2"])
            rows.append(slide_row(j["i1"], j["i2"], axis_frame(builder, j)[0], X1, X2, n))
        out.append(slide_group([f"{it['name']}.u" for it in slides], rows, [it["motion"] for it in slides],
                               [it["joint"]["name"] for it in slides]))
    angles = [it for it in items if it["coordinate"] == "theta"]
    if angles:
        rows = [angle_rows(it["joint"]["i1"], it["joint"]["i2"], *axis_frame(builder, it["joint"])[1:], n)
                for it in angles]
        out.append(angle_group([f"{it['name']}.theta" for it in angles], rows, [it["motion"] for it in angles],
                               [it["joint"]["name"] for it in angles]))
    return out


def loads(builder, items, n, q0, v0) -> SpatialLoads:
    """One SpatialLoads of all user forces and torques, checked once at the initial state."""
    X = np.array([np.zeros(3) if it["point"] is None else local(builder, it["i"], it["point"]) for it in items])
    for it in items:
        if not callable(it["fun"]):
            raise ModelError(f"{it['kind']} '{it['name']}': the load must be a function f(t, q, v) -> (3,), "
                             f"got {type(it['fun']).__name__}.")
    el = SpatialLoads(tuple(it["name"] for it in items), tuple(it["fun"] for it in items),
                      tuple(it["kind"] for it in items), np.array([slot(it["i"], n)[0] for it in items]), X, n=n)
    el.values(0.0, np.append(q0, 0.0), np.append(v0, 0.0))
    return el


def check_driver(builder, joint_name, motion, coordinate):
    """The joint dict and the driven coordinate ("theta" or "u") of a driver, or a ModelError."""
    joint = next((j for j in builder.joints if j["name"] == joint_name), None)
    known = [j["name"] for j in builder.joints if j["kind"] in "RCP"]
    if joint is None or joint["kind"] not in "RCP":
        what = f"a {joint['kind']} pair" if joint else "no joint of that name"
        raise ModelError(f"driver on '{joint_name}' in model '{builder.name}': {what}; drivers act on the angle "
                         f"of R and C pairs and the slide of P and C pairs (known: {', '.join(known) or 'none'}).")
    allowed = {"R": ("theta",), "P": ("u",), "C": ("theta", "u")}[joint["kind"]]
    if coordinate is None and len(allowed) == 1:
        coordinate = allowed[0]
    if coordinate not in allowed:
        raise ModelError(f"driver on '{joint_name}' ({joint['kind']} pair) in model '{builder.name}': the driven "
                         f"coordinate must be one of {', '.join(allowed)}, got {coordinate!r}.")
    if not isinstance(motion, Motion):
        raise ModelError(f"driver on '{joint_name}': the motion must be a multibody.Motion (Motion.constant_rate, "
                         f"Motion.polynomial, ...), got {type(motion).__name__}.")
    return joint, coordinate


def lock_groups(model, joints, q) -> list:
    """Constraint groups that hold the relative coordinates of the named R, C and P pairs of a spatial
    model at their values in q (R: theta; P: u; C: u and theta): a slide row u - u* = 0 and an angle
    row sin(theta - theta*) = 0 (director_drivers) per pair, labelled "lock-<joint>.u" / ".theta"
    (constraint activation, paper 002 eq. 23)."""
    bodies = next(g for g in model.constraints if isinstance(g, SpatialBodies))
    found = {}
    for g in model.constraints:
        if isinstance(g, LowerPairs):
            for k, name in enumerate(g.joint_names):
                found[name] = (g, k)
    slides, angles = [], []
    for name in joints:
        if name not in found or found[name][0].kind not in "RCP":
            raise ModelError(f"lock of '{name}' in model '{model.name}': not an R, C or P pair of the model "
                             f"(pairs: {', '.join(found) or 'none'}).")
        g, k = found[name]
        coords = g.relative_coordinates(bodies, q).reshape(len(g.joint_names), -1)[k]
        i1, i2 = int(g.parent[k]), int(g.child[k])
        if g.kind in "CP":
            slides.append((f"lock-{name}.u", slide_row(i1, i2, g.n[k], g.X1[k], g.X2[k], model.n),
                           Motion.polynomial([coords[0]]), name))
        if g.kind in "RC":
            angles.append((f"lock-{name}.theta", angle_rows(i1, i2, g.ref[k], cross(g.n[k], g.ref[k]),
                                                           g.a2[k, 0], model.n), Motion.polynomial([coords[-1]]), name))
    return ([slide_group(*zip(*slides))] if slides else []) + ([angle_group(*zip(*angles))] if angles else [])
