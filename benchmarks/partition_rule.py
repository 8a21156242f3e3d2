"""Partitioning's switching rules beyond the four-bar family (issue 12): rule "flat" (the flattest admissible chart,
analysis.partition_chart) against rule "quality" (paper 001 Sect. 4: the best set by the projective criterion, eq. 23)
on every model of the library where partitioning applies and chooses among sets (k >= 1 and some coordinate
dependent), against a tight lagrange run of the same model.

    PYTHONPATH=src python benchmarks/partition_rule.py [--models pendulum,...] [--rtols 1e-6,1e-10]
        [--integrators dopri5,dop853] [--csv benchmarks/results/partition_rule.csv]

Per run: the largest difference of the coordinates from the reference over 101 output times (max over coordinates
and times; m, rad and the dimensionless director components of the spatial models, all of order one), accepted
steps, coordinate switches and CPU time (time.process_time of the run). The reference is
lagrange with dop853 at rtol REF_RTOL, atol REF_ATOL; its own error is estimated by the same difference against
lagrange at 10 times those tolerances (column ``reference_check``). Nonholonomic models are not listed: partitioning
does not take nonholonomic rows (it says so).
"""
from __future__ import annotations

import argparse
import csv
import os
import time

import numpy as np

from multibody import RunOptions, simulate
from multibody.errors import MultibodyError
from multibody.formulations.partitioning import SwitchPolicy
from multibody.models import MODELS

#: models where partitioning chooses among sets (probed: the driven slider-crank, four-bar, door have k = 0 or one
#: admissible set; the spatial slider-crank never switches)
DEFAULT_MODELS = ("pendulum,pendulum-redundant,physical-pendulum,four-bar-relative,six-body-linkage,rssr-spring,"
                  "gyro-top,cylindrical-pair,planar-pair")
REF_RTOL, REF_ATOL = 1e-13, 1e-15
FIELDS = ["model", "integrator", "rtol", "atol", "rule", "q_error", "steps", "switches", "cpu_s",
          "reference_check", "blas_kernel", "message"]


def _run(name, formulation, integrator, rtol, atol, opts=None):
    entry = MODELS[name]
    options = RunOptions(integrator=integrator, rtol=rtol, atol=atol, output_step=entry.t_end / 100)
    c0 = time.process_time()
    r = simulate(entry.factory(), t_end=entry.t_end, formulation=formulation, options=options,
                 formulation_options=opts or {})
    return r, time.process_time() - c0


def reference(name):
    """(q on the output grid, the reference's own error estimate)."""
    ref = _run(name, "lagrange", "dop853", REF_RTOL, REF_ATOL)[0]
    loose = _run(name, "lagrange", "dop853", 10 * REF_RTOL, 10 * REF_ATOL)[0]
    return ref, float(np.max(np.abs(ref.series["q"].data - loose.series["q"].data)))


def rows(name, integrators, rtols):
    ref, check = reference(name)
    q_ref = ref.series["q"].data
    for integrator in integrators:
        for rtol in rtols:
            for rule in ("flat", "quality"):
                row = {"model": name, "integrator": integrator, "rtol": f"{rtol:g}", "atol": f"{rtol / 100:g}",
                       "rule": rule, "reference_check": f"{check:.1e}",
                       "blas_kernel": os.environ.get("OPENBLAS_CORETYPE", "default")}
                try:
                    r, cpu = _run(name, "partitioning", integrator, rtol, rtol / 100,
                                  {"switching": SwitchPolicy(rule=rule)})
                except MultibodyError as exc:       # a run that stops is a row too
                    yield {**row, "q_error": "STOPPED", "message": " ".join(str(exc).split())[:200]}
                    continue
                s = r.summary
                yield {**row, "q_error": f"{np.max(np.abs(r.series['q'].data - q_ref)):.2e}", "steps": s["steps"],
                       "switches": len(s["coordinate_switches"]), "cpu_s": f"{cpu:.2f}"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=DEFAULT_MODELS)
    ap.add_argument("--rtols", default="1e-6,1e-10")
    ap.add_argument("--integrators", default="dopri5,dop853")
    ap.add_argument("--csv")
    a = ap.parse_args()
    out, handle = None, None
    if a.csv:
        new = not os.path.exists(a.csv)
        handle = open(a.csv, "a", newline="")
        out = csv.DictWriter(handle, FIELDS)
        if new:
            out.writeheader()
    for name in a.models.split(","):
        for row in rows(name, a.integrators.split(","), [float(x) for x in a.rtols.split(",")]):
            print(" ".join(f"{row.get(k, '')}" for k in FIELDS), flush=True)
            if out:
                out.writerow(row)
                handle.flush()


if __name__ == "__main__":
    main()
