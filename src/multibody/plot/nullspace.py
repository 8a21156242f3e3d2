"""Figures of the nullspace formulation (paper 000 Figs 2, 5, 8, 14; 10-11; 15). No physics here: the
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
            C, N = np.array(e["continuing"]), np.array(e["new"])
            for k, i in enumerate(rows):
                ax.plot([e["t"]] * C.shape[1], C[i], "o", mfc="none", color=f"C{k}", ms=6)
                ax.plot([e["t"]] * N.shape[1], N[i], "x", color=f"C{k}", ms=6)
        ax.set_title(f"{basis}: max jump of qd {res.summary['qd_ind_jump_max_rel']:.2g} (relative)", fontsize=9)
        ax.set_xlabel("t [s]")
        ax.grid(alpha=0.3)
    axes[0, 0].set_ylabel(f"{body} rows of T")
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(f"{res.summary.get('model', '')}: components of T for {body}; at singular configurations "
                 "o = continuing motion, x = new motion(s)", fontsize=10)
    return _save(fig, path)


def generalized_velocities(runs: dict[str, Result], path: Path) -> Path:
    """qd_ind over time, recompute vs continuation (Fig. 15)."""
    plt = _pyplot()
    f = max(int(r.summary["dof"]) for r in runs.values())
    fig, axes = plt.subplots(f, 1, figsize=(8, 2.8 * f + 0.6), sharex=True, squeeze=False)
    for basis, res in runs.items():
        style = dict(lw=1.6) if basis == "continuation" else dict(lw=0.8, ls="--", marker=".", ms=2)
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


def nullspace_figures(result: Result, model, directory, options, body: str | None = None) -> list[Path]:
    """The three figures; runs the model once more with the other basis for the comparisons."""
    from ..simulation.driver import simulate

    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    name, basis = result.summary.get("model", "run"), result.summary.get("basis", "continuation")
    other = "recompute" if basis == "continuation" else "continuation"
    res2 = simulate(model, t_end=float(result.t[-1]), t_start=float(result.t[0]), formulation="nullspace",
                    options=options, formulation_options={"basis": other})
    runs = {"recompute": res2 if other == "recompute" else result,
            "continuation": res2 if other == "continuation" else result}
    body = body or (model.bodies[0].name if model.bodies else result.coordinate_names[0].split(".")[0])
    return [r_diagonal(result, d / f"{name}-R-diagonal.png"),
            tangent_components(runs, body, d / f"{name}-T-{body}.png"),
            generalized_velocities(runs, d / f"{name}-qd-ind.png")]
