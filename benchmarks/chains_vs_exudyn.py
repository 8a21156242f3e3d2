"""Benchmark: the planar chains N = 10, 100, 1000, free end and tip mass, multibody and Exudyn side by side
in one run, figures written to a CSV (issue 16 items 3 and 4).

The chains are those of benchmarks/chains.py (N bars of 1/N m and 1/N kg, revolute joints, released from
rest in a straight line tilted 30 deg below the horizontal, 1 s; ``tip``: a 1 kg point mass pinned to the
free end). For each chain and each setting the script runs ``--repeat`` times and reports the median wall
time of the integration (the machine is shared: single runs are noisy), the steps, the Newton iterations or
right-hand-side evaluations, the median CPU (process) time of the integration (the machine is shared: wall
times are inflated by other processes, CPU times much less) and the error of the free end's position at 1 s against multibody's dop853 at
rtol 1e-10 (for N up to ``--reference-max``; blank above, or when a run stops early).

multibody settings (``--multibody``, comma-separated): ``dopri5:RTOL``, ``dop853:RTOL``, ``ga:H`` (generalized-
alpha, fixed step H) and ``ga-adaptive:RTOL`` (generalized-alpha without a step: local error control,
integrate/generalized_alpha.py). Exudyn (``--exudyn-steps``): its default implicit generalized-alpha (index
3, rho_inf 0.9, sparse solver) with the given numbers of fixed steps per second, as in
benchmarks/exudyn_compare.py. Exudyn is benchmark-only and never a dependency of multibody:
``pip install exudyn==1.13.6``; without it the Exudyn rows are skipped and the script says so.

``--simulate`` (the same items): also each setting as a whole ``simulate()`` call, what a user runs (set-up, the
step watch and its singular-configuration monitor, the recorder), tool "multibody simulate()"; the other multibody
rows time the integration loop alone (benchmarks/chains.py ``run``).

Every row goes to ``--csv`` (default benchmarks/results/chains.csv; columns: case, N, n, tool, setting,
runs, wall_median_s, wall_min_s, cpu_median_s, steps, work, t_reached, tip_error_m, status) so a later run shows a regression.

    python benchmarks/chains_vs_exudyn.py [--sizes 10,100,1000] [--cases free,tip] [--repeat 3]
        [--multibody dopri5:1e-6,ga:1e-3,ga-adaptive:1e-5] [--exudyn-steps 1000] [--reference-max 100]
        [--time-limit 120] [--simulate dopri5:1e-4] [--csv benchmarks/results/chains.csv]
"""
from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):   # both tools single-threaded
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

from multibody import RunOptions, simulate  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chains import bar_chain, run as run_chain, tip as chain_tip  # noqa: E402

try:
    import exudyn as exu
    from exudyn.itemInterface import (LoadMassProportional, MarkerBodyMass, MarkerBodyPosition,  # noqa: E402
                                      MassPoint2D, NodePoint2D, SensorNode)
    from exudyn_compare import exudyn_chain
except ImportError:
    exu = None

TILT = np.pi / 6
TIP_MASS = 1.0
FIELDS = ("case", "N", "n", "tool", "setting", "runs", "wall_median_s", "wall_min_s", "cpu_median_s", "steps",
          "work", "t_reached", "tip_error_m", "status")


def multibody_options(spec: str) -> RunOptions:
    """RunOptions of a ``--multibody`` item (``kind:value``)."""
    kind, _, value = spec.partition(":")
    x = float(value)
    if kind in ("dopri5", "dop853"):
        return RunOptions(integrator=kind, rtol=x, atol=x * 1e-2)
    if kind == "ga":
        return RunOptions(integrator="generalized-alpha", step=x)
    if kind == "ga-adaptive":
        return RunOptions(integrator="generalized-alpha", step=None, rtol=x, atol=x * 1e-2)
    raise SystemExit(f"--multibody item {spec!r}: kind must be dopri5, dop853, ga or ga-adaptive")


