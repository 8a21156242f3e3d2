"""Benchmark: a 1,000-scenario sweep on a local Dask cluster, 1 worker vs 2 workers (issue 7 item 5).

Scenarios: the IFToMM double four-bar (paper 000 Sect. 3.2) with the initial crank rate ``omega0``
evenly spaced in [-0.5, -3] rad/s, ``--t-end`` seconds each (short runs). Per worker count it prints
the cluster start-up time, the sweep's wall time, scenarios/s, the summed per-scenario run time, the
number of failed scenarios, and the speed-up against the first worker count. The largest crank-angle
error against the exact reduction (``crank_angle_exact``) checks that the sweep computed the right thing.

    python benchmarks/sweep.py [--scenarios 1000] [--t-end 0.3] [--workers 1,2] [--serial]
"""
from __future__ import annotations

import argparse
import os
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):   # as the Dask workers do
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

from multibody.models.four_bars import crank_angle_exact  # noqa: E402
from multibody.sweep import grid, resolve_model, run_serial, sweep  # noqa: E402


def crank_error(table, t_end: float) -> float:
    """Largest |theta_1(t_end) - exact| over the ok rows (exact: the 1-DOF reduction, models.four_bars)."""
    err = 0.0
    for r in table.rows:
        if r["status"] == "ok":
            exact = crank_angle_exact(t_end, omega0=r["omega0"])[0]
            err = max(err, abs(r["q:bar1.theta"] - exact))
    return err


def report(label, table, wall, startup, base):
    busy = sum(r["wall_time_s"] for r in table.rows)
    cpu = sum(r["cpu_time_s"] for r in table.rows)
    speed = "" if base is None else f"{base / wall:8.2f}"
    print(f"{label:>10} {startup:9.2f} {wall:9.2f} {len(table) / wall:12.1f} {busy:10.2f} {cpu:9.2f} "
          f"{len(table.failed):7d} {speed}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenarios", type=int, default=1000)
    ap.add_argument("--t-end", type=float, default=0.3)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--serial", action="store_true", help="also run the scenarios in this process")
    args = ap.parse_args()
    scenarios = grid({"omega0": [float(w) for w in np.linspace(-0.5, -3.0, args.scenarios)],
                      "t_end": [args.t_end]})
    spec = resolve_model("double-four-bar")
    print(f"sweep: double-four-bar, {len(scenarios)} scenarios of {args.t_end} s, dopri5 rtol 1e-6, "
          f"on {os.cpu_count()} cores (shared machine: timings are noisy)")
    print(f"{'workers':>10} {'start [s]':>9} {'wall [s]':>9} {'scenarios/s':>12} {'busy [s]':>10} "
          f"{'cpu [s]':>9} {'failed':>7} {'speed-up':>8}")
    base = None
    if args.serial:
        t = time.perf_counter()
        table = run_serial(spec, scenarios)
        base = time.perf_counter() - t
        report("serial", table, base, 0.0, None)
    for n in map(int, args.workers.split(",")):
        table = sweep(spec, scenarios, workers=n)
        wall = table.meta["wall_time_s"]
        report(str(n), table, wall, table.meta["startup_s"], base)
        base = wall if base is None else base
    print(f"largest crank-angle error against the exact solution: {crank_error(table, args.t_end):.2e} rad")
    print("speed-up: against the first line; busy / cpu: the scenarios' own wall / CPU times summed over the "
          "workers (busy > cpu: the workers waited for a core, i.e. other processes shared the machine).")
    print(f"load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
