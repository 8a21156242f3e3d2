"""The energy-momentum scheme of paper 004 as a stepper of the one simulation loop
(:mod:`multibody.simulation.driver`): fixed step dt, state y = [q, v], no dense output.

Per recorded state it adds the series ``momentum`` (p_x, p_y, p_z, L_x, L_y, L_z; angular momentum
about the origin), ``newton`` (iterations of the last step), ``condition`` (2-norm condition number of
the last iteration matrix; NaN without ``diagnostics``), ``joints`` (relative joint coordinates u, theta
of the pairs, Figs 14, 18, 25) and ``multipliers`` (the discrete multipliers of the constrained scheme).
"""
from __future__ import annotations

import math

import numpy as np

from ..model.director import LowerPairs
from ..model.director_tree import spatial_parts
from ..fast.em_batch import StepBatch, batch_applies, joints_kernel, momentum_kernel
from .em_reduced import COMPLEX_STEP
from .energy_momentum import EnergyMomentumStepper, NewtonTolerance
from .explicit import Step

#: --formulation values of ``--integrator energy-momentum``; "lagrange" (the CLI default) is the
#: multipliers form of the scheme, i.e. "constrained"
EM_FORMULATIONS = {"constrained": "constrained", "reduced": "reduced", "lagrange": "constrained"}


class EnergyMomentum:
    """Stepper contract (:mod:`multibody.integrate.steppers`) around :class:`EnergyMomentumStepper`:
    step k ends at t0 + k dt exactly; the run ends at t0 + round((t_bound - t0)/dt) dt."""

    constrained = True      # the scheme satisfies Phi(q_{n+1}) = 0 itself: no projection after a step

    def __init__(self, form, t0: float, y0: np.ndarray, t_bound: float, *, step: float, rtol: float,
                 diagnostics: bool = True, batch: bool = True):
        n = form.model.n
        model = form.model.with_initial(q0=y0[:n], v0=y0[n:])
        self.tol = NewtonTolerance(residual=min(NewtonTolerance().residual, rtol))
        self.em = EnergyMomentumStepper(model, scheme=form.scheme, dt=step, tol=self.tol, condition=diagnostics,
                                        table=getattr(form.ws, "table", None))   # the formulation's packed rows
        self.model, self.scheme, self.dt, self.n = model, form.scheme, float(step), n
        self.t0, self.t, self.y = float(t0), float(t0), np.array(y0, float)
        self.steps = int(round((t_bound - t0) / step))
        self.t_bound = self.t0 + self.steps * self.dt
        self.n_accepted, self.n_rejected = 0, 0
        # Newton iterations (sum, max) and the condition numbers (min, max without NaN; any finite) over the
        # steps: running values, not lists per step (issue 17: memory flat however long the run)
        self.iterations, self.conditions = [0, 0], [np.inf, -np.inf, False]
        self.bodies, groups = spatial_parts(model)
        compiled = self.em.fast is not None          # the run's compiled path (fast.spatial_warm's policy)
        self._momenta = momentum_kernel(self.bodies, compiled)
        self._joints = joints_kernel(self.bodies, [g for _, g in groups], compiled)
        self.joint_labels = tuple(lab for g in model.constraints if isinstance(g, LowerPairs)
                                  for lab in g.coordinate_labels())
        self.row_labels = model.constraint_labels      # built anew by each access: once here (issue 16)
        # consecutive steps in one compiled call where the step needs no Python choice (fast.em_batch)
        self.batch = StepBatch(self.em, COMPLEX_STEP) if batch and batch_applies(self.em) else None

    def step(self) -> Step:
        q0, v0 = self.y[:self.n], self.y[self.n:]
        y = None if self.batch is None else self.batch.take(q0, v0, self.steps - self.n_accepted)
        if y is None:
            y = np.concatenate(self.em.step(q0, v0, self.t))
        t_old = self.t
        self.n_accepted += 1
        self.t = self.t0 + self.n_accepted * self.dt
        self.y = y          # a fresh array (or a batch's row, never written again): handed out without a copy
        it, cond = int(self.em.iterations), float(self.em.condition)
        self.iterations = [self.iterations[0] + it, max(self.iterations[1], it)]
        if not math.isnan(cond):
            lo, hi, finite = self.conditions
            self.conditions = [min(lo, cond), max(hi, cond), finite or math.isfinite(cond)]
        return Step(t_old, self.t, y, self.dt, np.nan, None)

    def channels(self, t: float, y: np.ndarray) -> dict:
        """The stepper's series at the state just reached (the last step's Newton count, condition and
        discrete multipliers; momenta and joint coordinates of y)."""
        q, v = y[:self.n], y[self.n:]
        momentum = self._momenta(q, v)
        joints = self._joints(q)
        first = self.n_accepted == 0
        return {"momentum": (momentum, ("px", "py", "pz", "Lx", "Ly", "Lz")),
                "newton": ((0 if first else self.em.iterations,), ("iterations",)),
                "condition": ((np.nan if first else self.em.condition,), ("iteration_matrix",)),
                "joints": (joints, self.joint_labels),
                "multipliers": (self.em.multipliers, self.row_labels)}

    def summary(self, series: dict) -> dict:
        """Paper 004's diagnostics; the energy drift relative to max(|T|, |V|) over the run and the
        momentum drift relative to max |p| and max |L|."""
        energy, mom = series["energy"].data, series["momentum"].data
        tiny = np.finfo(float).tiny
        escale = max(np.max(np.abs(energy[:, :2])), tiny)
        mscale = np.repeat([max(np.max(np.abs(mom[:, :3])), tiny), max(np.max(np.abs(mom[:, 3:])), tiny)], 3)
        (it_sum, it_max), (c_min, c_max, finite) = self.iterations, self.conditions
        em = self.em
        return {
            "formulation": self.scheme, "rtol": self.tol.residual, "atol": 0.0, "step": self.dt,
            "t_end": self.t_bound, "rhs_evaluations": it_sum,
            "newton_tolerance": self.tol.residual, "newton_iterations_max": it_max,
            "newton_iterations_mean": it_sum / self.n_accepted if self.n_accepted else 0.0,
            "condition_min": float(c_min) if finite else None,
            "condition_max": float(c_max) if finite else None,
            "unknowns": self.n + len(em.rows) if self.scheme == "constrained" else em.tree.d,
            "redundant_constraints": list(em.redundant),
            "degrees_of_freedom": self.n - len(em.rows),
            "energy_drift_rel": float(np.max(np.abs(energy[:, 2] - energy[0, 2])) / escale),
            "momentum_drift_rel": dict(zip(series["momentum"].labels,
                                           (np.max(np.abs(mom - mom[0]), axis=0) / mscale).tolist())),
            "multipliers": "discrete multipliers of the constrained scheme (NaN for the reduced one)",
            # the Newton of a step in one compiled call (multibody.fast.spatial, fast.em_tree)
            "backend": "compiled" if (em.compiled is not None if self.scheme == "reduced"
                                      else em.fast is not None and not em.forces) else "numpy",
        }
