"""One Result from the segments of a run (one segment without events) and the event log (paper 002
Sect. 6: energy before and after each switch, continuity of the momenta of the unlocked joints, the
impulsive constraint forces Lambda).

Series (see :mod:`multibody.results.result`): q, v, energy, violation; a and multipliers for the
continuous formulations (one column per constraint row that was active at some time, NaN while
inactive); the reactions and flags of paper 003; the formulation's and the stepper's channels; and,
for a run with events, ``momentum`` (k, n): P = F^T M v (paper 002 Fig. 4a) for the minimal
coordinates s of the active constraints (for locked joints of a serial chain: the unlocked joints),
NaN in the columns of the dependent (locked) coordinates; F from paper 002 eq. (10).

At every event both the state before and the state after the jump are recorded at the event time
(two rows with the same t). ``energy_drift_rel`` in the summary is the largest drift of the total
energy from its value at the start of a segment (the jumps at the events are in the event log),
relative to max(|E(t0)|, max T); a stepper may give its own (energy-momentum: max(|T|, |V|)).
"""
from __future__ import annotations

import numpy as np

from ..assembly import Workspace, kinetic_energy
from ..linalg.rank import pivoted_qr
from ..results.hdf5 import coordinate_units, rate_units
from ..results.result import Result, Series
from ..linalg.projectors import independent_coordinates, orthogonal_complement


def free_coordinates(model, t, q, v):
    """(rows, s): independent constraint rows and minimal coordinates of the model at (t, q, v)."""
    A = Workspace(model).constraints(t, q, v)[1]
    rows = pivoted_qr(A).independent_rows if A.shape[0] else np.arange(0)
    return rows, independent_coordinates(A[rows])[1]


def momenta_rows(model, ts, qs, vs, basis=None) -> np.ndarray:
    """P = F^T M v (paper 002 Fig. 4a) for every recorded state of one segment, (k, n) with NaN in
    the dependent coordinates; the minimal coordinates are chosen once, at the segment's start
    (``basis``: the (rows, s) chosen there when these states are not the segment's first, e.g. a block
    of a streamed run; default: chosen at ts[0])."""
    ws = Workspace(model)
    rows, s = free_coordinates(model, ts[0], qs[0], vs[0]) if basis is None else basis
    out = np.full((len(ts), model.n), np.nan)
    for i, (t, q, v) in enumerate(zip(ts, qs, vs)):
        A = ws.constraints(t, q, v)[1][rows]
        out[i, s] = orthogonal_complement(A, s).T @ (model.mass(q) @ v)
    return out


def event_entry(old, new, due, t, q, v_minus, tr, M, A, U=None) -> dict:
    """One event-log object: t, energy_before/after, momentum_continuity_error (of the coordinates
    free after the event, measured after removing the applied impulse U: F+^T (M dv - U) = 0), the
    impulse, the activated and released rows, ..."""
    ws_old = Workspace(old)
    V = ws_old.potential(t, q)
    T0, T1 = kinetic_energy(M, v_minus), kinetic_energy(M, tr.v_plus)
    rows, s = free_coordinates(new, t, q, tr.v_plus)
    F = orthogonal_complement(A[rows], s)
    U = np.zeros(len(v_minus)) if U is None else U
    P0, P1 = F.T @ (M @ v_minus), F.T @ (M @ tr.v_plus)
    names, labels = new.coordinate_names, new.constraint_labels
    err = float(np.max(np.abs(P1 - P0 - F.T @ U), initial=0.0))
    scale = float(np.max(np.abs(P0), initial=0.0))
    return {
        "t": float(t),
        "name": "; ".join(e.label() for e in due),
        "transition": tr.method,
        "momentum_consistent": tr.method != "naive",
        "restart": True,
        "activated": [x for x in labels if x not in old.constraint_labels],
        "released": [x for x in old.constraint_labels if x not in labels],
        "applied_impulse": dict(zip(names, U.tolist())) if np.any(U) else None,
        "free_coordinates": [names[i] for i in s],
        "energy_before": T0 + V,
        "energy_after": T1 + V,
        "kinetic_energy_of_jump": tr.energy_loss,
        "momentum_continuity_error": err,
        "momentum_continuity_error_rel": err / scale if scale > 0 else 0.0,
        "momenta_before": dict(zip((names[i] for i in s), P0.tolist())),
        "momenta_after": dict(zip((names[i] for i in s), P1.tolist())),
        "impulse": None if tr.impulse is None else dict(zip(labels, tr.impulse.tolist())),
        "generalized_impulse": dict(zip(names, (M @ tr.dv).tolist())),
        "velocity_before": dict(zip(names, v_minus.tolist())),
        "velocity_after": dict(zip(names, tr.v_plus.tolist())),
    }


