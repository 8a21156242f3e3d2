"""Benchmark: multibody vs Exudyn (C++ simulator, PyPI ``exudyn``) side by side in one process (issue 7).

1. The IFToMM double four-bar (paper 000 Sect. 3.2; models/four_bars.py): five 1 m, 1 kg bars, ground
   pivots at x = 0, 1, 2, cranks vertical and couplers horizontal at y = 1, the left crank's tip at
   +1 m/s in x, gravity 9.81 along -y, 10 s. Error: the largest distance between the left crank's tip
   and its exact position from theta'' = -k cos(theta) (``crank_angle_exact``), sampled every 0.01 s
   for Exudyn and at every step for multibody. Each tool runs a ladder of settings from cheap to
   accurate and stops at the first one that reaches ``--target`` (1e-6 m); the script prints both
   wall times and the ratio.
2. The planar pendulum chain of benchmarks/chains.py (N bars of 1/N m and 1/N kg, revolute joints,
   released from rest in a straight line tilted 30 deg below the horizontal), 1 s, for the sizes in
   ``--chain-sizes``: the free end's position at 1 s against a reference run (multibody, dop853,
   rtol 1e-10) and the wall time of each tool at a few settings; multibody runs with a time limit.

Exudyn: redundant coordinates (NodeRigidBody2D + ObjectRigidBody2D, RevoluteJoint2D), its default
implicit generalized-alpha solver (index 3, spectral radius 0.9; its explicit solvers do not take
revolute joints), dense linear solver with ``ignoreSingularJacobian`` (the double four-bar passes
through a singular configuration where its constraint Jacobian loses rank 2; the sparse solver stops
there), Newton tolerances relTol 1e-9 / absTol 1e-7 (tighter ones stall at that configuration).
Exudyn is a benchmark-only dependency: ``pip install exudyn``.

    python benchmarks/exudyn_compare.py [--target 1e-6] [--chain-sizes 10] [--time-limit 120]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):   # both tools single-threaded
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

from multibody import RunOptions, simulate  # noqa: E402
from multibody.errors import SimulationError  # noqa: E402
from multibody.models import MODELS  # noqa: E402
from multibody.models.four_bars import G, L, MASS, crank_angle_exact  # noqa: E402

try:
    import exudyn as exu
    from exudyn.itemInterface import (LoadMassProportional, MarkerBodyMass, MarkerBodyPosition, NodeRigidBody2D,
                                      ObjectGround, ObjectRigidBody2D, RevoluteJoint2D, SensorNode)
except ImportError:
    sys.exit("this benchmark compares with Exudyn, which is not installed: pip install exudyn "
             "(benchmark-only; multibody itself never needs it).")

sys.path.insert(0, os.path.dirname(__file__))
from chains import bar_chain, run as run_chain, tip as chain_tip  # noqa: E402

#: Exudyn steps per 10 s of the double four-bar, cheap to accurate (its error falls as h^2)
FOUR_BAR_STEPS = (40_000, 80_000, 130_000, 160_000, 200_000)
#: multibody settings, cheap to accurate
FOUR_BAR_OPTIONS = tuple(RunOptions(integrator=i, rtol=r, atol=r * 1e-2) for i, r in
                         (("dop853", 1e-7), ("dop853", 1e-8), ("dop853", 1e-9), ("dopri5", 1e-9),
                          ("dop853", 1e-10), ("dopri5", 1e-10), ("dop853", 1e-11)))
SENSOR_PERIOD = 0.01


# ----------------------------------------------------------------------------- Exudyn models
class ExudynModel:
    """An Exudyn system of planar rigid bodies (x, y, phi nodes) joined by revolute joints."""

    def __init__(self):
        self.sc = exu.SystemContainer()
        self.mbs = self.sc.AddSystem()
        self.ground = self.mbs.AddObject(ObjectGround())
        self.nodes, self.bodies = [], []

    def body(self, mass, inertia, pose, velocity):
        mbs = self.mbs
        n = mbs.AddNode(NodeRigidBody2D(referenceCoordinates=list(pose), initialVelocities=list(velocity)))
        b = mbs.AddObject(ObjectRigidBody2D(mass=mass, inertia=inertia, nodeNumber=n))
        mbs.AddLoad(LoadMassProportional(markerNumber=mbs.AddMarker(MarkerBodyMass(bodyNumber=b)),
                                         loadVector=[0.0, -G, 0.0]))
        self.nodes.append(n)
        self.bodies.append(b)
        return b

    def pin(self, a, on_a, b, on_b):
        ma = self.mbs.AddMarker(MarkerBodyPosition(bodyNumber=a, localPosition=[*on_a, 0.0]))
        mb = self.mbs.AddMarker(MarkerBodyPosition(bodyNumber=b, localPosition=[*on_b, 0.0]))
        self.mbs.AddObject(RevoluteJoint2D(markerNumbers=[ma, mb]))

    def sensor(self, node):
        return self.mbs.AddSensor(SensorNode(nodeNumber=node, storeInternal=True,
                                             outputVariableType=exu.OutputVariableType.Coordinates))

    def solve(self, t_end: float, steps: int, *, dense: bool) -> float:
        """Generalized-alpha (Exudyn's default) with a fixed step; returns the wall time of the solve."""
        ss = exu.SimulationSettings()
        ti = ss.timeIntegration
        ti.numberOfSteps, ti.endTime, ti.verboseMode = steps, t_end, 0
        ti.newton.relativeTolerance, ti.newton.absoluteTolerance = 1e-9, 1e-7
        ss.solution.file.write = False
        ss.solution.sensors.writePeriod = SENSOR_PERIOD
        ss.linearSolver.ignoreSingularJacobian = dense
        ss.linearSolver.solverType = exu.LinearSolverType.EigenDense if dense else exu.LinearSolverType.EigenSparse
        t = time.perf_counter()
        exu.SolveDynamic(self.mbs, ss)
        return time.perf_counter() - t


def exudyn_four_bar(omega0: float = -1.0):
    m = ExudynModel()
    for k in range(1, 6):
        x = (k - 1) / 2
        pose, vel = (([x, L / 2, np.pi / 2], [-omega0 * L / 2, 0.0, omega0]) if k % 2
                     else ([x, L, 0.0], [-omega0 * L, 0.0, 0.0]))
        m.body(MASS, MASS * L ** 2 / 12, pose, vel)
    b = m.bodies
    start, tip = (-L / 2, 0.0), (L / 2, 0.0)
    for k, x in ((0, 0.0), (2, 1.0), (4, 2.0)):
        m.pin(m.ground, (x, 0.0), b[k], start)
    for a, pa, c, pc in ((0, tip, 1, start), (1, tip, 2, tip), (2, tip, 3, start), (3, tip, 4, tip)):
        m.pin(b[a], pa, b[c], pc)
    sensor = m.sensor(m.nodes[0])
    m.mbs.Assemble()
    return m, sensor


def exudyn_chain(n: int, tilt: float):
    m = ExudynModel()
    ell, e = 1.0 / n, np.array([np.cos(tilt), -np.sin(tilt)])
    for k in range(n):
        m.body(ell, ell * ell ** 2 / 12, [*((k + 0.5) * ell * e), -tilt], [0.0, 0.0, 0.0])
    m.pin(m.ground, (0.0, 0.0), m.bodies[0], (-ell / 2, 0.0))
    for k in range(1, n):
        m.pin(m.bodies[k - 1], (ell / 2, 0.0), m.bodies[k], (-ell / 2, 0.0))
    sensor = m.sensor(m.nodes[-1])
    m.mbs.Assemble()
    return m, sensor


# ----------------------------------------------------------------------------- the double four-bar
def tip_error(t, theta) -> float:
    """Largest distance between the crank tip at angle theta and at the exact angle (crank length L)."""
    exact = crank_angle_exact(t)
    return float(L * np.hypot(np.cos(theta) - np.cos(exact), np.sin(theta) - np.sin(exact)).max())


def four_bar_exudyn(target: float):
    for steps in FOUR_BAR_STEPS:
        m, sensor = exudyn_four_bar()
        try:
            wall = m.solve(10.0, steps, dense=True)
        except Exception as exc:  # Exudyn's SolverError: report and try the next setting
            print(f"  exudyn    {steps:>8d} steps: failed ({type(exc).__name__})", flush=True)
            continue
        d = m.mbs.GetSensorStoredData(sensor)            # t, ux, uy, phi - phi_reference
        err = tip_error(d[:, 0], np.pi / 2 + d[:, 3])
        print(f"  exudyn    {steps:>8d} steps (h = {10.0 / steps:.1e} s): {wall:8.3f} s, tip error {err:.2e} m",
              flush=True)
        if err <= target:
            return wall, err, f"{steps} steps"
    return None


def four_bar_multibody(target: float):
    model = MODELS["double-four-bar"].factory()
    best = None
    for o in FOUR_BAR_OPTIONS:
        try:
            r = simulate(model, t_end=10.0, options=o)
        except SimulationError as exc:   # e.g. step-size collapse at the singular configuration
            print(f"  multibody {o.integrator} rtol {o.rtol:.0e}: failed ({str(exc)[:90]}...)", flush=True)
            continue
        err = tip_error(r.t, r.column("q", "bar1.theta"))
        s = r.summary
        print(f"  multibody {o.integrator} rtol {o.rtol:.0e}: {s['wall_time_s']:8.3f} s, {s['steps']} steps, "
              f"{s['rhs_evaluations']} rhs, tip error {err:.2e} m", flush=True)
        if err <= target and (best is None or s["wall_time_s"] < best[0]):
            best = (s["wall_time_s"], err, f"{o.integrator} rtol {o.rtol:.0e}")
    return best


# ----------------------------------------------------------------------------- the chain
def chain_tip_multibody(model, n, opts, time_limit):
    """(wall, free-end position at 1 s or None if capped, run data) of a multibody chain run."""
    r = run_chain(model, 1.0, opts, time_limit)
    return r["wall"], None if r["capped"] else chain_tip(model, r["q"]), r


def chain(n: int, tilt: float, time_limit: float):
    model = bar_chain(n, tilt)
    print(f"chain N = {n} ({3 * n} coordinates, {2 * n} constraints), 1 s:", flush=True)
    _, ref, r = chain_tip_multibody(model, n, RunOptions(integrator="dop853", rtol=1e-10, atol=1e-12), time_limit)
    if ref is None:
        print(f"  reference (multibody dop853 rtol 1e-10) stopped by the time limit at t = {r['t']:.3g} s")
    for o in (RunOptions(rtol=1e-6, atol=1e-8), RunOptions(integrator="dop853", rtol=1e-8, atol=1e-10),
              RunOptions(integrator="generalized-alpha", step=1e-3)):
        wall, tip, r = chain_tip_multibody(model, n, o, time_limit)
        err = "" if tip is None or ref is None else f", end error {np.linalg.norm(tip - ref):.2e} m"
        cap = f" (time limit at t = {r['t']:.3g} s)" if tip is None else ""
        how = f"h {o.step:g}" if o.step else f"rtol {o.rtol:.0e}"
        work = "Newton iterations" if o.step else "rhs"
        print(f"  multibody {o.integrator} {how}: {wall:8.3f} s, {r['steps']} steps, "
              f"{r['work']} {work}{err}{cap}", flush=True)
    for steps in (1000, 10000):
        m, sensor = exudyn_chain(n, tilt)
        try:
            wall = m.solve(1.0, steps, dense=False)
        except Exception as exc:
            print(f"  exudyn    {steps:>8d} steps: failed ({type(exc).__name__})", flush=True)
            continue
        d = m.mbs.GetSensorStoredData(sensor)[-1]       # t, ux, uy, dphi of the last bar at 1 s
        ell, k = 1.0 / n, n - 1
        th = -tilt + d[3]
        tip = (k + 0.5) * ell * np.array([np.cos(tilt), -np.sin(tilt)]) + d[1:3] + ell / 2 * np.array(
            [np.cos(th), np.sin(th)])
        err = "" if ref is None else f", end error {np.linalg.norm(tip - ref):.2e} m"
        print(f"  exudyn    {steps:>8d} steps (h = {1.0 / steps:.0e} s): {wall:8.3f} s{err}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", type=float, default=1e-6, help="crank-tip error to reach [m]")
    ap.add_argument("--chain-sizes", default="10", help="comma-separated N, empty for none")
    ap.add_argument("--tilt", type=float, default=np.pi / 6)
    ap.add_argument("--time-limit", type=float, default=120.0, help="cap of one multibody chain run [s]")
    args = ap.parse_args()
    print(f"exudyn {exu.__version__}; BLAS threads {os.environ['OPENBLAS_NUM_THREADS']}; shared machine: "
          "timings are noisy")
    print(f"double four-bar, 10 s, target crank-tip error {args.target:.0e} m:")
    mine, theirs = four_bar_multibody(args.target), four_bar_exudyn(args.target)
    for name, res in (("multibody", mine), ("exudyn", theirs)):
        print(f"  {name:>9}: " + ("did not reach the target" if res is None else
                                  f"{res[0]:.3f} s at {res[2]} (tip error {res[1]:.2e} m)"))
    if mine and theirs:
        print(f"  wall-time ratio multibody / exudyn = {mine[0] / theirs[0]:.2f}")
    for n in [int(s) for s in args.chain_sizes.split(",") if s]:
        chain(n, args.tilt, args.time_limit)


if __name__ == "__main__":
    main()
