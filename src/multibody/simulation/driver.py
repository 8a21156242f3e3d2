"""simulate(): model + formulation + stepper -> Result, in one loop for every kind of run.

The loop is the data flow of DESIGN.md: consistent initial state -> the stepper takes steps (the
formulation supplies rhs, or the discrete equations for energy-momentum) -> after every accepted step
the formulation may project or re-basis the state and the stepper restarts there -> a Recorder stores
labelled series -> Result. A run is a sequence of segments between events (paper 002: constraints
that switch on); a run without events is one segment. At an event (:mod:`.events`) the model gains
constraint rows, the velocity jumps by a transition condition (:mod:`.transitions`) and the next
segment starts with a new formulation and stepper on the new model.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import SimulationError
from ..formulations.base import Formulation
from ..formulations.registry import make_formulation
from ..integrate.explicit import IntegrationError
from ..kinematics import consistent_state
from ..model.system import Model
from ..results.result import Result
from .assemble import assemble_result
from .events import SIMULTANEOUS_RTOL, apply_events, check_events, locate
from .options import RunOptions, check_formulation, check_options, output_grid  # noqa: F401  (RunOptions: public here)
from .progress import Progress
from .recorder import Recorder
from .step_watch import StepWatch
from .stream import streamed


@dataclass
class Segment:
    """One stretch of a run on one model: its formulation, recorder and stepper (None for the single
    state recorded after an event at the end time), where it ended, the state events that ended it and
    the wall time of its steps (without the set-up: formulation, stepper, first record)."""

    model: Model
    form: Formulation
    rec: Recorder
    stepper: object = None
    t: float = 0.0
    y: np.ndarray | None = None
    fired: list = field(default_factory=list)
    wall: float = 0.0


def simulate(model: Model, *, t_end: float, t_start: float = 0.0, formulation: str = "lagrange",
             options: RunOptions = RunOptions(), formulation_options: dict | None = None,
             progress: bool = False, events=(), transition: str = "lagrangian", stream=None) -> Result:
    """Integrate the model from its consistent initial state to t_end; returns a Result.

    ``options.integrator`` names the stepper (:data:`multibody.integrate.steppers.STEPPERS`: dopri5,
    dop853, rk4, generalized-alpha, energy-momentum); ``formulation`` the equations
    (:data:`multibody.formulations.registry.FORMULATIONS`). ``events``: :mod:`multibody.simulation.events`
    objects (constraint activation, paper 002) applied with the ``transition`` condition ("lagrangian",
    "projected", "minimal" or the labelled "naive"); they need a stepper with dense output.

    ``stream``: a :class:`multibody.results.stream.ResultStream` (issue 17): the stored states go to its
    file in blocks as the run goes on and are not kept; the file is complete when simulate returns, and
    the Result returned has the full summary and events but series with no rows (read the file back
    with Result.load). Runs with events stream too (each segment's states in turn; the file's columns
    are the union of the segments', as in memory).

    BLAS runs on MULTIBODY_BLAS_THREADS threads (default 1) during the run (:func:`blas_threads`), as
    in the CLI. The summary's ``backend`` says which path computed the right-hand sides: "compiled"
    (multibody.fast) or "numpy" (the reference path)."""
    with blas_threads():
        try:
            if stream is None:
                return _simulate(model, t_end, t_start, formulation, options, formulation_options or {},
                                 progress, events, transition)
            return streamed(stream, events, lambda sink: _simulate(
                model, t_end, t_start, formulation, options, formulation_options or {}, progress, events,
                transition, sink))
        except SimulationError as exc:     # every failure of a run names its model (issue 17)
            if f"'{model.name}'" in str(exc):
                raise
            raise type(exc)(f"model '{model.name}': {exc}") from None


def blas_threads():
    """A threadpoolctl context with MULTIBODY_BLAS_THREADS BLAS threads (default 1): the dense systems of
    a mechanism are small, and a threaded BLAS on a loaded 2-core machine took 18 ms for a 60 x 60 SVD
    instead of 1.3 ms (issue 13 item 2). The controller (the scan of the loaded BLAS libraries, 2.7 ms) is made once
    per process, at the first run, when numpy's and scipy's BLAS are loaded (issue 16: 0.013 ms per step of a
    200-step gyro-top run)."""
    from threadpoolctl import ThreadpoolController

    if _BLAS["controller"] is None:
        _BLAS["controller"] = ThreadpoolController()
    return _BLAS["controller"].limit(limits=int(os.environ.get("MULTIBODY_BLAS_THREADS", "1")), user_api="blas")


_BLAS = {"controller": None}


def _simulate(model, t_end, t_start, formulation, options, form_opts, progress, events, transition,
              sink=None) -> Result:
    """simulate() inside the thread limit."""
    spec = check_options(options, t_start, t_end)
    formulation = check_formulation(spec, options.integrator, formulation)
    times = output_grid(options, spec, t_start, t_end)
    timed, watched = check_events(events, t_start, t_end, transition, options.integrator, spec.dense_output,
                                  model)
    form = make_formulation(formulation, model, **form_opts)
    q, v = consistent_state(model, t_start, ws=form.ws)
    t, segments, log, counts = t_start, [], [], {id(e): 0 for e in watched}
    eps_t = SIMULTANEOUS_RTOL * max(abs(t_end), abs(t_end - t_start))
    watch = StepWatch(form, t_start, t_end, options.rtol, options.atol)   # collapse, branch jump (issue 12)
    deadline = Deadline(options.time_limit, t_start, t_end)
    with Progress(progress, t_start, t_end) as bar:
        while True:
            t_stop = min([e.t for e in timed if e.t > t + eps_t] + [t_end])
            seg = _segment(model, form, spec, t, q, v, t_stop, options, watched, counts, watch, bar,
                           times=times, after_event=bool(segments), sink=sink, deadline=deadline)
            segments.append(seg)
            if sink is not None:        # streamed: this segment's states go to the file before the next's
                sink.segment_done(seg.rec)
            t, (q, v) = seg.t, form.split(seg.t, seg.y)
            due = [e for e in timed if abs(e.t - t) <= eps_t] + seg.fired
            if not due:
                break
            for e in seg.fired:
                counts[id(e)] += 1
            model, v, entry = apply_events(model, due, t, q, v, transition)
            log.append(entry)
            form = make_formulation(formulation, model, **form_opts)
            watch.restart(form)
            if t >= t_end - eps_t:      # an event at the end: record the state after the jump
                rec = Recorder(model, form, options.output_interval)
                rec.record(t, form.initial_state(t, q, v), force=True)
                segments.append(Segment(model, form, rec))
                if sink is not None:
                    sink.segment_done(rec)
                break
    generic = {"model": segments[0].model.name, "formulation": formulation, "integrator": options.integrator,
               "rtol": options.rtol, "atol": options.atol, "step": options.step, "t_end": t_end,
               "wall_time_s": sum(s.wall for s in segments), **watch.summary(),
               "backend": "compiled" if any(getattr(s.form, "fast_rhs", None) for s in segments) else "numpy"}
    if events:
        generic["transition"] = transition
    return assemble_result(segments, log, events=bool(events), summary=generic)


def _segment(model, form, spec, t0, q, v, t_stop, options, watched, counts, watch, bar, *, times=None,
             after_event=False, sink=None, deadline=None) -> Segment:
    """Integrate from t0 to t_stop or to the first state event (located on the dense output); ``times``:
    the output times (None: accepted steps); ``after_event``: t0 is the state after an event's jump;
    ``deadline``: the run's :class:`Deadline` (RunOptions.time_limit)."""
    y = form.initial_state(t0, q, v)
    try:
        stepper = spec.make(form, t0, y, t_stop, options)
    except IntegrationError as exc:
        raise SimulationError(f"model '{model.name}': {exc}") from None
    watch.attach(stepper)
    rec = Recorder(model, form, options.output_interval, stepper, times)
    rec.sink = sink
    rec.start(t0, y, after_event=after_event)
    active = [e for e in watched if counts[id(e)] < e.max_count]
    g_old = [e.condition(t0, *form.split(t0, y)) for e in active]
    wall = time.perf_counter()
    while stepper.t < t_stop:
        step, y_new, before = advance(model, form, stepper)
        watch.accepted(step, y_new, at_stop=step.t >= t_stop, before=before)
        if deadline is not None:
            deadline.check(model, step.t, watch)
        if active:
            y_end = step.y if y_new is None else y_new
            g_new = [e.condition(step.t, *form.split(step.t, y_end)) for e in active]
            fired = [(i, e) for i, e in enumerate(active) if e.crossed(g_old[i], g_new[i])]
            if fired:
                t_star, y_star, due = locate(form, step, fired, g_old, g_new)
                rec.record_event(step, t_star, y_star)
                return Segment(model, form, rec, stepper, t_star, y_star, due, time.perf_counter() - wall)
            g_old = g_new
        if y_new is not None:
            stepper.reset(step.t, y_new)
        rec.after_step(step, stepper.t, stepper.y, final=stepper.t >= t_stop)
        bar.update(stepper.t)
    return Segment(model, form, rec, stepper, stepper.t, stepper.y, [], time.perf_counter() - wall)


class Deadline:
    """RunOptions.time_limit (issue 17): a run still going after that many seconds of wall time stops with
    a SimulationError naming the time reached, the share of the run done, the steps and the smallest step,
    instead of crawling on (e.g. tiny steps that stay above the step-collapse limit)."""

    def __init__(self, limit, t_start: float, t_end: float):
        self.limit, self.span = limit, (t_start, t_end)
        self.at = None if limit is None else time.perf_counter() + limit
        self.steps = 0

    def check(self, model: Model, t: float, watch) -> None:
        self.steps += 1
        if self.at is not None and time.perf_counter() > self.at:
            t0, t1 = self.span
            raise SimulationError(
                f"model '{model.name}' at t = {t:.9g}: the time limit of {self.limit:g} s (time_limit, --time-limit) "
                f"was reached after {self.steps} steps, {100 * (t - t0) / (t1 - t0):.3g}% of the run to "
                f"t = {t1:g} (smallest step {watch.h_min:.3g} s at t = {watch.t_min:.9g}). Nothing was saved "
                "from this run; give a longer limit, another integrator or formulation.")


def advance(model: Model, form: Formulation, stepper):
    """One accepted step and the formulation's after-step action: (Step, new y or None, the physical state
    (q, v) before that action or None). A ``constrained`` stepper (generalized-alpha, energy-momentum) keeps
    Phi = 0 itself and is not projected. The state before is taken before the action because a formulation
    may change how it reads y there (partitioning switches its independent coordinates)."""
    try:
        step = stepper.step()
        if getattr(stepper, "constrained", False):
            return step, None, None
        extra = getattr(getattr(stepper, "tableau", None), "c_extra", (0,))    # dopri5 has none (issue 16)
        if form.rhs_changes_after_step and getattr(step, "dense", None) is not None and len(extra):
            step.dense(step.t_old)      # DOP853's extra stages (computed lazily) with this step's equations
        before = np.concatenate(form.split(step.t, step.y))
        y_new = form.after_step(step.t, step.y)
        return step, y_new, None if y_new is None else before
    except IntegrationError as exc:
        hint = getattr(form, "failure_hint", None)     # e.g. Lagrange: near a singular configuration
        raise SimulationError(f"model '{model.name}': {exc}{hint(stepper.t, stepper.y) if hint else ''}") from None
