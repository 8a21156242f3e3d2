"""Figures of a Result (no physics computed here): trajectories, energy, constraint violation."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..results.hdf5 import coordinate_units
from ..results.result import Result
from .common import _pyplot, _save


#: (unit of q, axis label of q, axis label of v) per coordinate unit (results.hdf5.coordinate_units)
_GROUPS = {"m": ("positions [m]", "velocities [m/s]"), "rad": ("angles [rad]", "angular rates [rad/s]"),
           "1": ("director components [-]", "director rates [1/s]"),
           "": ("coordinates (model units)", "coordinate rates (model units / s)")}
#: line styles cycled with the colours so that coincident curves stay visible (dashes over solid)
_STYLES = [dict(ls="-", lw=1.6), dict(ls="--", lw=1.3), dict(ls=":", lw=1.6), dict(ls="-.", lw=1.1)]


def _style(i: int) -> dict:
    """Colour, dash pattern and a width that shrinks with i: a curve drawn over an equal one (e.g. the
    equal cranks of the double four-bar) leaves the earlier, wider one visible around it."""
    style = dict(color=f"C{i % 10}", **_STYLES[(i // 10 + i) % len(_STYLES)])
    style["lw"] = max(0.8, 3.0 - 0.45 * i)
    return style


def legend_outside(ax, **kw) -> None:
    """The legend to the right of the axes, never over the curves."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=7, **kw)


def trajectories(result: Result, path: Path) -> Path:
    """Coordinates and velocities over time, one panel column per kind of coordinate (lengths, angles,
    director components; units from the coordinate names, results.hdf5.coordinate_units)."""
    plt = _pyplot()
    names = result.coordinate_names
    units = np.array(coordinate_units(names))
    groups = [(u, units == u) for u in _GROUPS if np.any(units == u)]
    fig, axes = plt.subplots(2, len(groups), figsize=(5.2 * len(groups) + 1.8, 6.5), squeeze=False, sharex=True)
    for col, (unit, mask) in enumerate(groups):
        for row, key in enumerate(("q", "v")):
            ax = axes[row, col]
            for j, i in enumerate(np.flatnonzero(mask)):
                ax.plot(result.t, result[key][:, i], label=names[i], **_style(j))
            ax.set_ylabel(_GROUPS[unit][row])
            ax.grid(alpha=0.3)
            _mark_events(ax, result)
        legend_outside(axes[0, col], ncol=1 if mask.sum() <= 12 else 2)
        axes[1, col].set_xlabel("t [s]")
    fig.suptitle(f"{result.summary.get('model', '')}: coordinates and velocities")
    return _save(fig, path)


def energy(result: Result, path: Path) -> Path:
    plt = _pyplot()
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    e = result["energy"]
    for i, lab in enumerate(result.series["energy"].labels):
        ax1.plot(result.t, e[:, i], label=lab, **_style(i))
    ax1.set_ylabel("energy [J]")
    _mark_events(ax1, result)
    legend_outside(ax1)
    ax1.grid(alpha=0.3)
    ax2.plot(result.t, e[:, 2] - e[0, 2])
    ax2.set_ylabel("E(t) - E(0) [J]")
    ax2.set_xlabel("t [s]")
    ax2.grid(alpha=0.3)
    _mark_events(ax2, result)
    fig.suptitle(f"{result.summary.get('model', '')}: energy")
    return _save(fig, path)


def _mark_events(ax, result) -> None:
    for e in result.events:
        ax.axvline(e["t"], color="0.5", lw=0.8, ls=":")
    for i, t in enumerate(singular_crossings(result)):
        ax.axvline(t, color="C3", lw=0.9, ls="--", alpha=0.6, label="singular crossing" if i == 0 else None)


def singular_crossings(result) -> list[float]:
    """Times of the singular configurations the run crossed (``summary["singular_crossings"]``, located by
    simulation.crossings of issue 12; none listed before that is merged)."""
    return [float(e["t"]) for e in result.summary.get("singular_crossings", []) or []]


#: values below this are round-off (or exact zeros): drawn on this line, not as spikes down to 1e-40
ROUND_OFF_FLOOR = 1e-17


