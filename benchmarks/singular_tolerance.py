"""Benchmark (issue 7 item 2): the double four-bar (10 s, ~10 crossings of the all-horizontal singular
configuration) at tight tolerances, Lagrange formulation, compiled and NumPy reference paths.

Prints per integrator, path and rtol (atol = rtol / 100): steps, rejected steps, right-hand-side
evaluations, the largest crank-tip error against the exact reduction theta'' = -k cos theta
(models.four_bars.crank_angle_exact), the largest angle between the three cranks (0 on the parallel
branch: a value of order one means the run switched branches) and the wall time. Each case runs in its
own process with a wall-time cap, because below the round-off floor (docs/guide/performance.md, "Known limit") the step
size collapses and the run fails only after ~1e4 rejected steps.

    python benchmarks/singular_tolerance.py [--cap 120] [--integrators dop853 dopri5] [--rtols 1e-10 1e-11]
"""
from __future__ import annotations

import argparse
import subprocess
import sys

CASE = r"""
import sys, numpy as np
from multibody import RunOptions, simulate
from multibody.models import MODELS
from multibody.models.four_bars import crank_angle_exact
integ, path, rtol = sys.argv[1], sys.argv[2], float(sys.argv[3])
try:
    r = simulate(MODELS["double-four-bar"].factory(), t_end=10.0,
                 options=RunOptions(integrator=integ, rtol=rtol, atol=rtol / 100),
                 formulation_options={"fast": path == "compiled"})
except Exception as exc:
    print("failed: " + str(exc).split(". ")[0][:110]); raise SystemExit
th = np.stack([r.column("q", f"bar{k}.theta") for k in (1, 3, 5)], axis=1)
exact = crank_angle_exact(r.t)
tip = np.hypot(np.cos(th[:, 0]) - np.cos(exact), np.sin(th[:, 0]) - np.sin(exact)).max()
s = r.summary
spread = np.abs(th - th[:, :1]).max()
print(f"{s['steps']:6d} {s['rejected_steps']:6d} {s['rhs_evaluations']:7d} {tip:10.2e} {spread:9.1e} {s['wall_time_s']:8.2f}")
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cap", type=float, default=120.0, help="wall-time cap per case [s]")
    ap.add_argument("--integrators", nargs="+", default=["dop853", "dopri5"])
    ap.add_argument("--paths", nargs="+", default=["compiled", "reference"])
    ap.add_argument("--rtols", nargs="+", type=float, default=[1e-10, 1e-11, 1e-12, 1e-13])
    args = ap.parse_args()
    print(f"{'integrator':>10} {'path':>9} {'rtol':>6} {'steps':>6} {'rej':>6} {'rhs':>7} {'tip [m]':>10} "
          f"{'spread':>9} {'wall [s]':>8}")
    for integ in args.integrators:
        for path in args.paths:
            for rtol in args.rtols:
                try:
                    out = subprocess.run([sys.executable, "-c", CASE, integ, path, repr(rtol)], capture_output=True,
                                         text=True, timeout=args.cap).stdout.strip()
                except subprocess.TimeoutExpired:
                    out = f"not finished after {args.cap:g} s (step-size collapse)"
                print(f"{integ:>10} {path:>9} {rtol:6.0e} {out}", flush=True)


if __name__ == "__main__":
    main()
