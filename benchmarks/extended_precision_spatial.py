"""The extended-precision polish on a spatial director model (issue 12): the same whole run with the residuals in
double-double (formulations.extended_spatial, every IEEE double platform) and in numpy's long double (x86-64
only), to show that the portable arithmetic takes the same steps.

The model is the double four-bar of paper 000 Sect. 3.2 built from spatial bodies and revolute pairs (paper 004
Sect. 4.5; tests/test_crossings_spatial.spatial_double_four_bar): it moves in its plane as the planar one, so its
crank angle has the exact reduction theta'' = -k cos theta (models.modified_four_bars.crank_angle_exact_cells, 2
cells). Per run: CPU time, accepted steps, smallest step, crank spread (the three cranks' angles from their
centres of mass), crank-tip error against the exact reduction, crossings, the end crank angle, and the polish
calls (those that corrected / all) with their CPU time per correcting call. Arithmetic "none" skips the polish
(what a platform whose long double is double had before the spatial rows had double-double residuals).

    PYTHONPATH=src OPENBLAS_NUM_THREADS=1 python benchmarks/extended_precision_spatial.py [--t-end 10]
        [--tolerances 1e-10/1e-12,1e-12/1e-14] [--arithmetics "long double,double-double"]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import multibody.formulations.lagrange as lagrange
from multibody import RunOptions, simulate
from multibody.formulations import extended_projection
from multibody.models.modified_four_bars import crank_angle_exact_cells

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from test_crossings_spatial import spatial_double_four_bar  # noqa: E402


class Counted:
    """extended_projection.polish with its calls and CPU time counted."""

    def __init__(self, off: bool = False):
        self.calls, self.active, self.cpu, self.off = 0, 0, 0.0, off

    def __call__(self, *args, **kwargs):
        c0 = time.process_time()
        out = None if self.off else extended_projection.polish(*args, **kwargs)
        self.cpu += time.process_time() - c0
        self.calls += 1
        self.active += out is not None
        return out


def crank_angles(r) -> np.ndarray:
    """(steps, 3) unwrapped angles of cranks 1, 3, 5 (pivots at x = 0, 1, 2) from their centres of mass."""
    return np.stack([np.unwrap(np.arctan2(r.column("q", f"bar{k}.y"), r.column("q", f"bar{k}.x") - (k - 1) / 2))
                     for k in (1, 3, 5)], axis=1)


def run(t_end, rtol, atol, arithmetic) -> str:
    extended_projection.ARITHMETIC = arithmetic if arithmetic != "none" else extended_projection.ARITHMETIC
    lagrange.polish = counted = Counted(off=arithmetic == "none")
    c0 = time.process_time()
    r = simulate(spatial_double_four_bar(), t_end=t_end, options=RunOptions(rtol=rtol, atol=atol))
    cpu = time.process_time() - c0
    th = crank_angles(r)
    spread = np.abs(np.angle(np.exp(1j * (th - th[:, :1])))).max()
    exact = crank_angle_exact_cells(r.t, cells=2)
    tip = np.hypot(np.cos(th[:, 0]) - np.cos(exact), np.sin(th[:, 0]) - np.sin(exact)).max()
    return (f"spatial-double-four-bar {rtol:g}/{atol:g} {arithmetic:13s}  CPU {cpu:.2f} s  steps {r.summary['steps']}  "
            f"min step {r.summary['min_step']:.3e} s  spread {spread:.1e} rad  tip {tip:.4e} m  crossings "
            f"{len(r.summary['singular_crossings'])}  end theta {th[-1, 0]:.12f}  polish {counted.active}/"
            f"{counted.calls} calls, {1e3 * counted.cpu / max(counted.active, 1):.2f} ms CPU each")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--t-end", type=float, default=10.0)
    p.add_argument("--tolerances", default="1e-10/1e-12,1e-12/1e-14", help="rtol/atol pairs")
    p.add_argument("--arithmetics", default="long double,double-double")
    a = p.parse_args()
    simulate(spatial_double_four_bar(), t_end=0.2)          # compiled kernels loaded
    for pair in a.tolerances.split(","):
        rtol, atol = (float(x) for x in pair.split("/"))
        for arithmetic in a.arithmetics.split(","):
            if arithmetic != "none" and not extended_projection.extended_available(arithmetic):
                print(f"{arithmetic} is no wider than double here, skipped")
                continue
            print(run(a.t_end, rtol, atol, arithmetic), flush=True)


if __name__ == "__main__":
    main()
