"""Benchmark: the IFToMM double four-bar (paper 000 Sect. 3.2), 10 s.

Prints, per formulation and tolerance: wall time, steps, right-hand-side evaluations, the largest
crank-tip error against the exact reduction theta'' = -k cos(theta) (models.four_bars) and the
largest angle between the cranks; then the cost of one right-hand-side evaluation.

    python benchmarks/double_four_bar.py [--formulation lagrange] [--repeat 3]
"""
from __future__ import annotations

import argparse
import timeit

import numpy as np

from multibody import RunOptions, simulate
from multibody.models import MODELS
from multibody.models.four_bars import crank_angle_exact
from multibody.formulations.registry import make_formulation

CASES = [("default", RunOptions()), ("tight", RunOptions(rtol=1e-10, atol=1e-12)),
         ("dop853 1e-10", RunOptions(integrator="dop853", rtol=1e-10, atol=1e-12))]


def tip_error(result) -> tuple[float, float]:
    th = np.stack([result.column("q", f"bar{k}.theta") for k in (1, 3, 5)], axis=1)
    exact = crank_angle_exact(result.t)
    err = np.hypot(np.cos(th[:, 0]) - np.cos(exact), np.sin(th[:, 0]) - np.sin(exact)).max()
    return float(err), float(np.abs(th - th[:, :1]).max())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--formulation", default="lagrange")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    model = MODELS["double-four-bar"].factory()
    print(f"double four-bar, 10 s, formulation {args.formulation}")
    print(f"{'case':>14} {'wall [s]':>9} {'steps':>6} {'rhs':>6} {'tip error [m]':>14} {'crank spread':>13}")
    for name, opts in CASES:
        walls = []
        for _ in range(args.repeat):
            r = simulate(model, t_end=10.0, formulation=args.formulation, options=opts)
            walls.append(r.summary["wall_time_s"])
        err, spread = tip_error(r)
        print(f"{name:>14} {min(walls):9.3f} {r.summary['steps']:6d} {r.summary['rhs_evaluations']:6d} "
              f"{err:14.2e} {spread:13.1e}")
    form = make_formulation(args.formulation, model)
    y = form.initial_state(0.0, model.q0, model.v0)
    n = 2000
    per_call = min(timeit.repeat(lambda: form.rhs(0.3, y), number=n, repeat=5)) / n
    print(f"one right-hand-side evaluation: {per_call * 1e6:.1f} us")


if __name__ == "__main__":
    main()
