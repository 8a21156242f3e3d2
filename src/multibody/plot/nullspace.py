"""Figures of the nullspace formulation (paper 000 Figs 2, 5, 8, 14; 10-11; 13; 15). No physics here: the
comparison run with the other basis is made by :func:`multibody.simulation.driver.simulate` with the same options."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .common import _pyplot, _save
from ..results.result import Result


def r_diagonal(result: Result, path: Path) -> Path:
    """|R_ii| of the pivoted QR of A^T over time, the generic rank's last one bold (Figs 2, 5, 8, 14)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    R, r = result["R_diag"], int(result.summary.get("generic_rank", result["R_diag"].shape[1]))
    for i in range(min(r, R.shape[1])):
        ax.plot(result.t, R[:, i], lw=2.2 if i == r - 1 else 0.9, color="C3" if i == r - 1 else None)
    for e in result.events:
        ax.axvline(e["t"], color="k", lw=0.5, ls=":")
        ax.plot(e["t"], e["R_diag"][r - 1], "v", color="C3", ms=7)
    ax.set_xlabel("t [s]")
    ax.set_ylabel("|R_ii|")
    ax.grid(alpha=0.3)
    ax.set_title(f"{result.summary.get('model', '')}: the {r} diagonal elements of R1_ns at the steps;\n"
                 "bold: |R_rr|, triangles: its value at the located singular configurations", fontsize=9)
    return _save(fig, path)


def _body_rows(result: Result, body: str):
    names = list(result.coordinate_names)
    return [i for i, nm in enumerate(names) if nm.startswith(body + ".")], names


def tangent_components(runs: dict[str, Result], body: str, path: Path) -> Path:
    """Rows of T of one body, recompute vs continuation (Figs 10-11), with the admissible motions at the
    detected singular configurations (continuing: circles, new: crosses)."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(runs), figsize=(6.5 * len(runs), 4.5), sharey=True, squeeze=False)
    for ax, (basis, res) in zip(axes[0], runs.items()):
        rows, names = _body_rows(res, body)
        f = int(res.summary["dof"])
        T = res["T"].reshape(len(res.t), len(names), f)
        for k, i in enumerate(rows):
            for j in range(f):
                ax.plot(res.t, T[:, i, j], ".-", ms=2, lw=0.8, color=f"C{k}",
                        label=f"{names[i]} (T col {j + 1})" if f > 1 else names[i], alpha=1 - 0.4 * j)
        for e in res.events:
            # recompute (Fig. 10): the fresh QR's admissible motions as they come (first f columns o, others x);
            # a continued basis (Fig. 11): the continuing motion o and the new ones x
            C, N = ((np.array(e["admissible"])[:, :f], np.array(e["admissible"])[:, f:]) if basis == "recompute"
                    else (np.array(e["continuing"]), np.array(e["new"])))
            for k, i in enumerate(rows):
                ax.plot([e["t"]] * C.shape[1], C[i], "o", mfc="none", color=f"C{k}", ms=6)
                ax.plot([e["t"]] * N.shape[1], N[i], "x", color=f"C{k}", ms=6)
        ax.set_title(f"{basis}: max jump of qd {res.summary['qd_ind_jump_max_rel']:.2g} (relative)", fontsize=9)
        ax.set_xlabel("t [s]")
        ax.grid(alpha=0.3)
    axes[0, 0].set_ylabel(f"{body} rows of T")
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(f"{res.summary.get('model', '')}: components of T for {body}; at singular configurations "
                 "o = continuing motion, x = new motion(s)\n(recompute: o = the first dof columns, x = the others "
                 "of the fresh QR there, paper 000 Fig. 10)", fontsize=10)
    return _save(fig, path)


def generalized_velocities(runs: dict[str, Result], path: Path) -> Path:
    """qd_ind over time, recompute vs continuation (Fig. 15)."""
    plt = _pyplot()
    f = max(int(r.summary["dof"]) for r in runs.values())
    fig, axes = plt.subplots(f, 1, figsize=(8, 2.8 * f + 0.6), sharex=True, squeeze=False)
    for basis, res in runs.items():
        style = dict(lw=1.6) if basis != "recompute" else dict(lw=0.8, ls="--", marker=".", ms=2)
        for j in range(int(res.summary["dof"])):
            axes[j, 0].plot(res.t, res["qd_ind"][:, j], label=basis, **style)
    for j in range(f):
        axes[j, 0].set_ylabel(f"qd{j + 1}")
        axes[j, 0].grid(alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    axes[-1, 0].set_xlabel("t [s]")
    fig.suptitle(f"{res.summary.get('model', '')}: generalized velocities, recompute vs continuation",
                 fontsize=10)
    return _save(fig, path)


def independent_bodies(result: Result, model) -> list[str]:
    """The first bodies, in model order, whose rotations are independent admissible motions at the start (rows
    theta of the first T; for the 2x2 four-bar: bar1 and bar5, the two DOF of paper 000 Sect. 3.5)."""
    names, f = list(result.coordinate_names), int(result.summary["dof"])
    T0 = result["T"][0].reshape(len(names), f)
    chosen, rows = [], np.zeros((0, f))
    for b in model.bodies:
        key = f"{b.name}.theta"
        if key in names and len(chosen) < f:
            trial = np.vstack([rows, T0[names.index(key)]])
            if np.linalg.matrix_rank(trial, tol=1e-6) > len(rows):
                chosen, rows = chosen + [b.name], trial
    return chosen


def body_trajectories(result: Result, bodies: list[str], path: Path) -> Path:
    """x, y, theta of the named bodies over time, the singular configurations dotted (paper 000 Fig. 13)."""
    plt = _pyplot()
    fig, axes = plt.subplots(3, 1, figsize=(8, 7), sharex=True)
    for k, body in enumerate(bodies):
        for ax, part in zip(axes, ("x", "y", "theta")):
            ax.plot(result.t, result.column("q", f"{body}.{part}"), color=f"C{k}", label=body)
    for ax, part in zip(axes, ("r_x [m]", "r_y [m]", "theta [rad]")):
        for e in result.events:
            ax.axvline(e["t"], color="k", lw=0.5, ls=":")
        ax.set_ylabel(part)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    axes[-1].set_xlabel("t [s]")
    fig.suptitle(f"{result.summary.get('model', '')}: trajectories of {', '.join(bodies)} (paper 000 Fig. 13);\n"
                 "dotted: singular configurations located by the run", fontsize=10)
    return _save(fig, path)


def nullspace_figures(result: Result, model, directory, options, body: str | None = None) -> list[Path]:
    """The figures above; runs the model once more with the other basis for the comparisons."""
    from ..simulation.driver import simulate

    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    name, basis = result.summary.get("model", "run"), result.summary.get("basis", "continuation")
    other = "recompute" if basis != "recompute" else "continuation"
    res2 = simulate(model, t_end=float(result.t[-1]), t_start=float(result.t[0]), formulation="nullspace",
                    options=options, formulation_options={"basis": other})
    runs = {"recompute": res2, basis: result} if other == "recompute" else {"recompute": result, other: res2}
    body = body or (model.bodies[0].name if model.bodies else result.coordinate_names[0].split(".")[0])
    paths = [r_diagonal(result, d / f"{name}-R-diagonal.png"),
             tangent_components(runs, body, d / f"{name}-T-{body}.png"),
             generalized_velocities(runs, d / f"{name}-qd-ind.png")]
    bodies = independent_bodies(result, model) if model.bodies and int(result.summary["dof"]) else []
    return paths + ([body_trajectories(result, bodies, d / f"{name}-bodies.png")] if bodies else [])
