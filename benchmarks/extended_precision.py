"""The extended-precision projection's two arithmetics side by side (issue 12): the same run with the residuals in
double-double (formulations.extended_projection.ARITHMETIC = "double-double", every IEEE double platform) and in
numpy's long double (x86-64 only), and the CPU cost of the polish per call.

Per run: CPU time, accepted steps, smallest step, crank spread, crank-tip error against the exact reduction
theta'' = -k cos theta, crossings, the end crank angle, the polish calls and their CPU time per call.

    PYTHONPATH=src OPENBLAS_NUM_THREADS=1 python benchmarks/extended_precision.py [--models double-four-bar,n-four-bar-10]
        [--rtol 1e-12] [--atol 1e-14] [--formulation lagrange] [--arithmetics "long double,double-double"]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import multibody.formulations.lagrange as lagrange
from multibody import RunOptions, simulate
from multibody.formulations import extended_projection
from multibody.models.four_bars import double_four_bar, n_four_bar
from multibody.models.modified_four_bars import crank_angle_exact_cells

MODELS = {"double-four-bar": (double_four_bar, 2, 10.0), "n-four-bar-10": (lambda: n_four_bar(cells=10), 10, 20.0)}


class Counted:
    """extended_projection.polish with its calls and CPU time counted."""

    def __init__(self):
        self.calls, self.active, self.cpu = 0, 0, 0.0

    def __call__(self, *args, **kwargs):
        c0 = time.process_time()
        out = extended_projection.polish(*args, **kwargs)
        self.cpu += time.process_time() - c0
        self.calls += 1
        self.active += out is not None
        return out


def run(name, formulation, rtol, atol, arithmetic) -> str:
    factory, cells, t_end = MODELS[name]
    extended_projection.ARITHMETIC = arithmetic
    lagrange.polish = counted = Counted()
    c0 = time.process_time()
    r = simulate(factory(), t_end=t_end, formulation=formulation, options=RunOptions(rtol=rtol, atol=atol))
    cpu = time.process_time() - c0
    th = np.stack([r.column("q", f"bar{2 * i + 1}.theta") for i in range(cells + 1)], axis=1)
    spread = np.abs(np.angle(np.exp(1j * (th - th[:, :1])))).max()
    exact = crank_angle_exact_cells(r.t, cells=cells)
    tip = np.hypot(np.cos(th[:, 0]) - np.cos(exact), np.sin(th[:, 0]) - np.sin(exact)).max()
    per_call = 1e3 * counted.cpu / max(counted.active, 1)
    return (f"{name} {formulation} {rtol:g}/{atol:g} {arithmetic:13s}  CPU {cpu:.2f} s  steps {r.summary['steps']}  "
            f"min step {r.summary['min_step']:.2e} s  spread {spread:.1e} rad  tip {tip:.3e} m  crossings "
            f"{len(r.summary['singular_crossings'])}  end theta {th[-1, 0]:.10f}  polish {counted.active} calls, "
            f"{per_call:.2f} ms CPU each")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", default="double-four-bar,n-four-bar-10")
    p.add_argument("--formulation", default="lagrange")
    p.add_argument("--rtol", type=float, default=1e-12)
    p.add_argument("--atol", type=float, default=1e-14)
    p.add_argument("--arithmetics", default="long double,double-double")
    a = p.parse_args()
    for name in a.models.split(","):
        factory, _, _ = MODELS[name]
        simulate(factory(), t_end=0.2, options=RunOptions(rtol=a.rtol, atol=a.atol))      # compiled kernels loaded
        for arithmetic in a.arithmetics.split(","):
            if not extended_projection.extended_available(arithmetic):
                print(f"{name}: {arithmetic} is no wider than double here, skipped")
                continue
            print(run(name, a.formulation, a.rtol, a.atol, arithmetic), flush=True)


if __name__ == "__main__":
    main()