def violation(result: Result, path: Path) -> Path:
    """max |Phi| and max |A v + Phi_t| on a log axis, one marker per stored state; values below
    ROUND_OFF_FLOOR (round-off, an assembled state, a kinematic system) sit on that line, and an
    all-zero series is named instead of drawn."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4))
    zero = []
    for i, lab in enumerate(result.series["violation"].labels):
        y = result["violation"][:, i]
        if not np.any(y > 0):
            zero.append(lab)
            continue
        ax.semilogy(result.t, np.maximum(y, ROUND_OFF_FLOOR), ls="none", marker="o^"[i % 2], ms=3, alpha=0.7,
                    color=f"C{i}", label=lab)
    ax.axhline(ROUND_OFF_FLOOR, color="0.5", lw=0.8, ls="--", label=f"below {ROUND_OFF_FLOOR:g}: drawn here")
    ax.set_ylim(bottom=ROUND_OFF_FLOOR / 3)
    if zero:
        ax.text(0.02, 0.9, f"identically zero: {', '.join(zero)}", transform=ax.transAxes, fontsize=8)
    ax.set_xlabel("t [s]")
    ax.set_ylabel("max |residual| (length or rate units)")
    _mark_events(ax, result)
    legend_outside(ax)
    ax.grid(alpha=0.3, which="both")
    ax.set_title(f"{result.summary.get('model', '')}: |Phi| (position) and |A v + Phi_t| (velocity) at the "
                 "stored states", fontsize=9)
    return _save(fig, path)


def ground_points(model) -> np.ndarray:
    """(k, 2) positions of the joints and rods to ground (pivots; for a ground marker the local vector is its global
    position, model.markers)."""
    from ..model.constraints import Coincident, Distance

    pts = [ms.local[ms.cols[:, 0] == model.n] for g in model.constraints if isinstance(g, (Coincident, Distance))
           for ms in (g.pi, g.pj) if not ms.is_vector]
    return np.unique(np.vstack(pts), axis=0) if pts else np.zeros((0, 2))


def snapshots(result: Result, model, path: Path, count: int = 8) -> Path | None:
    """The mechanism drawn at ``count`` instants (bodies by their outlines), pivots to ground as triangles."""
    if not model.bodies:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 6))
    idx = np.linspace(0, len(result.t) - 1, count).astype(int)
    colors = plt.cm.viridis(np.linspace(0, 1, count))
    for c, k in zip(colors, idx):
        draw_mechanism(ax, model, result.q[k], color=c, label=f"t = {result.t[k]:.3g} s")
    finish_mechanism_axes(ax, model, f"{result.summary.get('model', '')}: snapshots")
    return _save(fig, path)


def draw_mechanism(ax, model, q, **style) -> None:
    """The planar bodies of ``model`` at q by their outlines (style: matplotlib line keywords; ``label`` once)."""
    from ..linalg.rotations import rotate

    label = style.pop("label", None)
    for b in model.bodies:
        x, y = q[b.cols[0]], q[b.cols[1]]
        th = q[b.cols[2]] if b.cols[2] >= 0 else 0.0
        pts = np.array([x, y]) + rotate(np.full(len(b.outline), th), b.outline)
        ax.plot(pts[:, 0], pts[:, 1], marker="o", ms=2, lw=2 if len(pts) > 1 else 0, **style)
    from ..model.constraints import Distance

    qe = np.r_[q, 0.0]
    for g in model.constraints:          # massless rods (distance joints) as thin lines between their points
        if isinstance(g, Distance):
            a, b = g.pi.evaluate(qe, qe).pos, g.pj.evaluate(qe, qe).pos
            for pa, pb in zip(a, b):
                ax.plot([pa[0], pb[0]], [pa[1], pb[1]], lw=1, **style)
    ax.plot([], [], label=label, **{k: v for k, v in style.items() if k in ("color", "ls")})


def finish_mechanism_axes(ax, model, title: str) -> None:
    """Pivots to ground as triangles, equal axes in metres, legend outside, title."""
    piv = ground_points(model)
    if len(piv):
        ax.plot(piv[:, 0], piv[:, 1], "k^", ms=9, mfc="0.7", label="pivot (ground)", zorder=5)
    ax.set_aspect("equal", adjustable="datalim")     # a tall mechanism widens the x range, not the box
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    legend_outside(ax)
    ax.grid(alpha=0.3)
    ax.set_title(title)


def standard_figures(result: Result, model, directory) -> list[Path]:
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    name = result.summary.get("model", "run")
    paths = [trajectories(result, d / f"{name}-trajectories.png"), energy(result, d / f"{name}-energy.png"),
             violation(result, d / f"{name}-violation.png"),
             snapshots(result, model, d / f"{name}-snapshots.png")]
    return [p for p in paths if p is not None]
