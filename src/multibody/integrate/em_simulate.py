"""simulate_energy_momentum(): fixed-step energy-momentum runs of spatial director models -> Result.

Series: q, v, energy (kinetic, potential, total), momentum (p_x, p_y, p_z, L_x, L_y, L_z; angular
momentum about the origin), violation (max |Phi|, max |A v|), newton (iterations per step),
condition (2-norm condition number of the last iteration matrix of each step), joints (relative
joint coordinates u, theta of the pairs, Figs 14, 18, 25), multipliers (constrained scheme).
"""
from __future__ import annotations

import time

import numpy as np

from ..assembly import Workspace, kinetic_energy
from ..model.director import LowerPairs
from ..model.director_tree import spatial_parts
from ..results import Result, Series
from .energy_momentum import EnergyMomentumStepper, NewtonTolerance


def _joint_series(model, q):
    bodies, groups = spatial_parts(model)
    return np.concatenate([g.relative_coordinates(bodies, q) for _, g in groups]) if groups else np.zeros(0)


def _joint_labels(model):
    return tuple(lab for g in model.constraints if isinstance(g, LowerPairs) for lab in g.coordinate_labels())


def simulate_energy_momentum(model, *, t_end: float, dt: float, scheme: str = "reduced",
                             tol: NewtonTolerance = NewtonTolerance(), condition: bool = True,
                             record_every: int = 1) -> Result:
    """Integrate from the model's initial state (q0, v0, assumed consistent) with the energy-momentum
    scheme (paper 004 eq. 10), constrained or reduced (discrete null space method), step dt."""
    stepper = EnergyMomentumStepper(model, scheme=scheme, dt=dt, tol=tol, condition=condition)
    bodies, _ = spatial_parts(model)
    ws = Workspace(model)
    steps = int(round(t_end / dt))
    q, v = model.q0.copy(), model.v0.copy()
    rows = {k: [] for k in ("t", "q", "v", "energy", "momentum", "violation", "newton", "condition",
                            "joints", "multipliers")}

    def record(t, q, v, it, cond):
        Phi, A, _, _ = ws.constraints(t, q, v)
        T, V = kinetic_energy(model.mass_matrix, v), ws.potential(t, q)
        p, L = bodies.momenta(q, v)
        for key, val in (("t", t), ("q", q), ("v", v), ("energy", (T, V, T + V)), ("momentum", np.r_[p, L]),
                         ("violation", (np.max(np.abs(Phi)), np.max(np.abs(A @ v)))), ("newton", it),
                         ("condition", cond), ("joints", _joint_series(model, q)),
                         ("multipliers", stepper.multipliers)):
            rows[key].append(np.array(val, dtype=float))

    record(0.0, q, v, 0, np.nan)
    wall = time.perf_counter()
    iters, conds = [], []
    for k in range(1, steps + 1):
        q, v = stepper.step(q, v)
        iters.append(stepper.iterations)
        conds.append(stepper.condition)
        if k % record_every == 0 or k == steps:
            record(k * dt, q, v, stepper.iterations, stepper.condition)
    wall = time.perf_counter() - wall
    return _result(model, rows, scheme, dt, steps, tol, iters, conds, stepper, wall)


