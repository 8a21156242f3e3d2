"""Figures of a Result (no physics computed here): trajectories, energy, constraint violation."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..results.result import Result
from .common import _pyplot, _save


def trajectories(result: Result, path: Path) -> Path:
    """Coordinates and velocities over time, one line per coordinate (angles and lengths apart)."""
    plt = _pyplot()
    names = result.coordinate_names
    # lengths are the coordinates named x, y, z (or body.x, ...); everything else is drawn as an angle
    angle = np.array([n.rpartition(".")[2] not in ("x", "y", "z") for n in names])
    groups = [("positions [m]", ~angle), ("angles [rad]", angle)]
    groups = [(lab, mask) for lab, mask in groups if mask.any()]
    fig, axes = plt.subplots(2, len(groups), figsize=(6 * len(groups), 6.5), squeeze=False, sharex=True)
    for col, (label, mask) in enumerate(groups):
        for row, (key, suffix) in enumerate((("q", ""), ("v", " rate [1/s]" if "angle" in label else ""))):
            ax = axes[row, col]
            for i in np.flatnonzero(mask):
                ax.plot(result.t, result[key][:, i], lw=1, label=names[i])
            ax.set_ylabel(label if key == "q" else (label.split(" [")[0] + " rates"))
            ax.grid(alpha=0.3)
        axes[0, col].legend(fontsize=7, ncol=3)
        axes[1, col].set_xlabel("t [s]")
    fig.suptitle(f"{result.summary.get('model', '')}: coordinates and velocities")
    return _save(fig, path)


def energy(result: Result, path: Path) -> Path:
    plt = _pyplot()
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    e = result["energy"]
    for i, lab in enumerate(result.series["energy"].labels):
        ax1.plot(result.t, e[:, i], label=lab)
    ax1.set_ylabel("energy [J]")
    ax1.legend()
    ax1.grid(alpha=0.3)
    ax2.plot(result.t, e[:, 2] - e[0, 2])
    ax2.set_ylabel("E(t) - E(0) [J]")
    ax2.set_xlabel("t [s]")
    ax2.grid(alpha=0.3)
    fig.suptitle(f"{result.summary.get('model', '')}: energy")
    return _save(fig, path)


def violation(result: Result, path: Path) -> Path:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    floor = 1e-18   # exact zeros (e.g. the assembled initial state) drawn at this floor, below round-off
    for i, lab in enumerate(result.series["violation"].labels):
        ax.semilogy(result.t, np.maximum(result["violation"][:, i], floor), label=f"{lab} level")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("max constraint violation")
    ax.legend()
    ax.grid(alpha=0.3, which="both")
    ax.set_title(f"{result.summary.get('model', '')}: |Phi| and |A v + Phi_t| after each step")
    return _save(fig, path)


def snapshots(result: Result, model, path: Path, count: int = 8) -> Path | None:
    """The mechanism drawn at ``count`` instants (bodies by their outlines)."""
    if not model.bodies:
        return None
    from ..linalg.rotations import rotate

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 6))
    idx = np.linspace(0, len(result.t) - 1, count).astype(int)
    colors = plt.cm.viridis(np.linspace(0, 1, count))
    for c, k in zip(colors, idx):
        q = result.q[k]
        for b in model.bodies:
            x, y = q[b.cols[0]], q[b.cols[1]]
            th = q[b.cols[2]] if b.cols[2] >= 0 else 0.0
            pts = np.array([x, y]) + rotate(np.full(len(b.outline), th), b.outline)
            ax.plot(pts[:, 0], pts[:, 1], "-o", color=c, ms=2, lw=2 if len(pts) > 1 else 0)
        ax.plot([], [], color=c, label=f"t = {result.t[k]:.3g} s")
    ax.set_aspect("equal")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    ax.set_title(f"{result.summary.get('model', '')}: snapshots")
    return _save(fig, path)


def standard_figures(result: Result, model, directory) -> list[Path]:
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    name = result.summary.get("model", "run")
    paths = [trajectories(result, d / f"{name}-trajectories.png"), energy(result, d / f"{name}-energy.png"),
             violation(result, d / f"{name}-violation.png"),
             snapshots(result, model, d / f"{name}-snapshots.png")]
    return [p for p in paths if p is not None]
