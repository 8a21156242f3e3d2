"""The stored states of a run on the band path, computed together (issue 16: a whole simulate() of the chains).

A :class:`~.recorder.Recorder` whose formulation solves its right-hand side by the band Schur solve
(fast.band.BandStep) keeps each stored state as (t, y) only and computes its rows when they are read
(:meth:`Recorder.rows`, :meth:`Recorder.extra`, at the end of the segment): one compiled call for all of them
(:func:`multibody.fast.band_kernels.band_record_batch`: accelerations, multipliers, A's entries and the
violations of each state, the computation of BandStep.record), then the energies, the joint reactions' generalized
forces (ReactionMap.generalized_entries) and the uniqueness flags (ReactionFlags: the block bound of
analysis.solvability._unit_block, else the full test) for all states at once. The numbers are those of the
per-state path to round-off (tests/test_run_shortcuts.py). A state where the band solve declines is recorded by
the per-state path (the reference), in its place. Spatial Lagrange runs (fast.spatial_step.SpatialStep) do the
same with :class:`~.record_batch_spatial.SpatialBatch`, whose rows :func:`write` appends too.

Only runs the batch reproduces: no prescribed motions, no work integral, no distribution matrix, no channels of
the stepper or formulation, not streamed (:func:`batch_step`).
"""
from __future__ import annotations

import numpy as np

from ..formulations.base import Formulation
from ..model.forces import ConstantForce


def batch_step(rec):
    """The batch that computes ``rec``'s stored states: the BandStep, or a
    :class:`~.record_batch_spatial.SpatialBatch` (spatial Lagrange, fast.spatial_step.SpatialStep), or None (record
    each state as it comes)."""
    form = rec.form
    step = getattr(form, "band_step", None) or getattr(getattr(form, "fast_step", None), "band_step", None)
    if step is None:
        from .record_batch_spatial import spatial_batch
        step = spatial_batch(rec)
    if (step is None or form.discrete or getattr(getattr(step, "pack", None), "motions", False)
            or rec.work is not None or rec.sink is not None
            or rec.model.distribution is not None or rec._mass_diag is None
            or getattr(rec.stepper, "channels", None) is not None
            or type(form).channels is not Formulation.channels):
        return None
    return step


def flush(rec, pending: list) -> None:
    """Rows of the pending states [(t, y)] in order: batches, and the reference for a state the batch declines."""
    start = 0
    while start < len(pending):
        bad = _batch(rec, pending[start:])
        if bad < 0:
            return
        rec._store(*pending[start + bad][:2])
        start += bad + 1


def _batch(rec, states: list) -> int:
    """Rows of the leading states the band solve takes; returns the index of the first it declines, or -1."""
    if hasattr(rec._batch, "batch"):        # spatial (record_batch_spatial)
        return rec._batch.batch(rec, states, write)
    step, ws = rec._batch, rec.form.ws
    band, n, m = step.band, rec.model.n, ws.m
    Y = np.array([y for _, y in states], dtype=float)
    k = len(Y)
    acc, lam, viol, vals = np.empty((k, n)), np.empty((k, m)), np.empty((k, 2)), np.empty((k, step.pattern.count))
    bad = step.kernels.band_record_batch(Y, band.pk, band.minv, band.f, step.record_tau, step.pattern.iperm,
                                         step.pattern.pairs, band.work, step.pack.poff, acc, lam, viol, vals)
    good = k if bad < 0 else bad
    if good:
        Q, lam = Y[:good, :n], lam[:good, step.pattern.iperm]
        write(rec, states[:good], Y[:good], acc[:good], lam, viol[:good],
              lambda: _reactions(rec, vals[:good], lam), lambda: _flags(rec, Q, vals[:good]))
    return bad


def write(rec, states, Y, acc, lam, viol, reactions, flags) -> None:
    """Append the rows and extras of k states computed by a batch; ``reactions()`` their (k, E, c) generalized
    reaction terms, ``flags()`` their uniqueness flags (a dict per state)."""
    n = rec.model.n
    Q, V = Y[:, :n], Y[:, n: 2 * n]
    T = 0.5 * np.einsum("ij,ij->i", rec._mass_diag * V, V)
    P = _potential(rec, states, Q)
    rows = {"q": Q, "v": V, "energy": np.column_stack([T, P, T + P]), "violation": viol, "a": acc,
            "multipliers": lam}
    for key, arr in rows.items():
        rec._rows.setdefault(key, []).extend(arr)
    if rec.reactions is not None:
        rec._generalized.extend(reactions())
        rec.extra_labels["reactions"] = rec.reactions.labels
    if not getattr(rec.form, "sparse", False):
        for state_flags in flags():
            for key, (values, labels) in state_flags.items():
                rec._extra.setdefault(key, []).append(values)
                rec.extra_labels[key] = tuple(labels)


def _potential(rec, states, Q) -> np.ndarray:
    """V of every state: Workspace.potential (the sum over the force elements), for constant forces (uniform
    gravity, model.forces.ConstantForce: V = -g . q) as one product for all states."""
    forces = rec.model.forces
    if not all(type(e) is ConstantForce for e in forces):
        return np.array([rec.form.ws.potential(t, q) for (t, _), q in zip(states, Q)])
    V = np.zeros(len(Q))
    for e in forces:
        V = V + -(Q @ e.g[: Q.shape[1]])
    return V


def _reactions(rec, vals, lam) -> np.ndarray:
    """(k, E, 3): ReactionMap.generalized_entries of every state (NaN where the multipliers are not finite)."""
    if rec._targets is None:
        rec._targets = rec.reactions.entry_targets(rec._batch.pattern.rows, rec._batch.pattern.cols)
    from ..fast.reaction_kernels import gather_reactions     # the same sums compiled (the band path has numba)
    out = np.empty((len(lam), 3 * len(rec.reactions.joint)))
    gather_reactions(np.ascontiguousarray(vals), np.ascontiguousarray(lam), *rec._targets, out)
    return out.reshape(len(lam), -1, 3)


def _flags(rec, Q, vals) -> list:
    """ReactionFlags.record of every state with A made dense (as fast.step.FastStep.record does): the all-unique
    flags where the block bound holds (ReactionFlags.bounded, for all states at once), else the full test."""
    flags, p = rec.flags, rec._batch.pattern
    n, m, k = rec.model.n, rec.form.ws.m, len(Q)
    size = m * (n + 1)
    A = np.bincount((p.rows * (n + 1) + p.cols + size * np.arange(k)[:, None]).ravel(), vals.ravel(), k * size)
    A = A.reshape(k, m, n + 1)[:, :, :n]
    ok = flags.bounded(A)
    return [flags._all_unique() if ok[i] else flags.record(Q[i], A[i]) for i in range(k)]
