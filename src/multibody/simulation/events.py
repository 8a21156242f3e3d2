"""Events: constraints that switch on during a run (paper 002), located exactly by the integrator.

An event has a *when* and an *action*:

- :class:`AtTime` (t): the integration interval ends exactly at t (the integrator's t_bound), so a
  fixed-step method lands on it;
- :class:`WhenZero` (condition g(t, q, v), direction): after every accepted step g is evaluated; on a
  sign change the root is found on the integrator's dense output within the step (Brent's method to
  ``ROOT_XTOL``) and the state there is taken from the dense output: the integration stops exactly at
  the event, e.g. :func:`rate_crosses_zero` ("lock joint 2 when its rate crosses zero", a brake
  reaching stiction).

The action maps (model, t, q, v) to a new immutable Model with the same coordinates whose constraint
rows may be added (:class:`Lock` -> ``model.with_locked``: activation, paper 002 eq. 23), removed
(:class:`Release` -> ``model.without_rows``: a brake opens) or both (a replacement); an action may also
carry an impulsive applied force U (n,) (its ``impulse(model, t, q, v)``, e.g. :class:`Impulse`: a
hammer blow, paper 002 eq. 21). The velocity jumps by the general transition condition (22), written
with the persistent rows J1 (labels present before and after) and the activated rows J2 in one of
the forms of :mod:`multibody.simulation.transitions` (``lagrangian`` eq. 24, ``projected`` eq. 32,
``minimal`` eq. 37, or the labelled ``naive`` comparison); released rows simply leave J+, so a
release alone (U = 0) leaves the velocity unchanged (J+ v- = 0 already holds). The run restarts with
a new formulation and integrator on the new model (a flagged restart: the event log records it).
Both the state before and the state after the jump are recorded at the event time.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.optimize as so

from ..errors import MultibodyError
from ..assembly import Workspace
from ..model.system import Model
from .assemble import event_entry
from .transitions import TRANSITIONS, transition

#: events located closer together than this (relative to the run length) are applied together
SIMULTANEOUS_RTOL = 1e-12
#: absolute time tolerance of the root search on the dense output, relative to the step length
ROOT_XTOL = 1e-13


@dataclass(frozen=True)
class Lock:
    """Action: lock the coordinates (names or indices) at their current values (paper 002 eq. 38)."""

    coordinates: tuple

    def __call__(self, model: Model, t: float, q: np.ndarray, v: np.ndarray) -> Model:
        idx = [model.coordinate_index(c) if isinstance(c, str) else int(c) for c in self.coordinates]
        return model.with_locked(idx, q[idx])

    def describe(self) -> str:
        return "lock " + ", ".join(map(str, self.coordinates))

    def validate(self, model: Model) -> None:
        _check_names(model, self.coordinates, self.describe())


@dataclass(frozen=True)
class Release:
    """Action: release the locks of the coordinates (names or indices) made by :class:`Lock` (rows
    "lock-<name>.value"); paper 002 eq. 22 with h- not a subset of h+."""

    coordinates: tuple

    def __call__(self, model: Model, t: float, q: np.ndarray, v: np.ndarray) -> Model:
        names = [c if isinstance(c, str) else model.coordinate_names[int(c)] for c in self.coordinates]
        return model.without_rows([f"lock-{c}.value" for c in names])

    def describe(self) -> str:
        return "release " + ", ".join(map(str, self.coordinates))

    def validate(self, model: Model) -> None:
        _check_names(model, self.coordinates, self.describe())


@dataclass(frozen=True)
class Impulse:
    """Action: an impulsive applied force U = int u dt (paper 002 eqs 20-21) on the named coordinates
    (``{name: value}``, N s or N m s), the model unchanged."""

    values: dict

    def __call__(self, model: Model, t: float, q: np.ndarray, v: np.ndarray) -> Model:
        return model

    def impulse(self, model: Model, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        U = np.zeros(model.n)
        for name, value in self.values.items():
            U[model.coordinate_index(name)] += float(value)
        return U

    def describe(self) -> str:
        return "impulse " + ", ".join(f"{k} {v:g}" for k, v in self.values.items())

    def validate(self, model: Model) -> None:
        _check_names(model, tuple(self.values), self.describe())
        if not all(np.isfinite(float(x)) for x in self.values.values()):
            raise MultibodyError(f"event '{self.describe()}': the impulse must be finite.")


@dataclass(frozen=True)
class AtTime:
    """Activate ``action`` at time ``t``."""

    t: float
    action: Callable
    name: str = ""

    def label(self) -> str:
        return self.name or _describe(self.action)


@dataclass(frozen=True)
class WhenZero:
    """Activate ``action`` when ``condition(t, q, v)`` crosses zero (direction +1: rising only,
    -1: falling only, 0: both), at most ``max_count`` times (default once)."""

    condition: Callable
    action: Callable
    direction: int = 0
    name: str = ""
    max_count: int = 1

    def label(self) -> str:
        return self.name or _describe(self.action)

    def crossed(self, g0: float, g1: float) -> bool:
        if self.direction >= 0 and g0 < 0 <= g1:
            return True
        return self.direction <= 0 and g0 > 0 >= g1


def rate_crosses_zero(model: Model, coordinate: str, *, action=None, name: str = "") -> WhenZero:
    """Lock ``coordinate`` (default action) when its rate crosses zero, as a brake reaching stiction."""
    k = model.coordinate_index(coordinate)
    return WhenZero(lambda t, q, v: v[k], action or Lock((coordinate,)), 0,
                    name or f"lock {coordinate} when its rate crosses zero")


def lock_at(t: float, *coordinates) -> AtTime:
    """Lock the coordinates at time t."""
    return AtTime(float(t), Lock(tuple(coordinates)))


def release_at(t: float, *coordinates) -> AtTime:
    """Release the locks of the coordinates at time t."""
    return AtTime(float(t), Release(tuple(coordinates)))


def impulse_at(t: float, **values) -> AtTime:
    """An impulsive applied force on the named coordinates at time t (e.g. ``impulse_at(0.5, q1=3.0)``)."""
    return AtTime(float(t), Impulse(dict(values)))


def _check_names(model: Model, coordinates, what: str) -> None:
    bad = [c for c in coordinates if (c not in model.coordinate_names if isinstance(c, str)
                                      else not 0 <= int(c) < model.n)]
    if bad:
        raise MultibodyError(f"event '{what}': model '{model.name}' has no coordinate {', '.join(map(str, bad))} "
                             f"(it has {', '.join(model.coordinate_names)}).")


def parse_event(spec: str) -> AtTime:
    """An event from text (the CLI's --event): ``lock@T:COORD[,COORD]``, ``release@T:COORD[,COORD]``
    or ``impulse@T:COORD=VALUE[,COORD=VALUE]`` (T in s, VALUE in N s or N m s)."""
    kind, _, rest = spec.partition("@")
    when, _, what = rest.partition(":")
    try:
        t = float(when)
    except ValueError:
        t = None
    if kind not in ("lock", "release", "impulse") or t is None or not what:
        raise MultibodyError(f"cannot read the event '{spec}': write lock@T:COORD, release@T:COORD or "
                             "impulse@T:COORD=VALUE (e.g. lock@0.8:q2).")
    items = [x.strip() for x in what.split(",") if x.strip()]
    if kind == "lock":
        return lock_at(t, *items)
    if kind == "release":
        return release_at(t, *items)
    values = {}
    for item in items:
        name, _, value = item.partition("=")
        try:
            values[name.strip()] = float(value)
        except ValueError:
            raise MultibodyError(f"the impulse '{item}' in event '{spec}' is not COORD=VALUE.") from None
    return impulse_at(t, **values)


def _describe(action) -> str:
    return action.describe() if hasattr(action, "describe") else getattr(action, "__name__", "action")


# ----------------------------------------------------------------------------- in the driver
def check_events(events, t_start, t_end, method, integrator, dense_output, model=None):
    """(timed events within the run sorted by t, state events); MultibodyError for anything else
    (also for actions naming coordinates the model does not have, before anything is integrated)."""
    if events and not dense_output:
        raise MultibodyError(f"events are located on the dense output of a Runge-Kutta integrator; "
                             f"'{integrator}' has none: use dopri5, dop853 or rk4 for runs with events.")
    if method not in TRANSITIONS:
        raise MultibodyError(f"unknown transition '{method}'; choose one of: {', '.join(TRANSITIONS)}.")
    timed, watched = [], []
    for e in events:
        if model is not None and hasattr(getattr(e, "action", None), "validate"):
            e.action.validate(model)
        if isinstance(e, AtTime):
            if not (np.isfinite(e.t) and e.t > t_start):
                raise MultibodyError(f"event '{e.label()}' at t = {e.t:g} is not after the start of the "
                                     f"run (t = {t_start:g}).")
            if e.t <= t_end:   # events after the end of the run do not happen in it
                timed.append(e)
        elif isinstance(e, WhenZero):
            watched.append(e)
        else:
            raise MultibodyError(f"{e!r} is not an event (use AtTime or WhenZero from multibody.simulation.events).")
    return sorted(timed, key=lambda e: e.t), watched


def locate(form, step, fired, g_old, g_new):
    """The earliest root among the fired conditions, on the dense output of the step."""
    xtol = ROOT_XTOL * abs(step.t - step.t_old)
    roots = []
    for i, e in fired:
        def g(s, e=e):
            return e.condition(s, *form.split(s, step.dense(s)))
        if g_new[i] == 0:
            roots.append((step.t, e))
        else:
            roots.append((so.brentq(g, step.t_old, step.t, xtol=xtol), e))
    t_star = min(r[0] for r in roots)
    due = [e for r, e in roots if r - t_star <= xtol]
    return t_star, step.dense(t_star), due


def apply_events(model, due, t, q, v, method):
    """New model (all due actions), the post-event velocity and the event-log entry: paper 002 eq. (22)
    with J+ = [J1; J2] (J1: rows kept by label, J2: rows activated) and U the sum of the actions'
    impulses, solved in the form ``method``."""
    new, U = model, np.zeros(model.n)
    for e in due:
        impulse = getattr(e.action, "impulse", None)
        if impulse is not None:
            U = U + np.asarray(impulse(new, t, q, v), dtype=float).reshape(model.n)
        new = e.action(new, t, q, v)
        if not isinstance(new, Model):
            raise MultibodyError(f"the action of event '{e.label()}' returned {type(new).__name__}, "
                                 "not a Model.")
    if new.coordinate_names != model.coordinate_names:
        raise MultibodyError(f"the action of event(s) {'; '.join(e.label() for e in due)} changed the "
                             "coordinates; an event may add, remove or replace constraint rows only.")
    _, A, Phi_t, _ = Workspace(new).constraints(t, q, v)
    before = set(model.constraint_labels)
    kept = np.array([i for i, lab in enumerate(new.constraint_labels) if lab in before], int)
    added = np.array([i for i, lab in enumerate(new.constraint_labels) if lab not in before], int)
    M = model.mass(q)
    tr = transition(method, M, A[kept], A[added], v, c1=Phi_t[kept], c2=Phi_t[added], U=U)
    if tr.impulse is not None:      # back to the row order of the new model
        impulse = np.zeros(new.m)
        impulse[kept], impulse[added] = tr.impulse[:len(kept)], tr.impulse[len(kept):]
        tr = dataclasses.replace(tr, impulse=impulse)
    return new, tr.v_plus, event_entry(model, new, due, t, q, v, tr, M, A, U)
