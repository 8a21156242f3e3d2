"""The stepper contract and the registry of integrators a run can name (``--integrator``).

A stepper advances the state y of a formulation (:mod:`multibody.formulations.base`) from t0 towards
t_bound; the one simulation loop (:mod:`multibody.simulation.driver`) owns everything else (events,
recording, progress, the summary). A stepper has

- ``t``, ``y``: the current time and state; ``n_accepted``, ``n_rejected``: step counts;
- ``step() -> Step`` (:class:`multibody.integrate.explicit.Step`): one accepted step; ``Step.dense`` is
  the dense output on the step, or None (then events cannot be located: :attr:`StepperSpec.dense_output`);
- ``reset(t, y)``: restart from a state the formulation changed after the step (projection, new basis);
  not called when the class attribute ``constrained`` is True (the stepper keeps Phi = 0 itself);
- optional ``summary(series) -> dict``: scalars for the run summary (``series``: the recorded
  {name: Series}; a key given here overrides the driver's generic one);
- optional ``channels(t, y) -> {name: (values, labels)}``: extra series at each recorded state.

A new integrator is one module with such a class and one :class:`StepperSpec` in :data:`STEPPERS`.
Failures inside ``step`` raise :class:`IntegrationError` (or SimulationError) with the time and cause.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .explicit import RungeKutta
from .tableaux import TABLEAUX


@dataclass(frozen=True)
class StepperSpec:
    """make(form, t0, y0, t_bound, options) -> stepper; ``fixed_step``: needs ``options.step``;
    ``dense_output``: events can be located on its steps; ``formulations``: the names it integrates
    (None: every continuous formulation); ``discrete``: it integrates the discrete schemes of paper 004."""

    make: Callable
    fixed_step: bool
    dense_output: bool
    formulations: tuple | None = None
    discrete: bool = False


def _runge_kutta(tableau):
    def make(form, t0, y0, t_bound, o):
        from .explicit_compiled import compiled_runge_kutta     # issue 16: compiled attempts where they apply
        fast = compiled_runge_kutta(form, t0, y0, t_bound, tableau, o)
        if fast is not None:
            return fast
        return RungeKutta(form.rhs, t0, y0, t_bound, tableau=tableau, rtol=o.rtol, atol=o.atol,
                          fixed_step=o.step, max_step=o.max_step, error_filter=form.error_filter,
                          error_measure=getattr(form, "error_measure", None))
    return make


def _generalized_alpha(form, t0, y0, t_bound, o):
    from .generalized_alpha import GeneralizedAlpha
    return GeneralizedAlpha(form, t0, y0, t_bound, step=o.step, rho_inf=o.rho_inf, rtol=o.rtol, atol=o.atol)


def _energy_momentum(form, t0, y0, t_bound, o):
    from .em_stepper import EnergyMomentum
    return EnergyMomentum(form, t0, y0, t_bound, step=o.step, rtol=o.rtol, diagnostics=o.diagnostics)


STEPPERS: dict[str, StepperSpec] = {
    **{name: StepperSpec(_runge_kutta(tab), fixed_step=tab.error_order is None, dense_output=True)
       for name, tab in TABLEAUX.items()},
    # index-3 DAE with multipliers (Arnold & Bruels), sparse Newton: stiff and large planar models; --step
    # fixed, else adaptive with a local error estimate (integrate.generalized_alpha)
    "generalized-alpha": StepperSpec(_generalized_alpha, fixed_step=False, dense_output=False,
                                     formulations=("lagrange",)),
    # paper 004 eq. 10 and the discrete null space method: spatial director models
    "energy-momentum": StepperSpec(_energy_momentum, fixed_step=True, dense_output=False,
                                   formulations=("constrained", "reduced"), discrete=True),
}
