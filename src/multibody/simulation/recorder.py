"""The per-step series of one segment of a run (between events).

Per stored state the recorder does only what needs that state (issue 7: per-step overhead): q, v,
energies and the constraint violations always; for a continuous formulation also the accelerations and
multipliers (compiled with multibody.fast.step where available), the joints' generalized forces and
the uniqueness flags of paper 003; then the formulation's and the stepper's channels. The elementwise
rest of the joint reactions is done once for all states (:attr:`Recorder.extra`). On the band path and the
spatial Lagrange path the stored states are kept as (t, y) and computed together when read
(:mod:`.record_batch`, :mod:`.record_batch_spatial`).
"""
from __future__ import annotations

import numpy as np

from ..analysis.physical_reactions import reactions_from_constraint_force
from ..analysis.reactions import reaction_map
from ..analysis.spatial_reactions import spatial_reaction_map
from ..analysis.solvability import ReactionFlags
from ..assembly import kinetic_energy
from ..formulations.base import Accelerations, Formulation
from ..kinematics import solve_positions, solve_velocities
from ..model.system import Model
from .record_batch import batch_step, flush
from .work import WorkIntegral, needs_balance

#: relative slack when comparing a step's time with the next output time (round-off of t sums)
OUTPUT_TIME_RTOL = 1e-9


