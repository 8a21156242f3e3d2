"""Coordinate partitioning with explicit closing conditions (paper 001 Sect. 4, eqs 27-29).

The model carries q_D = g(q_I, t) (eq. 27; :class:`multibody.model.closing.ClosingConditions`), e.g.
from inverse kinematics. The state is y = [q_I (k), v_I (k)] and the governing equations are of
order 2k (eq. 28):

    M_d(q) v_I' = h_d(q, v, t),   q_I' = v_I,   q = [q_I; g(q_I, t)],   v = D^T v_I + [0; eta]   (28a, 28b)

with M_d, h_d of eqs 13-14 (as in ``partitioning``). The closing conditions replace the constraint
equations (eq. 29: Phi^ = q_D - g(q_I, t) = 0), so the run is released from constraint violation:
no projection after the steps, |Phi| stays at the round-off of g. The velocity and acceleration
relations (eqs 7-8, the paper's A, eta, xi) are those of the constraint equations at q: differentiating
Phi(q_I, g(q_I, t), t) = 0 gives C_I + C_D A = 0, i.e. A = -C_D^-1 C_I = dg/dq_I exactly when g
closes the loops; the user writes only g. One set q_I: the paper prepares formulae for each set in
advance; a singular choice (C_D singular, e.g. eq. 42's sin alpha3 = 0) fails with SimulationError.
"""
from __future__ import annotations

import numpy as np

from ..analysis.partition import Partition, admissible_partition, tangent_matrix
from ..errors import MultibodyError, SimulationError
from .partitioning import Partitioning, SwitchPolicy

#: largest |q_D - g(q_I)| at the start, relative to the model's length scale, accepted as the same
#: assembly branch (the consistent initial state is solved to ~1e-12; another branch differs by O(1))
BRANCH_TOLERANCE = 1e-8


class Closing(Partitioning):
    """``--formulation closing``: needs ``model.closing``; see the module docstring."""

    name = "closing"

    def __init__(self, model, **options):
        if model.closing is None:
            raise MultibodyError(f"model '{model.name}' has no closing conditions (paper 001 eq. 27): "
                                 "give Model.closing or use --formulation partitioning.")
        super().__init__(model, independent=model.closing.independent, switching=SwitchPolicy(enabled=False),
                         **options)
        self.I = [model.coordinate_index(c) for c in model.closing.independent]
        self.D = [i for i in range(model.n) if i not in self.I]
        periodic = [model.coordinate_index(c) for c in model.closing.periodic]
        self.periodic = np.array([i in periodic for i in self.D])
        self.reference = None       # q_D of the last accepted state: continues the periodic angles

    def positions(self, t, q_I):
        """q = [q_I; g(q_I, t)] (eq. 27) in the model's coordinate order; periodic dependent angles
        are taken in the turn nearest to the last accepted state (g's own range may jump by 2 pi)."""
        q = np.empty(self.model.n)
        q[self.I] = q_I
        q_D = np.asarray(self.model.closing.g(np.asarray(q_I, float), t), dtype=float).reshape(len(self.D))
        if self.reference is not None and self.periodic.any():
            turns = np.round((self.reference - q_D) / (2 * np.pi))
            q_D = q_D + np.where(self.periodic, 2 * np.pi * turns, 0.0)
        q[self.D] = q_D
        return q

    def initial_state(self, t, q, v):
        C = self.ws.constraints(t, q, v)[1]
        base = admissible_partition(C, self.rank_tol)
        if len(base.rows) != len(self.D):
            raise MultibodyError(f"model '{self.model.name}': the closing conditions give {len(self.D)} "
                                 f"dependent coordinates, the constraints {len(base.rows)}.")
        self.part = Partition.from_independent(self.model.n, self.I, base.rows)
        tangent_matrix(C, self.part)
        self.reference = q[self.D]
        gap = float(np.max(np.abs(self.positions(t, q[self.I]) - q)))
        if gap > BRANCH_TOLERANCE * self.model.length_scale:
            raise MultibodyError(f"model '{self.model.name}': the closing conditions put the dependent "
                                 f"coordinates {gap:.3g} away from the initial state: another assembly "
                                 "branch (e.g. the sign in paper 001 eq. 40).")
        self.initial_set = self.part.names(self.model)
        return np.concatenate([q[self.I], v[self.I]])

    def coordinates(self, t, y):
        return self.positions(t, y[:len(self.I)])

    def split(self, t, y):
        q = self.coordinates(t, y)
        return q, self._velocity(t, q, y[len(self.I):])[0]

    def rhs(self, t, y):
        self.nfev += 1
        k = len(self.I)
        q = self.positions(t, y[:k])
        try:
            v, _, vdot_I, _ = self._reduced(t, q, y[k:])
        except np.linalg.LinAlgError as exc:
            raise SimulationError(f"t = {t:g}: the closing conditions' partition is singular ({exc}).") from None
        return np.concatenate([v[self.I], vdot_I])

    def after_step(self, t, y):
        self.reference = self.coordinates(t, y)[self.D]
        return None     # eq. 29 holds by construction: nothing to project

    def summary(self):
        return {"independent_initial": self.initial_set, "closing_conditions": "paper 001 eqs 27-29"}
