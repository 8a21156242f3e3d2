"""Run options and their checks (before anything is integrated or written)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import MultibodyError
from ..integrate.steppers import STEPPERS, StepperSpec


#: the smallest relative tolerance: Hairer's DOPRI5 refuses RTOL <= 10 UROUND (Hairer, Norsett & Wanner,
#: Solving ODEs I, code dopri5.f); below it the error estimate is roundoff
RTOL_MIN = 10 * np.finfo(float).eps / 2
#: the smallest absolute tolerance: the smallest normal double (a subnormal one divides to inf)
ATOL_MIN = float(np.finfo(float).tiny)
#: a fixed step giving more steps than this is refused (issue 17: --step 1e-300 ran into 1e299 steps)
MAX_FIXED_STEPS = 1e9


@dataclass(frozen=True)
class RunOptions:
    """Integration options: integrator name (:data:`multibody.integrate.steppers.STEPPERS`), tolerances,
    fixed step (required by rk4, generalized-alpha and energy-momentum), max step, the output interval
    of the stored series (the run's first and last state and events are always stored), the spectral
    radius at infinity of generalized-alpha, ``output_times`` (the series are then sampled from the
    integrator's dense output at exactly these times, plus the two states at each event) or
    ``output_step`` (the times t_start, t_start + step, ..., up to t_end), ``diagnostics``: per-step extras that cost work (the
    condition number of the energy-momentum iteration matrix, paper 004 Tables II-V), and ``time_limit``:
    seconds of wall time after which a run that has not reached t_end stops with a SimulationError naming
    the time reached, the steps and the smallest step (a run that crawls fails loudly; issue 17)."""

    integrator: str = "dopri5"
    rtol: float = 1e-6
    atol: float = 1e-8
    step: float | None = None
    max_step: float = np.inf
    output_interval: float = 0.0    # 0: store every accepted step; > 0: at most one state per interval
    output_times: tuple = ()        # explicit output times [s], increasing, within [t_start, t_end]
    output_step: float = 0.0        # > 0: output times every output_step from t_start
    rho_inf: float = 0.9            # generalized-alpha: 1 no numerical damping, 0 asymptotic annihilation
    diagnostics: bool = True
    time_limit: float | None = None     # wall-clock seconds; a run still going then stops with an error


def check_options(o: RunOptions, t0: float, t1: float) -> StepperSpec:
    """The stepper of ``o.integrator`` after checking every option; MultibodyError naming the bad one."""
    if o.integrator not in STEPPERS:
        raise MultibodyError(f"unknown integrator '{o.integrator}'; choose one of: {', '.join(STEPPERS)}.")
    spec = STEPPERS[o.integrator]
    for name in ("rtol", "atol", "max_step", "output_interval", "output_step", "rho_inf", "step"):
        val = getattr(o, name)
        if (val is not None or name != "step") and (isinstance(val, bool)
                                                    or not isinstance(val, (int, float, np.number))):
            raise MultibodyError(f"{name} must be a number, got {val!r}.")
    if spec.fixed_step and o.step is None:
        raise MultibodyError(f"integrator '{o.integrator}' has no error control: give a fixed step (--step).")
    for name, val in (("rtol", o.rtol), ("atol", o.atol)):
        if not (isinstance(val, (int, float, np.number)) and np.isfinite(val) and val > 0):
            raise MultibodyError(f"{name} must be a positive number, got {val!r}.")
    if o.rtol <= RTOL_MIN or o.atol < ATOL_MIN:   # issue 17: 1e-320 divided by zero in the first step
        raise MultibodyError(f"tolerances below what double precision resolves: rtol must exceed {RTOL_MIN:.3g} "
                             f"(10 unit roundoffs, Hairer's DOPRI5 check) and atol be at least {ATOL_MIN:.3g} "
                             f"(the smallest normal double); got rtol {o.rtol:g}, atol {o.atol:g}.")
    if not (isinstance(o.max_step, (int, float, np.number)) and o.max_step > 0):   # NaN fails here too
        raise MultibodyError(f"max_step must be a positive number (inf: no limit), got {o.max_step!r}.")
    if not (np.isfinite(o.output_interval) and o.output_interval >= 0):
        raise MultibodyError(f"the output interval must be a non-negative number, got {o.output_interval}.")
    if not (0.0 <= o.rho_inf <= 1.0):
        raise MultibodyError(f"rho_inf (generalized-alpha) must lie in [0, 1], got {o.rho_inf}.")
    if o.time_limit is not None and (isinstance(o.time_limit, bool) or not isinstance(o.time_limit, (int, float, np.number))
                                     or not o.time_limit > 0):
        raise MultibodyError(f"time_limit (--time-limit) must be a positive number of seconds (or None), got "
                             f"{o.time_limit!r}.")
    if o.step is not None and not (np.isfinite(o.step) and o.step > 0):
        raise MultibodyError(f"the step must be a positive number, got {o.step}.")
    for what, t in (("t_start", t0), ("t_end", t1)):
        if isinstance(t, bool) or not isinstance(t, (int, float, np.number)):
            raise MultibodyError(f"{what} must be a number of seconds, got {t!r}.")
    if not (np.isfinite(t1) and t1 > t0):
        raise MultibodyError(f"t_end must be a finite time after t_start = {t0}, got {t1}.")
    if o.step is not None and o.step > t1 - t0:
        raise MultibodyError(f"the step {o.step:g} s is longer than the run (t_end - t_start = {t1 - t0:g} s).")
    if o.step is not None and (t1 - t0) / o.step > MAX_FIXED_STEPS:
        raise MultibodyError(f"the step {o.step:g} s makes {(t1 - t0) / o.step:.3g} steps (more than "
                             f"{MAX_FIXED_STEPS:.0e}): give a larger --step.")
    return spec


#: most states an output step may ask for (its grid alone takes 8 bytes a state; issue 17)
MAX_OUTPUT_STATES = 10**8


def output_grid(o: RunOptions, spec: StepperSpec, t0: float, t1: float) -> np.ndarray | None:
    """The output times of ``o`` (None: store accepted steps), checked: one way of choosing them, finite,
    strictly increasing, inside [t0, t1], and an integrator with dense output."""
    try:
        times = np.asarray(o.output_times, dtype=float).ravel()
    except (TypeError, ValueError):
        raise MultibodyError(f"output times must be numbers, got {str(o.output_times)[:60]!r}.") from None
    step = o.output_step
    if not len(times) and not step:
        return None
    if len(times) and step:
        raise MultibodyError("give output times or an output step, not both.")
    if o.output_interval:
        raise MultibodyError("an output interval cannot be combined with output times or an output step.")
    if not spec.dense_output:
        raise MultibodyError(f"output times are sampled from a dense output; integrator '{o.integrator}' has "
                             "none: use dopri5, dop853 or rk4.")
    if step:
        if not (np.isfinite(step) and step > 0):
            raise MultibodyError(f"the output step must be a positive number, got {step}.")
        k = np.floor((t1 - t0) / step * (1 + 1e-12))
        if not k < MAX_OUTPUT_STATES:        # also inf for a subnormal step
            raise MultibodyError(f"the output step {step:g} s gives {k + 1:.3g} states over [{t0:g}, {t1:g}] s; "
                                 f"at most {MAX_OUTPUT_STATES:.0e} can be stored (~1.5 KB each): choose a larger "
                                 "output step.")
        return t0 + step * np.arange(int(k) + 1)
    if not np.all(np.isfinite(times)) or np.any(np.diff(times) <= 0):
        raise MultibodyError("output times must be finite and strictly increasing.")
    if times[0] < t0 or times[-1] > t1:
        raise MultibodyError(f"output times must lie in [t_start, t_end] = [{t0:g}, {t1:g}], "
                             f"got {times[0]:g} .. {times[-1]:g}.")
    return times


def check_formulation(spec: StepperSpec, integrator: str, name: str) -> str:
    """The formulation name the stepper integrates: a discrete stepper (energy-momentum) takes
    "lagrange" (the CLI default) as its multipliers form "constrained"."""
    if spec.discrete and name == "lagrange":
        return "constrained"
    if spec.formulations is not None and name not in spec.formulations:
        if spec.discrete:
            raise MultibodyError(f"the {integrator} integrator runs --formulation "
                                 f"{' or '.join(spec.formulations)}, not '{name}'.")
        raise MultibodyError(f"integrator '{integrator}' integrates the equations with multipliers: use "
                             f"formulation '{spec.formulations[0]}', not '{name}'.")
    if not spec.discrete and any(s.discrete and name in s.formulations for s in STEPPERS.values()):
        raise MultibodyError(f"formulation '{name}' is a discrete scheme of paper 004: run it with "
                             "--integrator energy-momentum.")
    return name
