"""Benchmark (issue 16 item 2): cost per step of the spatial models.

Energy-momentum steps (paper 004, schemes ``constrained`` and ``reduced``, h = 1e-3) on the six-body linkage and
the gyro top, and lagrange + dopri5 (rtol 1e-10) on the six-body linkage (every accepted state recorded, the
default, and one state per 10 ms, which leaves out most of the per-state output: accelerations, multipliers,
reactions and their uniqueness flags, computed for all stored states together when the run's result is assembled,
simulation.record_batch_spatial): median CPU time per step (and per rhs evaluation) over ``--repeat`` runs, in one
process with one BLAS thread (the machine is shared: CPU times), after one untimed run.

For energy-momentum two figures: ``cpu_per_step_ms`` the whole ``simulate`` run (set-up, one stored state per
10 steps, the singular-crossing monitor) divided by the steps, and ``step_only_ms`` the scheme's step alone
(``EnergyMomentumStepper.step``, the same steps from the same state, without the driver), so that the driver's
share (mostly the crossing monitor, simulation.crossings) shows. Where a run takes its steps in batches
(multibody.fast.em_batch: the gyro top, both schemes; the linkage, constrained) the whole run can cost less than the
step-by-step step. ``--cases em`` or ``lagrange`` measures those
rows only and keeps the other rows of the CSV.

    python benchmarks/spatial_cost.py [--steps 200] [--repeat 3] [--cases all|em|lagrange] [--csv ...]
"""
from __future__ import annotations

import argparse
import csv
import os
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

from multibody.integrate.energy_momentum import EnergyMomentumStepper  # noqa: E402
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


def row(model, setting, runs, cpu, s, goal, step_only="") -> dict:
    return {"model": model, "setting": setting, "runs": runs, "cpu_median_s": cpu, "steps": s["steps"],
            "cpu_per_step_ms": 1e3 * cpu / s["steps"], "goal_ms": goal, "rhs_evaluations": s.get("rhs_evaluations", ""),
            "backend": s.get("backend", ""), "step_only_ms": step_only}


def step_only(model, scheme, h, steps, repeat):
    """Median CPU ms per EnergyMomentumStepper.step over ``steps`` steps from the initial state (no driver), as
    the run takes them (no condition numbers: diagnostics off)."""
    def run():
        em = EnergyMomentumStepper(model, scheme=scheme, dt=h, condition=False)
        q, v = model.q0, model.v0
        c0 = time.process_time()
        for k in range(steps):
            q, v = em.step(q, v, k * h)
        return time.process_time() - c0
    run()
    return 1e3 * float(np.median([run() for _ in range(repeat)])) / steps


def kept_rows(path, measured) -> list:
    """The rows of the CSV at ``path`` whose kind (energy-momentum or lagrange) is not being measured."""
    if not os.path.exists(path):
        return []
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    return [dict(r, step_only_ms=r.get("step_only_ms", "")) for r in rows
            if ("energy-momentum" in r["setting"]) != (measured == "em")]


def energy_momentum_rows(a, h) -> list:
    rows = []
    for name, factory in (("six-body-linkage", six_body_linkage), ("gyro-top", gyro_top)):
        model = factory()
        for scheme in ("constrained", "reduced"):
            opts = RunOptions(integrator="energy-momentum", step=h, diagnostics=False, output_interval=10 * h)
            cpu, r = cpu_of(lambda: simulate(model, t_end=a.steps * h, formulation=scheme, options=opts), a.repeat)
            steps, alone = r.summary["steps"], step_only(model, scheme, h, a.steps, a.repeat)
            rows.append(row(name, f"energy-momentum {scheme} h {h:g}", a.repeat, cpu, r.summary, GOALS[name, scheme],
                            alone))
            print(f"{name:17s} energy-momentum {scheme:11s} h {h:g}: {1e3 * cpu / steps:7.3f} ms/step whole run, "
                  f"{alone:7.3f} ms/step the step alone (goal {GOALS[name, scheme]} ms), Newton mean "
                  f"{r.summary['newton_iterations_mean']:.2f}, backend {r.summary['backend']}", flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--csv", default=os.path.join(os.path.dirname(__file__), "results", "spatial.csv"))
    ap.add_argument("--cases", choices=("all", "em", "lagrange"), default="all")
    a = ap.parse_args()
    h = 1e-3
    rows = [] if a.cases == "all" else kept_rows(a.csv, a.cases)
    if a.cases != "lagrange":
        rows = energy_momentum_rows(a, h) + rows
        write_rows(a.csv, rows)
    if a.cases == "em":
        return
    model = six_body_linkage()
    for interval in (0.0, 10 * h):      # every accepted state recorded (the default), or one per 10 ms
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
