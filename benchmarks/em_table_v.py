"""Table V of paper 004 (six-body linkage, reduced scheme, t = 0.04 s: 19 / 10 / 58 for dt = 1e-2, 1e-3, 1e-4):
which reading of the closed-loop iteration matrix reproduces it (issue 18).

    python benchmarks/em_table_v.py            # the readings table (about 1 min); all rows to results/em_table_v.csv
    python benchmarks/em_table_v.py gravity    # the same for six gravity directions and none

The reduced closed-loop iteration matrix (docs/theory/paper004.md) is the mu-Jacobian of

    [ p(q_mid)^T P^o(q_mid)^T R_q(F(mu)) ;  Phi_c,kept(F(mu)) ]      (1 + 4 rows, 5 unknowns theta^1..theta^5)

with p the closure null vector (G_c(q_mid) P^o p = 0; P^oc of eq. 191 in the continuous case). The readings varied:

- ``poc``: how p is normalised -- "pivot" (ours: the free unknown chosen by pivoted QR has p_f = 1), "unit" (|p| = 1,
  an orthonormal null-space basis as a numerical null() returns), "theta1" (p_1 = 1 as eq. 191 writes it);
- ``rows``: the joint-6 orientation rows of eq. 190 -- "ours" (ground axis . two unit vectors of body 5 normal to
  the axis, eta = 0) or the paper's literal (n^5)^T d_I^0 - eta_I with body 0's principal directors d_I^0 (I = 1, 2;
  1, 3; 2, 3 in ascending principal inertia: the text does not order them);
- ``drop``: which of the five closure rows (x, y, z, axis1, axis2) is left out (rank 4; the paper says only that
  four are independent);
- ``iterate``: the converged Newton iterate or the first (q_{n+1} = q_n, mu = 0);
- ``step``: the step ending at t = 0.04 or starting there.

Gravity's direction (not given in the text) changes the numbers by < 3 % (``gravity``), so it is not a reading.
"""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np

import multibody.model.director_builder as director_builder
from multibody.integrate.energy_momentum import EnergyMomentumStepper
from multibody.linalg.rotations import principal_frame
from multibody.model.director import LowerPairs, fold_ground, pair_rows
from multibody.model.director_tree import internal_null_space, reparametrize, twist_matrix
from multibody.models import linkage6
from results_csv import write_rows

PAPER = np.array([19.0, 10.0, 58.0])
DTS = (1e-2, 1e-3, 1e-4)
H = 1e-30


def principal_rows(model, pair):
    """The model with joint 6's orientation rows as eq. 190 writes them: (n^5)^T d_I^0 - eta_I, I in ``pair``, d^0
    body 0's principal directors (fixed), n^5 the axis in body 5's frame; eta from q0."""
    groups = list(model.constraints)
    gi = next(i for i, g in enumerate(groups) if isinstance(g, LowerPairs) and g.kind == "R")
    g = groups[gi]
    j = g.joint_names.index("joint6")                  # the loop closure (joint1 is on the ground too)
    D0 = principal_frame(linkage6.bodies()[0][3])[1]
    n5 = np.cross(g.a2[j, 0], g.a2[j, 1])
    rows = [pair_rows("R", g.X1[j], g.X2[j], D0[:, k], np.zeros(3), np.zeros(3), np.array([n5, n5])) for k in pair]
    Hn, gn, cn = fold_ground(np.array([r[0][3] for r in rows]), np.array([r[1][3] for r in rows]), np.zeros(2))
    x = np.append(model.q0, 0.0)[g.cols[5 * j]]
    cn = cn - (0.5 * np.einsum("i,rij,j->r", x, Hn, x) + gn @ x + cn)
    H_, g_, c_ = g.H.copy(), g.g.copy(), g.c.copy()
    sl = slice(5 * j + 3, 5 * j + 5)
    H_[sl], g_[sl], c_[sl] = Hn, gn, cn
    groups[gi] = dataclasses.replace(g, H=H_, g=g_, c=c_)
    return dataclasses.replace(model, constraints=tuple(groups))


def states(model, dt, starts):
    """{t_n: (q_n, v_n, converged mu)} of the steps starting at t_n (the solution does not depend on the reading)."""
    st = EnergyMomentumStepper(model, scheme="reduced", dt=dt, closure_scaling="none")
    q, v, out = model.q0, model.v0, {}
    want = {int(round(t / dt)): t for t in starts}
    for k in range(max(want) + 1):
        qn, vn = q, v
        q, v = st.step(q, v, k * dt)
        if k in want:
            out[want[k]] = (qn, vn, st._mu.copy())
    return out


