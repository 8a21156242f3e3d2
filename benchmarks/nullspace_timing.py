"""Benchmark: null-space formulation (paper 000) against the multipliers one, and the cost of continuation.

For each model and tolerance: wall and CPU (process) time of ``simulate`` (medians of ``--repeat`` runs, the
formulations alternating; the machine is shared: compare the CPU column), accepted steps, rhs evaluations, CPU time
per rhs evaluation (the whole run's, per step work included), the CPU ratios to lagrange per simulated second and
per rhs evaluation (medians of the per-round ratios) and the singular crossings found, for lagrange and nullspace
with each of ``--bases`` (default continuation and flow; recompute on request); plus the error of the crank angle
against the exact 1-DOF solution where one exists (models/modified_four_bars.crank_angle_exact_cells). Each
formulation first runs 1/20 of the motion untimed (loading its compiled kernels).

    python benchmarks/nullspace_timing.py [--models double-four-bar] [--rtols 1e-6,1e-10] [--repeat 3]
        [--bases continuation,flow,recompute] [--csv benchmarks/results/nullspace.csv] [--rhs-only]
"""
from __future__ import annotations

import argparse
import os
import time
import timeit

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
    """The rows of one model and tolerance. The runs of the formulations alternate (lagrange, nullspace/..., lagrange,
    ...; ``repeat`` rounds) so that a change of the machine's load meets all of them alike; the ratio to lagrange is
    the median of the per-round ratios."""
    model, t_end = MODELS[name].factory(), MODELS[name].t_end
    opts = RunOptions(rtol=rtol, atol=rtol * 1e-2)
    forms = [("lagrange", {})] + [("nullspace", {"basis": b}) for b in bases]
    walls, cpus, res = [[] for _ in forms], [[] for _ in forms], [None] * len(forms)
    for form, fo in forms:
        simulate(model, t_end=t_end / 20, formulation=form, options=opts, formulation_options=fo)
    for _ in range(repeat):
        for k, (form, fo) in enumerate(forms):
            t0, c0 = time.perf_counter(), time.process_time()
            res[k] = simulate(model, t_end=t_end, formulation=form, options=opts, formulation_options=fo)
            walls[k].append(time.perf_counter() - t0)
            cpus[k].append(time.process_time() - c0)
    rows = []
    for k, (form, fo) in enumerate(forms):
        best, cpu = float(np.median(walls[k])), float(np.median(cpus[k]))
        ratio = float(np.median(np.array(cpus[k]) / np.array(cpus[0])))
        s = res[k].summary
        err = ""
        if name in CELLS:
            i = model.coordinate_index("bar1.theta")
            exact = crank_angle_exact_cells(res[k].t[-1:], cells=CELLS[name])[0]
            err = f"  |theta1 - exact| {abs(res[k].q[-1, i] - exact):.2e}"
        label = form + (f"/{fo['basis']}" if fo else "")
        per_rhs = [c / s["rhs_evaluations"] for c in cpus[k]]
        rows.append({"model": name, "rtol": rtol, "formulation": label, "runs": repeat, "wall_median_s": best,
                     "cpu_median_s": cpu, "steps": s["steps"], "rhs_evaluations": s["rhs_evaluations"],
                     "cpu_per_rhs_ms": 1e3 * cpu / s["rhs_evaluations"], "cpu_vs_lagrange": ratio,
                     "cpu_per_rhs_vs_lagrange": float(np.median(np.array(per_rhs) * res[0].summary["rhs_evaluations"]
                                                               / np.array(cpus[0]))),
                     "crossings": len(s["singular_crossings"]), "backend": s["backend"],
                     "theta1_error": err.split()[-1] if err else ""})
        print(f"{name:26s} rtol {rtol:.0e} {label:24s} wall {best:6.2f} s cpu {cpu:6.2f} s  steps {s['steps']:5d}  "
              f"rhs {s['rhs_evaluations']:6d}  {1e3 * cpu / s['rhs_evaluations']:.3f} ms cpu/rhs  "
              f"{ratio:4.2f}x lagrange ({rows[-1]['cpu_per_rhs_vs_lagrange']:4.2f}x per rhs)  "
              f"crossings {len(s['singular_crossings'])}{err}", flush=True)
    return rows


def rhs_cost(name, bases=BASES[:2], number=2000, rounds=25) -> list[dict]:
    """CPU time of one rhs call at the initial state, lagrange and nullspace with each basis (compiled paths where
    the model allows): ``rounds`` rounds in which the formulations alternate, ``number`` calls each; the median per
    call and the median of the per-round ratios to lagrange (a change of the machine's load meets all alike)."""
    from multibody.formulations.registry import make_formulation
    model, calls, labels = MODELS[name].factory(), [], []
    for form, fo in [("lagrange", {})] + [("nullspace", {"basis": b}) for b in bases]:
        f = make_formulation(form, model, **fo)
        y = f.initial_state(0.0, model.q0, model.v0)
        calls.append(lambda f=f, y=y: f.rhs(0.0, y))
        labels.append(form + (f"/{fo['basis']}" if fo else ""))
    us = np.zeros((rounds, len(calls)))
    for k in range(rounds):
        for j, call in enumerate(calls):
            us[k, j] = 1e6 * timeit.timeit(call, number=number, timer=time.process_time) / number
    rows = []
    for j, label in enumerate(labels):
        per, ratio = float(np.median(us[:, j])), float(np.median(us[:, j] / us[:, 0]))
        print(f"{name:26s} one rhs call {label:24s} {per:7.2f} us  {ratio:4.2f}x lagrange")
        rows.append({"model": name, "formulation": label, "rhs_call_us": per, "vs_lagrange": ratio,
                     "rounds": rounds, "calls_per_round": number})
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="double-four-bar")
    ap.add_argument("--rtols", default="1e-6,1e-10")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--bases", default="continuation,flow", help=f"nullspace bases, of {', '.join(BASES)}")
    ap.add_argument("--csv", default=os.path.join(os.path.dirname(__file__), "results", "nullspace.csv"))
    ap.add_argument("--rhs-only", action="store_true",
                    help="only the cost of one rhs call (to results/nullspace_rhs.csv)")
    a = ap.parse_args()
    if a.rhs_only:
        rows = [r for name in a.models.split(",") for r in rhs_cost(name, a.bases.split(","))]
        write_rows(os.path.join(os.path.dirname(a.csv), "nullspace_rhs.csv"), rows)
        return
    rows = []
    for name in a.models.split(","):
        for rtol in map(float, a.rtols.split(",")):
            rows += run(name, rtol, a.repeat, a.bases.split(","))
            write_rows(a.csv, rows)


if __name__ == "__main__":
    main()
