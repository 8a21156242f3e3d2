"""simulate(): model + formulation + integrator -> Result.

The loop is the data flow of DESIGN.md: consistent initial state -> integrator steps (the formulation
supplies only rhs) -> after every accepted step the formulation may project or re-basis the state and
the integrator restarts its derivative there -> a Recorder stores labelled series -> Result.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .assembly import kinetic_energy
from .errors import MultibodyError, SimulationError
from .formulations.base import Accelerations, Formulation
from .formulations.lagrange import Lagrange
from .integrate.explicit import IntegrationError, RungeKutta
from .integrate.tableaux import TABLEAUX
from .kinematics import consistent_state
from .model.system import Model
from .reactions import reaction_map
from .results import Result, Series
from .step_watch import StepWatch

FORMULATIONS: dict[str, type[Formulation]] = {"lagrange": Lagrange}
from .formulations.nullspace import NullSpace  # noqa: E402

FORMULATIONS["nullspace"] = NullSpace
from .formulations.projection import Projection  # noqa: E402  (paper 002 eqs 6-9)
from .formulations.minimal import Minimal  # noqa: E402  (paper 002 eqs 10-13)
FORMULATIONS.update(projection=Projection, minimal=Minimal)
from .formulations.partitioning import Partitioning  # noqa: E402  (paper 001 eqs 5-15, 23)
FORMULATIONS["partitioning"] = Partitioning


def make_formulation(name: str, model: Model, **options) -> Formulation:
    if name not in FORMULATIONS:
        raise MultibodyError(f"unknown formulation '{name}'; choose one of: {', '.join(FORMULATIONS)}.")
    return FORMULATIONS[name](model, **options)


#: the implicit DAE integrator (integrate/generalized_alpha.py); the others are Runge-Kutta TABLEAUX
IMPLICIT = "generalized-alpha"

#: relative slack when comparing a step's time with the next output time (round-off of t sums)
OUTPUT_TIME_RTOL = 1e-9


class Recorder:
    """Collects the per-step series of a run. Per stored state it does only what needs that state
    (issue 7: per-step overhead): accelerations, multipliers and violations (compiled with
    multibody.fast.step where available), energies, the joints' generalized forces and the uniqueness flags; the
    elementwise rest of the joint reactions is done once for all states (:attr:`extra`)."""

    def __init__(self, model: Model, form: Formulation, interval: float = 0.0):
        self.model, self.form, self.interval = model, form, float(interval)
        self.t, self.rows, self._extra = [], {k: [] for k in ("q", "v", "a", "multipliers", "energy",
                                                               "violation")}, {}
        self.extra_labels, self._generalized, self._finished = {}, [], (0, [])  # reactions: finished lazily
        self.reactions = reaction_map(model)   # joint reactions from the multipliers (reactions.py)
        from .analysis.solvability import ReactionFlags
        self.flags = ReactionFlags(model, self.reactions)   # which of them are unique (paper 003)

    def record(self, t: float, y: np.ndarray, force: bool = False) -> None:
        """Store the state at t: every call when ``interval`` is 0, else only once ``interval`` has
        passed since the last stored time (``force``: always, e.g. the first and last state, events)."""
        if not force and self.t and t < self.t[-1] + self.interval * (1 - OUTPUT_TIME_RTOL):
            return
        form, ws = self.form, self.form.ws
        q, v = form.split(t, y)
        sparse = getattr(form, "sparse", False)     # issue 7 item 3: sparse A, no dense per-step diagnostics
        acc, violation, A = self._outputs(t, q, v, sparse)
        T, V = kinetic_energy(self.model.mass(q), v), ws.potential(t, q)
        self.t.append(t)
        for key, val in (("q", q), ("v", v), ("a", acc.vdot),
                         ("multipliers", acc.multipliers if acc.multipliers is not None
                          else np.full(ws.m + ws.h, np.nan)),
                         ("energy", (T, V, T + V)),
                         ("violation", violation)):
            self.rows[key].append(np.array(val, dtype=float))
        if self.reactions is not None:
            self._generalized.append(self.reactions.generalized(A, acc.multipliers))
            self.extra_labels["reactions"] = self.reactions.labels
        flags = {} if sparse else self.flags.record(q, A)
        for key, (values, labels) in {**flags, **form.channels(t, y)}.items():
            self._extra.setdefault(key, []).append(np.asarray(values, dtype=float))
            self.extra_labels[key] = tuple(labels)

    @property
    def extra(self) -> dict:
        """Extra per-step series {name: [row per stored state]}: the joint reactions (finished here for
        all stored states at once, ReactionMap.finish), the uniqueness flags and the formulation's channels."""
        if not self._generalized:
            return self._extra
        if self._finished[0] != len(self._generalized):     # once per number of stored states
            q = np.array(self.rows["q"])
            rows = self.reactions.finish(q, np.array(self._generalized)).reshape(len(q), -1)
            self._finished = (len(rows), list(rows))
        return {"reactions": self._finished[1], **self._extra}

    def _outputs(self, t, q, v, sparse):
        """Accelerations, (max |Phi|, max |C v + b|) and C at a stored state: compiled when the
        formulation can (Lagrange with multibody.fast: ``fast_step.record``), else the reference."""
        form, ws = self.form, self.form.ws
        fast = getattr(form, "fast_step", None)
        out = fast.record(t, q, v) if fast is not None else None
        if out is not None:
            vdot, lam, violation, A = out
            return Accelerations(vdot, lam, {"multipliers": "minimum-norm"}), violation, A
        acc = form.accelerations(t, q, v)
        Phi, A, Phi_t, _ = (ws.sparse_constraints if sparse else ws.velocity_constraints)(t, q, v)
        return acc, (np.max(np.abs(Phi), initial=0.0), np.max(np.abs(A @ v + Phi_t), initial=0.0)), A

    def result(self, summary: dict) -> Result:
        names, labels = self.model.coordinate_names, self.model.velocity_labels
        summary = {**summary, **self.flags.summary()}
        arr = {k: np.array(v).reshape(len(self.t), -1) for k, v in self.rows.items()}
        series = {
            "q": Series(arr["q"], names, description="coordinates"),
            "v": Series(arr["v"], names, description="velocities"),
            "a": Series(arr["a"], names, description="accelerations"),
            "multipliers": Series(arr["multipliers"], labels,
                                  description="Lagrange multipliers (minimum-norm where not unique)"),
            "energy": Series(arr["energy"], ("kinetic", "potential", "total"), "J"),
            "violation": Series(arr["violation"], ("position", "velocity"),
                                description="max |Phi| and max |C v + b| (holonomic and nonholonomic)"),
        }
        for key, rows in self.extra.items():
            series[key] = Series(np.array(rows).reshape(len(self.t), -1), self.extra_labels[key])
        return Result(np.array(self.t), series, summary, events=list(getattr(self.form, "events", [])))


