"""Benchmark (issue 23): the cost that springs, dampers and drivers add to a spatial model.

The six-body linkage of paper 004 Sect. 5.4.2 (lagrange, NumPy path) plain, with two spring-dampers
and two torsion spring-dampers, and with those plus a driver of joint 1 at its initial rate: the
median cost of one right-hand-side evaluation over ``--repeat`` rounds of ``--number`` calls (the
cost per dopri5 step is 7 such calls), and the ratio to the plain linkage (target: <= 1.2).

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


def cost(model, number, repeat) -> float:
    form = Lagrange(model)
    y = form.initial_state(0.0, model.q0, model.v0)
    form.rhs(0.0, y)
    return float(np.median(timeit.repeat(lambda: form.rhs(0.0, y), number=number, repeat=repeat))) / number


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--number", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    base = cost(six_body_linkage(), args.number, args.repeat)
    print(f"{'model':34s} {'rhs [ms]':>9s} {'ratio':>6s}")
    print(f"{'six-body linkage':34s} {1e3 * base:9.3f} {1.0:6.2f}")
    for label, extra in (("+ 2 springs, 2 torsion springs", springs), ("+ those and a driver", springs_and_driver)):
        c = cost(six_body_linkage(extra), args.number, args.repeat)
        print(f"{label:34s} {1e3 * c:9.3f} {c / base:6.2f}")


if __name__ == "__main__":
    main()