def _union(label_lists):
    out = []
    for labels in label_lists:
        out += [x for x in labels if x not in out]
    return tuple(out)


def _widen(rows, labels, all_labels, k):
    """(k, len(all_labels)) with the columns of ``labels`` from ``rows`` (empty rows: all NaN)."""
    out = np.full((k, len(all_labels)), np.nan)
    if len(rows):
        where = {x: i for i, x in enumerate(all_labels)}        # (tuple.index per label: 1.5 s for 2000 multipliers)
        out[:, [where[x] for x in labels]] = np.array(rows).reshape(k, -1)
    return out


def _stack(segments, key, labels_of):
    """One series over all segments, widened to the union of the segments' labels."""
    labels = _union(labels_of(s) for s in segments)
    return np.vstack([_widen(s.rec.rows.get(key, s.rec.extra.get(key, [])), labels_of(s), labels, len(s.rec.t))
                      for s in segments]), labels


DESCRIPTIONS = {"q": "coordinates", "v": "velocities", "a": "accelerations",
                "violation": "max |Phi| and max |C v + b| (holonomic and nonholonomic)"}


def assemble_result(segments, log, *, events: bool, summary: dict) -> Result:
    """Join the segments (driver.Segment: model, form, rec, stepper) into one Result.
    ``events``: the run had events (momentum series, event log in the summary); ``summary``: the
    driver's generic entries (model, options, wall time, step watch)."""
    t = np.concatenate([np.array(s.rec.t) for s in segments])
    series = assemble_series(segments, events)
    return Result(t, series, _summary(segments, series, log, events, summary),
                  sorted([*log, *(e for s in segments for e in getattr(s.form, "events", []))],
                         key=lambda e: e["t"]))


def assemble_series(segments, events: bool) -> dict:
    """{name: Series} of the states the segments' recorders hold (assemble_result)."""
    names, rec0 = segments[0].model.coordinate_names, segments[0].rec
    arr = {key: np.vstack([np.array(s.rec.rows[key]).reshape(len(s.rec.t), -1) for s in segments])
           for key in rec0.rows if key not in ("multipliers", "work")}
    units = coordinate_units(names)
    units = {"q": units, "v": rate_units(units, 1), "a": rate_units(units, 2)}
    series = {key: Series(arr[key], names, description=DESCRIPTIONS[key], column_units=units[key])
              for key in ("q", "v", "a") if key in arr}
    series["energy"] = Series(arr["energy"], ("kinetic", "potential", "total"), "J")
    series["violation"] = Series(arr["violation"], ("position", "velocity"), description=DESCRIPTIONS["violation"])
    if any("work" in s.rec.rows for s in segments):     # driven, damped or forced models (.work)
        series["work"] = Series(np.vstack([np.array(s.rec.rows.get("work", [[np.nan]] * len(s.rec.t)), float)
                                           .reshape(-1, 1) for s in segments]), ("W",), "J",
                                "work of drivers and non-conservative forces since the segment's start")
    if "multipliers" in rec0.rows:
        mult, labels = _stack(segments, "multipliers", lambda s: s.model.velocity_labels)
        series["multipliers"] = Series(mult, labels, description="Lagrange multipliers (minimum-norm where "
                                       "not unique" + ("; NaN while the constraint is inactive)" if events else ")"))
    if events:
        series["momentum"] = Series(
            np.vstack([momenta_rows(s.model, s.rec.t, s.rec.rows["q"], s.rec.rows["v"], s.rec.momentum_basis)
                       for s in segments]),
            names, description="generalized momenta P = F^T M v of the minimal (unlocked) coordinates, "
            "paper 002 Fig. 4a; NaN for dependent (locked) ones")
    for key in _union(list(s.rec.extra) for s in segments):
        data, labels = _stack(segments, key, lambda s: s.rec.extra_labels.get(key, ()))
        series[key] = Series(data, labels)
    return series


def nonconservative(segments) -> list[str]:
    """Why the total energy need not stay constant (empty: it must): "driven" (a constraint with
    Phi_t != 0 at the start of a segment, i.e. rheonomic: a driver does work), "damped" (spring-dampers
    with damping), "forced" (user forces that are not -grad V, :func:`_potential_forces`)."""
    from ..model.forces import GeneralizedForce, PointForce, SpringDampers

    why = []
    for seg in segments:
        model, t, q = seg.model, seg.rec.t[0], np.array(seg.rec.rows["q"][0])
        if model.m and np.any(Workspace(model).constraints(t, q, np.zeros(model.n))[2] != 0):
            why.append("driven")
        for e in model.forces:
            if (isinstance(e, SpringDampers) and np.any(np.asarray(e.damping) != 0)) or getattr(e, "damped", False):
                why.append("damped")
            elif (isinstance(e, (GeneralizedForce, PointForce)) or getattr(e, "forced", False)) \
                    and not _potential_forces(seg):
                why.append("forced")
    return list(dict.fromkeys(why))


