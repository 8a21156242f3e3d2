"""Benchmark (issue 17): peak memory of a long run in memory and streamed to its result file.

Two kinds of long run, each case in its own process (peak resident set size from resource.getrusage,
ru_maxrss, and wall time; "before run" is the peak after imports, compilation and a short warm-up run):

- ``--kind steps`` (default): the pendulum with rk4 and a fixed step h = 1e-3 s stores every one of N
  steps (N = 1e4, 1e5, 1e6): memory per step and per stored state;
- ``--kind output-step``: the double four-bar (dopri5, default tolerances) over 10 s stores N states
  sampled from the dense output (``RunOptions(output_step=10 / N)``): the steps stay the same (~10^3),
  the stored states grow.

Streamed: ``simulate(..., stream=ResultStream(path, chunk=4096))``, the file staged and renamed as the CLI
does (results.outputs.atomic_write). Run it niced and single-threaded on a shared machine:

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice python benchmarks/stream_memory.py \
        [--kind steps|output-step] [--steps 10000 100000 1000000] [--modes memory stream] [--log FILE]

``--log FILE``: along a streamed run, every 8 blocks (32,768 states), one line "states wall_s rss_mb
peak_mb" (VmRSS and VmHWM of /proc/self/status) is appended to FILE: memory at several step counts of
one long run, readable while it goes on.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

STEP = 1e-3
#: the double four-bar's run length for --kind output-step [s]
T_OUTPUT = 10.0


def _case(kind: str, steps: int):
    """(model, t_end, options) of one case."""
    from multibody import RunOptions
    from multibody.models import MODELS

    if kind == "steps":
        return MODELS["pendulum"].factory(), steps * STEP, RunOptions(integrator="rk4", step=STEP)
    return MODELS["double-four-bar"].factory(), T_OUTPUT, RunOptions(output_step=T_OUTPUT / steps)


def _rss_mb() -> tuple[float, float]:
    """(current, peak) resident set size of this process [MB], from /proc/self/status (VmRSS, VmHWM)."""
    values = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                values[line.split(":")[0]] = int(line.split()[1]) / 1024
    return values.get("VmRSS", float("nan")), values.get("VmHWM", float("nan"))


def _logged_stream(log_path: str):
    """A ResultStream class that appends (stored states, wall s, RSS MB, peak RSS MB) to ``log_path``
    after each block written, every ``every``-th block (memory along one long run)."""
    from multibody.results.stream import ResultStream

    class Logged(ResultStream):
        started, blocks = time.perf_counter(), 0

        def append(self, t, series):
            super().append(t, series)
            Logged.blocks += 1
            if Logged.blocks % 8 == 1:
                rss, hwm = _rss_mb()
                with open(log_path, "a") as f:
                    f.write(f"{self.states} {time.perf_counter() - Logged.started:.1f} {rss:.1f} {hwm:.1f}\n")
    return Logged


def one(kind: str, steps: int, mode: str, log: str | None = None) -> dict:
    from multibody import simulate
    from multibody.results.outputs import atomic_write
    from multibody.results.stream import ResultStream

    if log:
        ResultStream = _logged_stream(log)       # noqa: N806 (the class used below)

    model, t_end, options = _case(kind, steps)
    warm = _case(kind, 100)[2]
    simulate(model, t_end=10 * STEP if kind == "steps" else 0.1, options=warm)   # compile / import first
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    wall = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "r.h5")
        if mode == "stream":
            runs = []
            atomic_write(path, lambda tmp: runs.append(simulate(model, t_end=t_end, options=options,
                                                                stream=ResultStream(tmp))))
            result = runs[0]
        else:
            result = simulate(model, t_end=t_end, options=options)
            result.save(path)
        size = os.path.getsize(path)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"kind": kind, "states": steps, "mode": mode, "peak_rss_mb": peak / 1024, "before_run_mb": base / 1024,
            "file_mb": size / 2**20, "wall_s": time.perf_counter() - wall,
            "integrator_steps": result.summary["steps"]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kind", choices=["steps", "output-step"], default="steps")
    ap.add_argument("--steps", type=int, nargs="+", default=[10_000, 100_000, 1_000_000],
                    help="stored states per case")
    ap.add_argument("--modes", nargs="+", default=["memory", "stream"])
    ap.add_argument("--log", help="streamed cases: append 'states wall_s rss_mb peak_mb' every 8 blocks "
                    "(32,768 states) to this file")
    ap.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one(a.one[0], int(a.one[1]), a.one[2], a.log)))
        return
    print(f"{'kind':>11} {'states':>9} {'mode':>7} {'peak RSS MB':>12} {'before run':>11} {'file MB':>8} "
          f"{'wall s':>7} {'steps':>8}", flush=True)
    for steps in a.steps:
        for mode in a.modes:
            log = ["--log", a.log] if a.log and mode == "stream" else []
            out = subprocess.run([sys.executable, __file__, "--one", a.kind, str(steps), mode, *log],
                                 capture_output=True, text=True)
            if out.returncode:
                print(f"{a.kind:>11} {steps:>9} {mode:>7} failed: {out.stderr.strip().splitlines()[-1:]}", flush=True)
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"{a.kind:>11} {steps:>9} {mode:>7} {r['peak_rss_mb']:>12.1f} {r['before_run_mb']:>11.1f} "
                  f"{r['file_mb']:>8.1f} {r['wall_s']:>7.1f} {r['integrator_steps']:>8}", flush=True)


if __name__ == "__main__":
    main()
