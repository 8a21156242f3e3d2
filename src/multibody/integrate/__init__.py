"""Explicit Runge-Kutta integrators for ``y' = f(t, y)``; they know nothing about mechanics.

Methods are data (:class:`Tableau`: RK4, DOPRI5, DOP853) run by one shared stepper
(:class:`RungeKutta`), with dense output and an adaptive step-size controller.
"""
from .controllers import StepController, error_norm
from .explicit import (DenseOutput, IntegrationError, RungeKutta, Step, select_initial_step,
                       solve)
from .tableaux import DOP853, DOPRI5, RK4, TABLEAUX, Tableau

__all__ = [
    "DOP853", "DOPRI5", "RK4", "TABLEAUX", "DenseOutput", "IntegrationError", "RungeKutta",
    "Step", "StepController", "Tableau", "error_norm", "select_initial_step", "solve",
]