def multibody_row(model, spec, ref, args) -> dict:
    """Median of ``args.repeat`` multibody runs of one setting (a failed or capped run ends the repeats)."""
    opts, walls, cpus, r, status = multibody_options(spec), [], [], None, "ok"
    for _ in range(args.repeat):
        try:
            r = run_chain(model, 1.0, opts, args.time_limit)
        except Exception as exc:   # the integrator stops loudly (e.g. Newton failure below the minimum step)
            status = f"failed: {str(exc).splitlines()[0][:80]}"
            break
        walls.append(r["wall"])
        cpus.append(r["cpu"])
        if r["capped"]:
            status = f"time limit at t = {r['t']:.3g} s"
            break
    row = dict(tool="multibody", setting=spec, runs=len(walls), status=status)
    if walls:
        row.update(wall_median_s=statistics.median(walls), wall_min_s=min(walls), cpu_median_s=statistics.median(cpus),
                   steps=r["steps"], work=r["work"], t_reached=r["t"])
    if r is not None and not r["capped"] and ref is not None and status == "ok":
        row["tip_error_m"] = float(np.linalg.norm(chain_tip(model, r["q"]) - ref))
    return row


def simulate_row(model, spec, ref, args) -> dict:
    """Median CPU time of ``args.repeat`` whole ``simulate()`` calls of one setting (what a user runs: the set-up,
    the step watch with its crossing monitor, the recorder; ``run`` above times the integration loop alone)."""
    opts, cpus, walls, r = multibody_options(spec), [], [], None
    for _ in range(args.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        r = simulate(model, t_end=1.0, options=opts)
        cpus.append(time.process_time() - c0)
        walls.append(time.perf_counter() - t0)
    row = dict(tool="multibody simulate()", setting=spec, runs=len(cpus), status="ok", steps=r.summary["steps"],
               work=r.summary.get("newton_iterations") or r.summary["rhs_evaluations"],    # generalized-alpha: Newton
               t_reached=float(r.t[-1]), wall_median_s=statistics.median(walls),
               wall_min_s=min(walls), cpu_median_s=statistics.median(cpus))
    if ref is not None:
        row["tip_error_m"] = float(np.linalg.norm(chain_tip(model, r.q[-1]) - ref))
    return row


def exudyn_model(n: int, tip_mass: float):
    """Exudyn's chain (exudyn_compare.exudyn_chain), with a point mass pinned to the free end if tip_mass;
    returns (model, sensor, tip function of the sensor's last row)."""
    m, sensor = exudyn_chain(n, TILT)
    ell, e = 1.0 / n, np.array([np.cos(TILT), -np.sin(TILT)])
    if tip_mass > 0:
        mbs = m.mbs
        node = mbs.AddNode(NodePoint2D(referenceCoordinates=list(e), initialCoordinates=[0.0, 0.0]))
        body = mbs.AddObject(MassPoint2D(mass=tip_mass, nodeNumber=node))
        mbs.AddLoad(LoadMassProportional(markerNumber=mbs.AddMarker(MarkerBodyMass(bodyNumber=body)),
                                         loadVector=[0.0, -9.81, 0.0]))
        m.pin(m.bodies[-1], (ell / 2, 0.0), body, (0.0, 0.0))
        sensor = mbs.AddSensor(SensorNode(nodeNumber=node, storeInternal=True,
                                          outputVariableType=exu.OutputVariableType.Coordinates))
        mbs.Assemble()
        return m, sensor, lambda d: e + d[1:3]

    def bar_tip(d):             # t, ux, uy, dphi of the last bar
        th = -TILT + d[3]
        return (n - 0.5) * ell * e + d[1:3] + ell / 2 * np.array([np.cos(th), np.sin(th)])
    return m, sensor, bar_tip


def exudyn_row(n, tip_mass, steps, ref, args) -> dict:
    """Median of ``args.repeat`` Exudyn solves (a fresh system each: Exudyn solves in place)."""
    walls, cpus, tip, status = [], [], None, "ok"
    for _ in range(args.repeat):
        m, sensor, tip_of = exudyn_model(n, tip_mass)
        try:
            c = time.process_time()
            walls.append(m.solve(1.0, steps, dense=False))
            cpus.append(time.process_time() - c)
        except Exception as exc:   # Exudyn's SolverError
            status = f"failed: {type(exc).__name__}"
            break
        tip = tip_of(m.mbs.GetSensorStoredData(sensor)[-1])
    row = dict(tool=f"exudyn {exu.__version__}", setting=f"ga:{1.0 / steps:g}", runs=len(walls), status=status)
    if walls:
        row.update(wall_median_s=statistics.median(walls), wall_min_s=min(walls), cpu_median_s=statistics.median(cpus),
                   steps=steps, t_reached=1.0)
    if tip is not None and ref is not None and status == "ok":
        row["tip_error_m"] = float(np.linalg.norm(tip - ref))
    return row


def reference_tip(model, n, args):
    """Free-end position at 1 s by multibody dop853 rtol 1e-10 (None above --reference-max or if capped)."""
    if n > args.reference_max:
        return None
    r = run_chain(model, 1.0, RunOptions(integrator="dop853", rtol=1e-10, atol=1e-12), args.reference_limit)
    return None if r["capped"] else chain_tip(model, r["q"])


def fmt(row) -> str:
    g = row.get
    num = (lambda k, f: "" if g(k) is None else format(g(k), f))
    return (f"{g('case'):>5} {g('N'):>5} {g('tool'):>20} {g('setting'):>18} {num('wall_median_s', '.3f'):>9} "
            f"{num('cpu_median_s', '.3f'):>8} "
            f"{num('steps', 'd'):>6} {num('work', 'd'):>7} {num('tip_error_m', '.2e'):>10}  {g('status')}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10,100,1000")
    ap.add_argument("--cases", default="free,tip", help="free (no tip mass) and/or tip (1 kg at the free end)")
    ap.add_argument("--multibody", default="dopri5:1e-6,ga:1e-3,ga-adaptive:1e-5")
    ap.add_argument("--exudyn-steps", default="1000",
                    help="Exudyn's fixed steps per second, comma-separated (empty: no Exudyn rows)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per setting (the median is reported)")
    ap.add_argument("--simulate", default="", help="settings (as --multibody) also timed as whole simulate() calls")
    ap.add_argument("--reference-max", type=int, default=100, help="tip errors for N up to this")
    ap.add_argument("--reference-limit", type=float, default=600.0, help="wall-time cap of a reference run")
    ap.add_argument("--time-limit", type=float, default=120.0, help="wall-time cap of one multibody run")
    ap.add_argument("--csv", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                                                  "chains.csv"))
    args = ap.parse_args()
    cases = [c for c in args.cases.split(",") if c]
    if set(cases) - {"free", "tip"}:
        raise SystemExit(f"--cases {args.cases!r}: each must be free or tip")
    specs = [s for s in args.multibody.split(",") if s]
    for s in specs:
        multibody_options(s)
    print(f"chains, 1 s, median of {args.repeat} runs; BLAS threads {os.environ['OPENBLAS_NUM_THREADS']}; "
          "shared machine: timings are noisy")
    if exu is None:
        print("Exudyn is not installed: its rows are skipped (benchmark-only: pip install exudyn==1.13.6)")
    rows = []
    print(f"{'case':>5} {'N':>5} {'tool':>20} {'setting':>18} {'wall [s]':>9} {'cpu [s]':>8} {'steps':>6} {'work':>7} "
          f"{'tip err [m]':>10}  status")
    for n in map(int, args.sizes.split(",")):
        for case in cases:
            rows += chain_rows(n, case, specs, args)
            write_csv(args.csv, rows)        # after each chain: an interrupted run keeps what it measured
    print(f"work: Newton iterations (generalized-alpha) or rhs evaluations; written {args.csv}")


def write_csv(path: str, rows: list) -> None:
    """All rows so far to ``path`` (written to a temporary file, then renamed: never half a file)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, path)


def chain_rows(n, case, specs, args) -> list:
    """All rows of one chain: multibody settings, then Exudyn's."""
    tip_mass = TIP_MASS if case == "tip" else 0.0
    model = bar_chain(n, TILT, tip_mass)
    ref = reference_tip(model, n, args)
    base = dict(case=case, N=n, n=len(model.coordinate_names))
    rows = [dict(base, **multibody_row(model, s, ref, args)) for s in specs]
    rows += [dict(base, **simulate_row(model, s, ref, args)) for s in args.simulate.split(",") if s]
    if exu is not None:
        rows += [dict(base, **exudyn_row(n, tip_mass, int(k), ref, args)) for k in args.exudyn_steps.split(",") if k]
    for row in rows:
        print(fmt(row), flush=True)
    return rows


if __name__ == "__main__":
    main()
