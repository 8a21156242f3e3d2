"""Streaming a run into its result file (issue 17): the recorder hands every block of ``chunk`` stored
states to a :class:`ChunkSink`, which turns it into series (the same code as an in-memory run,
:func:`.assemble.assemble_series`), appends them to a :class:`multibody.results.stream.ResultStream`
and drops them, so the memory of a run does not grow with its length.

A run with events (paper 002: locks, releases, impulses) is a sequence of segments, each with its own
model and recorder; the driver ends each segment with :meth:`ChunkSink.segment_done`, so the blocks reach
the file in the order of the run, and a block of a later segment may bring constraint rows, channels or
series the file does not have yet (the stream adds them as columns, NaN before: the joined series of an
in-memory run). The momenta P = F^T M v of a segment use the minimal coordinates chosen at its first
state (kept on the recorder, ``momentum_basis``), as in memory.

The run summary is computed by the same code as for an in-memory run, on a *digest* of every segment: its
first and last stored states and, for every column of every series, the state where |x| and where
|x - x(first state)| are largest (a NaN counts as largest), and where the energy balance
|(E - W) - (E - W)(first state)| is. Every entry of the summary built from the series is such a first,
last or largest value of a segment (energy drift and its scale, violation maxima, final q and v, the
energy balance, energy-momentum's drifts and scales), so the streamed summary equals the in-memory one;
a digest holds at most 2 (columns) + 3 states, however long the segment.
"""
from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np

from ..results.result import Result, jsonable
from .assemble import assemble_series, free_coordinates


class ChunkSink:
    """Appends a recorder's blocks of states to ``stream`` and keeps the digest of the current segment
    (module docstring). ``events``: the run has events (momentum series, the multipliers' description)."""

    def __init__(self, stream, events: bool = False):
        self.stream, self.chunk, self.events = stream, stream.chunk, events
        self._reset()

    def _reset(self) -> None:
        self._first = None      # {key: row} of the segment's first state
        self._best = {}         # (key, column, kind) -> (score, index of the state)
        self._kept = {}         # index -> (t, {key: row}): the states the digest needs
        self._n = 0             # states of the segment taken so far

    def flush(self, rec) -> None:
        """Write the states ``rec`` holds and drop them from it."""
        if not rec.t:
            return
        if self.events and rec.momentum_basis is None:      # the segment's first state
            rec.momentum_basis = free_coordinates(rec.model, rec.t[0], rec.rows["q"][0], rec.rows["v"][0])
        series = assemble_series([SimpleNamespace(model=rec.model, rec=rec)], events=self.events)
        t, rows, extra = rec.take()
        self.stream.append(t, series)
        self._digest(t, {**rows, **{f"extra:{k}": v for k, v in extra.items()}})

    def segment_done(self, rec) -> None:
        """Write the segment's last block; ``rec`` then holds the segment's digest (for the summary)."""
        self.flush(rec)
        idx = sorted(self._kept)
        if not idx:
            raise ValueError("no state was recorded")
        t = [self._kept[i][0] for i in idx]
        keys = self._kept[idx[0]][1]
        stack = {key: np.array([self._kept[i][1][key] for i in idx]) for key in keys}
        rec.hold(t, {k: v for k, v in stack.items() if not k.startswith("extra:")},
                 {k[6:]: v for k, v in stack.items() if k.startswith("extra:")})
        self._reset()

    def _digest(self, t, arrays: dict) -> None:
        """Update the first, last and largest states with a block (t, {key: (k, c)})."""
        n0, k = self._n, len(t)
        if self._first is None:
            self._first = {key: a[0].copy() for key, a in arrays.items()}
            self._kept[0] = (t[0], self._first)
        scores = {}
        for key, a in arrays.items():
            scores[(key, "abs")] = np.abs(a)
            scores[(key, "drift")] = np.abs(a - self._first[key])
        if "work" in arrays:    # energy balance E - W (assemble._summary)
            b = arrays["energy"][:, 2] - arrays["work"][:, 0]
            b0 = self._first["energy"][2] - self._first["work"][0]
            scores[("balance", "drift")] = np.abs(b - b0)[:, None]
        for (key, kind), s in scores.items():
            s = np.where(np.isnan(s), np.inf, s)
            if not s.shape[1]:
                continue
            at = np.argmax(s, axis=0)
            for col, i in enumerate(at):
                best = self._best.get((key, col, kind))
                if best is None or s[i, col] > best[0]:
                    self._best[(key, col, kind)] = (s[i, col], n0 + int(i))
        self._n += k
        need = {0, self._n - 1} | {i for _, i in self._best.values()}
        for i in need - set(self._kept):
            self._kept[i] = (t[i - n0], {key: a[i - n0].copy() for key, a in arrays.items()})
        self._kept = {i: v for i, v in self._kept.items() if i in need}


def streamed(stream, events, run) -> Result:
    """``run(sink)`` (the driver's loop) streaming into ``stream``; the file is finished with the
    summary and events, or closed as it is when the run fails. ``events``: the run has events.
    Returns the Result without rows."""
    try:
        result = run(ChunkSink(stream, bool(events)))
        result.summary["streamed_states"] = stream.states
        stream.close(result.summary, result.events, jsonable)
    except BaseException:
        stream.abort(check=False)       # the run's own error is the one to report
        raise
    empty = {name: replace(s, data=s.data[:0]) for name, s in result.series.items()}
    return Result(np.zeros(0), empty, result.summary, result.events)
