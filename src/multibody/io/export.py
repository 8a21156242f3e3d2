"""Built-in models as model files: run the factory while recording its builder calls, write the calls as data.

A factory builds its mechanism through :class:`~multibody.model.builder.ModelBuilder` or
:class:`~multibody.model.director_builder.SpatialModelBuilder`; :func:`recording` wraps their public
methods for the duration of one factory call and keeps the outermost calls with their arguments, which
map one to one onto the sections of the model file (:mod:`.model_file`). What a file cannot express
raises :class:`NotExpressible` with the reason: systems given by M(q) and h(q, v, t)
(``matrix_system``), chains in relative coordinates (``serial_chain``), user callables (constraints,
Pfaffian rows, forces, motions that are not constant-rate/polynomial/harmonic). Spatial initial rates
set after ``build()`` (``model.with_initial(v0=...)``) are carried over as each body's velocity and
angular velocity omega = 1/2 sum_i d_i x d_i' (exact for rates that keep the directors orthonormal).
"""
from __future__ import annotations

import contextlib
import functools

import numpy as np

from ..errors import MultibodyError
from ..model.builder import ModelBuilder
from ..model.director_builder import SpatialModelBuilder
from .validate import FORMAT

PLANAR_METHODS = ("__init__", "add_body", "add_bar", "add_point_mass", "revolute", "weld", "prismatic", "distance",
                  "driver", "drive_coordinate", "knife_edge", "spring_damper", "hold", "set_velocity",
                  "add_configuration", "constraint", "pfaffian", "force", "torque")
SPATIAL_METHODS = ("__init__", "add_body", "joint", "gravity", "spring_damper", "rotational_spring_damper", "driver",
                   "force", "torque", "constraint", "pfaffian", "hold")
_PAIRS = {"S": "spherical", "R": "revolute", "C": "cylindrical", "P": "prismatic", "E": "planar"}


class NotExpressible(MultibodyError):
    """The model uses something a model file cannot describe (the message says what)."""


@contextlib.contextmanager
def recording():
    """Record the outermost builder calls: yields a dict {id(builder): [(method, kwargs), ...]}."""
    log, depth, saved = {}, [0], []
    for cls, methods in ((ModelBuilder, PLANAR_METHODS), (SpatialModelBuilder, SPATIAL_METHODS)):
        for name in methods:
            original = getattr(cls, name)
            saved.append((cls, name, original))
            setattr(cls, name, _recorder(original, name, log, depth))
    try:
        yield log
    finally:
        for cls, name, original in saved:
            setattr(cls, name, original)


def _recorder(original, name, log, depth):
    import inspect

    signature = inspect.signature(original)

    @functools.wraps(original)
    def wrapper(self, *args, **kwargs):
        if depth[0] == 0:
            bound = signature.bind(self, *args, **kwargs)
            arguments = dict(bound.arguments)
            arguments.pop("self")
            log.setdefault(id(self), [type(self).__name__]).append((name, arguments))
        depth[0] += 1
        try:
            return original(self, *args, **kwargs)
        finally:
            depth[0] -= 1
    return wrapper


def export_builtin(name: str) -> dict:
    """The model file data (a dict, see :func:`multibody.io.toml_writer.dumps`) of the built-in ``name``."""
    from ..models import MODELS

    if name not in MODELS:
        raise MultibodyError(f"unknown built-in model '{name}' (see 'multibody models').")
    entry = MODELS[name]
    with recording() as log:
        model = entry.factory()
    if len(log) != 1:
        raise NotExpressible(f"model '{name}' is not built by one ModelBuilder or SpatialModelBuilder "
                             "(a matrix system or a relative-coordinate chain): a model file cannot express it.")
    kind, *calls = next(iter(log.values()))
    data = _planar(name, calls) if kind == "ModelBuilder" else _spatial(name, calls, model)
    data["simulation"] = {"t_end": float(entry.t_end)}
    if entry.events:
        data["events"] = [_event(name, e) for e in entry.events]
    return data


# ----------------------------------------------------------------------------- planar
def _planar(name, calls) -> dict:
    data = {"format": FORMAT}
    sections = {k: [] for k in ("bodies", "joints", "drivers", "springs")}
    hold, velocities, configurations = [], {}, {}
    for method, a in calls:
        a = {k: _plain(v) for k, v in a.items() if v is not None}
        if method == "__init__":
            data.update(name=a["name"], source=a.get("source", ""), kind="planar",
                        gravity=a.get("gravity", [0.0, 0.0]))
        elif method in ("add_body", "add_bar", "add_point_mass"):
            kind = {"add_body": "body", "add_bar": "bar", "add_point_mass": "point"}[method]
            sections["bodies"].append({"name": a.pop("name"), "type": kind, **a})
        elif method in ("revolute", "weld", "prismatic", "distance"):
            sections["joints"].append({"name": a.pop("name"), "type": method, "bodies": [a.pop("a"), a.pop("b")], **a})
        elif method == "knife_edge":
            sections["joints"].append({"name": a.pop("name"), "type": "knife-edge", **a})
        elif method in ("driver", "drive_coordinate"):
            key = "joint" if method == "driver" else "coordinate"
            sections["drivers"].append({**({"name": a["name"]} if "name" in a else {}), key: a[key],
                                        "motion": _motion(name, a["motion"])})
        elif method == "spring_damper":
            sections["springs"].append({"name": a.pop("name"), "bodies": [a.pop("a"), a.pop("b")], **a})
        elif method == "hold":
            hold += a["coordinates"]
        elif method == "set_velocity":
            velocities[a["coordinate"]] = a["value"]
        elif method == "add_configuration":
            configurations[a["name"]] = a["poses"]
        else:
            raise NotExpressible(f"model '{name}' uses ModelBuilder.{method} with a Python callable: a model file "
                                 "cannot express it (use a Python model file).")
    data.update({k: v for k, v in sections.items() if v})
    initial = {**({"hold": hold} if hold else {}), **({"velocities": velocities} if velocities else {})}
    if initial:
        data["initial"] = initial
    if configurations:
        data["configurations"] = configurations
    return data