@dataclass(frozen=True)
class RunOptions:
    """Integration options: integrator name, tolerances, fixed step (required by rk4 and
    generalized-alpha), max step, the output interval of the stored series (the run's first and last
    state and events are always stored), and the spectral radius at infinity of generalized-alpha."""

    integrator: str = "dopri5"
    rtol: float = 1e-6
    atol: float = 1e-8
    step: float | None = None
    max_step: float = np.inf
    output_interval: float = 0.0    # 0: store every accepted step; > 0: at most one state per interval
    rho_inf: float = 0.9            # generalized-alpha: 1 no numerical damping, 0 asymptotic annihilation


def simulate(model: Model, *, t_end: float, t_start: float = 0.0, formulation: str = "lagrange",
             options: RunOptions = RunOptions(), formulation_options: dict | None = None,
             progress: bool = False, events=(), transition: str = "lagrangian") -> Result:
    """Integrate the model from its consistent initial state to t_end; returns a Result.

    ``events``: :mod:`multibody.events` objects (constraint activation, paper 002) applied with the
    ``transition`` condition ("lagrangian", "projected", "minimal" or the labelled "naive"); the run
    then goes through :func:`multibody.events.simulate_events`. Without events nothing changes."""
    if events:
        from .events import simulate_events

        return simulate_events(model, t_end=t_end, t_start=t_start, formulation=formulation,
                               options=options, formulation_options=formulation_options or {},
                               events=tuple(events), transition_method=transition, progress=progress)
    if options.integrator == "energy-momentum":     # paper 004: fixed-step conserving scheme
        from .integrate.em_simulate import run_energy_momentum

        return run_energy_momentum(model, t_end=t_end, t_start=t_start, formulation=formulation, options=options)
    _check_options(options, t_start, t_end)
    form = make_formulation(formulation, model, **(formulation_options or {}))
    q, v = consistent_state(model, t_start, ws=form.ws)
    y = form.initial_state(t_start, q, v)
    rk = make_stepper(model, form, t_start, y, t_end, options)
    rec = Recorder(model, form, options.output_interval)
    rec.record(t_start, y, force=True)
    watch = StepWatch(form, t_start, t_end)     # step-size collapse (issue 7 item 2)
    wall = time.perf_counter()
    with _progress(progress, t_start, t_end) as bar:
        while rk.t < t_end:
            step, y_new = advance(model, form, rk)
            watch.accepted(step)
            if y_new is not None:
                rk.reset(step.t, y_new)
            rec.record(rk.t, rk.y, force=rk.t >= t_end)
            bar.update(rk.t)
    wall = time.perf_counter() - wall
    return rec.result({**_summary(model, form, options, rec, rk, wall, t_end, formulation), **watch.summary()})