def residual(st, qn, vn, mu, rows, poc, free=1):
    """The reduced closed-loop residual (..., 5) for mu (..., 5) under a reading (complex-safe)."""
    dq = reparametrize(st.tree, qn, mu)
    qm = qn + 0.5 * dq
    P = internal_null_space(st.tree, qm, twist_matrix(st.tree, qm))
    r = st._momentum_residual(vn, dq, qn)
    st.closure_rows = rows
    B = st._closure_values(qm)[1] @ P
    free = 0 if poc == "theta1" else free
    dep = [i for i in range(st.tree.d) if i != free]
    p = np.zeros(B.shape[:-2] + (st.tree.d,), dtype=B.dtype)
    p[..., free] = 1
    p[..., dep] = -np.linalg.solve(B[..., :, dep], B[..., :, [free]])[..., 0]
    if poc == "unit":
        p = p / np.sqrt(np.einsum("...i,...i->...", p, p))[..., None]
    dyn = np.einsum("...nd,...d,...n->...", P, p, r)[..., None]
    return np.concatenate([dyn, st._closure_values(qn + dq)[0]], axis=-1)


def condition(st, state, rows, poc, iterate):
    qn, vn, mu = state
    mu = mu if iterate == "converged" else 0 * mu
    J = residual(st, qn, vn, mu + 1j * H * np.eye(st.tree.d), rows, poc).imag.T / H
    s = np.linalg.svd(J, compute_uv=False)
    return s[0] / s[-1]


def readings(base, forms=("ours", (0, 1), (0, 2), (1, 2)), steps=("ending", "starting"), quiet=False):
    """Rows (error, rows, poc, drop, iterate, step, conds) over all readings; the largest relative error to the
    paper's three numbers first sorts them."""
    data = {dt: states(base, dt, (round(0.04 - dt, 10), 0.04)) for dt in DTS}
    out = []
    for form in forms:
        model = base if form == "ours" else principal_rows(base, form)
        st = EnergyMomentumStepper(model, scheme="reduced", dt=DTS[0], closure_scaling="none", fast=False)
        name = form if form == "ours" else "d%d,d%d" % (form[0] + 1, form[1] + 1)
        for poc in ("pivot", "unit", "theta1"):
            for drop in range(5):
                rows = np.delete(st.all_closure_rows, drop)
                for iterate in ("converged", "first"):
                    for step in steps:
                        c = []
                        for dt in DTS:
                            st.dt = dt
                            t = round(0.04 - dt, 10) if step == "ending" else 0.04
                            try:
                                c.append(condition(st, data[dt][t], rows, poc, iterate))
                            except np.linalg.LinAlgError:
                                c.append(np.inf)
                        c = np.array(c)
                        out.append((np.max(np.abs(c / PAPER - 1)), name, poc, drop, iterate, step, c))
    return sorted(out, key=lambda row: row[0])


def table(rows, keep=12):
    print("| closure orientation rows | p normalised | dropped row | iterate | step at 0.04 | dt 1e-2 | 1e-3 | 1e-4 "
          "| max error |")
    print("|---|---|---|---|---|---|---|---|---|")
    names = ("x", "y", "z", "axis1", "axis2")
    for err, form, poc, drop, iterate, step, c in rows[:keep]:
        print(f"| {form} | {poc} | {names[drop]} | {iterate} | {step} | {c[0]:.1f} | {c[1]:.1f} | {c[2]:.1f} "
              f"| {100 * err:.0f} % |")


def gravity():
    original = director_builder.SpatialModelBuilder.gravity
    for direction in ((0, 0, -1), (0, 0, 1), (-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0), None):
        def patched(self, g=9.81, _d=direction):
            return original(self, 0.0 if _d is None else g, _d or (0, 0, -1))
        director_builder.SpatialModelBuilder.gravity = patched
        best = readings(linkage6.six_body_linkage(), forms=("ours",), steps=("ending",))
        ours = next(r for r in best if r[2] == "pivot" and r[3] == 0 and r[4] == "converged")
        print(f"gravity {direction}: ours {np.round(ours[6], 1)}; best reading {best[0][1:6]} "
              f"{np.round(best[0][6], 1)} ({100 * best[0][0]:.0f} %)", flush=True)
    director_builder.SpatialModelBuilder.gravity = original


if __name__ == "__main__":
    if sys.argv[1:2] == ["gravity"]:
        gravity()
    else:
        rows = readings(linkage6.six_body_linkage())
        print(f"{len(rows)} readings; paper {PAPER}")
        names = ("x", "y", "z", "axis1", "axis2")
        write_rows(str(Path(__file__).parent / "results" / "em_table_v.csv"),
                   [dict(rows=r[1], p=r[2], dropped=names[r[3]], iterate=r[4], step=r[5], dt_1e_2=f"{r[6][0]:.4g}",
                         dt_1e_3=f"{r[6][1]:.4g}", dt_1e_4=f"{r[6][2]:.4g}", max_error=f"{r[0]:.3f}") for r in rows])
        table(rows)
        ours = [r for r in rows if r[1] == "ours" and r[3] == 0 and r[4] == "converged" and r[5] == "ending"]
        print("ours (x row dropped, converged, step ending at 0.04):")
        table(ours)
