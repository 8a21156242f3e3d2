"""The events of a run on its time axis (singular crossings, locks, releases, impulses) and the stored
states an animation shows (evenly spaced in time, plus the states at every event)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Marker:
    """One event on the time axis: ``kind`` 'singular' or 'topology'; ``text`` a one-line description."""

    t: float
    kind: str
    text: str


def crossings(result) -> list[dict]:
    """The singular configurations the run passed, sorted by time: the nullspace formulation's singular
    events (with their admissible motions) and the crossings of ``summary["singular_crossings"]`` (located
    separately, issue 12); the same crossing found by both (within 1e-4 of the run's span) is listed once,
    as the event, with the summary's rank drop."""
    t = result.t
    tol = 1e-4 * float(t[-1] - t[0]) if len(t) > 1 else 0.0
    out = [dict(e) for e in result.events if e.get("kind") == "singular"]
    for c in result.summary.get("singular_crossings") or []:
        same = [e for e in out if abs(float(e["t"]) - float(c["t"])) <= tol]
        if same:
            same[0].setdefault("rank_drop", c.get("rank_drop", ""))
        else:
            out.append(dict(c))
    return sorted(out, key=lambda c: float(c["t"]))


def markers(result) -> list[Marker]:
    """Singular crossings (:func:`crossings`, with rank) and topology events (locks, releases, impulses with
    the energy before and after the jump), sorted by time."""
    out: list[Marker] = []
    for c in crossings(result):
        rank = f" (rank {c['rank']} of {c['generic_rank']})" if "rank" in c and "generic_rank" in c else ""
        out.append(Marker(float(c["t"]), "singular", f"singular crossing{rank}"))
    for e in result.events:
        if e.get("kind") == "singular" or "t" not in e:
            continue
        text = str(e.get("name") or e.get("kind") or "event")
        if "energy_before" in e and "energy_after" in e:
            text += f": E {float(e['energy_before']):.4g} -> {float(e['energy_after']):.4g} J"
        out.append(Marker(float(e["t"]), "topology", text))
    return sorted(out, key=lambda m: m.t)


def frame_indices(t: np.ndarray, max_frames: int, event_times=()) -> np.ndarray:
    """Indices of at most about ``max_frames`` stored states, nearest to evenly spaced times, plus the
    stored states nearest to every event time (both states of an event stored twice); sorted, unique.
    A run with fewer states keeps all of them (decimated for display, never truncated in time)."""
    t = np.asarray(t, float)
    if len(t) <= max_frames:
        return np.arange(len(t))
    wanted = [np.searchsorted(t, np.linspace(t[0], t[-1], max(2, max_frames)))]
    for te in event_times:
        d = np.abs(t - te)
        wanted.append(np.flatnonzero(d <= d.min()))
    idx = np.clip(np.concatenate(wanted), 0, len(t) - 1)
    return np.unique(idx)


def active_marker(ms: list[Marker], t: float, window: float) -> Marker | None:
    """The event nearest to t if it is within ``window`` seconds (what the animation announces)."""
    near = [m for m in ms if abs(m.t - t) <= window]
    return min(near, key=lambda m: abs(m.t - t)) if near else None


def locked_coordinates(result, k: int) -> set[str]:
    """Coordinates held by a lock (rows ``lock-COORD.value``, simulation.events) at stored state k: an event
    at time te applies to the states after it; of the two states stored at te, only the second."""
    t = result.t
    before_jump = k + 1 < len(t) and t[k + 1] == t[k]
    out: set[str] = set()
    for e in sorted((e for e in result.events if "t" in e), key=lambda e: float(e["t"])):
        te = float(e["t"])
        if te > t[k] or (te == t[k] and before_jump):
            break
        out |= {r[5:-6] for r in e.get("activated", ()) if r.startswith("lock-") and r.endswith(".value")}
        out -= {r[5:-6] for r in e.get("released", ()) if r.startswith("lock-") and r.endswith(".value")}
    return out
