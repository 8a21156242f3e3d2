"""Paper 003 Sects 4.3-4.4 on the mobile robot: the paper's three elimination variants (rows of C
joint C.y + W4, W1 + W4, W2 + W4) and the minimum-norm run; figures in the style of Figs 3 and 4.

    python benchmarks/reactions_experiment.py [OUTDIR] [--t-end 8] [--step 5e-3]

Prints the verdict table (analysis vs numbers) and writes OUTDIR/mobile-robot-reactions.png (Fig. 4
style) and OUTDIR/mobile-robot-trajectories.png (Fig. 3 style: platform centre and contact points).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from multibody.experiments.reactions import run_experiment
from multibody.models.nonholonomic_models import mobile_robot
from multibody.plot.reactions import reactions_figure

VARIANTS = {"minimum-norm": (), "eliminate C.y, W4": ("C.y", "W4.normal"),
            "eliminate W1, W4": ("W1.normal", "W4.normal"), "eliminate W2, W4": ("W2.normal", "W4.normal")}
SHOW_NON_UNIQUE = ["B.on_wheel1.Fx", "B.on_wheel1.Fy", "W3.on_platform.Fy_body"]
SHOW_UNIQUE = ["D.on_wheel1.Fx", "D.on_wheel1.Fy", "W5.on_trolley.Fy_body"]
#: contact points (body, body-fixed point) drawn in the trajectory figure
CONTACTS = {"W1": ("wheel1", (0.0, 0.0)), "W2": ("wheel2", (0.0, 0.0)), "W3": ("platform", (0.0, 0.3)),
            "W4": ("platform", (0.0, -0.3)), "W5": ("trolley", (0.0, 0.0))}


def trajectories_figure(model, result, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    q = result.series["q"].data
    fig, ax = plt.subplots(figsize=(8, 5))
    ax.plot(q[:, 0], q[:, 1], "k-", lw=2, label="platform centre")
    for name, (body, local) in CONTACTS.items():
        i = model.coordinate_index(f"{body}.x")
        th = q[:, i + 2]
        x = q[:, i] + np.cos(th) * local[0] - np.sin(th) * local[1]
        y = q[:, i + 1] + np.sin(th) * local[0] + np.cos(th) * local[1]
        ax.plot(x, y, lw=1, label=name)
    ax.set_aspect("equal")
    ax.set_xlabel("x0 [m]")
    ax.set_ylabel("y0 [m]")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("mobile-robot: trajectories (paper 003 Fig. 3 style)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir", nargs="?", default="/tmp/reactions-experiment")
    ap.add_argument("--t-end", type=float, default=8.0)
    ap.add_argument("--step", type=float, default=5e-3)
    args = ap.parse_args()
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    model = mobile_robot()
    ex = run_experiment(model, VARIANTS, t_end=args.t_end, step=args.step)
    print(json.dumps({"motion_spread": ex.motion_spread, "redundancy": ex.analysis.redundancy}))
    for v in ex.verdicts():
        print(f"{v['name']:<9} analysis {'unique' if v['unique'] else 'NOT unique':<11} spread {v['spread']:.2e} "
              f"agree {v['agree']}")
    print(reactions_figure(ex, out / "mobile-robot-reactions.png", non_unique=SHOW_NON_UNIQUE, unique=SHOW_UNIQUE))
    print(trajectories_figure(model, ex.results["minimum-norm"], out / "mobile-robot-trajectories.png"))


if __name__ == "__main__":
    main()
