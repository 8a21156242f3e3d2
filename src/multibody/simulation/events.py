"""Events: constraints that switch on during a run (paper 002), located exactly by the integrator.

An event has a *when* and an *action*:

- :class:`AtTime` (t): the integration interval ends exactly at t (the integrator's t_bound), so a
  fixed-step method lands on it;
- :class:`WhenZero` (condition g(t, q, v), direction): after every accepted step g is evaluated; on a
  sign change the root is found on the integrator's dense output within the step (Brent's method to
  ``ROOT_XTOL``) and the state there is taken from the dense output: the integration stops exactly at
  the event, e.g. :func:`rate_crosses_zero` ("lock joint 2 when its rate crosses zero", a brake
  reaching stiction).

The action maps (model, t, q, v) to a new immutable Model with extra constraint rows (e.g.
:class:`Lock` -> ``model.with_locked``). The velocity jumps by a transition condition
(:mod:`multibody.simulation.transitions`: ``lagrangian`` eq. 24, ``projected`` eq. 32, ``minimal`` eq. 37, or the
labelled ``naive`` comparison) and the run restarts with a new formulation and integrator on the new
model (a flagged restart: the event log records it). Both the state before and the state after the
jump are recorded at the event time.
"""
from __future__ import annotations

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


def _describe(action) -> str:
    return action.describe() if hasattr(action, "describe") else getattr(action, "__name__", "action")


# ----------------------------------------------------------------------------- in the driver
def check_events(events, t_start, t_end, method, integrator, dense_output):
    """(timed events within the run sorted by t, state events); MultibodyError for anything else."""
    if events and not dense_output:
        raise MultibodyError(f"events are located on the dense output of a Runge-Kutta integrator; "
                             f"'{integrator}' has none: use dopri5, dop853 or rk4 for runs with events.")
    if method not in TRANSITIONS:
        raise MultibodyError(f"unknown transition '{method}'; choose one of: {', '.join(TRANSITIONS)}.")
    timed, watched = [], []
    for e in events:
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
    """New model (all due actions), the post-event velocity and the event-log entry."""
    new = model
    for e in due:
        new = e.action(new, t, q, v)
        if not isinstance(new, Model):
            raise MultibodyError(f"the action of event '{e.label()}' returned {type(new).__name__}, "
                                 "not a Model.")
    _, A, Phi_t, _ = Workspace(new).constraints(t, q, v)
    m1 = model.m
    kept = new.constraints[:len(model.constraints)]
    if len(kept) < len(model.constraints) or any(a is not b for a, b in zip(kept, model.constraints)):
        raise MultibodyError("an event action must keep the model's constraints and append new ones "
                             "(constraint activation, paper 002 eq. 23).")
    M = model.mass(q)
    tr = transition(method, M, A[:m1], A[m1:], v, c1=Phi_t[:m1], c2=Phi_t[m1:])
    return new, tr.v_plus, event_entry(model, new, due, t, q, v, tr, M, A)
