"""Figures of spatial runs (paper 004 Figs 8-10, 12-14, 16-18, 23-25); no physics computed here.

- ``*-em-conservation.png``: total energy and angular momentum components L_i over time, and their
  deviations from the initial values (Figs 10, 13, 17, 23);
- ``*-joints.png``: relative joint coordinates u, theta (theta unwrapped) over time (Figs 14, 18, 25);
- ``*-snapshots3d.png``: the bodies' outlines at several instants in 3-D (Figs 12, 16, 24);
- ``gyro-top-com.png``: x, z of the centre of mass against the analytic steady precession (Figs 8, 9);
- ``*-spatial-reactions.png`` (issue 23): magnitude of the force and of the moment (about the centre
  of mass) that each pair exerts on its moving body (the ``reactions`` series), and each driver's
  effort -lam (the torque about, or the force along, the driven axis on the child body).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..model.director import SpatialBodies
from .common import _pyplot, _save
from ..results.result import Result


def conservation(result: Result, path: Path) -> Path:
    plt = _pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(11, 6.5), sharex=True)
    t, e, mom = result.t, result["energy"], result["momentum"]
    axes[0, 0].plot(t, e[:, 2], label="total E")
    axes[0, 0].plot(t, e[:, 0], lw=0.8, label="kinetic")
    axes[0, 0].plot(t, e[:, 1], lw=0.8, label="potential")
    axes[0, 0].set_ylabel("energy [J]")
    for i, lab in enumerate(("Lx", "Ly", "Lz")):
        axes[0, 1].plot(t, mom[:, 3 + i], label=lab)
        axes[1, 1].plot(t, mom[:, 3 + i] - mom[0, 3 + i], label=lab)
    axes[0, 1].set_ylabel("angular momentum about O [kg m^2/s]")
    axes[1, 0].plot(t, (e[:, 2] - e[0, 2]) / max(np.max(np.abs(e[:, :2])), np.finfo(float).tiny))
    axes[1, 0].set_ylabel("(E - E0) / max(|T|, |V|)")
    axes[1, 1].set_ylabel("L_i - L_i(0) [kg m^2/s]")
    for ax in axes.ravel():
        ax.grid(alpha=0.3)
    for ax in (axes[0, 0], axes[0, 1], axes[1, 1]):
        ax.legend(fontsize=8)
    for ax in axes[1]:
        ax.set_xlabel("t [s]")
    s = result.summary
    fig.suptitle(f"{s.get('model', '')}: {s.get('integrator', '')} {s.get('formulation', '')}, dt = {s.get('step')}")
    return _save(fig, path)


def joints(result: Result, path: Path) -> Path | None:
    if "joints" not in result.series or result["joints"].shape[1] == 0:
        return None
    plt = _pyplot()
    labels = result.series["joints"].labels
    ang = [i for i, lab in enumerate(labels) if lab.endswith("theta")]
    lin = [i for i, lab in enumerate(labels) if not lab.endswith("theta")]
    groups = [g for g in ((lin, "relative displacement u"), (ang, "relative angle theta [rad] (unwrapped)")) if g[0]]
    fig, axes = plt.subplots(len(groups), 1, figsize=(8, 3.2 * len(groups)), sharex=True, squeeze=False)
    for ax, (idx, ylabel) in zip(axes[:, 0], groups):
        for i in idx:
            y = result["joints"][:, i]
            ax.plot(result.t, np.unwrap(y) if i in ang else y, label=labels[i])
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, ncol=3)
    axes[-1, 0].set_xlabel("t [s]")
    fig.suptitle(f"{result.summary.get('model', '')}: relative joint coordinates")
    return _save(fig, path)


#: the instants of paper 004's snapshot figures (Fig. 12 cylindrical pair, Fig. 16 planar pair, Fig. 24 six-body
#: linkage); other models get evenly spaced ones
PAPER_SNAPSHOTS = {"cylindrical-pair": (0.1, 0.3, 0.7), "planar-pair": (0.02, 0.04, 0.05, 0.06, 0.07, 0.08),
                   "six-body-linkage": (0.02, 0.04, 0.08, 0.09, 0.13, 0.26)}


def snapshot_times(result: Result):
    """The paper's instants of the model (PAPER_SNAPSHOTS) that lie in the run, or None (evenly spaced)."""
    times = [t for t in PAPER_SNAPSHOTS.get(result.summary.get("model", ""), ())
             if result.t[0] <= t <= result.t[-1] * (1 + 1e-9)]
    return times or None


