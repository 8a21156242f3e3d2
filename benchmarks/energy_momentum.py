"""Energy-momentum scheme (paper 004): long-run conservation and the condition tables II-V.

    python benchmarks/energy_momentum.py            # everything (a few minutes)
    python benchmarks/energy_momentum.py --quick    # 10^3 instead of 10^4 steps
    python benchmarks/energy_momentum.py long planar-pair reduced [steps] [fig.png] [unknowns]
    python benchmarks/energy_momentum.py instants   # Table IV: the reduced condition number against time
    python benchmarks/energy_momentum.py balance reduced [start] [steps]   # the planar pair's energy balance

The first two print, per model and scheme, the relative drift of the energy and of the conserved momentum
components over N steps, Newton iterations and wall time; then the condition number of the
iteration matrix for the dt of the paper's tables (first step; the linkage at t = 0.04 as Table V),
for the reduced scheme with the paper's unknowns and with the planar pairs' joint-point unknowns.
``long`` runs one model at the paper's dt = 0.01 (default 10^5 steps, issue 18) with the stepper
itself and draws E - E0 and L - L0 (paper Figs 13, 17).
"""
from __future__ import annotations

import sys
import time

import numpy as np

from multibody.assembly import Workspace
from multibody.integrate.energy_momentum import EnergyMomentumStepper
from multibody.model.director_tree import spatial_parts
from multibody.models.spatial_models import cylindrical_pair, gyro_top, planar_pair, six_body_linkage
from multibody.simulation import RunOptions, simulate

LONG = [("gyro-top", gyro_top, 0.01, [5]), ("cylindrical-pair", cylindrical_pair, 0.001, range(6)),
        ("planar-pair", planar_pair, 1e-4, range(6)), ("six-body-linkage", six_body_linkage, 0.001, [])]
# (title, model, dts, instant of the condition number): Table III's reduced numbers are met at t = 0.1 s (the
# first snapshot of Fig. 12), Table IV's near t = 0.03 s, Table V's instant t = 0.04 s is the paper's
TABLES = [("gyro-top (Table II)", gyro_top, (5e-2, 5e-3, 5e-4), 0.0),
          ("cylindrical-pair (Table III, t = 0.1)", cylindrical_pair, (1e-2, 1e-3, 1e-4), 0.1),
          ("planar-pair (Table IV, t = 0.03)", planar_pair, (1e-2, 1e-3, 1e-4), 0.03),
          ("six-body-linkage (Table V, t = 0.04)", six_body_linkage, (1e-2, 1e-3, 1e-4), 0.04)]
MODELS = {"planar-pair": planar_pair, "cylindrical-pair": cylindrical_pair, "gyro-top": gyro_top,
          "six-body-linkage": six_body_linkage}


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


def condition(factory, dt, t, scheme, **options):
    model = factory()
    st = EnergyMomentumStepper(model, scheme=scheme, dt=dt, **options)
    q, v = model.q0, model.v0
    for k in range(max(1, int(round(t / dt)))):
        q, v = st.step(q, v, k * dt)
    return st.condition


def tables():
    """Per table and dt: the constrained scheme at the first step and at the instant; the reduced scheme at the
    instant with the paper's unknowns, the joint-point unknowns (E pairs) and, for closed loops, unscaled
    closure rows (Part I's form, see docs/guide/energy-momentum.md)."""
    for name, factory, dts, t in TABLES:
        print(name)
        for dt in dts:
            c0, c = condition(factory, dt, 0.0, "constrained"), condition(factory, dt, t, "constrained")
            rp, rj = (condition(factory, dt, t, "reduced", unknowns=u) for u in ("paper", "joint"))
            line = (f"   dt {dt:7.0e}   constrained {c0:9.2e} (first step) {c:9.2e}   reduced {rp:9.4g} (paper's "
                    f"unknowns) {rj:9.4g} (joint-point unknowns)")
            if factory is six_body_linkage:
                line += f" {condition(factory, dt, t, 'reduced', closure_scaling='none'):9.4g} (unscaled closure rows)"
            print(line, flush=True)


