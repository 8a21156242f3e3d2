"""Benchmark (issue 7 item 1): the compiled Lagrange right-hand side (multibody.fast) against the
NumPy reference on the IFToMM double four-bar.

Prints the cost of one right-hand-side evaluation (regular state; near the singular configuration,
where the SVD solve takes over), the numba compile time (first run, empty cache) and the start-up
with a filled cache, and 10 s runs (wall time, steps, evaluations, crank-tip error, share of Schur
solves) with the reference and the fast path.

    OPENBLAS_NUM_THREADS=1 python benchmarks/rhs_cost.py [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import timeit

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")     # see issue-7 notes: threaded BLAS on 2 shared cores

import numpy as np  # noqa: E402

from multibody import RunOptions, simulate  # noqa: E402
from multibody.formulations.lagrange import Lagrange  # noqa: E402
from multibody.models import MODELS  # noqa: E402
from multibody.models.four_bars import crank_angle_exact  # noqa: E402

RUNS = [("dopri5 1e-6", RunOptions()), ("dop853 1e-9", RunOptions(integrator="dop853", rtol=1e-9, atol=1e-11)),
        ("dopri5 1e-10", RunOptions(rtol=1e-10, atol=1e-12))]

STARTUP = """
import time; t0 = time.perf_counter()
from multibody.models import MODELS; from multibody.formulations.lagrange import Lagrange
m = MODELS['double-four-bar'].factory(); t1 = time.perf_counter()
f = Lagrange(m); f.rhs(0.0, f.initial_state(0.0, m.q0, m.v0)); print(time.perf_counter() - t1)
"""


def startup_times() -> tuple[float, float]:
    """(first run with an empty numba cache, second run with the filled cache): seconds from building
    the formulation to the first rhs returned (in a fresh interpreter)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        out = [float(subprocess.run([sys.executable, "-c", STARTUP], env=env, capture_output=True, text=True,
                                    check=True).stdout.split()[-1]) for _ in range(2)]
    return out[0], out[1]


def tip_error(result) -> float:
    th = result.column("q", "bar1.theta")
    exact = crank_angle_exact(result.t)
    return float(np.hypot(np.cos(th) - np.cos(exact), np.sin(th) - np.sin(exact)).max())


def per_call(form, y, number) -> float:
    return min(timeit.repeat(lambda: form.rhs(0.0, y), number=number, repeat=5)) / number


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    model = MODELS["double-four-bar"].factory()
    ref, fast = Lagrange(model, fast=False), Lagrange(model)
    if fast.fast_rhs is None:
        sys.exit("numba is not installed: pip install 'multibody[fast]'")
    first, cached = startup_times()
    print(f"numba: first run (compile) {first:.2f} s, cached start-up {cached:.3f} s")
    y = ref.initial_state(0.0, model.q0, model.v0)
    near = y.copy()
    near[: model.n] = model.configuration("singular")      # positions at the singular configuration
    for label, state in (("regular", y), ("singular", near)):
        r, f = per_call(ref, state, 2000), per_call(fast, state, 20000)
        print(f"one rhs ({label} state): reference {r * 1e6:7.1f} us, fast {f * 1e6:6.2f} us ({r / f:5.1f}x)")
    print(f"{'10 s run':>14} {'path':>9} {'wall [s]':>9} {'steps':>6} {'rhs':>6} {'tip error [m]':>14} {'Schur':>6}")
    for name, opts in RUNS:
        for path, on in (("reference", False), ("fast", True)):
            walls = []
            for _ in range(args.repeat):
                res = simulate(model, t_end=10.0, options=opts, formulation_options={"fast": on})
                walls.append(res.summary["wall_time_s"])
            share = "" if not on else f"{_schur_share(model, opts):6.1%}"
            print(f"{name:>14} {path:>9} {min(walls):9.3f} {res.summary['steps']:6d} "
                  f"{res.summary['rhs_evaluations']:6d} {tip_error(res):14.2e} {share:>6}")


def _schur_share(model, opts) -> float:
    """Share of evaluations that used the Schur solve in one run (a separate formulation object)."""
    from multibody.formulations.registry import FORMULATIONS
    made = []

    class Counting(Lagrange):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            made.append(self)

    FORMULATIONS["lagrange-counting"] = Counting
    try:
        simulate(model, t_end=10.0, options=opts, formulation="lagrange-counting")
    finally:
        del FORMULATIONS["lagrange-counting"]
    paths = made[-1].fast_rhs.paths
    return paths[0] / max(1, sum(paths))


if __name__ == "__main__":
    main()