def _result(model, rows, scheme, dt, steps, tol, iters, conds, stepper, wall):
    k = len(rows["t"])
    arr = {key: np.array(val).reshape(k, -1) for key, val in rows.items() if key != "t"}
    e, mom = arr["energy"][:, 2], arr["momentum"]
    escale = max(np.max(np.abs(arr["energy"][:, :2])), np.finfo(float).tiny)
    mscale = np.repeat([max(np.max(np.abs(mom[:, :3])), np.finfo(float).tiny),
                        max(np.max(np.abs(mom[:, 3:])), np.finfo(float).tiny)], 3)   # |p|, |L| scales
    series = {
        "q": Series(arr["q"], model.coordinate_names, description="coordinates"),
        "v": Series(arr["v"], model.coordinate_names, description="velocities"),
        "energy": Series(arr["energy"], ("kinetic", "potential", "total"), "J"),
        "momentum": Series(mom, ("px", "py", "pz", "Lx", "Ly", "Lz"),
                           description="linear momentum and angular momentum about the origin"),
        "violation": Series(arr["violation"], ("position", "velocity"), description="max |Phi| and max |A v|"),
        "newton": Series(arr["newton"], ("iterations",)),
        "condition": Series(arr["condition"], ("iteration_matrix",), description="2-norm condition number"),
        "joints": Series(arr["joints"], _joint_labels(model), description="relative joint coordinates"),
        "multipliers": Series(arr["multipliers"], model.constraint_labels, description="discrete multipliers"),
    }
    conds = np.array(conds, float)
    drift = np.max(np.abs(mom - mom[0]), axis=0) / mscale
    summary = {
        "model": model.name, "formulation": scheme, "integrator": "energy-momentum", "step": dt,
        "rtol": tol.residual, "atol": 0.0, "t_end": steps * dt, "steps": steps, "rejected_steps": 0,
        "rhs_evaluations": int(np.sum(iters)), "wall_time_s": wall,
        "newton_tolerance": tol.residual, "newton_iterations_max": int(np.max(iters, initial=0)),
        "newton_iterations_mean": float(np.mean(iters)) if iters else 0.0,
        "condition_min": float(np.nanmin(conds)) if np.isfinite(conds).any() else None,
        "condition_max": float(np.nanmax(conds)) if np.isfinite(conds).any() else None,
        "unknowns": model.n + len(stepper.rows) if scheme == "constrained" else stepper.tree.d,
        "redundant_constraints": list(stepper.redundant),
        "degrees_of_freedom": model.n - len(stepper.rows),
        "energy_drift_rel": float(np.max(np.abs(e - e[0])) / escale),
        "momentum_drift_rel": dict(zip(series["momentum"].labels, drift.tolist())),
        "constraint_violation_max": float(np.max(arr["violation"][:, 0])),
        "velocity_violation_max": float(np.max(arr["violation"][:, 1])),
        "coordinate_names": list(model.coordinate_names),
        "final_q": arr["q"][-1].tolist(), "final_v": arr["v"][-1].tolist(),
    }
    return Result(np.array(rows["t"]), series, summary)


#: --formulation values of ``--integrator energy-momentum``; "lagrange" (the CLI default) is the
#: multipliers form of the scheme, i.e. "constrained"
EM_FORMULATIONS = {"constrained": "constrained", "reduced": "reduced", "lagrange": "constrained"}


def run_energy_momentum(model, *, t_end: float, t_start: float = 0.0, formulation: str, options) -> Result:
    """The ``simulate(..., options=RunOptions(integrator="energy-momentum", step=dt))`` branch:
    checks the options and runs :func:`simulate_energy_momentum` (Newton tolerance from rtol when it
    is tighter than the default)."""
    from ..errors import MultibodyError
    from ..kinematics import consistent_state

    if formulation not in EM_FORMULATIONS:
        raise MultibodyError(f"the energy-momentum integrator runs --formulation constrained or reduced, "
                             f"not '{formulation}'.")
    if options.step is None or not (np.isfinite(options.step) and options.step > 0):
        raise MultibodyError("the energy-momentum integrator has a fixed step: give --step (e.g. 0.01).")
    if t_start != 0.0 or not (np.isfinite(t_end) and t_end > 0):
        raise MultibodyError(f"the energy-momentum integrator runs from t = 0 to a positive t_end, got {t_end}.")
    q, v = consistent_state(model, 0.0)
    tol = NewtonTolerance(residual=min(NewtonTolerance().residual, options.rtol))
    return simulate_energy_momentum(model.with_initial(q0=q, v0=v), t_end=t_end, dt=options.step,
                                    scheme=EM_FORMULATIONS[formulation], tol=tol)
