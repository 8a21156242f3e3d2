"""Coordinate partitioning (paper 001) against the multipliers formulation: cost, agreement, switches.

    python benchmarks/partitioning.py [DIR]

For the four-bar in relative coordinates (3 s, three crank turns) and the double four-bar (10 s,
through its singular configurations; exact solution from the 1-DOF reduction) at two tolerances:
steps, rhs evaluations, wall time, max |Phi|, final-state difference to ``lagrange`` and the number of
switches. With DIR, writes a figure of cos^2 alpha of the independent coordinate along the run.
"""
import sys
import time
from pathlib import Path

import numpy as np

from multibody.models import MODELS
from multibody.models.four_bars import crank_angle_exact
from multibody.simulation import RunOptions, simulate


def run(name, t_end, rtol):
    model = MODELS[name].factory()
    opts = RunOptions(rtol=rtol, atol=rtol * 1e-2)
    out = {}
    for form in ("partitioning", "lagrange"):
        wall = time.perf_counter()
        out[form] = simulate(model, t_end=t_end, formulation=form, options=opts)
        out[form].summary["wall"] = time.perf_counter() - wall
    return out


def report(name, t_end, rtol):
    res = run(name, t_end, rtol)
    p, lag = res["partitioning"], res["lagrange"]
    diff = np.max(np.abs(np.subtract(p.summary["final_q"], lag.summary["final_q"])))
    line = (f"{name:18s} rtol {rtol:.0e}: partitioning {p.summary['steps']:5d} steps {p.summary['rhs_evaluations']:6d}"
            f" rhs {p.summary['wall']:6.2f} s | lagrange {lag.summary['steps']:5d} steps "
            f"{lag.summary['rhs_evaluations']:6d} rhs {lag.summary['wall']:6.2f} s | max|Phi| "
            f"{p.summary['constraint_violation_max']:.1e} | final q diff {diff:.1e} | "
            f"switches {len(p.summary['coordinate_switches'])}")
    if name == "double-four-bar":
        err = np.max(np.abs(p.column("q", "bar1.theta") - crank_angle_exact(p.t)))
        line += f" | crank error vs exact {err:.1e} rad"
    print(line)
    return p


def figure(result, directory):
    from multibody.plot.common import _pyplot, _save

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 4))
    names = result.series["cos2_alpha"].labels
    for i, nm in enumerate(names):
        ax.plot(result.t, result["cos2_alpha"][:, i], lw=1.5, label=f"cos² α {nm}")
    current = (result["cos2_alpha"] * result["independent"]).sum(axis=1)
    ax.plot(result.t, current, "k:", lw=2, label="independent coordinate")
    for s in result.summary["coordinate_switches"]:
        ax.axvline(s["t"], color="grey", lw=0.8)
    ax.set_xlabel("t [s]")
    ax.set_ylabel("cos² α_i")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(f"{result.summary['model']}: partitioning run, switches (grey) with hysteresis "
                 f"{result.summary['switching_ratio']}")
    return _save(fig, Path(directory) / f"{result.summary['model']}-partitioning-switches.png")


if __name__ == "__main__":
    for rtol in (1e-6, 1e-10):
        fb = report("four-bar-relative", 3.0, rtol)
        report("double-four-bar", 10.0, rtol)
    if len(sys.argv) > 1:
        Path(sys.argv[1]).mkdir(parents=True, exist_ok=True)
        print(figure(fb, sys.argv[1]))