def _motion(model_name, motion) -> dict:
    spec = getattr(motion, "spec", ())
    if not spec:
        raise NotExpressible(f"model '{model_name}' drives a joint with a user motion ({motion.description}): "
                             "a model file knows constant-rate, polynomial and harmonic motions only.")
    if spec[0] == "polynomial":
        return {"type": "polynomial", "coefficients": [float(c) for c in spec[1]]}
    a, w, phase, offset = spec[1:]
    return {"type": "harmonic", "amplitude": a, "omega": w, "phase": phase, "offset": offset}


def _event(model_name, e) -> dict:
    from ..simulation.events import AtTime, Lock

    if isinstance(e, AtTime) and isinstance(e.action, Lock):
        return {"type": "lock", "coordinates": [str(c) for c in e.action.coordinates], "at": float(e.t)}
    raise NotExpressible(f"model '{model_name}' has an event a model file cannot express: {e!r}.")


# ----------------------------------------------------------------------------- spatial
def _spatial(name, calls, model) -> dict:
    data = {"format": FORMAT}
    bodies, joints = [], []
    sections = {k: [] for k in ("drivers", "springs", "rotational_springs")}
    for method, a in calls:
        a = {k: _plain(v) for k, v in a.items() if v is not None}
        if method == "__init__":
            data.update(name=a["name"], source=a.get("source", ""), kind="spatial")
        elif method == "add_body":
            if "directors" in a:
                a["directors"] = np.asarray(a["directors"], float).T.tolist()   # columns d_i -> [d1, d2, d3]
            bodies.append({"name": a.pop("name"), **a})
        elif method == "joint":
            joints.append({"name": a["name"], "type": _PAIRS[a["kind"]],
                           "bodies": [a.get("body1", "ground"), a["body2"]],
                           **{k: a[k] for k in ("point", "point2", "axis") if k in a}})
        elif method in ("spring_damper", "rotational_spring_damper", "driver"):    # issue 23's elements
            _spatial_element(name, method, a, sections)
        elif method in SPATIAL_METHODS[4:]:
            raise NotExpressible(f"model '{name}' uses SpatialModelBuilder.{method}: a model file cannot express "
                                 "it (use a Python model file).")
        elif method == "gravity":
            direction = np.asarray(a.get("direction", (0, 0, -1)), float)
            data["gravity"] = (a.get("g", 9.81) * direction / np.linalg.norm(direction)).tolist()
    _spatial_rates(bodies, model)
    data["bodies"] = bodies
    if joints:
        data["joints"] = joints
    data.update({k: v for k, v in sections.items() if v})
    return data


def _spatial_element(name, method, a, sections) -> None:
    """A spatial driver, spring-damper or torsion spring-damper call as its file table (issue 23)."""
    if method == "driver":
        sections["drivers"].append({**({"name": a["name"]} if "name" in a else {}), "joint": a["joint"],
                                    **({"driven": a["coordinate"]} if "coordinate" in a else {}),
                                    "motion": _motion(name, a["motion"])})
    elif method == "spring_damper":
        sections["springs"].append({"name": a["name"], "bodies": [a.get("body1", "ground"), a.get("body2", "ground")],
                                    **{k: a[k] for k in ("point1", "point2", "stiffness", "damping", "free_length")
                                       if k in a}})
    else:
        sections["rotational_springs"].append({k: a[k] for k in ("name", "joint", "stiffness", "damping", "free_angle")
                                               if k in a})


def _spatial_rates(bodies, model) -> None:
    """Each body's velocity and omega from the built model's v0 (set after build() by some factories)."""
    q0, v0 = model.q0.reshape(-1, 12), model.v0.reshape(-1, 12)
    for body, q, v in zip(bodies, q0, v0):
        d, dd = q[3:].reshape(3, 3), v[3:].reshape(3, 3)
        omega = 0.5 * sum(np.cross(d[i], dd[i]) for i in range(3))
        body["velocity"], body["omega"] = v[:3].tolist(), omega.tolist()


def _plain(v):
    """Numbers and arrays as plain Python floats and lists (written exactly by ``repr``)."""
    if isinstance(v, (np.ndarray, list, tuple)):
        return [_plain(x) for x in v] if not isinstance(v, np.ndarray) else np.asarray(v, float).tolist()
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (np.floating, np.integer)) or (isinstance(v, (int, float)) and not isinstance(v, bool)):
        return float(v)
    return v