def make_stepper(model: Model, form: Formulation, t0: float, y: np.ndarray, t_stop: float,
                 options: RunOptions):
    """The stepper of a run segment: Runge-Kutta with the formulation's error filter, or the implicit
    generalized-alpha DAE integrator (lagrange formulation only)."""
    if options.integrator == IMPLICIT:
        from .integrate.generalized_alpha import GeneralizedAlpha
        if not isinstance(form, Lagrange):
            raise MultibodyError(f"integrator '{IMPLICIT}' integrates the equations with multipliers: use "
                                 f"formulation 'lagrange', not '{form.name}'.")
        try:
            return GeneralizedAlpha(form, t0, y, t_stop, step=options.step, rho_inf=options.rho_inf)
        except IntegrationError as exc:
            raise SimulationError(f"model '{model.name}': {exc}") from None
    try:
        return RungeKutta(form.rhs, t0, y, t_stop, tableau=TABLEAUX[options.integrator], rtol=options.rtol,
                          atol=options.atol, fixed_step=options.step, max_step=options.max_step,
                          error_filter=form.error_filter)
    except IntegrationError as exc:
        raise SimulationError(f"model '{model.name}': {exc}") from None


def advance(model: Model, form: Formulation, rk: RungeKutta):
    """One accepted step and the formulation's after-step action: (Step, new y or None). A ``constrained``
    stepper (generalized-alpha) satisfies the constraints itself and is not projected."""
    try:
        step = rk.step()
        return step, None if getattr(rk, "constrained", False) else form.after_step(step.t, step.y)
    except IntegrationError as exc:
        hint = getattr(form, "failure_hint", None)     # e.g. Lagrange: near a singular configuration
        raise SimulationError(f"model '{model.name}': {exc}{hint(rk.t, rk.y) if hint else ''}") from None


def _summary(model, form, options, rec, rk, wall, t_end, formulation) -> dict:
    energy = np.array(rec.rows["energy"])
    viol = np.array(rec.rows["violation"])
    scale = max(abs(energy[0, 2]), np.max(np.abs(energy[:, 0])), np.finfo(float).tiny)
    return {
        "model": model.name, "formulation": formulation, "integrator": options.integrator,
        "rtol": options.rtol, "atol": options.atol, "step": options.step, "t_end": t_end,
        "steps": rk.n_accepted, "rejected_steps": rk.n_rejected,
        "rhs_evaluations": form.nfev, "wall_time_s": wall,
        "energy_drift_rel": float(np.max(np.abs(energy[:, 2] - energy[0, 2])) / scale),
        "constraint_violation_max": float(np.max(viol[:, 0])),
        "velocity_violation_max": float(np.max(viol[:, 1])),
        "coordinate_names": list(model.coordinate_names),
        "final_q": rec.rows["q"][-1].tolist(), "final_v": rec.rows["v"][-1].tolist(),
        "multipliers": "minimum-norm solution where A is rank deficient",
        **form.summary(), **getattr(rk, "summary", dict)(),
    }


def _check_options(o: RunOptions, t0: float, t1: float) -> None:
    if o.integrator not in (*TABLEAUX, IMPLICIT):
        raise MultibodyError(f"unknown integrator '{o.integrator}'; choose one of: {', '.join(TABLEAUX)}, "
                             f"{IMPLICIT}, energy-momentum.")
    if (o.integrator == IMPLICIT or TABLEAUX[o.integrator].error_order is None) and o.step is None:
        raise MultibodyError(f"integrator '{o.integrator}' has no error control: give a fixed step (--step).")
    for name, val in (("rtol", o.rtol), ("atol", o.atol)):
        if not (np.isfinite(val) and val > 0):
            raise MultibodyError(f"{name} must be a positive number, got {val}.")
    if not (np.isfinite(o.output_interval) and o.output_interval >= 0):
        raise MultibodyError(f"the output interval must be a non-negative number, got {o.output_interval}.")
    if not (0.0 <= o.rho_inf <= 1.0):
        raise MultibodyError(f"rho_inf (generalized-alpha) must lie in [0, 1], got {o.rho_inf}.")
    if o.step is not None and not (np.isfinite(o.step) and o.step > 0):
        raise MultibodyError(f"the step must be a positive number, got {o.step}.")
    if not (np.isfinite(t1) and t1 > t0):
        raise MultibodyError(f"t_end must be a finite time after t_start = {t0}, got {t1}.")


class _progress:
    """A tqdm bar over simulated time, shown only on a terminal."""

    def __init__(self, enabled, t0, t1):
        self.enabled, self.t0, self.t1, self.bar, self.last = enabled, t0, t1, None, t0

    def __enter__(self):
        if self.enabled:
            from tqdm import tqdm
            self.bar = tqdm(total=self.t1 - self.t0, unit="s sim", leave=False,
                            bar_format="{l_bar}{bar}| {n:.3g}/{total:.3g} s [{elapsed}<{remaining}]")
        return self

    def update(self, t):
        if self.bar is not None:
            self.bar.update(t - self.last)
            self.last = t

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.close()
