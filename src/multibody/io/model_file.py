"""A mechanism as data: a validated model file (TOML, format ``multibody-model/1``) -> builder calls -> Model.

The file's sections map one to one onto the builders' methods (:class:`~multibody.model.builder.
ModelBuilder` for ``kind = "planar"``, :class:`~multibody.model.director_builder.SpatialModelBuilder`
for ``kind = "spatial"``), in the file's order, so a file describes exactly what a Python model file
could with the library's own elements; motions, forces and events come from fixed whitelists (no code
is executed, no name is looked up dynamically). The schema is ``model_schema.json`` next to this module.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import MultibodyError
from ..model.builder import ModelBuilder
from ..model.director_builder import SpatialModelBuilder
from ..model.motion import Motion
from ..model.system import Model
from .validate import FORMAT, check_data, read_model_file

__all__ = ["FORMAT", "FileModel", "load_model_file", "model_from_data", "load_urdf"]


@dataclass(frozen=True)
class FileModel:
    """What a model file gives a command: the model, its default end time, its events and the suggested
    run settings of its ``[simulation]`` table (integrator, rtol, atol, step, formulation, ...)."""

    model: Model
    t_end: float
    events: tuple = ()
    settings: dict = field(default_factory=dict)


def load_model_file(path) -> FileModel:
    """Read, validate and build the model file ``path`` (MultibodyError naming the place on any problem)."""
    folder = Path(path).parent
    data, _ = read_model_file(path, merge=lambda d: merge_urdf(d, folder))
    return model_from_data(data, str(path))


def merge_urdf(data: dict, folder: Path) -> dict:
    """The file's data with the URDF's bodies and joints first (paths relative to the file's folder); the
    file's own gravity, if given, replaces the URDF's."""
    from .urdf import urdf_data

    try:
        base = urdf_data(folder / data["urdf"], data.get("urdf_joints"))
    except MultibodyError as exc:     # name the model file that points to the URDF (issue 17)
        raise type(exc)(f"urdf = {data['urdf']!r} of the model file in '{folder}': {exc}") from None
    merged = {k: v for k, v in data.items() if k not in ("urdf", "urdf_joints")}
    merged["bodies"] = base["bodies"] + data.get("bodies", [])
    merged["joints"] = base["joints"] + data.get("joints", [])
    merged.setdefault("gravity", base["gravity"])
    return merged


def load_urdf(path) -> Model:
    """The spatial Model of a URDF robot (:func:`multibody.io.urdf.urdf_data`)."""
    from .urdf import urdf_data

    return model_from_data(urdf_data(path), str(path), checked=False).model


def build_file_model(path) -> Model:
    """The Model of a model file (a picklable factory for sweeps: ``partial(build_file_model, path)``)."""
    return load_model_file(path).model


def model_from_data(data: dict, where: str = "<data>", *, checked: bool = True) -> FileModel:
    """Build the model described by ``data`` (a parsed model file)."""
    if not checked:
        check_data(data, where)
    try:
        model = (_planar if data["kind"] == "planar" else _spatial)(data)
        events = _events(data, model)
    except MultibodyError as exc:
        raise MultibodyError(f"model file '{where}': {exc}") from None
    sim = dict(data.get("simulation", {}))
    return FileModel(model, float(sim.pop("t_end", 1.0)), events, sim)


# ----------------------------------------------------------------------------- planar
def _planar(data) -> Model:
    mb = ModelBuilder(data["name"], gravity=tuple(data.get("gravity", (0.0, 0.0))), source=data.get("source", ""))
    for b in data["bodies"]:
        _planar_body(mb, b)
    for j in data.get("joints", []):
        _planar_joint(mb, j)
    for d in data.get("drivers", []):
        motion = motion_from_data(d["motion"])
        if "joint" in d:
            mb.driver(d["joint"], motion, name=d.get("name"))
        else:
            mb.drive_coordinate(d["coordinate"], motion, name=d.get("name"))
    for s in data.get("springs", []):
        mb.spring_damper(s["name"], *s["bodies"], **_pick(s, "stiffness", "damping", "free_length", "on_a",
                                                          "on_b", "at_a", "at_b"))
    for f in data.get("forces", []):
        _constant_force(mb, f)
    initial = data.get("initial", {})
    if initial.get("hold"):
        mb.hold(*initial["hold"])
    for coordinate, value in initial.get("velocities", {}).items():
        mb.set_velocity(coordinate, value)
    for name, poses in data.get("configurations", {}).items():
        mb.add_configuration(name, poses)
    return mb.build()


def _planar_body(mb, b):
    kind, name = b["type"], b["name"]
    common = _pick(b, "position", "velocity")
    if kind == "point":
        mb.add_point_mass(name, mass=b["mass"], **common)
    elif kind == "bar":
        mb.add_bar(name, length=b["length"], mass=b["mass"], angle=b["angle"],
                   **common, **_pick(b, "angular_velocity"))
    else:
        mb.add_body(name, mass=b["mass"], inertia=b["inertia"], **common,
                    **_pick(b, "angle", "angular_velocity", "outline"))


def _planar_joint(mb, j):
    kind, name = j["type"], j["name"]
    if kind == "knife-edge":
        mb.knife_edge(name, j["body"], direction=j["direction"], **_pick(j, "at", "on"))
    elif kind == "distance":
        mb.distance(name, *j["bodies"], **_pick(j, "on_a", "on_b", "at_a", "at_b", "length"))
    elif kind == "prismatic":
        mb.prismatic(name, *j["bodies"], axis=j["axis"], **_pick(j, "at", "on_a", "on_b"))
    else:
        getattr(mb, {"revolute": "revolute", "weld": "weld"}[kind])(name, *j["bodies"],
                                                                     **_pick(j, "at", "on_a", "on_b"))


def _constant_force(mb, f):
    if "torque" in f:
        tau = float(f["torque"])
        mb.torque(f["body"], lambda t, q, v: tau)
        return
    force = np.array(f["force"], dtype=float)
    where = _pick(f, "on", "at") or {"on": (0.0, 0.0)}
    mb.force(f["body"], lambda t, q, v: force, **where)


def motion_from_data(m: dict) -> Motion:
    """A Motion from its file table (whitelist: constant-rate, polynomial, harmonic)."""
    if m["type"] == "constant-rate":
        return Motion.constant_rate(m["start"], m["rate"])
    if m["type"] == "polynomial":
        return Motion.polynomial(m["coefficients"])
    return Motion.harmonic(m["amplitude"], m["omega"], phase=m.get("phase", 0.0), offset=m.get("offset", 0.0))


# ----------------------------------------------------------------------------- spatial
def _spatial(data) -> Model:
    b = SpatialModelBuilder(data["name"], source=data.get("source", ""))
    for body in data["bodies"]:
        directors = body.get("directors")
        b.add_body(body["name"], mass=body["mass"], inertia=body["inertia"], position=body["position"],
                   directors=None if directors is None else np.array(directors, dtype=float).T,
                   **_pick(body, "velocity", "omega", "outline"))
    kinds = {"spherical": "S", "revolute": "R", "cylindrical": "C", "prismatic": "P", "planar": "E"}
    for j in data.get("joints", []):
        b1, b2 = (None if x == "ground" else x for x in j["bodies"])
        b.joint(kinds[j["type"]], j["name"], b1, b2, **_pick(j, "point", "point2", "axis"))
    g = np.array(data.get("gravity", (0.0, 0.0, 0.0)), dtype=float)
    if np.any(g):
        b.gravity(float(np.linalg.norm(g)), g)
    _spatial_elements(b, data)
    return b.build()


def _spatial_elements(b, data) -> None:
    """Drivers (motors), spring-dampers and torsion spring-dampers of a spatial file (issue 23)."""
    for d in data.get("drivers", []):
        b.driver(d["joint"], motion_from_data(d["motion"]), coordinate=d.get("driven"), name=d.get("name"))
    for s in data.get("springs", []):
        b1, b2 = (None if x == "ground" else x for x in s["bodies"])
        b.spring_damper(s["name"], b1, b2, point1=s["point1"], point2=s["point2"],
                        **_pick(s, "stiffness", "damping", "free_length"))
    for s in data.get("rotational_springs", []):
        b.rotational_spring_damper(s["name"], s["joint"], **_pick(s, "stiffness", "damping", "free_angle"))


# ----------------------------------------------------------------------------- events
def _events(data, model) -> tuple:
    """Lock events (paper 002): at a time, or when a coordinate's rate crosses zero."""
    from ..simulation.events import lock_at, rate_crosses_zero

    out = []
    for i, e in enumerate(data.get("events", [])):
        for c in e["coordinates"]:
            model.coordinate_index(c)          # ModelError naming the coordinates if unknown
        if "at" in e:
            out.append(lock_at(e["at"], *e["coordinates"]))
        elif len(e["coordinates"]) != 1:
            raise MultibodyError(f"events[{i}]: 'rate-crosses-zero' watches exactly one coordinate.")
        else:
            out.append(rate_crosses_zero(model, e["coordinates"][0]))
    return tuple(out)


def _pick(d, *keys) -> dict:
    return {k: d[k] for k in keys if k in d}


def is_model_file(spec: str) -> bool:
    return Path(spec).suffix in (".toml", ".json")
