"""Benchmark: planar pendulum chains of N = 10, 100, 1000 bodies, 1 s (issue 7 items 3 and 5).

The chain: N uniform bars of length 1/N and mass 1/N (a 1 m, 1 kg chain), hinged to the ground at the
origin and to each other by revolute joints, gravity 9.81 m/s^2 along -y, released from rest in a
straight line tilted ``--tilt`` rad below the horizontal, optionally with a point mass ``--tip-mass``
pinned to the free end. ``--kind bars``: redundant coordinates (ModelBuilder bars + revolutes: n = 3N
(+2), m = 2N (+2)); ``--kind relative``: relative joint angles (:func:`multibody.model.chain.serial_chain`:
n = N, no constraints, no tip mass).

Integrators: ``dopri5`` (explicit, adaptive: its step is limited by the highest frequency of the chain,
which grows like N) or ``generalized-alpha`` (implicit, fixed ``--step``, sparse Newton: cost per step
O(N), step independent of N).

Which motion: without a tip mass the free end of a fine chain whips: the tension vanishes at a free
end, waves steepen there, and the tip speed grows with N (McMillen & Goriely, "Whip waves", Physica D
184 (2003) 192-225). Resolving that needs a step that shrinks with N whatever the integrator (the
generalized-alpha Newton iterations stop converging at h = 1e-3 for N = 100 at t ~ 0.5 s). With a tip mass
(``--tip-mass 1``) the continuum limit is smooth and the cost per simulated second can grow linearly.

Per N it prints wall time (set-up: build + consistent initial state, and integration), steps, rhs
evaluations (dopri5) or Newton iterations (generalized-alpha), cost per simulated second, the growth
ratio of that cost between consecutive N relative to linear growth (1.0 = linear) and, for N up to
``--reference-max``, the error of the free-end position at t_end against dopri5 at rtol 1e-10. The
integration loop is the one of ``simulate`` without the per-step recording; ``--time-limit`` stops a
run early and the cost is then per simulated second reached.

    python benchmarks/chains.py [--sizes 10,100,1000] [--kind bars] [--integrator generalized-alpha
        --step 1e-3] [--tilt 1.047 --tip-mass 1] [--reference-max 100] [--time-limit 300]
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
from multibody.kinematics import consistent_state
from multibody.model.builder import ModelBuilder
from multibody.model.chain import serial_chain
from multibody.formulations.registry import make_formulation
from multibody.integrate.steppers import STEPPERS
from multibody.simulation.driver import advance

G = 9.81


def bar_chain(n: int, tilt: float, tip_mass: float = 0.0):
    """N bars (redundant coordinates x, y, theta per bar) in a straight line at angle -tilt; a point
    mass ``tip_mass`` [kg] pinned to the free end when > 0."""
    mb = ModelBuilder(f"chain-{n}", gravity=(0.0, -G), source="benchmark chain")
    L, m, e = 1.0 / n, 1.0 / n, np.array([np.cos(tilt), -np.sin(tilt)])
    for k in range(n):
        mb.add_bar(f"b{k}", length=L, mass=m, position=tuple((k + 0.5) * L * e), angle=-tilt)
    mb.revolute("O", "ground", "b0", at=(0.0, 0.0))
    for k in range(1, n):
        mb.revolute(f"J{k}", f"b{k - 1}", f"b{k}", at=tuple(k * L * e))
    if tip_mass > 0:
        mb.add_point_mass("tip", mass=tip_mass, position=tuple(e))
        mb.revolute(f"J{n}", f"b{n - 1}", "tip", at=tuple(e))
    return mb.build()


def relative_chain(n: int, tilt: float):
    """The same chain in relative joint angles (first angle from the x-axis, the others zero)."""
    L = np.full(n, 1.0 / n)
    return serial_chain(f"chain-{n}-relative", lengths=L, masses=L, inertias=L * L ** 2 / 12,
                        gravity=(0.0, -G), q0=np.r_[-tilt, np.zeros(n - 1)], source="benchmark chain")


def run(model, t_end: float, options: RunOptions, time_limit: float) -> dict:
    """Integrate like :func:`multibody.simulate` (without recording) until t_end or the time limit; ``wall`` and
    ``cpu`` (process time: the machine is shared) of the integration, without the set-up."""
    t0 = time.perf_counter()
    form = make_formulation("lagrange", model)
    q, v = consistent_state(model, 0.0, ws=form.ws)
    y = form.initial_state(0.0, q, v)
    rk = STEPPERS[options.integrator].make(form, 0.0, y, t_end, options)
    setup = time.perf_counter() - t0
    t1, c1 = time.perf_counter(), time.process_time()
    while rk.t < t_end and time.perf_counter() - t1 < time_limit:
        step, y_new, _ = advance(model, form, rk)
        if y_new is not None:
            rk.reset(step.t, y_new)
    wall, cpu = time.perf_counter() - t1, time.process_time() - c1
    work = getattr(rk, "iterations", form.nfev)     # Newton iterations (generalized-alpha) or rhs calls
    return dict(setup=setup, wall=wall, cpu=cpu, t=rk.t, steps=rk.n_accepted, work=work, q=form.split(rk.t, rk.y)[0],
                capped=rk.t < t_end, cost=wall / rk.t if rk.t > 0 else np.inf)


def tip(model, q) -> np.ndarray:
    """Position of the chain's free end: the last bar's end point (x + L/2 cos th, y + L/2 sin th), or
    the tip mass."""
    names = model.coordinate_names
    if "tip.x" in names:
        return q[[names.index("tip.x"), names.index("tip.y")]]
    k = len(model.bodies) - 1
    x, y, th = (q[names.index(f"b{k}.{c}")] for c in ("x", "y", "theta"))
    half = 0.5 / len(model.bodies)
    return np.array([x + half * np.cos(th), y + half * np.sin(th)])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10,100,1000")
    ap.add_argument("--kind", choices=["bars", "relative"], default="bars")
    ap.add_argument("--integrator", choices=["dopri5", "dop853", "generalized-alpha"], default="dopri5")
    ap.add_argument("--step", type=float, default=1e-3, help="generalized-alpha step [s]")
    ap.add_argument("--rho-inf", type=float, default=0.9, help="generalized-alpha spectral radius")
    ap.add_argument("--t-end", type=float, default=1.0)
    ap.add_argument("--tilt", type=float, default=np.pi / 6, help="release angle below the horizontal [rad]")
    ap.add_argument("--tip-mass", type=float, default=0.0, help="point mass at the free end [kg] (bars)")
    ap.add_argument("--rtol", type=float, default=1e-6)
    ap.add_argument("--atol", type=float, default=1e-8)
    ap.add_argument("--reference-max", type=int, default=0,
                    help="tip error against dopri5 rtol 1e-10 for N up to this (0: none)")
    ap.add_argument("--time-limit", type=float, default=300.0, help="wall-time cap per N [s]")
    args = ap.parse_args()
    implicit = args.integrator == "generalized-alpha"
    opts = RunOptions(integrator=args.integrator, rtol=args.rtol, atol=args.atol,
                      step=args.step if implicit else None, rho_inf=args.rho_inf)
    reference = RunOptions(rtol=1e-10, atol=1e-12)
    build = (lambda n: bar_chain(n, args.tilt, args.tip_mass)) if args.kind == "bars" else \
        (lambda n: relative_chain(n, args.tilt))
    how = (f"generalized-alpha h {args.step:g} rho_inf {args.rho_inf:g}" if implicit
           else f"{args.integrator} rtol {args.rtol:g} atol {args.atol:g}")
    print(f"pendulum chains ({args.kind}, tilt {args.tilt:.4g} rad, tip mass {args.tip_mass:g} kg), t_end "
          f"{args.t_end} s, {how}, time limit {args.time_limit:g} s per N, BLAS threads "
          f"{os.environ['OPENBLAS_NUM_THREADS']}")
    work = "newton" if implicit else "rhs"
    print(f"{'N':>6} {'n':>6} {'setup [s]':>10} {'wall [s]':>9} {'t reached':>10} {'steps':>6} {work:>7} "
          f"{'cost [s/s]':>11} {'vs linear':>10} {'tip error [m]':>14}")
    prev = None
    for n in map(int, args.sizes.split(",")):
        model = build(n)
        r = run(model, args.t_end, opts, args.time_limit)
        ratio = "" if prev is None else f"{(r['cost'] / prev[1]) / (n / prev[0]):.2f}"
        err = ""
        if n <= args.reference_max and args.kind == "bars" and not r["capped"]:
            ref = run(model, args.t_end, reference, np.inf)
            err = f"{np.linalg.norm(tip(model, r['q']) - tip(model, ref['q'])):.2e}"
        print(f"{n:6d} {len(model.coordinate_names):6d} {r['setup']:10.2f} {r['wall']:9.2f} {r['t']:10.4g} "
              f"{r['steps']:6d} {r['work']:7d} {r['cost']:11.3g} {ratio:>10} {err:>14}"
              + ("  (time limit reached)" if r["capped"] else ""), flush=True)
        prev = (n, r["cost"])
    print("vs linear: (cost per simulated second of N / of the previous N) / (N / previous N); 1.0 = linear.")


if __name__ == "__main__":
    main()
