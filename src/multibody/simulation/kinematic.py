"""Kinematic analysis and inverse dynamics of a fully driven mechanism (issue 21 item 1).

When the drivers take every degree of freedom (rank A = n, paper 000 eq. 3 with as many independent rows as
coordinates), the motion follows from the constraints alone: at each output time t_k

    Phi(q, t) = 0                 positions: Newton (kinematics.solve_positions) from the predictor
                                  q_{k-1} + h v_{k-1} + h^2/2 a_{k-1} (continuation along the branch),
    A v = -Phi_t                  velocities (kinematics.solve_velocities),
    A a = gamma                   accelerations (the minimum-norm solution, unique at full column rank),

and the multipliers follow from the equations of motion, A^T lambda = f - M a (minimum-norm where rows are
redundant: paper 003 says which reactions are unique). Driver efforts are -lambda of the driver rows (the
force or torque each driver applies in the positive direction of its coordinate, as in
analysis.equilibrium). A mechanism with undriven freedom is refused with the free motions named.
"""
from __future__ import annotations

import numpy as np

from ..analysis.reactions import joint_reactions
from ..analysis.solvability import solvability
from ..assembly import Workspace
from ..errors import MultibodyError
from ..kinematics import solve_positions, solve_velocities
from ..linalg.rank import pivoted_qr
from ..model.system import Model
from ..results.result import Result, Series


def _check_driven(model: Model, ws: Workspace, t: float, q: np.ndarray) -> None:
    pqr = pivoted_qr(ws.constraints(t, q, np.zeros(model.n))[1]) if ws.m else None
    rank = pqr.rank if pqr is not None else 0
    if rank == model.n:
        return
    T = pqr.null_space if pqr is not None else np.eye(model.n)
    names = model.coordinate_names
    free = ["(" + ", ".join(f"{names[i]} {T[i, j]:+.2f}" for i in np.argsort(-np.abs(T[:, j]))[:3]) + ")"
            for j in range(T.shape[1])]
    raise MultibodyError(f"Model '{model.name}' is not fully driven: {model.n - rank} free motion(s) remain "
                         f"{'; '.join(free)} (largest components of each). Add drivers for them, or simulate "
                         "with 'multibody run'.")


def kinematic_analysis(model: Model, times, *, quasi_static: bool = False) -> Result:
    """q, v, a, multipliers, driver efforts and joint reactions of a fully driven model at ``times`` (module
    doc); a Result like a run's (summary["analysis"] = "kinematic" or "quasi-static").

    ``quasi_static``: the drivers move slowly enough for inertia and velocity-dependent forces to vanish, so the
    multipliers balance the applied forces at rest, A^T lambda = f(t, q, 0) (a sequence of static equilibria
    along the driven path: the effort a crank needs against gravity or a spring, issue 21 item 3)."""
    times = np.asarray(times, float)
    if times.ndim != 1 or len(times) == 0 or not np.all(np.isfinite(times)) or np.any(np.diff(times) <= 0):
        raise MultibodyError("output times must be a non-empty, finite, increasing sequence.")
    ws, n = Workspace(model), model.n
    q = solve_positions(model, model.q0, times[0], ws=ws)
    _check_driven(model, ws, times[0], q)
    v, a = np.zeros(n), np.zeros(n)
    rows = {k: [] for k in ("q", "v", "a", "multipliers", "efforts")}
    labels = model.constraint_labels
    drivers = [i for i, lab in enumerate(labels) if "-driver." in lab]
    reactions, t_prev = [], times[0]
    for t in times:
        h = t - t_prev
        q = solve_positions(model, q + h * v + 0.5 * h * h * a, t, ws=ws)
        v = solve_velocities(model, q, v, t, ws=ws)
        Phi, A, Phi_t, gamma = ws.constraints(t, q, v)
        a = np.linalg.lstsq(A, gamma, rcond=None)[0]
        if quasi_static:
            lam = np.linalg.lstsq(A.T, ws.forces(t, q, np.zeros(n)), rcond=None)[0]
        else:
            lam = np.linalg.lstsq(A.T, ws.forces(t, q, v) - model.mass(q) @ a, rcond=None)[0]
        for key, val in (("q", q), ("v", v), ("a", a), ("multipliers", lam), ("efforts", -lam[drivers])):
            rows[key].append(np.array(val, float))
        reactions.append(joint_reactions(model, q, A, lam))
        t_prev = t
    verdict = solvability(ws.velocity_constraints(times[-1], q, v)[1], model.velocity_labels, m=ws.m)
    names = model.coordinate_names
    series = {"q": Series(np.array(rows["q"]), names), "v": Series(np.array(rows["v"]), names),
              "a": Series(np.array(rows["a"]), names), "multipliers": Series(np.array(rows["multipliers"]), labels),
              "driver_efforts": Series(np.array(rows["efforts"]).reshape(len(times), len(drivers)),
                                       tuple(labels[i] for i in drivers),
                                       description="-lambda of the driver rows: applied in the positive direction")}
    if reactions and reactions[0]:
        keys = tuple(reactions[0])
        series["reactions"] = Series(np.array([[r[k] for k in keys] for r in reactions]), keys)
    summary = {"model": model.name, "analysis": "quasi-static" if quasi_static else "kinematic", "t_end": float(times[-1]), "steps": len(times),
               "reaction_unique": {p.name: p.unique for p in verdict.pairs},
               "driver_effort_max": {labels[i]: float(np.max(np.abs(series["driver_efforts"].data[:, j])))
                                     for j, i in enumerate(drivers)}}
    return Result(times, series, summary)