def _potential_forces(seg) -> bool:
    """True if the applied forces equal -grad V (central differences, relative 1e-6) at the segment's
    first and last stored states, with their velocities and with v = 1: e.g. a matrix system's gravity
    given as a force with its potential; a velocity-dependent or driving force fails. With a
    configuration-dependent M the forces h(q, v) hold the velocity terms of M (Coriolis, centrifugal),
    so only v = 0 is compared (a velocity-dependent damper there goes unnoticed)."""
    ws, rec = Workspace(seg.model), seg.rec
    for k in (0, -1):
        t, q, v = rec.t[k], np.array(rec.rows["q"][k]), np.array(rec.rows["v"][k])
        h = 1e-6 * max(1.0, float(np.max(np.abs(q))))
        grad = np.array([ws.potential(t, q + h * e) - ws.potential(t, q - h * e) for e in np.eye(len(q))]) / (2 * h)
        for vel in ((v, np.ones_like(v)) if seg.model.mass_matrix is not None else (np.zeros_like(v),)):
            f = ws.forces(t, q, vel)
            if np.max(np.abs(f + grad)) > 1e-6 * (np.max(np.abs(f)) + np.max(np.abs(grad))) + 1e-12:
                return False
    return True


def _summary(segments, series, log, events, generic) -> dict:
    """The run summary: generic entries, counts over all segments, drift and violation, the last
    formulation's and stepper's summaries and the uniqueness flags of paper 003."""
    last = segments[-1]
    steppers = [s.stepper for s in segments if s.stepper is not None]
    energy, viol = series["energy"].data, series["violation"].data
    scale = max(abs(energy[0, 2]), np.max(np.abs(energy[:, 0])), np.finfo(float).tiny)
    drift = max(float(np.max(np.abs(np.array(s.rec.rows["energy"])[:, 2] - s.rec.rows["energy"][0][2])))
                for s in segments)
    out = {
        **generic,
        "steps": sum(r.n_accepted for r in steppers), "rejected_steps": sum(r.n_rejected for r in steppers),
        "rhs_evaluations": sum(s.form.nfev for s in segments),
        "energy_drift_rel": drift / scale,
        "constraint_violation_max": float(np.max(viol[:, 0])),
        "velocity_violation_max": float(np.max(viol[:, 1])),
        "coordinate_names": list(last.model.coordinate_names),
        "final_q": series["q"].data[-1].tolist(), "final_v": series["v"].data[-1].tolist(),
        "multipliers": "minimum-norm solution where A is rank deficient",
        **last.form.summary(),
    }
    if last.form.discrete:      # paper 004 eqs 10-12: the scheme constrains q_{n+1} and v_{n+1/2} only
        out["velocity_violation_note"] = ("the energy-momentum scheme enforces Phi(q_n+1) = 0 and G v_n+1/2 = 0 "
                                          "(paper 004 eqs 10-12), not A v_n+1 = 0: this max falls as dt^2 (gyro-top: 7.35, 2.02, "
                                          "0.506 at dt = 0.01, 0.005, 0.0025), it is not a drift")
    why = nonconservative(segments)
    out["energy_conserved"] = not why
    balance = [np.array(s.rec.rows["energy"])[:, 2] - np.array(s.rec.rows["work"])[:, 0] for s in segments
               if "work" in s.rec.rows]
    known = bool(balance) and all(np.all(np.isfinite(b)) for b in balance)   # multipliers and dense output
    if why:
        out["energy_note"] = (f"the model is {' and '.join(why)}: energy_drift_rel is the change of the energy, "
                              "not an error measure" + ("; energy_balance_rel is" if known else ""))
    if why and known:     # max |E(t) - E(t0) - W(t)| / scale over the segments
        out["energy_balance_rel"] = max(float(np.max(np.abs(b - b[0]))) for b in balance) / scale
    if last.rec.flags is not None:
        out.update(last.rec.flags.summary())
    if steppers and hasattr(steppers[-1], "summary"):
        out.update(steppers[-1].summary(series))
    if events:
        out.update(energy_drift_note="largest drift within a segment between events; jumps are in events",
                   segments=len(segments), events=list(log))
    return out