def instants(ends=(0.01, 0.02, 0.03, 0.033, 0.04, 0.05)):
    """Table IV (planar pair, the paper's unknowns): the reduced iteration matrix's condition number of the step
    ending at t, at the first Newton iterate q_{n+1} = q_n (mu = 0) and at the converged one, per dt; t that is
    not on the dt grid is interpolated linearly between the neighbouring steps."""
    h = 1e-30
    for dt in (1e-2, 1e-3, 1e-4):
        model = planar_pair()
        st = EnergyMomentumStepper(model, scheme="reduced", dt=dt, unknowns="paper")
        q, v, rows = model.q0, model.v0, [(0.0, np.nan, np.nan)]
        for k in range(int(round(max(ends) / dt)) + 1):
            d = st.tree.d
            first = np.linalg.cond(st._reduced_residual(q, v, 1j * h * np.eye(d))[0].imag.T / h)
            q, v = st.step(q, v, k * dt)
            rows.append(((k + 1) * dt, first, st.condition))
        t, first, last = (np.array(c) for c in zip(*rows))
        print(f"dt {dt:g}: " + "; ".join(f"t {e:g}: {np.interp(e, t, first):.0f} (mu = 0) {np.interp(e, t, last):.0f}"
                                         for e in ends), flush=True)


def balance(scheme, start=40000, steps=3000, dt=0.01):
    """The planar pair's energy change per step split in long double (issue 18): from the stepper's increment dq,
    dE = [E(v1) - E(c dq - v0)] (rounding of v) - lam.(Phi(q0 + dq) - Phi(q0)) (constraints) + c/2 dq.r_N (the
    exact residual of the computed dq), c = fl(2/dt), lam by least squares; summed over ``steps`` steps after
    ``start`` constrained steps, relative to E0."""
    ld = np.longdouble
    model = planar_pair()
    M, n, c = model.mass_matrix.astype(ld), model.n, ld(2 / dt)
    q, v = model.q0.copy(), model.v0.copy()
    lead = EnergyMomentumStepper(model, scheme="constrained", dt=dt, condition=False)
    for k in range(start):
        q, v = lead.step(q, v, k * dt)
    st = EnergyMomentumStepper(model, scheme=scheme, dt=dt, condition=False)
    captured, name = {}, "_reduced_step" if scheme == "reduced" else "_constrained_step"
    inner = getattr(st, name)

    def capture(qn, vn):      # the stepper's own increment, before q_n + dq is rounded
        captured["dq"] = inner(qn, vn)
        return captured["dq"]

    setattr(st, name, capture)

    def phi_jac(x):
        xe = np.concatenate([x, [ld(0)]])
        return (np.concatenate([g.values(xe)[0] for g in model.constraints]),
                np.concatenate([g.dense_jacobian(xe) for g in model.constraints]))

    energy = lambda x: ld(0.5) * (x @ M @ x)
    E0, total = float(energy(model.v0.astype(ld))), np.zeros(4, dtype=ld)
    for k in range(start, start + steps):
        q1, v1 = st.step(q, v, k * dt)
        q0l, v0l, v1l, dq = (x.astype(ld) for x in (q, v, v1, captured["dq"]))
        R = c * (M @ dq) - 2 * (M @ v0l)
        G = phi_jac(q0l + dq / 2)[1]
        lam = np.linalg.lstsq(G.astype(float).T, -R.astype(float) / dt, rcond=None)[0].astype(ld)
        total += [energy(v1l) - energy(v0l), energy(v1l) - energy(c * dq - v0l),
                  -lam @ (phi_jac(q0l + dq)[0] - phi_jac(q0l)[0]), c / 2 * (dq @ (R + dt * G.T @ lam))]
        q, v = q1, v1
    print(f"planar pair, {scheme}, {steps} steps from t = {start * dt:g} s: dE/E0 {float(total[0]) / E0:.2e} = v "
          f"rounding {float(total[1]) / E0:.1e} + constraints {float(total[2]) / E0:.1e} + Newton residual "
          f"{float(total[3]) / E0:.2e} (closure {abs(float(total[0] - total[1:].sum())) / E0:.0e})", flush=True)


def long_run(name, scheme, steps, dt=0.01, every=100, unknowns="joint", dump=None):
    """The stepper itself (simulate() records every step's channels); E = T + gradV.q (uniform gravity),
    p and L about the origin, max |Phi| and max |q| every ``every`` steps (saved to ``dump`` .npy every 10
    rows when given); stops with the message of a failed step."""
    model, t0 = MODELS[name](), time.perf_counter()
    st = EnergyMomentumStepper(model, scheme=scheme, dt=dt, condition=False, unknowns=unknowns)
    bodies, _ = spatial_parts(model)
    ws, M, zero = Workspace(model), model.mass_matrix, np.zeros(model.n)
    q, v, rows, iters = model.q0.copy(), model.v0.copy(), [], []
    for k in range(steps + 1):
        if k % every == 0 or k == steps:
            p, L = bodies.momenta(q, v)
            phi = np.max(np.abs(ws.constraints(0.0, q, zero)[0]))
            rows.append(np.r_[k * dt, 0.5 * v @ M @ v + st.gradV @ q, p, L, phi, np.max(np.abs(q))])
            if dump and len(rows) % 10 == 0:
                np.save(dump, np.array(rows))
        if k < steps:
            try:
                q, v = st.step(q, v, k * dt)
            except Exception as exc:      # report how far it got
                print(f"stopped at t = {k * dt:g}: {exc}")
                break
            iters.append(st.iterations)
    a = np.array(rows)
    if dump:
        np.save(dump, a)
    report(a, f"{name} {scheme} ({unknowns}) dt {dt:g} x {len(iters)}", iters, time.perf_counter() - t0)
    return a


