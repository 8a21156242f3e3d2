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
(:mod:`multibody.topology`: ``lagrangian`` eq. 24, ``projected`` eq. 32, ``minimal`` eq. 37, or the
labelled ``naive`` comparison) and the run restarts with a new formulation and integrator on the new
model (a flagged restart: the event log records it). Both the state before and the state after the
jump are recorded at the event time.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.optimize as so

from .errors import MultibodyError
from .kinematics import consistent_state
from .model.system import Model
from .topology import TRANSITIONS, transition

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


# ----------------------------------------------------------------------------- the run
def simulate_events(model: Model, *, t_end: float, t_start: float, formulation: str, options,
                    formulation_options: dict, events, transition_method: str = "lagrangian",
                    progress: bool = False):
    """simulate() with events: integrate segment by segment, applying a transition at each event."""
    from .event_results import assemble_result
    from .runner import IMPLICIT, Recorder, _check_options, make_formulation

    _check_options(options, t_start, t_end)
    if options.integrator == IMPLICIT:
        raise MultibodyError(f"events are located on the dense output of a Runge-Kutta integrator; "
                             f"'{IMPLICIT}' has none: use dopri5, dop853 or rk4 for runs with events.")
    timed, watched = _check_events(events, t_start, t_end, transition_method)
    form = make_formulation(formulation, model, **formulation_options)
    q, v = consistent_state(model, t_start, ws=form.ws)
    t, segments, log, counts = t_start, [], [], {id(e): 0 for e in watched}
    eps_t = SIMULTANEOUS_RTOL * max(abs(t_end), abs(t_end - t_start))
    wall = time.perf_counter()
    while True:
        pending = [e.t for e in timed if e.t > t + eps_t]
        t_stop = min(pending + [t_end])
        rec, rk, hit = _segment(model, form, t, q, v, t_stop, options, watched, counts)
        segments.append((model, form, rec, rk))
        t, (q, v) = hit[0], form.split(hit[0], hit[1])
        due = [e for e in timed if abs(e.t - t) <= eps_t] + hit[2]
        if not due:
            break
        for e in hit[2]:
            counts[id(e)] += 1
        model, v, entry = _apply(model, due, t, q, v, transition_method)
        log.append(entry)
        form = make_formulation(formulation, model, **formulation_options)
        if t >= t_end - eps_t:
            rec2 = Recorder(model, form, options.output_interval)
            rec2.record(t, form.initial_state(t, q, v), force=True)
            segments.append((model, form, rec2, None))
            break
    wall = time.perf_counter() - wall
    return assemble_result(segments, log, options=options, t_end=t_end, formulation=formulation,
                           transition_method=transition_method, wall=wall)


def _check_events(events, t_start, t_end, method):
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
            raise MultibodyError(f"{e!r} is not an event (use AtTime or WhenZero from multibody.events).")
    return sorted(timed, key=lambda e: e.t), watched


def _segment(model, form, t0, q, v, t_stop, options, watched, counts):
    """Integrate from t0 to t_stop or to the first state event; returns (rec, rk, (t, y, events))."""
    from .runner import Recorder, advance, make_stepper

    y = form.initial_state(t0, q, v)
    rk = make_stepper(model, form, t0, y, t_stop, options)
    rec = Recorder(model, form, options.output_interval)
    rec.record(t0, y, force=True)
    active = [e for e in watched if counts[id(e)] < e.max_count]
    g_old = [e.condition(t0, *form.split(t0, y)) for e in active]
    while rk.t < t_stop:
        step, y_new = advance(model, form, rk)
        y_end = step.y if y_new is None else y_new
        g_new = [e.condition(step.t, *form.split(step.t, y_end)) for e in active]
        fired = [(i, e) for i, e in enumerate(active) if e.crossed(g_old[i], g_new[i])]
        if fired:
            t_star, y_star, due = _locate(form, step, fired, g_old, g_new)
            rec.record(t_star, y_star, force=True)
            return rec, rk, (t_star, y_star, due)
        g_old = g_new
        if y_new is not None:
            rk.reset(step.t, y_new)
        rec.record(rk.t, rk.y, force=rk.t >= t_stop)
    return rec, rk, (rk.t, rk.y, [])


def _locate(form, step, fired, g_old, g_new):
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


def _apply(model, due, t, q, v, method):
    """New model (all due actions), the post-event velocity and the event-log entry."""
    new = model
    for e in due:
        new = e.action(new, t, q, v)
        if not isinstance(new, Model):
            raise MultibodyError(f"the action of event '{e.label()}' returned {type(new).__name__}, "
                                 "not a Model.")
    from .assembly import Workspace
    from .event_results import event_entry

    _, A, Phi_t, _ = Workspace(new).constraints(t, q, v)
    m1 = model.m
    kept = new.constraints[:len(model.constraints)]
    if len(kept) < len(model.constraints) or any(a is not b for a, b in zip(kept, model.constraints)):
        raise MultibodyError("an event action must keep the model's constraints and append new ones "
                             "(constraint activation, paper 002 eq. 23).")
    M = model.mass(q)
    tr = transition(method, M, A[:m1], A[m1:], v, c1=Phi_t[:m1], c2=Phi_t[m1:])
    return new, tr.v_plus, event_entry(model, new, due, t, q, v, tr, M, A)