class Recorder:
    """``record(t, y)`` stores the state; ``rows`` {q, v[, a, multipliers], energy, violation} and
    :attr:`extra` (reactions, flags, channels) hold the series, ``t`` the times."""

    def __init__(self, model: Model, form: Formulation, interval: float = 0.0, stepper=None, times=None):
        self.model, self.form, self.interval, self.stepper = model, form, float(interval), stepper
        self.times = times      # output times (simulation.options.output_grid) or None: accepted steps
        self.work, self._w = None, 0.0     # the work of drivers and forces (.work), set in start()
        keys = ("q", "v", "energy", "violation") + (() if form.discrete else ("a", "multipliers"))
        self.t, self._rows, self._extra = [], {k: [] for k in keys}, {}
        self.extra_labels, self._generalized, self._finished = {}, [], (0, [])  # reactions: finished lazily
        self.reactions = None if form.discrete else (reaction_map(model)         # joint reactions (paper 003)
                                                      or spatial_reaction_map(model))   # spatial pairs (issue 23)
        flags = getattr(form, "reaction_flags", ReactionFlags)     # issue 16: spatial models' (fast.spatial_flags)
        self.flags = None if form.discrete else flags(model, self.reactions)   # which are unique
        self.sink = None        # simulation.stream.ChunkSink: takes every block of `sink.chunk` states
        self._targets = None    # ReactionMap.entry_targets of A's entry pattern (fast.band.BandStep.record)
        M = model.mass_matrix   # a constant diagonal M: T = 1/2 sum d v^2 without the (n, n) product
        self._mass_diag = (np.diag(M).copy() if M is not None and np.count_nonzero(M) == np.count_nonzero(np.diag(M))
                           else None)
        self._batch, self._pending = None, []   # band and spatial paths: states kept as (t, y[, tag]), computed together
        self.momentum_basis = None      # (rows, s) of the momenta, chosen at the first state (streamed runs)

    def start(self, t0: float, y: np.ndarray, after_event: bool) -> None:
        """The segment's first state: always stored without output times; with them, if t0 is one
        of them or the state after an event's jump (the state before it is stored by the event)."""
        q0 = self.form.split(t0, y)[0]
        self.work = WorkIntegral(self.model, self.form) if needs_balance(self.model, self.form, t0, q0) else None
        self._batch = batch_step(self)
        if self.times is None or after_event or np.any(np.abs(self.times - t0) <= self._slack(t0)):
            self.record(t0, y, force=True)

    def record_event(self, step, t: float, y: np.ndarray) -> None:
        """The state at an event located inside ``step`` (the work W up to t on the dense output)."""
        if self.work is not None:
            self._w = self.work.at(step, t)
        self.record(t, y, force=True)

    def after_step(self, step, t: float, y: np.ndarray, final: bool) -> None:
        """After an accepted step (t, y: the state the stepper continues from, e.g. projected): that
        state, or with output times the dense output ``step.dense`` at the times in (t_old, t]
        (at t itself: y)."""
        if self.times is None:
            self._advance_work(step)
            self.record(t, y, force=final)
            return
        lo, hi = np.searchsorted(self.times, [step.t_old + self._slack(step.t_old), t + self._slack(t)], "right")
        for s in self.times[lo:hi]:     # the times in (t_old, t] (sorted: no scan of all times per step)
            if self.work is not None and step.dense is not None:
                self._w = self.work.at(step, float(s))
            self.record(float(s), y if abs(s - t) <= self._slack(t) else self._sample(step, float(s)), force=True)
        self._advance_work(step)

    def _advance_work(self, step) -> None:
        """W at the end of the step (NaN without a dense output: no balance)."""
        if self.work is not None:
            if step.dense is None:
                self.work.W = np.nan
            else:
                self.work.advance(step)
            self._w = self.work.W

    def _sample(self, step, s: float) -> np.ndarray:
        """The dense output at s; for a formulation that projects its accepted steps (``projects_state``:
        y = [q, v]), projected onto Phi = 0 and A v + Phi_t = 0 the same way (paper 000 Sect. 2.3), so a
        sample is as consistent as a step (the interpolant is not: it is not error-controlled normal to
        the constraints, ~5e-6 m on the slider-crank at rtol 1e-9)."""
        y = step.dense(s)
        if not self.form.projects_state:
            return y
        q, v = self.form.split(s, y)
        q = solve_positions(self.model, q, s, ws=self.form.ws)
        return np.concatenate([q, solve_velocities(self.model, q, v, s, ws=self.form.ws)])

    def _slack(self, t):
        return OUTPUT_TIME_RTOL * max(abs(t), 1.0)

    def record(self, t: float, y: np.ndarray, force: bool = False) -> None:
        """Store the state at t: every call when ``interval`` is 0, else only once ``interval`` has
        passed since the last stored time (``force``: always, e.g. the first and last state, events)."""
        if not force and self.t and t < self.t[-1] + self.interval * (1 - OUTPUT_TIME_RTOL):
            return
        self.t.append(t)
        if self._batch is not None:         # rows when read (simulation.record_batch)
            tag = getattr(self._batch, "tag", None)     # the spatial batch: the rows the solves use now
            self._pending.append((t, np.array(y, dtype=float)) + (() if tag is None else (tag(),)))
        else:
            self._store(t, y)
        if self.sink is not None and len(self.t) >= self.sink.chunk:
            self.sink.flush(self)

    @property
    def rows(self) -> dict:
        """{q, v[, a, multipliers], energy, violation[, work]}: a list of rows per key, one per stored state."""
        if self._pending:
            pending, self._pending = self._pending, []
            flush(self, pending)
        return self._rows

    def _store(self, t: float, y: np.ndarray) -> None:
        """The rows and extras of the state at t (its time is in ``t`` already)."""
        form, ws = self.form, self.form.ws
        q, v = form.split(t, y)
        sparse = getattr(form, "sparse", False)     # issue 7 item 3: sparse A, no dense per-step diagnostics
        values = {"q": q, "v": v,
                  "energy": (T := self._kinetic(q, v), V := ws.potential(t, q), T + V)}
        flags = {}
        if form.discrete:
            Phi, A, Phi_t, _ = ws.velocity_constraints(t, q, v)
            values["violation"] = (np.max(np.abs(Phi), initial=0.0), np.max(np.abs(A @ v + Phi_t), initial=0.0))
        else:
            acc, values["violation"], A = self._outputs(t, q, v, sparse)
            values["a"] = acc.vdot
            values["multipliers"] = (acc.multipliers if acc.multipliers is not None
                                     else np.full(ws.m + ws.h, np.nan))
            if self.reactions is not None:
                self._generalized.append(self._reaction_terms(A, acc.multipliers))
                self.extra_labels["reactions"] = self.reactions.labels
            flags = {} if sparse else self.flags.record(q, A)
            dist = self.model.distribution
            if dist is not None and not sparse and acc.multipliers is not None:    # paper 001 eq. 32
                lam, flags = np.nan_to_num(acc.multipliers[:ws.m]), dict(flags)     # (flags may be shared)
                flags["physical_reactions"] = (reactions_from_constraint_force(dist.B(q, t), A[:ws.m].T @ lam),
                                               dist.labels)
        if self.work is not None:
            values["work"] = (np.nan if self._w is None else self._w,)
        for key, val in values.items():
            self._rows.setdefault(key, []).append(np.array(val, dtype=float))
        channels = getattr(self.stepper, "channels", None)
        for key, (vals, labels) in {**flags, **form.channels(t, y), **(channels(t, y) if channels else {})}.items():
            self._extra.setdefault(key, []).append(np.asarray(vals, dtype=float))
            self.extra_labels[key] = tuple(labels)

    def _kinetic(self, q, v) -> float:
        """T = 1/2 v^T M v (assembly.kinetic_energy; with a constant diagonal M as 1/2 sum d v^2)."""
        d = self._mass_diag
        return kinetic_energy(self.model.mass(q), v) if d is None else 0.5 * float(np.dot(d * v, v))

    def _reaction_terms(self, A, lam):
        """ReactionMap.generalized at a stored state; A dense, sparse, or the entry triplets (vals, rows, cols) of
        fast.band.BandStep.record (their pattern is the same at every state: its targets are found once)."""
        if not isinstance(A, tuple):
            return self.reactions.generalized(A, lam)
        if self._targets is None:
            self._targets = self.reactions.entry_targets(A[1], A[2])
        return self.reactions.generalized_entries(A[0], lam, self._targets)

    def take(self) -> tuple:
        """(t, {row key: (k, c)}, {extra key: (k, c)}) of the states held, which are then dropped
        (streaming, :mod:`.stream`); the running work integral and the flags are kept."""
        rows = {key: np.array(val, dtype=float).reshape(len(self.t), -1) for key, val in self.rows.items()}
        extra = {key: np.array(val, dtype=float).reshape(len(self.t), -1) for key, val in self.extra.items()}
        t = np.array(self.t, dtype=float)
        self.t, self._rows = [], {key: [] for key in self._rows}
        self._extra, self._generalized, self._finished = {key: [] for key in self._extra}, [], (0, [])
        return t, rows, extra

    def hold(self, t, rows: dict, extra: dict) -> None:
        """Hold these states (arrays as from :meth:`take`; the extras finished) instead of the recorded ones."""
        self.t = list(t)
        self._rows = {key: list(val) for key, val in rows.items()}
        self._extra, self._generalized, self._finished = {key: list(val) for key, val in extra.items()}, [], (0, [])

    @property
    def extra(self) -> dict:
        """Extra per-step series {name: [row per stored state]}: the joint reactions (finished here for
        all stored states at once, ReactionMap.finish), the uniqueness flags and the channels."""
        rows = self.rows        # the pending states first
        if not self._generalized:
            return self._extra
        if self._finished[0] != len(self._generalized):     # once per number of stored states
            q = np.array(rows["q"])
            rows = self.reactions.finish(q, np.array(self._generalized)).reshape(len(q), -1)
            self._finished = (len(rows), list(rows))
        return {"reactions": self._finished[1], **self._extra}

    def _outputs(self, t, q, v, sparse):
        """Accelerations, (max |Phi|, max |C v + b|) and C at a stored state: compiled when the
        formulation can (Lagrange with multibody.fast: ``fast_step.record``, or on the sparse path the band
        solve ``band_step.record``), else the reference."""
        form, ws = self.form, self.form.ws
        fast = getattr(form, "fast_step", None) or getattr(form, "band_step", None)
        out = fast.record(t, q, v) if fast is not None else None
        if out is not None:
            vdot, lam, violation, A = out
            return Accelerations(vdot, lam, getattr(fast, "record_info", {"multipliers": "minimum-norm"})), violation, A
        acc = form.accelerations(t, q, v)
        Phi, A, Phi_t, _ = (ws.sparse_constraints if sparse else ws.velocity_constraints)(t, q, v)
        return acc, (np.max(np.abs(Phi), initial=0.0), np.max(np.abs(A @ v + Phi_t), initial=0.0)), A
