"""Benchmark: null-space formulation (paper 000) against the multipliers one, and the cost of continuation.

For each model and tolerance: wall and CPU (process) time of ``simulate`` (medians of ``--repeat`` runs; the
machine is shared: compare the CPU column), accepted steps, rhs evaluations, CPU time per rhs evaluation (the
whole run's, per step work included) and the CPU ratio to lagrange, for lagrange and nullspace with each of
``--bases`` (default continuation and flow; recompute on request); plus the error of the crank angle against the
exact 1-DOF solution where one exists (models/modified_four_bars.crank_angle_exact_cells).

    python benchmarks/nullspace_timing.py [--models double-four-bar] [--rtols 1e-6,1e-10] [--repeat 3]
        [--bases continuation,flow,recompute] [--csv benchmarks/results/nullspace.csv]
"""
from __future__ import annotations

import argparse
import os
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

from multibody.models import MODELS  # noqa: E402
from multibody.models.modified_four_bars import crank_angle_exact_cells  # noqa: E402
from multibody.simulation import RunOptions, simulate  # noqa: E402
from results_csv import write_rows  # noqa: E402

CELLS = {"double-four-bar": 2, "double-four-bar-modified": 2, "triple-four-bar-modified": 3}
BASES = ("continuation", "flow", "recompute")


def run(name, rtol, repeat, bases=BASES[:2]) -> list[dict]:
    model, t_end = MODELS[name].factory(), MODELS[name].t_end
    opts = RunOptions(rtol=rtol, atol=rtol * 1e-2)
    base, rows = None, []
    for form, fo in [("lagrange", {})] + [("nullspace", {"basis": b}) for b in bases]:
        walls, cpus, res = [], [], None
        for _ in range(repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            res = simulate(model, t_end=t_end, formulation=form, options=opts, formulation_options=fo)
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        best, cpu = float(np.median(walls)), float(np.median(cpus))
        base = base or cpu
        s = res.summary
        err = ""
        if name in CELLS:
            i = model.coordinate_index("bar1.theta")
            exact = crank_angle_exact_cells(res.t[-1:], cells=CELLS[name])[0]
            err = f"  |theta1 - exact| {abs(res.q[-1, i] - exact):.2e}"
        label = form + (f"/{fo['basis']}" if fo else "")
        rows.append({"model": name, "rtol": rtol, "formulation": label, "runs": repeat, "wall_median_s": best,
                     "cpu_median_s": cpu, "steps": s["steps"], "rhs_evaluations": s["rhs_evaluations"],
                     "cpu_per_rhs_ms": 1e3 * cpu / s["rhs_evaluations"], "cpu_vs_lagrange": cpu / base,
                     "backend": s["backend"], "theta1_error": err.split()[-1] if err else ""})
        print(f"{name:26s} rtol {rtol:.0e} {label:24s} wall {best:6.2f} s cpu {cpu:6.2f} s  steps {s['steps']:5d}  "
              f"rhs {s['rhs_evaluations']:6d}  {1e3 * cpu / s['rhs_evaluations']:.3f} ms cpu/rhs  {cpu / base:4.2f}x lagrange"
              f"{err}")
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="double-four-bar")
    ap.add_argument("--rtols", default="1e-6,1e-10")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--bases", default="continuation,flow", help=f"nullspace bases, of {', '.join(BASES)}")
    ap.add_argument("--csv", default=os.path.join(os.path.dirname(__file__), "results", "nullspace.csv"))
    a = ap.parse_args()
    rows = []
    for name in a.models.split(","):
        for rtol in map(float, a.rtols.split(",")):
            rows += run(name, rtol, a.repeat, a.bases.split(","))
            write_rows(a.csv, rows)


if __name__ == "__main__":
    main()
