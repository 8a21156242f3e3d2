"""Benchmark: a 1,000-scenario sweep on a local Dask cluster, 1 worker vs 2 workers (issue 7 item 5).

Scenarios: the IFToMM double four-bar (paper 000 Sect. 3.2) with the initial crank rate ``omega0``
evenly spaced in [-0.5, -3] rad/s, ``--t-end`` seconds each (short runs). Per worker count it prints
the cluster start-up time (start of the cluster and warm-up of its workers, multibody.sweep.cluster),
the sweep's wall time (first submission to last row), their total, scenarios/s, the summed
per-scenario run time, the number of failed scenarios, and the speed-up against the first worker
count (of the sweep's wall time, and of the total). The largest crank-angle error against the exact
reduction (``crank_angle_exact``) checks that the sweep computed the right thing.

In one process the fork server of the local workers is started (and warmed) by the first cluster and
reused by the next: the later start-ups are shorter than a fresh command's. ``--command`` times the
whole ``multibody sweep`` command instead (a fresh process per worker count: interpreter, imports,
cluster, sweep, table written), as a user runs it.

    python benchmarks/sweep.py [--scenarios 1000] [--t-end 0.3] [--workers 1,2] [--serial] [--command]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
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
    speed = "" if base is None else f"{base[0] / wall:8.2f} {base[1] / (startup + wall):8.2f}"
    print(f"{label:>10} {startup:9.2f} {wall:9.2f} {startup + wall:9.2f} {len(table) / wall:12.1f} {busy:10.2f} "
          f"{cpu:9.2f} {len(table.failed):7d} {speed}", flush=True)


def command(n: int, scenarios: int, t_end: float, base):
    """Time ``multibody sweep`` as a user at a terminal waits for it (a fresh process, until it exits; its
    output goes to a file: a pipe would also wait for the workers' fork server, which exits ~0.3 s after
    the command); the command's own start-up / sweep times too."""
    with tempfile.TemporaryDirectory() as tmp:
        args = [sys.executable, "-c", "from multibody.cli import main; main()", "sweep", "double-four-bar",
                "--param", f"omega0=-0.5:-3:{scenarios}", "--t-end", str(t_end), "--workers", str(n), "--json",
                "--out", os.path.join(tmp, "t.csv")]
        with open(os.path.join(tmp, "out.json"), "w+") as f:
            t = time.perf_counter()
            subprocess.run(args, stdout=f, stderr=subprocess.DEVNULL, check=True)
            whole = time.perf_counter() - t
            f.seek(0)
            out = json.load(f)
    speed = "" if base is None else f"{base / whole:8.2f}"
    print(f"{n:>10} {whole:9.2f} {out['startup_s']:9.2f} {out['wall_time_s']:9.2f} {out['failed']:7d} {speed}",
          flush=True)
    return whole


def commands(args):
    print(f"multibody sweep double-four-bar: {args.scenarios} scenarios of {args.t_end} s, a fresh process per "
          f"line, on {os.cpu_count()} cores (load average {os.getloadavg()[0]:.2f})")
    print(f"{'workers':>10} {'whole [s]':>9} {'start [s]':>9} {'sweep [s]':>9} {'failed':>7} {'speed-up':>8}")
    base = None
    for n in map(int, args.workers.split(",")):
        whole = command(n, args.scenarios, args.t_end, base)
        base = whole if base is None else base
    print(f"load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenarios", type=int, default=1000)
    ap.add_argument("--t-end", type=float, default=0.3)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--serial", action="store_true", help="also run the scenarios in this process")
    ap.add_argument("--command", action="store_true", help="time the whole 'multibody sweep' command instead")
    args = ap.parse_args()
    if args.command:
        return commands(args)
    scenarios = grid({"omega0": [float(w) for w in np.linspace(-0.5, -3.0, args.scenarios)],
                      "t_end": [args.t_end]})
    spec = resolve_model("double-four-bar")
    print(f"sweep: double-four-bar, {len(scenarios)} scenarios of {args.t_end} s, dopri5 rtol 1e-6, "
          f"on {os.cpu_count()} cores (shared machine: timings are noisy)")
    print(f"{'workers':>10} {'start [s]':>9} {'wall [s]':>9} {'total [s]':>9} {'scenarios/s':>12} {'busy [s]':>10} "
          f"{'cpu [s]':>9} {'failed':>7} {'speed-up':>8} {'of total':>8}")
    base = None
    if args.serial:
        t = time.perf_counter()
        table = run_serial(spec, scenarios)
        wall = time.perf_counter() - t
        base = (wall, wall)
        report("serial", table, wall, 0.0, None)
    for n in map(int, args.workers.split(",")):
        table = sweep(spec, scenarios, workers=n)
        wall = table.meta["wall_time_s"]
        report(str(n), table, wall, table.meta["startup_s"], base)
        base = (wall, wall + table.meta["startup_s"]) if base is None else base
    print(f"largest crank-angle error against the exact solution: {crank_error(table, args.t_end):.2e} rad")
    print("speed-up: against the first line (wall, then total); busy / cpu: the scenarios' own wall / CPU times "
          "summed over the workers (busy > cpu: the workers waited for a core, i.e. other processes shared the "
          "machine).")
    print(f"load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
