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


def markers(result) -> list[Marker]:
    """Singular crossings (``summary["singular_crossings"]`` and the nullspace formulation's singular
    events, with rank and rank drop) and topology events (locks, releases, impulses with the energy
    before and after the jump), sorted by time; a crossing listed twice is kept once."""
    out: list[Marker] = []
    crossings = list(result.summary.get("singular_crossings") or [])
    crossings += [e for e in result.events if e.get("kind") == "singular"]
    for c in crossings:
        t = float(c["t"])
        if any(m.kind == "singular" and abs(m.t - t) <= 1e-9 * max(1.0, abs(t)) for m in out):
            continue
        rank = f" (rank {c['rank']} of {c['generic_rank']})" if "rank" in c and "generic_rank" in c else ""
        out.append(Marker(t, "singular", f"singular crossing{rank}"))
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
