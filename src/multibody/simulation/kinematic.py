"""Kinematic analysis and inverse dynamics of a fully driven mechanism (issue 21 item 1).

When the drivers take every degree of freedom (rank A = n, paper 000 eq. 3 with as many independent rows as
coordinates), the motion follows from the constraints alone: at each output time t_k

    Phi(q, t) = 0                 positions: Newton (kinematics.solve_positions) from the predictor
                                  q_{k-1} + h v_{k-1} + h^2/2 a_{k-1} (continuation along the branch),
    A v = -Phi_t                  velocities: v_{k-1} + h a_{k-1} corrected as the accelerations below,
    A a = gamma                   accelerations: the previous a plus the minimum-norm correction in the
                                  directions the rows pin down (linalg.rank.pinned_solve; unique at full
                                  column rank, and near a singular configuration the component along the
                                  other branch stays the continued one instead of round-off over a small
                                  singular value: paper 000's continuation),

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
from ..kinematics import KinematicTolerance, solve_positions
from ..linalg.rank import pinned_solve, pivoted_qr
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


#: a step is accepted when Newton moved the predicted configuration by at most this fraction of the distance to
#: the nearest singular configuration (s_min / s_max of A, in length scales): the basin of the branch
BASIN = 0.1
#: ... and when the configuration reached is no closer to a singular one than s_min / s_max = NEAR: closer, the
#: accelerations from A a = gamma carry round-off eps / NEAR^2 (1e-8) and a step landing there is not accepted
NEAR = 1e-4
#: steps are halved at most this many times; an output time closer than that to a singular configuration is
#: reached by stepping across it (to t -+ ACROSS h) and interpolating (cubic Hermite)
MAX_HALVINGS = 30
ACROSS = 1e-2


def _step(model, ws, state, t):
    """(t, q, v, a) from ``state`` = (t0, q0, v0, a0): Newton from the predictor q0 + h v0 + h^2/2 a0, then v and
    a the predicted ones plus the minimum-norm corrections in the directions the rows pin down
    (linalg.rank.pinned_solve), whether the step stayed in the branch's basin (BASIN) and whether it landed
    outside the NEAR zone of a singular configuration."""
    t0, q0, v0, a0 = state
    h, pin = t - t0, KinematicTolerance().pin
    guess = q0 + h * v0 + 0.5 * h * h * a0
    q = solve_positions(model, guess, t, ws=ws)
    A, Phi_t = ws.constraints(t, q, v0)[1:3]
    v = v0 + h * a0
    v = v + pinned_solve(A, -(A @ v + Phi_t), pin)[0]
    _, A, _, gamma = ws.constraints(t, q, v)
    a = a0 + pinned_solve(A, gamma - A @ a0, pin)[0]
    s = np.linalg.svd(A, compute_uv=False) if A.size else np.ones(1)
    moved = np.max(np.abs(q - guess), initial=0.0) / model.length_scale
    ratio = s[-1] / max(s[0], np.finfo(float).tiny)
    return (t, q, v, a), moved <= BASIN * ratio, ratio >= NEAR


class _NoBasin(Exception):
    """A step that halving cannot bring into a branch's basin (next to a singular configuration)."""


def _advance(model, ws, state, t, lam_at, depth: int = 0, across: bool = True):
    """The state at t from ``state``, halving the step until each part stays in the branch's basin (_step); a
    time in the NEAR zone of a singular configuration is reached by stepping across it (_across)."""
    new, basin, clear = _step(model, ws, state[:4], t)
    if t == state[0] or (basin and clear):
        return new
    if basin or depth >= MAX_HALVINGS:
        if not across:
            raise _NoBasin
        return _across(model, ws, state, t, lam_at)
    mid = _advance(model, ws, state[:4], 0.5 * (state[0] + t), lam_at, depth + 1, across)
    return _advance(model, ws, mid[:4], t, lam_at, depth + 1, across)


def _across(model, ws, state, t, lam_at):
    """The state at or next to a singular configuration at t: the states at t -+ d reached with basin control
    (d = ACROSS |t - t0|, quadrupled until they are outside the NEAR zone), the cubic Hermite interpolant of q
    (from q, v) and of v (from v, a) at t, and a its derivative (errors O(d^4), O(d^4), O(d^3)): Phi alone does
    not pin the configuration along the other branch there; the multipliers lam_at(t, q, v, a) interpolated from
    those at t -+ d, t -+ 2 d (error O(d^4)): at the singular configuration itself they are not unique (a
    self-stress of the rows), the limit of the motion's is."""
    d = ACROSS * max(abs(t - state[0]), 1e-4 * max(1.0, abs(t)))
    for _ in range(12):
        try:
            far_m = _advance(model, ws, state, t - 2 * d, lam_at, across=False)[:4]
            tm, qm, vm, am = _advance(model, ws, far_m, t - d, lam_at, across=False)[:4]
            tp, qp, vp, ap = _advance(model, ws, (tm, qm, vm, am), t + d, lam_at, across=False)[:4]
            far_p = _advance(model, ws, (tp, qp, vp, ap), t + 2 * d, lam_at, across=False)[:4]
        except _NoBasin:
            d *= 4.0
            continue
        lam = (4 * (lam_at(tm, qm, vm, am) + lam_at(tp, qp, vp, ap)) - lam_at(*far_m) - lam_at(*far_p)) / 6
        return (t, 0.5 * (qm + qp) + 0.25 * d * (vm - vp), 0.5 * (vm + vp) + 0.25 * d * (am - ap),
                0.75 * (vp - vm) / d - 0.25 * (am + ap), lam)
    raise MultibodyError(f"Model '{model.name}': the kinematic analysis cannot continue at t = {t:.9g}: the steps "
                         "collapse next to a singular configuration.")


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
    def lam_at(t, q, v, a):
        A = ws.constraints(t, q, v)[1]
        rhs = ws.forces(t, q, np.zeros(n)) if quasi_static else ws.forces(t, q, v) - model.mass(q) @ a
        return np.linalg.lstsq(A.T, rhs, rcond=None)[0]

    reactions, state = [], (times[0], q, v, a)
    for t in times:
        state = _advance(model, ws, state[:4], t, lam_at)
        _, q, v, a = state[:4]
        lam = state[4] if len(state) > 4 else lam_at(t, q, v, a)
        A = ws.constraints(t, q, v)[1]
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
