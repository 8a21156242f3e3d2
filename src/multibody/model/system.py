"""The immutable Model: what a mechanism is, independent of any state or formulation.

A Model holds n coordinates with names, a mass matrix (constant, or a function M(q)), force elements,
holonomic constraint groups whose rows carry labels "joint.component", and initial data. It is built
by :class:`~multibody.model.builder.ModelBuilder` (planar bodies and joints),
:func:`matrix_system` (systems given directly by M(q) and h(q, v, t)) or
:func:`~multibody.model.chain.serial_chain` (planar chains in relative coordinates), and never mutated:
``model.with_initial(q0=...)`` returns a new one.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Mapping

import numpy as np

from ..errors import ModelError
from .constraints import Angle, ConstraintGroup, CoordinateDriver, Generic
from .forces import ForceElement, GeneralizedForce


@dataclass(frozen=True)
class BodyInfo:
    """Description of one body for labels and drawing: ``cols`` are its (x, y, theta) columns
    (-1 where absent); ``outline`` (k, 2) body-fixed points drawn as a polyline."""

    name: str
    kind: str
    cols: tuple[int, int, int]
    mass: float
    inertia: float
    outline: np.ndarray


@dataclass(frozen=True)
class Model:
    """An immutable constrained mechanical system in n redundant coordinates.

    Equations of motion (paper 000 eq. 3, paper 001 eq. 1): M(q) q'' + A^T lambda = f(t, q, v),
    Phi(q, t) = 0 (m rows), A = Phi_q.
    """

    name: str
    coordinate_names: tuple[str, ...]
    constraints: tuple[ConstraintGroup, ...]
    forces: tuple[ForceElement, ...]
    q0: np.ndarray
    v0: np.ndarray
    mass_matrix: np.ndarray | None = None
    mass_fun: Callable[[np.ndarray], np.ndarray] | None = None
    hold: tuple[int, ...] = ()
    velocity_given: tuple[int, ...] = ()
    configurations: Mapping[str, np.ndarray] = field(default_factory=lambda: MappingProxyType({}))
    bodies: tuple[BodyInfo, ...] = ()
    length_scale: float = 1.0
    source: str = ""
    points: Mapping[str, Callable[[np.ndarray], np.ndarray]] = field(
        default_factory=lambda: MappingProxyType({}))
    #: joint name -> (body a, body b) it connects ("ground" for the ground), for joint reactions
    joint_bodies: Mapping[str, tuple[str, str]] = field(default_factory=lambda: MappingProxyType({}))
    #: Pfaffian groups Psi(q, t) v + psi_t = 0 (h rows; paper 003 eq. 3), after the m holonomic rows in C
    nonholonomic: tuple = ()
    #: explicit closing conditions q_D = g(q_I, t) (paper 001 eq. 27; model.closing.ClosingConditions)
    closing: object = None
    #: distribution matrix B of the physical reactions (paper 001 eq. 32; model.closing.ReactionDistribution)
    distribution: object = None

    @property
    def n(self) -> int:
        return len(self.coordinate_names)

    @property
    def m(self) -> int:
        return sum(g.rows for g in self.constraints)

    @property
    def h(self) -> int:
        """Number of nonholonomic (Pfaffian) rows."""
        return sum(g.rows for g in self.nonholonomic)

    @property
    def constraint_labels(self) -> tuple[str, ...]:
        """Labels of the m holonomic rows."""
        return tuple(label for g in self.constraints for label in g.labels)

    @property
    def velocity_labels(self) -> tuple[str, ...]:
        """Labels of the m + h rows of C = [Phi_q; Psi] (paper 003 eq. 5): holonomic first."""
        return self.constraint_labels + tuple(label for g in self.nonholonomic for label in g.labels)

    def mass(self, q: np.ndarray) -> np.ndarray:
        """M(q) (n, n)."""
        if self.mass_matrix is not None:
            return self.mass_matrix
        return np.asarray(self.mass_fun(q), dtype=float)

    def coordinate_index(self, name: str) -> int:
        try:
            return self.coordinate_names.index(name)
        except ValueError:
            raise ModelError(f"Model '{self.name}' has no coordinate '{name}'; its coordinates are "
                             f"{', '.join(self.coordinate_names)}.") from None

    def with_initial(self, *, q0=None, v0=None, hold=None, velocity_given=None) -> "Model":
        """A copy with other initial data (the model itself is immutable)."""
        changes = {}
        if q0 is not None:
            changes["q0"] = _vector(q0, self.n, "q0", self.name)
        if v0 is not None:
            changes["v0"] = _vector(v0, self.n, "v0", self.name)
        if hold is not None:
            changes["hold"] = tuple(hold)
        if velocity_given is not None:
            changes["velocity_given"] = tuple(velocity_given)
        return dataclasses.replace(self, **changes)

    def with_constraints(self, *groups: ConstraintGroup) -> "Model":
        """A copy with the constraint groups appended (constraint activation, paper 002 eq. 23)."""
        return check_model(dataclasses.replace(self, constraints=self.constraints + tuple(groups)))

    def with_locked(self, coordinates, values, *, prefix: str = "lock") -> "Model":
        """A copy with the coordinates (names or indices) locked at ``values``: rows
        ``q_k - values_k = 0`` labelled "<prefix>-<name>.value" (joint locking, paper 002 eq. 38)."""
        idx = [self.coordinate_index(c) if isinstance(c, str) else int(c) for c in coordinates]
        if any(not 0 <= i < self.n for i in idx):
            raise ModelError(f"Model '{self.name}': cannot lock coordinates {list(coordinates)}; "
                             f"it has {self.n} coordinates {', '.join(self.coordinate_names)}.")
        labels = tuple(f"{prefix}-{self.coordinate_names[i]}.value" for i in idx)
        group = CoordinateDriver(labels, np.array(idx, dtype=int)[:, None],
                                 offset=np.asarray(values, dtype=float).reshape(len(idx)))
        return self.with_constraints(group)

    def without_rows(self, labels) -> "Model":
        """A copy without the constraint rows ``labels`` (constraint release, paper 002 eq. 22 with
        h- not a subset of h+: a brake opens, a gripper lets go). Whole groups of any kind can be
        released; single rows only of coordinate locks and drivers (:class:`CoordinateDriver`) and of angle rows
        (:class:`Angle`: revolute drivers, prismatic pairs' angles), whose rows are independent of each other."""
        drop, groups = set(labels), []
        unknown = drop - set(self.constraint_labels)
        if unknown:
            raise ModelError(f"Model '{self.name}': cannot release {', '.join(sorted(unknown))}: no such "
                             f"constraint rows (it has {', '.join(self.constraint_labels) or 'none'}).")
        for g in self.constraints:
            keep = [i for i, lab in enumerate(g.labels) if lab not in drop]
            if len(keep) == g.rows:
                groups.append(g)
            elif keep and not isinstance(g, (CoordinateDriver, Angle)):
                raise ModelError(f"Model '{self.name}': rows {', '.join(l for l in g.labels if l in drop)} "
                                 f"are part of a {type(g).__name__} group; release all of "
                                 f"{', '.join(g.labels)} or none.")
            elif keep:
                old = {row: k for k, row in enumerate(keep)}
                groups.append(dataclasses.replace(
                    g, labels=tuple(g.labels[i] for i in keep), cols=g.cols[keep], offset=g.offset[keep],
                    motions=tuple((old[r], mo) for r, mo in g.motions if r in old)))
        return check_model(dataclasses.replace(self, constraints=tuple(groups)))

    def configuration(self, name: str | None) -> np.ndarray:
        """The initial configuration (name None or 'initial') or a named one."""
        if name in (None, "initial"):
            return self.q0
        if name not in self.configurations:
            known = ", ".join(["initial", *self.configurations]) or "initial"
            raise ModelError(f"Model '{self.name}' has no configuration '{name}'; known: {known}.")
        return self.configurations[name]


def _vector(x, n: int, what: str, where: str, names=()) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ModelError(f"{what} of model '{where}' must be {n} numbers, got {str(x)[:80]!r}.") from None
    if arr.shape != (n,):
        raise ModelError(f"{what} of model '{where}' has {arr.size} entries, expected {n}.")
    if not np.all(np.isfinite(arr)):
        bad = np.flatnonzero(~np.isfinite(arr)).tolist()
        named = f" (coordinates {', '.join(names[i] for i in bad)})" if len(names) == n else ""
        raise ModelError(f"{what} of model '{where}' has non-finite entries at positions {bad}{named}.")
    return arr


def check_model(model: Model) -> Model:
    """Validate the parts every builder shares; returns the model."""
    _vector(model.q0, model.n, "initial q", model.name, model.coordinate_names)
    _vector(model.v0, model.n, "initial v", model.name, model.coordinate_names)
    labels = model.velocity_labels
    dupes = sorted({x for x in labels if labels.count(x) > 1})
    if dupes:
        raise ModelError(f"Model '{model.name}': constraint labels are not unique: {', '.join(dupes)}. "
                         "Give every joint its own name.")
    M = model.mass_matrix if model.mass_matrix is not None else np.asarray(model.mass_fun(model.q0), float)
    if M.shape != (model.n, model.n) or not np.allclose(M, M.T):
        raise ModelError(f"Model '{model.name}': the mass matrix must be symmetric {model.n}x{model.n}, "
                         f"got shape {M.shape}.")
    if not np.all(np.isfinite(M)) or _min_eig(M) < -MASS_EIG_RTOL * max(1.0, float(np.abs(M).max())):
        raise ModelError(f"Model '{model.name}': the mass matrix at the initial configuration has a negative "
                         "eigenvalue or non-finite entries; masses and inertias must be positive.")
    return model


#: relative round-off allowance for the smallest eigenvalue of a (semi-)definite mass matrix
MASS_EIG_RTOL = 1e-12


def _min_eig(M: np.ndarray) -> float:
    """Smallest eigenvalue of the symmetric M, block by block: a model of many bodies has a
    block-diagonal mass matrix, and one dense eigvalsh of it costs O(n^3) (17 s at n = 3000)."""
    if not M.size:
        return 0.0
    from scipy.sparse.csgraph import connected_components
    count, block = connected_components(M != 0, directed=False)
    if count == 1:
        return float(np.linalg.eigvalsh(M)[0])
    order = np.argsort(block, kind="stable")
    bounds = np.searchsorted(block[order], np.arange(count + 1))
    return min(float(np.linalg.eigvalsh(M[np.ix_(idx, idx)])[0])
               for idx in (order[a:b] for a, b in zip(bounds[:-1], bounds[1:])))


def matrix_system(name: str, coordinate_names, *, mass, forces=None, potential=None, constraints=(),
                  q0, v0=None, hold=(), velocity_given=(), configurations=None, source="",
                  nonholonomic=()) -> Model:
    """A system given directly by its mass matrix and force vector (paper 002 eq. 1):
    M(q) q'' + A^T lambda = h(q, v, t).

    User constraints follow :class:`~multibody.model.constraints.Generic` (derivatives by complex step
    when not given), nonholonomic ones :class:`~multibody.model.nonholonomic.GenericPfaffian`.
    """
    names = tuple(coordinate_names)
    n = len(names)
    for what, idx in (("hold", hold), ("velocity_given", velocity_given)):
        bad = [i for i in idx if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < n]
        if bad:
            raise ModelError(f"{what} of model '{name}' must list coordinate indices 0..{n - 1}, got {bad[0]!r}.")
    try:
        const_M = None if callable(mass) else np.asarray(mass, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"mass of model '{name}' must be an ({n}, {n}) matrix or a function M(q), "
                         f"got {str(mass)[:60]!r}.") from None
    groups = tuple(_generic_group(c, n, name) for c in constraints)
    elements = []
    if forces is not None:
        elements.append(GeneralizedForce(lambda t, q, v: forces(q, v, t), n=n))
    if potential is not None:
        elements.append(_UserPotential(potential, n))
    v0 = np.zeros(n) if v0 is None else v0
    model = Model(name, names, groups, tuple(elements), _vector(q0, n, "q0", name), _vector(v0, n, "v0", name),
                  mass_matrix=const_M, mass_fun=None if const_M is not None else mass,
                  hold=tuple(hold), velocity_given=tuple(velocity_given),
                  configurations=MappingProxyType(dict(configurations or {})), source=source,
                  nonholonomic=tuple(pfaffian_group(c, n, name) for c in nonholonomic))
    return check_model(model)


def _generic_group(c, n: int, model_name: str) -> ConstraintGroup:
    if isinstance(c, ConstraintGroup):
        return c
    try:
        cname, phi = c["name"], c["phi"]
    except (KeyError, TypeError):
        raise ModelError(f"Model '{model_name}': a constraint must be a dict with 'name' and 'phi' "
                         f"(and optionally 'jacobian', 'phi_t', 'gamma', 'extended'); got {c!r}.") from None
    rows = int(c.get("rows", np.size(phi(np.zeros(n), 0.0))))
    labels = tuple(f"{cname}.{i}" for i in range(rows)) if rows > 1 else (f"{cname}.0",)
    return Generic(labels, np.tile(np.arange(n), (rows, 1)), phi_fun=phi, jac_fun=c.get("jacobian"),
                   phi_t_fun=c.get("phi_t"), gamma_fun=c.get("gamma"), extended_fun=c.get("extended"), n=n)


def pfaffian_group(c, n: int, model_name: str):
    """A GenericPfaffian from a dict {name, psi, psi_t?, gamma?, rows?} (or a prebuilt group)."""
    from .nonholonomic import GenericPfaffian, PfaffianGroup

    if isinstance(c, PfaffianGroup):
        return c
    try:
        cname, psi = c["name"], c["psi"]
    except (KeyError, TypeError):
        raise ModelError(f"Model '{model_name}': a nonholonomic constraint must be a dict with 'name' and "
                         f"'psi' (and optionally 'psi_t', 'gamma', 'rows'); got {c!r}.") from None
    if not callable(psi):
        raise ModelError(f"Nonholonomic constraint '{cname}' in model '{model_name}': psi must be callable.")
    shape = np.shape(psi(np.zeros(n), 0.0))
    rows = int(c.get("rows") or (shape[0] if len(shape) == 2 else 1))
    if int(np.prod(shape)) != rows * n:
        raise ModelError(f"Nonholonomic constraint '{cname}' in model '{model_name}': psi(q, t) must return "
                         f"an ({rows}, {n}) matrix, got shape {shape}.")
    labels = tuple(f"{cname}.{i}" for i in range(rows))
    return GenericPfaffian(labels, np.tile(np.arange(n), (rows, 1)), psi_fun=psi, psi_t_fun=c.get("psi_t"),
                           gamma_fun=c.get("gamma"), n=n)


@dataclass(frozen=True)
class _UserPotential(ForceElement):
    fun: object
    n: int

    def generalized(self, t, qe, ve):
        return np.zeros(len(qe))

    def potential(self, t, qe):
        return float(self.fun(qe[: self.n]))
