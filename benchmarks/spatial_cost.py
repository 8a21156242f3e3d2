"""Benchmark (issue 16 item 2): cost per step of the spatial models.

Energy-momentum steps (paper 004, schemes ``constrained`` and ``reduced``, h = 1e-3) on the six-body linkage and
the gyro top, and lagrange + dopri5 (rtol 1e-10) on the six-body linkage (every accepted state recorded, the
default, and one state per 10 ms, which leaves out the per-state output: accelerations, multipliers, reaction
uniqueness): median CPU time per step (and per rhs evaluation) over ``--repeat`` runs, in one process with one
BLAS thread (the machine is shared: CPU times), after one untimed run.

    python benchmarks/spatial_cost.py [--steps 200] [--repeat 3] [--csv benchmarks/results/spatial.csv]
                                      [--cases energy-momentum lagrange]

``--cases``: which rows to measure (default both); the CSV keeps the other cases' rows as they were.
"""
from __future__ import annotations

import argparse
import csv
import os
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

from multibody.models.spatial_models import gyro_top, six_body_linkage  # noqa: E402
from multibody.simulation import RunOptions, simulate  # noqa: E402
from results_csv import write_rows  # noqa: E402

GOALS = {("six-body-linkage", "constrained"): 1.0, ("six-body-linkage", "reduced"): 1.0,
         ("gyro-top", "constrained"): 0.1, ("gyro-top", "reduced"): 0.1, ("six-body-linkage", "lagrange"): 0.5}


def cpu_of(run, repeat):
    """(median CPU seconds, last result) of ``run()``, after one untimed run (loads the compiled kernels, or
    compiles them once on a cold numba cache: not a per-step cost)."""
    run()
    out, res = [], None
    for _ in range(repeat):
        c0 = time.process_time()
        res = run()
        out.append(time.process_time() - c0)
    return float(np.median(out)), res


def row(model, setting, runs, cpu, s, goal) -> dict:
    return {"model": model, "setting": setting, "runs": runs, "cpu_median_s": cpu, "steps": s["steps"],
            "cpu_per_step_ms": 1e3 * cpu / s["steps"], "goal_ms": goal, "rhs_evaluations": s.get("rhs_evaluations", ""),
            "backend": s.get("backend", "")}


def kept_rows(path: str, cases) -> list[dict]:
    """The rows of the cases not measured in this run, from the CSV as it is (its energy-momentum rows come
    first, then the lagrange rows, as this script writes them)."""
    if len(cases) == 2 or not os.path.exists(path):
        return []
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    return [r for r in rows if r["setting"].startswith("lagrange") == ("lagrange" not in cases)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--csv", default=os.path.join(os.path.dirname(__file__), "results", "spatial.csv"))
    ap.add_argument("--cases", nargs="+", choices=("energy-momentum", "lagrange"),
                    default=["energy-momentum", "lagrange"])
    a = ap.parse_args()
    h, rows = 1e-3, kept_rows(a.csv, a.cases)
    for name, factory in (("six-body-linkage", six_body_linkage), ("gyro-top", gyro_top)):
        if "energy-momentum" not in a.cases:
            break
        model = factory()
        for scheme in ("constrained", "reduced"):
            opts = RunOptions(integrator="energy-momentum", step=h, diagnostics=False, output_interval=10 * h)
            cpu, r = cpu_of(lambda: simulate(model, t_end=a.steps * h, formulation=scheme, options=opts), a.repeat)
            steps = r.summary["steps"]
            rows.append(row(name, f"energy-momentum {scheme} h {h:g}", a.repeat, cpu, r.summary, GOALS[name, scheme]))
            write_rows(a.csv, rows)
            print(f"{name:17s} energy-momentum {scheme:11s} h {h:g}: {1e3 * cpu / steps:7.3f} ms/step "
                  f"(goal {GOALS[name, scheme]} ms), Newton mean {r.summary['newton_iterations_mean']:.2f}", flush=True)
    model = six_body_linkage()
    for interval in (0.0, 10 * h) if "lagrange" in a.cases else ():   # every accepted state (default), one per 10 ms
        opts = RunOptions(rtol=1e-10, atol=1e-12, output_interval=interval)
        cpu, r = cpu_of(lambda: simulate(model, t_end=a.steps * h, options=opts), a.repeat)
        s, setting = r.summary, "lagrange dopri5 rtol 1e-10" + (f" output {interval:g} s" if interval else "")
        rows.append(row("six-body-linkage", setting, a.repeat, cpu, s, GOALS["six-body-linkage", "lagrange"]))
        write_rows(a.csv, rows)
        print(f"six-body-linkage  {setting}: {1e3 * cpu / s['steps']:7.3f} ms/step (goal 0.5 ms), "
              f"{1e3 * cpu / s['rhs_evaluations']:.3f} ms per rhs evaluation (whole run), backend {s['backend']}",
              flush=True)


if __name__ == "__main__":
    main()
