"""The discrete equations of paper 004 (eq. 10 "constrained", the discrete null space method "reduced"):
formulations that only the energy-momentum stepper integrates (:mod:`multibody.integrate.em_stepper`).

They keep y = [q, v] (the base class's split) and have no continuous right-hand side; the step is the
scheme's Newton solve, so ``rhs`` and ``accelerations`` explain that instead of answering."""
from __future__ import annotations

from ..errors import MultibodyError
from ..fast.spatial import spatial_workspace
from ..model.system import Model
from .base import Formulation


class DiscreteEquations(Formulation):
    """``scheme``: "constrained" (unknowns q_{n+1} and lambda) or "reduced" (discrete null space)."""

    name, discrete = "discrete", True

    def __init__(self, model: Model, scheme: str = "reduced"):
        super().__init__(model)
        self.scheme = self.name = scheme
        # the constraints the run's monitors evaluate (crossings, projections) in compiled calls where supported
        self.ws = spatial_workspace(model) or self.ws

    def rhs(self, t, y):
        raise MultibodyError(f"formulation '{self.scheme}' is a discrete scheme of paper 004: run it with "
                             "--integrator energy-momentum.")

    accelerations = rhs
