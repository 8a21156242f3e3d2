"""Which steps carry a parallelogram chain's tip error (issue 12, the crossing step): every accepted step's true local
error against the exact reduction theta'' = -k cos theta (models.four_bars.crank_rate_constant), by kind of step.

For each accepted step [t0, t1] the run's crank state (theta, theta') at t0 is integrated to t1 on the reduction with a
tight tolerance (scipy DOP853, rtol 1e-13); the step's local error is the run's state at t1 minus that, in tolerance
units atol + rtol |.| of the crank (loc_th, loc_w), and its energy error dE of E = theta'^2 / 2 + k sin theta (the
reduction's first integral: the energy error sets the drift of the phase). Beside it the same tableau's single step on
the reduction from the same state with the same h (what the method alone makes on that mesh). Kinds: X the crossing
step (CrossingMonitor.steer chose it across a crossing), p/r a step shortened before it or resumed after it, "" the
controller's own; '*' marks a step that contains a crossing (sin theta changes sign), est the run's error estimate.

    PYTHONPATH=src python benchmarks/crossing_step_errors.py double-four-bar lagrange dopri5 1e-5 1e-5 [--steps]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.integrate import solve_ivp

from multibody import RunOptions, simulate
from multibody.integrate.explicit import RungeKutta
from multibody.models.four_bars import crank_rate_constant, double_four_bar, n_four_bar
from multibody.models.modified_four_bars import double_four_bar_modified, triple_four_bar_modified
from multibody.simulation import crossing_step, step_watch

MODELS = {"double-four-bar": (double_four_bar, 2, 10.0), "double-four-bar-modified": (double_four_bar_modified, 2, 10.0),
          "triple-four-bar-modified": (triple_four_bar_modified, 3, 10.0),
          "n-four-bar-10": (lambda: n_four_bar(cells=10), 10, 20.0)}


def record(model, formulation, integrator, rtol, atol, t_end):
    """(steps, kinds, cpu): (t0, t1, q, v, estimate) of every accepted step after the after-step action, and the kind
    of the step starting at each time (by CrossingStep.steer)."""
    steps, kinds = [], {}
    accepted, steer = step_watch.StepWatch.accepted, crossing_step.CrossingStep.steer

    def watch(self, step, y_new=None, at_stop=False, before=None):
        q, v = self.form.split(step.t, step.y if y_new is None else y_new)
        steps.append((step.t_old, step.t, q.copy(), v.copy(), step.error_norm))
        return accepted(self, step, y_new, at_stop, before)

    def steering(self, stepper):
        h = stepper.h
        steer(self, stepper)
        if self.resume is not None:
            kinds[stepper.t] = "X"
        elif stepper.h != h:
            kinds[stepper.t] = "p/r"

    step_watch.StepWatch.accepted, crossing_step.CrossingStep.steer = watch, steering
    try:
        c0 = time.process_time()
        simulate(model, t_end=t_end, formulation=formulation, options=RunOptions(integrator=integrator, rtol=rtol,
                                                                                    atol=atol))
        return steps, kinds, time.process_time() - c0
    finally:
        step_watch.StepWatch.accepted, crossing_step.CrossingStep.steer = accepted, steer


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model", choices=sorted(MODELS))
    p.add_argument("formulation")
    p.add_argument("integrator")
    p.add_argument("rtol", type=float)
    p.add_argument("atol", type=float)
    p.add_argument("--steps", action="store_true", help="print every step")
    a = p.parse_args()
    factory, cells, t_end = MODELS[a.model]
    model = factory()
    i = list(model.coordinate_names).index("bar1.theta")
    k = crank_rate_constant(cells)
    f = lambda _, x: np.array([x[1], -k * np.cos(x[0])])       # noqa: E731
    energy = lambda th, w: w * w / 2 + k * np.sin(th)           # noqa: E731
    steps, kinds, cpu = record(model, a.formulation, a.integrator, a.rtol, a.atol, t_end)
    y0, sums = np.array([np.pi / 2, -1.0]), {}
    for t0, t1, q, v, est in steps:
        exact = solve_ivp(f, (t0, t1), y0, rtol=1e-13, atol=1e-14, method="DOP853").y[:, -1]
        alone = RungeKutta(f, t0, y0, t1, tableau=a.integrator, fixed_step=t1 - t0).step().y
        y1, kind = np.array([q[i], v[i]]), kinds.get(t0, "")
        loc = (y1 - exact) / (a.atol + a.rtol * np.maximum(np.abs(y0), np.abs(y1)))
        de, de_alone = energy(*y1) - energy(*exact), energy(*alone) - energy(*exact)
        s = sums.setdefault(kind, [0, 0.0, 0.0, 0.0])
        s[0], s[1], s[2], s[3] = s[0] + 1, s[1] + de, s[2] + de_alone, max(s[3], float(np.abs(loc).max()))
        if a.steps:
            cross = "*" if np.sin(y0[0]) * np.sin(y1[0]) < 0 else " "
            print(f"{t0:9.5f} h {t1 - t0:.4e} {kind:3s}{cross} loc_th {loc[0]:+8.3f} loc_w {loc[1]:+8.3f} est {est:.3f}"
                  f" dE {de:+.2e} (method alone {de_alone:+.2e})")
        y0 = y1
    print(f"{a.model} {a.formulation} {a.integrator} rtol {a.rtol:g} atol {a.atol:g}: {len(steps)} steps, CPU {cpu:.2f} s")
    for kind, (n, de, de_alone, worst) in sums.items():
        print(f"  kind {kind!r:6} {n:4d} steps: energy error {de:+.3e} (the method alone on the same mesh {de_alone:+.3e}),"
              f" largest crank local error {worst:.3f} tolerances")


if __name__ == "__main__":
    main()