def report(a, title, iters=None, wall=None):
    """Drifts of E (to E0), p (to max |p|), L (to max |L| and to max |q| max |p|, L's own round-off scale)."""
    E, mom = a[:, 1], a[:, 2:8]
    d = [np.max(np.abs(mom[:, k] - mom[0, k])) / max(np.max(np.abs(mom[:, 3 * (k // 3):3 * (k // 3) + 3])), 1e-300)
         for k in range(6)]
    lscale = np.max(a[:, 9]) * np.max(np.abs(mom[:, :3]))
    dl = np.max(np.abs(mom[:, 3:] - mom[0, 3:])) / lscale
    extra = f"; Newton mean {np.mean(iters):.2f} max {max(iters)}; {wall:.0f} s" if iters else ""
    print(f"{title}: E {np.max(np.abs(E - E[0])) / abs(E[0]):.1e}; "
          + ", ".join(f"{lab} {x:.1e}" for lab, x in zip(("px", "py", "pz", "Lx", "Ly", "Lz"), d))
          + f" (L to max|q| max|p|: {dl:.1e}); max |Phi| {np.max(a[:, 8]):.1e}; max |q| {np.max(a[:, 9]):.3g}"
          + extra, flush=True)


def figure(r, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    t, E, L = r[:, 0], r[:, 1], r[:, 5:8]
    fig, ax = plt.subplots(3, 1, figsize=(7, 7.5), sharex=True)
    ax[0].plot(t, (E - E[0]) / abs(E[0]))
    ax[0].set_ylabel(f"(E - E0) / E0\n(E0 = {E[0]:.6g})")
    for k, lab in enumerate("xyz"):
        ax[1].plot(t, (L[:, k] - L[0, k]) / np.max(np.abs(L[0])), label=f"L{lab} (L{lab}0 = {L[0, k]:.5g})")
    ax[1].set_ylabel("(L - L0) / max|L0|")
    ax[1].legend(fontsize=7)
    ax[2].semilogy(t, np.maximum(r[:, 8], 1e-18), label="max |Phi|")
    ax[2].semilogy(t, r[:, 9] * np.finfo(float).eps, "--", label="eps max|q|")
    ax[2].set_ylabel("constraints")
    ax[2].legend(fontsize=7)
    ax[2].set_xlabel("t [s]")
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90)


if __name__ == "__main__":
    if sys.argv[1:2] == ["long"]:      # long MODEL SCHEME [steps] [fig.png] [unknowns]: rows also in fig.png.npy
        name, scheme = sys.argv[2], sys.argv[3]
        steps = int(float(sys.argv[4])) if len(sys.argv) > 4 else 100000
        unknowns = sys.argv[6] if len(sys.argv) > 6 else "joint"
        fig = sys.argv[5] if len(sys.argv) > 5 else None
        res = long_run(name, scheme, steps, unknowns=unknowns, dump=fig and fig + ".npy")
        if fig:
            figure(res, fig, f"{name}, {scheme} scheme ({unknowns} unknowns), dt = 0.01, "
                   f"{int(round(res[-1, 0] / 0.01))} steps (paper 004 Figs 13/17)")
    elif sys.argv[1:2] == ["instants"]:
        instants()
    elif sys.argv[1:2] == ["balance"]:
        balance(sys.argv[2], *(int(float(a)) for a in sys.argv[3:5]))
    elif sys.argv[1:2] == ["figure"]:  # figure ROWS.npy fig.png TITLE: a (partial) long run's rows
        res = np.load(sys.argv[2])
        report(res, sys.argv[4])
        figure(res, sys.argv[3], f"{sys.argv[4]}, {int(round(res[-1, 0] / 0.01))} steps of dt = 0.01")
    else:
        long_runs(1000 if "--quick" in sys.argv else 10000)
        tables()
