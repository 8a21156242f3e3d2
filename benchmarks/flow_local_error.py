"""Does nullspace-flow's error estimate bound the error of the motion it continues from? (issue 12, 12gg)

Per step attempt of a ``--basis flow`` run on the reference path (the compiled attempts measure the same numbers,
tests/test_fast_nullspace.py): the true error of the continued motion, pi(P(y_new)) - pi(P(y_ref)) with y_ref a
tight re-integration (scipy DOP853, rtol 1e-13) of the same ODE from the same state over the same step and pi the
after-step projection and re-basis (formulations.velocity_error, "The measure of flow"), in the controller's norm
(Hairer, Norsett & Wanner I, eq. 4.11, atol = rtol), over the estimate's norm: the measure of the code (with the
forced velocity change -A^+ A'(v) P_t dx) and the tenth session's (without it). dopri5 (one estimate per attempt).
With ``continuation`` the same for the continued chart (12hb; pi: ContinuationEquations.after_step,
:func:`chart_continued`).

    PYTHONPATH=src python benchmarks/flow_local_error.py double-four-bar 1e-6 [t_end=3] [flow|continuation]
"""
from __future__ import annotations

import sys

import numpy as np
from scipy.integrate import solve_ivp

from multibody import RunOptions, simulate
from multibody.formulations import nullspace as ns
from multibody.formulations.nullspace_continuation import Chart
from multibody.formulations.velocity_error import turn_velocity_change
from multibody.integrate.controllers import error_norm
from multibody.linalg.rank import row_space_filter
from multibody.linalg.tangent import smooth_reorthogonalize
from singular_matrix import MODELS


def continued(form, t, y):
    """[q, v] after the step ending at y (NullSpaceEquations.after_step: projection, App. A, v <- T_new T_new^T v)."""
    x, w, T = form.unpack(y)
    v = form.split(t, y)[1]
    q = form._project(t, x)
    T_new = smooth_reorthogonalize(T, form.ws.velocity_constraints(t, q, v)[1], form.reg)
    return np.concatenate([q, T_new @ (T_new.T @ v)])


def chart_continued(form, t, y):
    """[q, v] after the step ending at y in the continued chart (ContinuationEquations.after_step without its
    bookkeeping: x projected, the chart continued by eq. 22 and App. A at the projected x, w = T_new^T x')."""
    n, old = form.model.n, form._chart
    v = form._xdot(t, y, old)
    x = form._project(t, y[:n])
    pqr = form._qr(form.ws.velocity_constraints(t, x, v)[1])
    Q1 = pqr.Q[:, :form.generic_rank]
    T = form._continue_basis(old, t - old.t, Q1)
    return np.concatenate([x, form._xdot(t, np.concatenate([x, T.T @ v]), Chart(t, Q1, T, old.Omega))])


def instrument(rtol, rows):
    """Wrap NullSpaceEquations.error_measure: append (t, |true|, |estimate|, |estimate without the forced change|)."""
    measure = ns.NullSpaceEquations.error_measure

    def wrapped(self, t_old, y_old, t_new, y_new, err, integral=None):
        out = measure(self, t_old, y_old, t_new, y_new, err, integral)
        n = self.model.n
        if y_new.shape[0] == 2 * n:          # the singular window's [q, v]: lagrange's equations
            return out
        x, w, T = self.unpack(y_new)
        A = self.ws.velocity_constraints(t_new, x, np.zeros(n))[1]
        u = row_space_filter(A[:self.ws.m], err[:n])
        turn = turn_velocity_change(self.ws, t_new, x, T @ w, u, A, self.generic_rank)
        memo = self._memo, self._phys_memo
        ref = solve_ivp(self.rhs, (t_old, t_new), y_old, method="DOP853", rtol=1e-13, atol=1e-15).y[:, -1]
        after = chart_continued if self.basis == "continuation" else continued
        true = after(self, t_new, y_new) - after(self, t_new, ref)
        self._memo, self._phys_memo = memo
        e, p0, p1 = out
        rows.append([t_new] + [error_norm(v, p0, p1, rtol, rtol) for v in (true, e, e - np.r_[np.zeros(n), turn])])
        return out
    wrapped.integral = True
    ns.NullSpaceEquations.error_measure = wrapped


def main() -> None:
    name, rtol = sys.argv[1], float(sys.argv[2])
    t_end = float(sys.argv[3]) if len(sys.argv) > 3 else 3.0
    basis = sys.argv[4] if len(sys.argv) > 4 else "flow"
    rows: list = []
    instrument(rtol, rows)
    simulate(MODELS[name][0](), t_end=t_end, formulation="nullspace",
             formulation_options={"basis": basis, "fast": False},
             options=RunOptions(integrator="dopri5", rtol=rtol, atol=rtol))
    a = np.array(rows)
    print(f"{name} {basis} dopri5 rtol = atol = {rtol:g}, {t_end:g} s: {len(a)} attempts outside the window")
    for label, col in (("this measure", 2), ("without the forced change", 3)):
        r = a[:, 1] / a[:, col]
        print(f"  true / estimate, {label}: median {np.median(r):.3g}, 90 % {np.quantile(r, 0.9):.3g}, "
              f"largest {r.max():.3g}")


if __name__ == "__main__":
    main()
