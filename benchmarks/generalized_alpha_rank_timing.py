"""Benchmark: CPU per step of generalized-alpha's rank-revealing Newton loop, compiled
(integrate/generalized_alpha_rank_kernels.py) against its NumPy reference (integrate/generalized_alpha_rank.py).

For each model and step h: the stepper alone (GeneralizedAlpha.step over ``--t-end``, the same run twice, once with
the compiled rank-revealing loop and once with the NumPy reference; the regular steps take the compiled band loop in
both) and the whole ``simulate`` run (recorder, crossing monitor and step watch included), CPU (process) time per
step, medians of ``--repeat`` runs; plus the rank-revealing and pinned steps and the largest difference of the final
states of the two stepper runs. Each configuration first runs a few steps untimed (loading the compiled kernels).
Steps may be written t*/k: k steps end on the first crossing of the model (its exact reduction); a model written
model:step1;step2 runs those steps instead of ``--steps``.

    python benchmarks/generalized_alpha_rank_timing.py [--models double-four-bar-modified,double-four-bar:t*/714]
        [--steps 1e-3,t*/714] [--t-end 1.0] [--repeat 3] [--csv benchmarks/results/generalized_alpha_rank_timing.csv]
"""
from __future__ import annotations

import argparse
import os
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from scipy.optimize import brentq  # noqa: E402

from multibody.formulations.registry import make_formulation  # noqa: E402
from multibody.integrate.generalized_alpha import GeneralizedAlpha  # noqa: E402
from multibody.kinematics import consistent_state  # noqa: E402
from multibody.models.modified_four_bars import crank_angle_exact_cells  # noqa: E402
from multibody.simulation import RunOptions, simulate  # noqa: E402
from results_csv import write_rows  # noqa: E402
from singular_matrix import MODELS  # noqa: E402


def step_of(text: str, cells) -> float:
    """A step: a number, or t*/k (the first zero of sin theta of the exact reduction, over k)."""
    if not text.startswith("t*/"):
        return float(text)
    t_star = brentq(lambda t: np.sin(crank_angle_exact_cells(t, cells=cells)[0]), 0.5, 0.9, xtol=1e-14)
    return t_star / float(text[3:])


def stepper_run(name: str, h: float, t_end: float, compiled: bool):
    """(CPU s per step, stepper) of GeneralizedAlpha alone to t_end, the rank-revealing loop compiled or not."""
    model = MODELS[name][0]()
    form = make_formulation("lagrange", model)
    q, v = consistent_state(model, 0.0, ws=form.ws)
    ga = GeneralizedAlpha(form, 0.0, np.r_[q, v], t_end, step=h)
    if ga.guard is not None and not compiled:
        ga.guard.kernel = None
    c0 = time.process_time()
    while ga.t < ga.t_bound - 1e-12:
        ga.step()
    return (time.process_time() - c0) / max(ga.n_accepted, 1), ga


def whole_run(name: str, h: float, t_end: float) -> float:
    """CPU s per step of simulate() (the rank-revealing loop compiled where it can be)."""
    c0 = time.process_time()
    r = simulate(MODELS[name][0](), t_end=t_end, options=RunOptions(integrator="generalized-alpha", step=h))
    return (time.process_time() - c0) / max(int(r.summary["steps"]), 1)


def measure(name: str, text: str, t_end: float, repeat: int) -> dict:
    """One row: medians over ``repeat`` rounds."""
    h = step_of(text, MODELS[name][1])
    stepper_run(name, h, 5 * h, True)                    # load the kernels
    whole_run(name, h, 5 * h)
    times = {"compiled": [], "numpy": [], "simulate": []}
    for _ in range(repeat):
        for compiled in (True, False):
            cpu, ga = stepper_run(name, h, t_end, compiled)
            times["compiled" if compiled else "numpy"].append(cpu)
            finals = (finals[0], ga.y) if not compiled else (ga.y, None)
        times["simulate"].append(whole_run(name, h, t_end))
    g = ga.guard.summary() if ga.guard is not None else {}
    return {"model": name, "step": text, "h": f"{h:.10g}", "t_end": t_end, "steps": ga.n_accepted,
            "rank_revealing_steps": g.get("rank_revealing_steps", 0), "pinned_steps": g.get("pinned_steps", 0),
            "stepper_compiled_ms": f"{1e3 * np.median(times['compiled']):.3f}",
            "stepper_numpy_ms": f"{1e3 * np.median(times['numpy']):.3f}",
            "simulate_ms": f"{1e3 * np.median(times['simulate']):.3f}",
            "final_state_difference": f"{np.abs(finals[0] - finals[1]).max():.1e}"}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", default="double-four-bar-modified,triple-four-bar-modified,four-bar-2x2-modified,"
                                       "double-four-bar,n-four-bar-10")
    p.add_argument("--steps", default="1e-3")
    p.add_argument("--t-end", type=float, default=1.0)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--csv", default="")
    a = p.parse_args()
    rows = []
    for item in a.models.split(","):
        name, _, own = item.partition(":")          # model:step runs that step only
        for text in (own.split(";") if own else a.steps.split(",")):
            rows.append(measure(name, text, a.t_end, a.repeat))
            print("  ".join(f"{k} {v}" for k, v in rows[-1].items()), flush=True)
    if a.csv:
        write_rows(a.csv, rows)


if __name__ == "__main__":
    main()
