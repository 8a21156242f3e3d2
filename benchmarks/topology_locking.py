"""Paper 002 benchmarks: the 3R pendulum of Sect. 6 (RK4, h = 1e-4 s, 2 s, joint 2 locked at 0.8 s,
joint 3 at 1.3 s) with every transition condition, and the robot emergency stop (if the extra
'robots' is installed). Prints wall times and the event logs, writes the Figs 2-4 style figures.

    python benchmarks/topology_locking.py [OUT_DIR] [--step 1e-4]
"""
from __future__ import annotations

import argparse
import time

from multibody.models import MODELS
from multibody.models.locking import ROBOT_GEAR_RATIO, have_robot_extra
from multibody.plot.topology import event_table, topology_figures
from multibody.simulation import RunOptions, simulate


def run(name, options, t_end=None, formulations=("lagrange",)):
    entry = MODELS[name]
    model = entry.factory()
    results = {}
    for formulation in formulations:
        for how in ("lagrangian", "projected", "minimal", "naive"):
            wall = time.perf_counter()
            res = simulate(model, t_end=t_end or entry.t_end, options=options, events=entry.events,
                           transition=how, formulation=formulation)
            wall = time.perf_counter() - wall
            results[formulation, how] = res
            print(f"{name} formulation={formulation} transition={how}: {res.summary['steps']} steps, "
                  f"{wall:.2f} s wall, energy drift between events {res.summary['energy_drift_rel']:.2e}")
            print("  " + event_table(res).replace("\n", "\n  "))
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", nargs="?", default="benchmarks/out")
    ap.add_argument("--step", type=float, default=1e-4)
    ap.add_argument("--formulations", default="lagrange,projection,minimal")
    args = ap.parse_args()
    opts = RunOptions(integrator="rk4", step=args.step)
    res = run("three-r-pendulum-locking", opts, formulations=tuple(args.formulations.split(",")))
    ref = res["lagrange", "lagrangian"]
    for key, r in res.items():
        if key[1] != "naive":
            print(f"{key}: max |q - q_ref| over the run = {abs(r.q - ref.q).max():.2e}")
    for p in topology_figures(ref, args.out, naive=res["lagrange", "naive"]):
        print("figure", p)
    if have_robot_extra():
        rob = run("robot-emergency-stop", RunOptions(integrator="rk4", step=args.step))
        for p in topology_figures(rob["lagrange", "lagrangian"], args.out, naive=rob["lagrange", "naive"],
                                  gear_ratio=ROBOT_GEAR_RATIO):
            print("figure", p)
    else:
        print("robot-emergency-stop skipped: pip install 'multibody[robots]'")


if __name__ == "__main__":
    main()
