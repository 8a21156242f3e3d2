"""Benchmark: planar pendulum chains of N = 10, 100, 1000 bodies, 1 s (issue 7 item 5).

The chain: N uniform bars of length 1/N and mass 1/N (a 1 m, 1 kg chain), hinged to the ground at the
origin and to each other by revolute joints, gravity 9.81 m/s^2 along -y, released from rest in a
straight line tilted ``--tilt`` rad below the horizontal. ``--kind bars``: redundant coordinates
(ModelBuilder bars + revolutes: n = 3N, m = 2N); ``--kind relative``: relative joint angles
(:func:`multibody.model.chain.serial_chain`: n = N, no constraints).

Per N it prints wall time (set-up: build + consistent initial state, and integration), steps, rhs
evaluations, cost per simulated second, and the growth ratio of that cost between consecutive N
relative to linear growth (1.0 = linear). The integration loop is the one of ``simulate`` without the
per-step recording; ``--time-limit`` stops a run early and the cost is then per simulated second reached.

    python benchmarks/chains.py [--sizes 10,100,1000] [--kind bars] [--time-limit 300]
"""
from __future__ import annotations

import argparse
import os
import time

# one BLAS thread unless told otherwise (before NumPy loads): on a shared 2-core machine multi-threaded
# OpenBLAS made a 300 x 300 solve 100x slower (busy-waiting threads); Dask workers do the same.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np

from multibody import RunOptions
from multibody.integrate.explicit import RungeKutta
from multibody.integrate.tableaux import TABLEAUX
from multibody.kinematics import consistent_state
from multibody.model.builder import ModelBuilder
from multibody.model.chain import serial_chain
from multibody.runner import make_formulation

G = 9.81


def bar_chain(n: int, tilt: float):
    """N bars (redundant coordinates x, y, theta per bar) in a straight line at angle -tilt."""
    mb = ModelBuilder(f"chain-{n}", gravity=(0.0, -G), source="benchmark chain")
    L, m, e = 1.0 / n, 1.0 / n, np.array([np.cos(tilt), -np.sin(tilt)])
    for k in range(n):
        mb.add_bar(f"b{k}", length=L, mass=m, position=tuple((k + 0.5) * L * e), angle=-tilt)
    mb.revolute("O", "ground", "b0", at=(0.0, 0.0))
    for k in range(1, n):
        mb.revolute(f"J{k}", f"b{k - 1}", f"b{k}", at=tuple(k * L * e))
    return mb.build()


def relative_chain(n: int, tilt: float):
    """The same chain in relative joint angles (first angle from the x-axis, the others zero)."""
    L = np.full(n, 1.0 / n)
    return serial_chain(f"chain-{n}-relative", lengths=L, masses=L, inertias=L * L ** 2 / 12,
                        gravity=(0.0, -G), q0=np.r_[-tilt, np.zeros(n - 1)], source="benchmark chain")


def run(model, t_end: float, options: RunOptions, time_limit: float) -> dict:
    """Integrate like :func:`multibody.simulate` (without recording) until t_end or the time limit."""
    t0 = time.perf_counter()
    form = make_formulation("lagrange", model)
    q, v = consistent_state(model, 0.0, ws=form.ws)
    y = form.initial_state(0.0, q, v)
    rk = RungeKutta(form.rhs, 0.0, y, t_end, tableau=TABLEAUX[options.integrator], rtol=options.rtol,
                    atol=options.atol, error_filter=form.error_filter)
    setup = time.perf_counter() - t0
    t1 = time.perf_counter()
    while rk.t < t_end and time.perf_counter() - t1 < time_limit:
        step = rk.step()
        y_new = form.after_step(step.t, step.y)
        if y_new is not None:
            rk.reset(step.t, y_new)
    wall = time.perf_counter() - t1
    return dict(setup=setup, wall=wall, t=rk.t, steps=rk.n_accepted, nfev=form.nfev, q=form.split(rk.y)[0],
                capped=rk.t < t_end, cost=wall / rk.t if rk.t > 0 else np.inf)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10,100,1000")
    ap.add_argument("--kind", choices=["bars", "relative"], default="bars")
    ap.add_argument("--t-end", type=float, default=1.0)
    ap.add_argument("--tilt", type=float, default=np.pi / 6, help="release angle below the horizontal [rad]")
    ap.add_argument("--rtol", type=float, default=1e-6)
    ap.add_argument("--atol", type=float, default=1e-8)
    ap.add_argument("--time-limit", type=float, default=300.0, help="wall-time cap per N [s]")
    args = ap.parse_args()
    opts = RunOptions(rtol=args.rtol, atol=args.atol)
    build = bar_chain if args.kind == "bars" else relative_chain
    print(f"pendulum chains ({args.kind}), t_end {args.t_end} s, dopri5 rtol {args.rtol:g} atol {args.atol:g}, "
          f"time limit {args.time_limit:g} s per N, BLAS threads {os.environ['OPENBLAS_NUM_THREADS']}")
    print(f"{'N':>6} {'n':>6} {'setup [s]':>10} {'wall [s]':>9} {'t reached':>10} {'steps':>6} {'rhs':>7} "
          f"{'us/rhs':>9} {'cost [s/s]':>11} {'vs linear':>10}")
    prev = None
    for n in map(int, args.sizes.split(",")):
        model = build(n, args.tilt)
        r = run(model, args.t_end, opts, args.time_limit)
        ratio = "" if prev is None else f"{(r['cost'] / prev[1]) / (n / prev[0]):10.2f}"
        print(f"{n:6d} {len(model.coordinate_names):6d} {r['setup']:10.2f} {r['wall']:9.2f} {r['t']:10.4g} "
              f"{r['steps']:6d} {r['nfev']:7d} {r['wall'] / max(r['nfev'], 1) * 1e6:9.0f} {r['cost']:11.3g} {ratio}"
              + ("  (time limit reached)" if r["capped"] else ""), flush=True)
        prev = (n, r["cost"])
    print("vs linear: (cost per simulated second of N / of the previous N) / (N / previous N); 1.0 = linear.")


if __name__ == "__main__":
    main()
