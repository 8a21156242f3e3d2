"""The result of a run with events: the segments between events joined into one Result, the event
log (paper 002 Sect. 6: energy before and after each switch, continuity of the momenta of the
unlocked joints, the impulsive constraint forces Lambda) and the series of generalized momenta.

Series added to the usual ones (see :mod:`multibody.results`):

- ``momentum`` (k, n): P = F^T M v (paper 002 Fig. 4a) for the minimal coordinates s of the active
  constraints (for locked joints of a serial chain: the unlocked joints), NaN in the columns of the
  dependent (locked) coordinates; F from paper 002 eq. (10);
- ``multipliers``: one column per constraint row that was active at some time, NaN while inactive.

At every event both the state before and the state after the jump are recorded at the event time
(two rows with the same t). ``energy_drift_rel`` in the summary is the largest drift of the total
energy *within* a segment (the jumps at the events are in the event log), relative to the scale
used by :func:`multibody.runner.simulate`.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from .assembly import Workspace, kinetic_energy
from .linalg import pivoted_qr
from .results import Result, Series
from .topology import independent_coordinates, orthogonal_complement


def _free_coordinates(model, t, q, v):
    """(rows, s): independent constraint rows and minimal coordinates of the model at (t, q, v)."""
    A = Workspace(model).constraints(t, q, v)[1]
    rows = pivoted_qr(A).independent_rows if A.shape[0] else np.arange(0)
    return rows, independent_coordinates(A[rows])[1]


def momenta_rows(model, ts, qs, vs) -> np.ndarray:
    """P = F^T M v (paper 002 Fig. 4a) for every recorded state of one segment, (k, n) with NaN in
    the dependent coordinates; the minimal coordinates are chosen once, at the segment's start."""
    ws = Workspace(model)
    rows, s = _free_coordinates(model, ts[0], qs[0], vs[0])
    out = np.full((len(ts), model.n), np.nan)
    for i, (t, q, v) in enumerate(zip(ts, qs, vs)):
        A = ws.constraints(t, q, v)[1][rows]
        out[i, s] = orthogonal_complement(A, s).T @ (model.mass(q) @ v)
    return out


def event_entry(old, new, due, t, q, v_minus, tr, M, A) -> dict:
    """One event-log object: t, energy_before/after, momentum_continuity_error, the impulse, ..."""
    ws_old = Workspace(old)
    V = ws_old.potential(t, q)
    T0, T1 = kinetic_energy(M, v_minus), kinetic_energy(M, tr.v_plus)
    rows, s = _free_coordinates(new, t, q, tr.v_plus)
    F = orthogonal_complement(A[rows], s)
    P0, P1 = F.T @ (M @ v_minus), F.T @ (M @ tr.v_plus)
    names, labels = new.coordinate_names, new.constraint_labels
    err = float(np.max(np.abs(P1 - P0), initial=0.0))
    scale = float(np.max(np.abs(P0), initial=0.0))
    return {
        "t": float(t),
        "name": "; ".join(e.label() for e in due),
        "transition": tr.method,
        "momentum_consistent": tr.method != "naive",
        "restart": True,
        "activated": list(labels[old.m:]),
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


def _widen(rows, labels, all_labels):
    out = np.full((len(rows), len(all_labels)), np.nan)
    cols = [all_labels.index(x) for x in labels]
    if rows:
        out[:, cols] = np.array(rows).reshape(len(rows), -1)
    return out


def assemble_result(segments, log, *, options, t_end, formulation, transition_method, wall) -> Result:
    """Join the segments [(model, form, recorder, integrator)] into one Result with the event log."""
    model0 = segments[0][0]
    names = model0.coordinate_names
    rows = {k: sum((list(rec.rows[k]) for _, _, rec, _ in segments), []) for k in segments[0][2].rows}
    t = np.concatenate([np.array(rec.t) for _, _, rec, _ in segments])
    mult_labels = _union(m.constraint_labels for m, _, _, _ in segments)
    mult = np.vstack([_widen(rec.rows["multipliers"], m.constraint_labels, mult_labels)
                      for m, _, rec, _ in segments])
    momenta = np.vstack([momenta_rows(m, rec.t, rec.rows["q"], rec.rows["v"]) for m, _, rec, _ in segments])
    arr = {k: np.array(v).reshape(len(t), -1) for k, v in rows.items() if k != "multipliers"}
    series = {
        "q": Series(arr["q"], names, description="coordinates"),
        "v": Series(arr["v"], names, description="velocities"),
        "a": Series(arr["a"], names, description="accelerations"),
        "multipliers": Series(mult, mult_labels, description="Lagrange multipliers (NaN while the "
                              "constraint is inactive; minimum-norm where not unique)"),
        "energy": Series(arr["energy"], ("kinetic", "potential", "total"), "J"),
        "violation": Series(arr["violation"], ("position", "velocity"),
                            description="max |Phi| and max |A v + Phi_t|"),
        "momentum": Series(momenta, names, description="generalized momenta P = F^T M v of the minimal "
                           "(unlocked) coordinates, paper 002 Fig. 4a; NaN for dependent (locked) ones"),
    }
    extra_keys = _union(list(rec.extra) for _, _, rec, _ in segments)
    for key in extra_keys:
        labels = _union(rec.extra_labels.get(key, ()) for _, _, rec, _ in segments)
        series[key] = Series(np.vstack([_widen(rec.extra.get(key, []), rec.extra_labels.get(key, ()), labels)
                                        if key in rec.extra else np.full((len(rec.t), len(labels)), np.nan)
                                        for _, _, rec, _ in segments]), labels)
    summary = _run_summary(segments, rows, options, t_end, formulation, wall)
    summary.update(transition=transition_method, events=log)
    return Result(t, series, summary, list(log))


def _run_summary(segments, rows, options, t_end, formulation, wall) -> dict:
    from .runner import _summary

    model, form = segments[-1][0], segments[-1][1]
    rks = [rk for *_, rk in segments if rk is not None]
    rk = SimpleNamespace(n_accepted=sum(r.n_accepted for r in rks), n_rejected=sum(r.n_rejected for r in rks))
    agg_form = SimpleNamespace(nfev=sum(f.nfev for _, f, _, _ in segments), summary=form.summary)
    out = _summary(model, agg_form, options, SimpleNamespace(rows=rows), rk, wall, t_end, formulation)
    energy = np.array(rows["energy"])
    scale = max(abs(energy[0, 2]), np.max(np.abs(energy[:, 0])), np.finfo(float).tiny)
    drift = max(float(np.ptp(np.array(rec.rows["energy"])[:, 2])) for _, _, rec, _ in segments)
    out["energy_drift_rel"] = drift / scale
    out["energy_drift_note"] = "largest drift within a segment between events; jumps are in events"
    out["segments"] = len(segments)
    return out
