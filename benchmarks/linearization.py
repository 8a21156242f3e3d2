"""Benchmark (issue 21): static equilibrium, linearisation and modes of the 81-bar N-four-bar and of a
100-bar pendulum chain (benchmarks/chains.py, hanging), each timed separately (median of ``--repeat``).

    PYTHONPATH=src OPENBLAS_NUM_THREADS=1 python benchmarks/linearization.py [--repeat 5]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from chains import bar_chain  # noqa: E402

from multibody.analysis.equilibrium import equilibrium  # noqa: E402
from multibody.analysis.linearize import linearize, modes  # noqa: E402
from multibody.models.four_bars import n_four_bar  # noqa: E402

MODELS = {"n-four-bar-40 (81 bars)": lambda: n_four_bar(cells=40),
          "chain-100 (100 bars, hanging)": lambda: bar_chain(100, np.pi / 2)}


def timed(fun, repeat):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fun()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    for name, factory in MODELS.items():
        model = factory()
        t_eq, eq = timed(lambda: equilibrium(model), args.repeat)
        t_lin, lin = timed(lambda: linearize(model, eq), args.repeat)
        t_modes, md = timed(lambda: modes(model, eq), args.repeat)
        print(f"{name:32s} n {model.n:4d}  dof {lin.M.shape[0]:3d}  equilibrium {t_eq:6.3f} s "
              f"({eq.iterations} it, {eq.stability})  linearize {t_lin:6.3f} s  modes {t_modes:6.3f} s  "
              f"lowest {md.frequencies_hz[0]:.4f} Hz")


if __name__ == "__main__":
    main()
