"""Double four-bar through its singular configurations (issue 12): formulation x integrator x rtol x atol,
10 s each, printing the crank spread (0 on the parallel branch), the crank-tip error against the exact
reduction theta'' = -k cos theta (models.four_bars.crank_angle_exact), the smallest step, the largest
projection move (error scales) and the wall time; a run that stops with SimulationError prints its message.
Run it under two BLAS kernels, e.g. OPENBLAS_CORETYPE=Haswell and OPENBLAS_CORETYPE=Prescott:

    PYTHONPATH=src OPENBLAS_NUM_THREADS=1 python benchmarks/singular_matrix.py [--formulations lagrange,projection]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from multibody import RunOptions, simulate
from multibody.errors import SimulationError
from multibody.models.four_bars import crank_angle_exact, double_four_bar

CRANKS = ("bar1.theta", "bar3.theta", "bar5.theta")


def one(formulation, integrator, rtol, atol, omega0=-1.0) -> str:
    try:
        r = simulate(double_four_bar(omega0=omega0), t_end=10.0, formulation=formulation,
                     options=RunOptions(integrator=integrator, rtol=rtol, atol=atol))
    except SimulationError as exc:
        return "STOPPED " + str(exc)[:160]
    th = np.stack([r.column("q", c) for c in CRANKS], axis=1)
    exact = crank_angle_exact(r.t, omega0=omega0)
    tip = np.hypot(np.cos(th[:, 0]) - np.cos(exact), np.sin(th[:, 0]) - np.sin(exact)).max()
    s = r.summary
    return (f"spread {np.abs(th - th[:, :1]).max():.1e} rad  tip {tip:.1e} m  min step {s['min_step']:.1e} s  "
            f"jump {s.get('max_projection_jump', 0.0):.1e}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--formulations", default="lagrange,projection,nullspace")
    p.add_argument("--integrators", default="dopri5,dop853")
    p.add_argument("--rtols", default="1e-4,1e-6,1e-8,1e-10,1e-11,1e-12")
    a = p.parse_args()
    for f in a.formulations.split(","):
        for i in a.integrators.split(","):
            for rtol in map(float, a.rtols.split(",")):
                for atol in (rtol, rtol / 100):
                    t0 = time.perf_counter()
                    out = one(f, i, rtol, atol)
                    print(f"{f:10s} {i:7s} rtol {rtol:.0e} atol {atol:.0e}  {out}  ({time.perf_counter() - t0:.1f} s)",
                          flush=True)


if __name__ == "__main__":
    main()
