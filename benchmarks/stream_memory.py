"""Benchmark (issue 17): peak memory of a long run in memory and streamed to its result file.

The pendulum with rk4 and a fixed step h = 1e-3 s stores every one of N steps (N = 1e4, 1e5, 1e6);
each case runs in its own process and reports its peak resident set size (resource.getrusage,
ru_maxrss) and wall time. Streamed: ``simulate(..., stream=ResultStream(path, chunk=4096))``, the file
staged and renamed as the CLI does (results.outputs.atomic_write).

    python benchmarks/stream_memory.py [--steps 10000 100000 1000000] [--modes memory stream]
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


def one(steps: int, mode: str) -> dict:
    from multibody import RunOptions, simulate
    from multibody.models import MODELS
    from multibody.results.outputs import atomic_write
    from multibody.results.stream import ResultStream

    model = MODELS["pendulum"].factory()
    options = RunOptions(integrator="rk4", step=STEP)
    simulate(model, t_end=10 * STEP, options=options)     # compile / import before the baseline
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    wall = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "r.h5")
        if mode == "stream":
            atomic_write(path, lambda tmp: simulate(model, t_end=steps * STEP, options=options,
                                                   stream=ResultStream(tmp)))
        else:
            simulate(model, t_end=steps * STEP, options=options).save(path)
        size = os.path.getsize(path)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"steps": steps, "mode": mode, "peak_rss_mb": peak / 1024, "before_run_mb": base / 1024,
            "file_mb": size / 2**20, "wall_s": time.perf_counter() - wall}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--modes", nargs="+", default=["memory", "stream"])
    ap.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one(int(a.one[0]), a.one[1])))
        return
    print(f"{'steps':>9} {'mode':>7} {'peak RSS MB':>12} {'before run':>11} {'file MB':>8} {'wall s':>7}")
    for steps in a.steps:
        for mode in a.modes:
            out = subprocess.run([sys.executable, __file__, "--one", str(steps), mode], capture_output=True,
                                 text=True)
            if out.returncode:
                print(f"{steps:>9} {mode:>7} failed: {out.stderr.strip().splitlines()[-1:]}")
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"{steps:>9} {mode:>7} {r['peak_rss_mb']:>12.1f} {r['before_run_mb']:>11.1f} "
                  f"{r['file_mb']:>8.1f} {r['wall_s']:>7.1f}", flush=True)


if __name__ == "__main__":
    main()
