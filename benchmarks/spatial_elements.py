"""Benchmark (issue 23): the cost that springs, dampers and drivers add to a spatial model.

The six-body linkage of paper 004 Sect. 5.4.2 (lagrange, NumPy path) plain, with two spring-dampers
and two torsion spring-dampers, and with those plus a driver of joint 1 at its initial rate: the
best and the median cost of one right-hand-side evaluation over ``--repeat`` interleaved rounds of
``--number`` calls (the cost per dopri5 step is 7 such calls), and the ratios to the plain linkage
(target: <= 1.2).

    OPENBLAS_NUM_THREADS=1 python benchmarks/spatial_elements.py [--number 200 --repeat 7]
"""
from __future__ import annotations

import argparse
import os
import timeit

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from multibody import Motion  # noqa: E402
from multibody.formulations.lagrange import Lagrange  # noqa: E402
from multibody.models.linkage6 import THETA1_RATE, six_body_linkage  # noqa: E402


def springs(b, P, inward):
    b.spring_damper("s14", "body1", "body4", point1=P[1], point2=P[4], stiffness=50.0, damping=0.2)
    b.spring_damper("s0", None, "body3", point1=P[0] + 0.5, point2=P[3], stiffness=20.0, damping=0.1)
    b.rotational_spring_damper("t2", "joint2", stiffness=3.0, damping=0.05)
    b.rotational_spring_damper("t4", "joint4", stiffness=3.0, damping=0.05)


def springs_and_driver(b, P, inward):
    springs(b, P, inward)
    b.driver("joint1", Motion.constant_rate(0.0, THETA1_RATE))


def costs(models, number, repeat) -> np.ndarray:
    """(repeat, len(models)) seconds per right-hand side; the models take turns within each round, so a
    change of the machine's load hits them alike (the machine is shared)."""
    forms = [Lagrange(m) for m in models]
    ys = [f.initial_state(0.0, m.q0, m.v0) for f, m in zip(forms, models)]
    for f, y in zip(forms, ys):
        f.rhs(0.0, y)
    return np.array([[timeit.timeit(lambda: f.rhs(0.0, y), number=number) / number for f, y in zip(forms, ys)]
                     for _ in range(repeat)])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--number", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args(argv)
    labels = ("six-body linkage", "+ 2 springs, 2 torsion springs", "+ those and a driver")
    c = costs([six_body_linkage(), six_body_linkage(springs), six_body_linkage(springs_and_driver)],
              args.number, args.repeat)
    best, med = c.min(axis=0), np.median(c, axis=0)
    own = element_cost(six_body_linkage(springs_and_driver), args.number, args.repeat)
    print(f"{'model':34s} {'best [ms]':>9s} {'ratio':>6s} {'median [ms]':>11s} {'ratio':>6s}")
    for label, b, m in zip(labels, best, med):
        print(f"{label:34s} {1e3 * b:9.3f} {b / best[0]:6.2f} {1e3 * m:11.3f} {m / med[0]:6.2f}")
    print(f"the elements' own evaluation (springs, torsion springs, driver rows): {1e3 * own:.3f} ms = "
          f"{own / best[0]:.2f} of the plain linkage's right-hand side (best); the rest of the driven model's "
          "extra cost is its one more row in the KKT solve")


def element_cost(model, number, repeat) -> float:
    """Best time of evaluating the added elements alone: driver groups and non-gravity forces."""
    qe, ve = np.append(model.q0, 0.0), np.append(model.v0, 0.0)
    parts = [g for g in model.constraints if g.motions] + list(model.forces[1:])

    def once():
        for p in parts:
            p.evaluate(0.3, qe, ve) if hasattr(p, "motions") else p.generalized(0.3, qe, ve)
    return min(timeit.repeat(once, number=number, repeat=repeat)) / number


if __name__ == "__main__":
    main()
