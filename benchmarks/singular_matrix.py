"""Parallelogram chains through their singular configurations (issue 12): model x formulation x integrator x
rtol x atol, printing the crank spread (0 on the parallel branch), the crank-tip error against the exact
reduction theta'' = -k cos theta (models.modified_four_bars.crank_angle_exact_cells: the double four-bar, the
modified double and triple four-bars and the N-four-bar share it with their number of cells), the singular
crossings reported, the smallest step, the largest after-step move (error scales) and the wall time; a run that
stops with SimulationError prints its message. Run it under two BLAS kernels, e.g. OPENBLAS_CORETYPE=Haswell and
OPENBLAS_CORETYPE=Prescott:

    PYTHONPATH=src OPENBLAS_NUM_THREADS=1 python benchmarks/singular_matrix.py [--models double-four-bar,n-four-bar-10]
        [--formulations lagrange,projection] [--integrators dopri5,dop853,generalized-alpha] [--rtols 1e-4,1e-8]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from multibody import RunOptions, simulate
from multibody.errors import SimulationError
from multibody.models.four_bars import double_four_bar, n_four_bar
from multibody.models.modified_four_bars import (crank_angle_exact_cells, double_four_bar_modified,
                                                 triple_four_bar_modified)

#: name -> (factory, cells, t_end)
MODELS = {"double-four-bar": (double_four_bar, 2, 10.0),
          "double-four-bar-modified": (double_four_bar_modified, 2, 10.0),
          "triple-four-bar-modified": (triple_four_bar_modified, 3, 10.0),
          "n-four-bar-10": (lambda: n_four_bar(cells=10), 10, 20.0),
          "n-four-bar-40": (lambda: n_four_bar(cells=40), 40, 20.0)}
#: generalized-alpha's fixed step (its accuracy is O(h^2), not set by rtol)
GA_STEP = 1e-3


def one(name, formulation, integrator, rtol, atol) -> str:
    factory, cells, t_end = MODELS[name]
    model = factory()
    opts = RunOptions(integrator=integrator, rtol=rtol, atol=atol,
                      step=GA_STEP if integrator == "generalized-alpha" else None)
    try:
        r = simulate(model, t_end=t_end, formulation=formulation, options=opts)
    except SimulationError as exc:
        return "STOPPED " + str(exc)[:160]
    cranks = [c for c in r.series["q"].labels if c.endswith(".theta") and c[3:-6].isdigit()
              and int(c[3:-6]) % 2 == 1]
    th = np.stack([r.column("q", c) for c in cranks], axis=1)
    exact = crank_angle_exact_cells(r.t, cells=cells)
    tip = np.hypot(np.cos(th[:, 0]) - np.cos(exact), np.sin(th[:, 0]) - np.sin(exact)).max()
    s = r.summary
    return (f"spread {np.abs(th - th[:, :1]).max():.1e} rad  tip {tip:.1e} m  crossings "
            f"{len(s.get('singular_crossings', []))}{'' if s.get('singular_crossings_monitored', True) else ' (n/m)'}"
            f"  min step {s['min_step']:.1e} s  jump {s.get('max_projection_jump', 0.0):.1e}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", default="double-four-bar")
    p.add_argument("--formulations", default="lagrange,projection,nullspace")
    p.add_argument("--integrators", default="dopri5,dop853")
    p.add_argument("--rtols", default="1e-4,1e-6,1e-8,1e-10,1e-11,1e-12")
    a = p.parse_args()
    for name in a.models.split(","):
        for f in a.formulations.split(","):
            for i in a.integrators.split(","):
                rtols = [1e-6] if i == "generalized-alpha" else list(map(float, a.rtols.split(",")))
                for rtol in rtols:
                    for atol in ((rtol,) if i == "generalized-alpha" else (rtol, rtol / 100)):
                        t0 = time.perf_counter()
                        out = one(name, f, i, rtol, atol)
                        label = f"h {GA_STEP:.0e}" if i == "generalized-alpha" else f"rtol {rtol:.0e} atol {atol:.0e}"
                        print(f"{name:24s} {f:10s} {i:17s} {label}  {out}  ({time.perf_counter() - t0:.1f} s)",
                              flush=True)


if __name__ == "__main__":
    main()
