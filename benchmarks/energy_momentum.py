"""Energy-momentum scheme (paper 004): long-run conservation and the condition tables II-V.

    python benchmarks/energy_momentum.py            # everything (a few minutes)
    python benchmarks/energy_momentum.py --quick    # 10^3 instead of 10^4 steps

Prints, per model and scheme, the relative drift of the energy and of the conserved momentum
components over N steps, Newton iterations and wall time; then the condition number of the
iteration matrix for the dt of the paper's tables (first step; the linkage at t = 0.04 as Table V).
"""
from __future__ import annotations

import sys
import time

import numpy as np

from multibody.simulation import RunOptions, simulate
from multibody.integrate.energy_momentum import EnergyMomentumStepper
from multibody.models.spatial_models import cylindrical_pair, gyro_top, planar_pair, six_body_linkage

LONG = [("gyro-top", gyro_top, 0.01, [5]), ("cylindrical-pair", cylindrical_pair, 0.001, range(6)),
        ("planar-pair", planar_pair, 1e-4, range(6)), ("six-body-linkage", six_body_linkage, 0.001, [])]
TABLES = [("gyro-top (Table II)", gyro_top, (5e-2, 5e-3, 5e-4), 0.0),
          ("cylindrical-pair (Table III)", cylindrical_pair, (1e-2, 1e-3, 1e-4), 0.0),
          ("planar-pair (Table IV)", planar_pair, (1e-2, 1e-3, 1e-4), 0.0),
          ("six-body-linkage (Table V, t = 0.04)", six_body_linkage, (1e-2, 1e-3, 1e-4), 0.04)]


def drift(r, cols):
    mom = r["momentum"]
    out = {}
    for c in cols:
        scale = np.max(np.abs(mom[:, 3:] if c >= 3 else mom[:, :3]))
        out[r.series["momentum"].labels[c]] = np.max(np.abs(mom[:, c] - mom[0, c])) / scale
    return out


def long_runs(steps):
    for name, factory, dt, cols in LONG:
        for scheme in ("constrained", "reduced"):
            t0 = time.perf_counter()
            r = simulate(factory(), t_end=steps * dt, formulation=scheme,
                         options=RunOptions(integrator="energy-momentum", step=dt, diagnostics=False,
                                            output_interval=10 * dt))
            s = r.summary
            d = ", ".join(f"{k} {v:.1e}" for k, v in drift(r, cols).items())
            print(f"{name:18s} {scheme:11s} dt {dt:g} x {steps}: E {s['energy_drift_rel']:.1e}; {d}; "
                  f"max |Phi| {s['constraint_violation_max']:.1e}; Newton mean {s['newton_iterations_mean']:.2f} "
                  f"max {s['newton_iterations_max']}; {time.perf_counter() - t0:.1f} s", flush=True)


def condition(factory, dt, t, scheme):
    model = factory()
    st = EnergyMomentumStepper(model, scheme=scheme, dt=dt)
    q, v = model.q0, model.v0
    for _ in range(max(1, int(round(t / dt)))):
        q, v = st.step(q, v)
    return st.condition


def tables():
    for name, factory, dts, t in TABLES:
        print(name)
        for dt in dts:
            c, r = condition(factory, dt, t, "constrained"), condition(factory, dt, t, "reduced")
            print(f"   dt {dt:7.0e}   constrained {c:9.2e}   reduced {r:9.3g}", flush=True)


if __name__ == "__main__":
    long_runs(1000 if "--quick" in sys.argv else 10000)
    tables()