def snapshots3d(result: Result, model, path: Path, times=None, count: int = 6) -> Path | None:
    """The bodies' outlines at several instants; bodies without outlines by their director frames, links and
    joint axes (report.scenes.SpatialScene, issue 15)."""
    bodies = next((g for g in model.constraints if isinstance(g, SpatialBodies)), None)
    if bodies is None:
        return None
    if not any(o is not None for o in bodies.outlines):
        return _frame_snapshots(result, model, path, times, count)
    plt = _pyplot()
    fig = plt.figure(figsize=(8, 7))
    ax = fig.add_subplot(projection="3d")
    idx = (np.linspace(0, len(result.t) - 1, count).astype(int) if times is None
           else [int(np.argmin(np.abs(result.t - t))) for t in times])
    colors = plt.cm.viridis(np.linspace(0, 1, len(idx)))
    pts_all = []
    for c, k in zip(colors, idx):
        phi, D = bodies.frames(result.q[k])
        for b, outline in enumerate(bodies.outlines):
            if outline is None:
                continue
            pts = phi[b] + outline @ D[b].T
            pts_all.append(pts)
            ax.plot(pts[:, 0], pts[:, 1], pts[:, 2], color=c, lw=1.2)
        ax.plot([], [], color=c, label=f"t = {result.t[k]:.3g} s")
    allp = np.vstack(pts_all)
    centre, half = 0.5 * (allp.max(axis=0) + allp.min(axis=0)), 0.5 * np.max(np.ptp(allp, axis=0))   # all inside
    for setter, c0 in zip((ax.set_xlim, ax.set_ylim, ax.set_zlim), centre):
        setter(c0 - half, c0 + half)
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_zlabel("z")
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title(f"{result.summary.get('model', '')}: snapshots")
    return _save(fig, path)


def _frame_snapshots(result, model, path, times, count) -> Path:
    """Snapshots of a spatial model without outlines: each body's director frame, the links to its joints, the
    joint axes and the ground pivots, the mechanism coloured by time."""
    from ..report.scenes import scene_for

    plt = _pyplot()
    idx = (np.linspace(0, len(result.t) - 1, count).astype(int) if times is None
           else [int(np.argmin(np.abs(result.t - t))) for t in times])
    scene = scene_for(model, result.q[idx])
    fig = plt.figure(figsize=(8, 7))
    ax = fig.add_subplot(projection="3d")
    for c, k in zip(plt.cm.viridis(np.linspace(0, 1, len(idx))), idx):
        scene.draw(ax, result.q[k], c)
        ax.plot([], [], color=c, label=f"t = {result.t[k]:.3g} s")
    scene.finish(ax, f"{result.summary.get('model', '')}: snapshots (director frames d1, d2, d3)")
    return _save(fig, path)


def top_centre_of_mass(result: Result, path: Path) -> Path:
    from ..models.spatial_models import top_exact

    plt = _pyplot()
    _, phi = top_exact(result.t)
    fig, ax = plt.subplots(figsize=(8, 4))
    for i, lab in ((0, "x"), (2, "z")):
        ax.plot(result.t, phi[:, i], "k-", lw=2.5, alpha=0.35, label=f"{lab}_a (analytic)")
        ax.plot(result.t, result.q[:, i], lw=1, label=f"{lab} (dt = {result.summary.get('step')})")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("centre of mass [m]")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("gyro top: steady precession, numerical vs analytic (paper 004 Figs 8, 9)")
    return _save(fig, path)


def spatial_reactions(result: Result, model, path: Path) -> Path | None:
    """Issue 23's reactions figure (module docstring); None without a ``reactions`` series."""
    if "reactions" not in result.series:
        return None
    plt = _pyplot()
    labels = result.series["reactions"].labels
    drivers = [lab for g in model.constraints if g.motions for lab in g.labels]
    fig, axes = plt.subplots(3 if drivers else 2, 1, figsize=(8, 9 if drivers else 6), sharex=True)
    for ax, kind, unit in ((axes[0], "F", "N"), (axes[1], "M", "N m")):
        for lab in labels:
            head, _, comp = lab.rpartition(".")
            if comp != f"{kind}x" or ".on_ground" in head:
                continue
            cols = [result.column("reactions", f"{head}.{kind}{c}") for c in "xyz"]
            ax.plot(result.t, np.sqrt(sum(c ** 2 for c in cols)), label=head.replace(".on_", " on "))
        ax.set_ylabel(f"|{kind}| [{unit}]")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
    if drivers:
        for lab in drivers:
            axes[2].plot(result.t, -result.column("multipliers", lab), label=lab)
        axes[2].set_ylabel("driver effort -lam [N m or N]")
        axes[2].grid(alpha=0.3)
        axes[2].legend(fontsize=7)
    axes[-1].set_xlabel("t [s]")
    fig.suptitle(f"{result.summary.get('model', '')}: joint reactions on the moving bodies")
    return _save(fig, path)


def lagrange_figures(result: Result, model, directory) -> list[Path]:
    """Spatial figures of a run without the energy-momentum stepper: 3-D snapshots and reactions."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    name = result.summary.get("model", "run")
    paths = [snapshots3d(result, model, d / f"{name}-snapshots3d.png", snapshot_times(result)),
             spatial_reactions(result, model, d / f"{name}-spatial-reactions.png")]
    return [p for p in paths if p is not None]


def spatial_figures(result: Result, model, directory) -> list[Path]:
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    name = result.summary.get("model", "run")
    paths = [conservation(result, d / f"{name}-em-conservation.png"), joints(result, d / f"{name}-joints.png"),
             snapshots3d(result, model, d / f"{name}-snapshots3d.png", snapshot_times(result))]
    if name == "gyro-top":
        paths.append(top_centre_of_mass(result, d / f"{name}-com.png"))
    return [p for p in paths if p is not None]
