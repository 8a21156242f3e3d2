"""The contract every formulation keeps (one job: turn a model and a state into motion).

A formulation owns the ODE state y it integrates (for ``lagrange`` y = [q, v]; others may add a
basis or use independent velocities) and exposes:

1. ``initial_state(t, q, v) -> y`` from consistent q, v;
2. ``rhs(t, y) -> y'``: the only function the integrator calls inside a step; it must be smooth in
   (t, y) (no rank decisions that jump between accepted steps), and counts its evaluations in
   ``self.nfev``;
3. ``after_step(t, y) -> y or None``: called after every accepted step (projection onto the
   constraint manifold, basis continuation, switching of independent coordinates); returns the new
   y if it changed it (the integrator then restarts its derivative there);
4. ``split(t, y) -> (q, v)``: the redundant coordinates and velocities of y at time t (t matters
   when dependent quantities are recovered under rheonomic constraints);
   ``error_filter`` (optional) tells the integrator which part of its local error estimate
   reaches the solution;
5. ``accelerations(t, q, v) -> Accelerations``: q'', the multipliers and diagnostics at a state,
   used for output; results must agree between formulations (a tested property);
6. ``channels(t, y) -> dict[str, (values, labels)]``: extra per-step series for the result
   (rank, R diagonal, ...), empty by default; ``summary() -> dict``: scalars for the run summary.

Formulations never mutate the model.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..assembly import Workspace
from ..model.system import Model


@dataclass(frozen=True)
class Accelerations:
    """vdot (n,): q''; multipliers (m,) or None; info: what was decided (rank, which lambda, ...)."""

    vdot: np.ndarray
    multipliers: np.ndarray | None
    info: dict = field(default_factory=dict)


class Formulation:
    """Base class; see the module docstring for the contract."""

    name = "base"
    #: True if the formulation integrates nonholonomic (Pfaffian) rows Psi v = 0 (paper 003 eq. 3)
    supports_nonholonomic = False
    #: True for the discrete schemes of paper 004 (formulations.discrete): no rhs, only a stepper's Newton
    discrete = False

    def __init__(self, model: Model):
        if model.h and not self.supports_nonholonomic:
            from ..errors import MultibodyError
            raise MultibodyError(f"Model '{model.name}' has {model.h} nonholonomic constraint rows, which the "
                                 f"'{self.name}' formulation does not handle; use --formulation lagrange.")
        self.model = model
        self.ws = Workspace(model)
        self.nfev = 0

    def initial_state(self, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        return np.concatenate([q, v])

    def split(self, t: float, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = self.model.n
        return y[:n], y[n: 2 * n]

    def coordinates(self, t: float, y: np.ndarray) -> np.ndarray:
        """q (n,) of the state y alone (no velocities: partitioning's need a regular dependent block, which a
        singular configuration does not have)."""
        return self.split(t, y)[0]

    def rhs(self, t: float, y: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def after_step(self, t: float, y: np.ndarray) -> np.ndarray | None:
        return None

    #: True when y = [q, v] and ``after_step`` only projects it onto the constraints: states sampled from the
    #: dense output (output times, simulation.recorder) are then projected the same way
    projects_state = False

    #: True when ``after_step`` changes how ``rhs`` reads y (a new basis, other independent coordinates, other
    #: rows): a step's continuous extension must then be completed before that action (simulation.driver.advance)
    rhs_changes_after_step = False

    #: False when the equations do not hold where A loses rank (minimal coordinates: the dependent block A_p
    #: is singular for every choice there, paper 002 Sect. 3.3): the crossing monitor then stops the run at the
    #: first singular configuration it locates instead of letting Newton pick a branch
    passes_singular_configurations = True

    #: optional ``(t, y, err) -> err`` applied to the integrator's local error estimate (e.g. the
    #: tangent-space part for a projection method); None measures the whole error
    error_filter = None

    def accelerations(self, t: float, q: np.ndarray, v: np.ndarray) -> Accelerations:  # pragma: no cover
        raise NotImplementedError

    def channels(self, t: float, y: np.ndarray) -> dict:
        return {}

    def summary(self) -> dict:
        return {}
