"""Compiled right-hand sides and projection of the null-space formulation (paper 000; issue 16 item 1): one
compiled call per evaluation (:mod:`.nullspace_kernels`) and per projection (:mod:`.project_kernels`) for models
the kernels support (:func:`.packed.model_supported`), on the formulation's :class:`~.packed.CompiledWorkspace`.
A call returns None where the kernel cannot vouch for its numbers (X^T M X or T^T M T not positive definite, a
projection that does not converge): the formulation then runs its reference, which raises the explanatory
error; near a singular configuration they decline too (nullspace_kernels.GRAM_PIVOT_RATIO). ``paths``: how many
right-hand-side evaluations took Cholesky, the SVD (redundant rows) and the reference."""
from __future__ import annotations

import numpy as np


class _FastNullSpace:
    continuation = False

    def __init__(self, formulation):
        from .nullspace_kernels import GRAM_PIVOT_RATIO     # numba loads only when the compiled path is used
        from .nullspace_rhs_kernels import int_buffer
        ws, model = formulation.ws, formulation.model
        self.pack, self.rel, self.tau = ws.pack, float(formulation.reg.rel), GRAM_PIVOT_RATIO
        n, m, p = model.n, ws.m, ws.pack
        self.qe, self.ve = np.zeros(n + 1), np.zeros(n + 1)
        self.A, self.gamma, self.phi, self.shift = np.zeros((m, n + 1)), np.zeros(m), np.zeros(m), np.zeros(m)
        self.paths, self.motions = [0, 0, 0], bool(p.motions)
        self.nf, self.h, self.G = formulation.f, ws.h, np.zeros((m, m))
        self.rank = int(formulation.generic_rank)
        r = formulation.generic_rank
        d = r if self.continuation else min(m, n)
        # the kernels' buffers (nullspace_rhs_kernels.views): the model and every work array, one int and one float
        # array, so that a call unboxes few arguments; ddf, dshift, the warm start x and the results are views
        self.ints, off = int_buffer(p.prim, p.mcols, p.mvec, n, m, self.nf, r, p.diag, d)
        self.floats = np.zeros(off[-1])
        part = [self.floats[off[i]:off[i + 1]] for i in range(len(off) - 1)]
        for k, value in enumerate((p.pval, p.mloc, p.M, p.f, [self.rel, self.tau])):
            part[k][:] = np.ravel(value)
        self.ddf, self.dshift, self.x = part[5], part[6], part[7]
        self.acc, self.X, self.z = part[14], part[15].reshape(n, self.nf), part[16]

    def counted(self, out, path):
        """(y', path), or None where the kernel declined; counts the path taken."""
        if path < 0:
            self.paths[2] += 1
            return None
        self.paths[path] += 1
        return out, path

    def multipliers(self, A, b, rtol):
        """lam (m,) = (A^T)^+ b with singular values <= rtol s_max dropped (linalg.rank.min_norm_solve; the same
        truncated pseudo-inverse, project_kernels.min_norm_multipliers)."""
        from .project_kernels import min_norm_multipliers
        lam = np.empty(A.shape[0])
        min_norm_multipliers(np.ascontiguousarray(A), np.ascontiguousarray(b), rtol, lam)
        return lam

    def physical_error(self, y, err, T, flow, weight, dq=None):
        """The local error on the physical state [x, v] (2 n,) at the step's end y (nullspace_kernels.physical_error,
        the numbers of the compiled attempts; dq: formulations.flow_error's bound, None: not), or None for a model with
        nonholonomic rows (the reference measures)."""
        from .nullspace_kernels import physical_error
        from .project_kernels import ROW_SPACE_REL
        if self.h:
            return None
        p, n = self.pack, self.qe.shape[0] - 1
        out = np.empty(2 * n)
        try:
            physical_error(np.ascontiguousarray(y), np.ascontiguousarray(err), self.nf, flow, np.ascontiguousarray(T),
                           weight, ROW_SPACE_REL, p.prim, p.pval, p.mcols, p.mloc, p.mvec, self.qe, self.ve, self.A,
                           self.gamma, self.G, self.rank, np.zeros(0) if dq is None else np.ascontiguousarray(dq), out)
        except ValueError:      # numba's SVD did not converge: the reference measures
            return None
        return out

    def crossing_sigma(self, t, history, r, tol, length):
        """sigma_r at the projected Hermite interpolant of the tracker's three states at t (nullspace_kernels.
        crossing_sigma; formulations.singular.SingularTracker's objective), or None where the projection failed or
        the model has nonholonomic rows (the reference then runs)."""
        from ..kinematics import PINNED_DRIFT
        from .nullspace_kernels import crossing_sigma
        if self.h:
            return None
        p = self.pack
        ts, xs, vs = (np.array([h[k] for h in history]) for k in range(3))
        p.drive(t, self.shift, self.dshift, self.ddf)
        try:
            value, ok = crossing_sigma(t, ts, xs, vs, r, p.prim, p.pval, p.poff, p.mcols, p.mloc, p.mvec, self.shift,
                                       tol.position * length, tol.pin * PINNED_DRIFT * length, tol.max_iterations,
                                       tol.polish, tol.pin, self.qe, self.ve, self.A, self.gamma, self.phi)
        except ValueError:      # numba's SVD did not converge (seen under OPENBLAS_CORETYPE=Prescott): the reference
            return None
        return value if ok else None


class FastContinuationRhs(_FastNullSpace):
    """``dynamics(t, y, chart) -> (y' (n + f,), x'' (n,), path, X (n, f)) or None`` of ``--basis continuation`` in
    a chart (nullspace_rhs_kernels.continuation_rhs)."""

    continuation = True

    def __init__(self, formulation):
        from .nullspace_rhs_kernels import continuation_rhs
        super().__init__(formulation)
        self.kernel, self._chart, self._basis = continuation_rhs, None, None

    def basis(self, chart):
        """(Q1, T) of the chart, contiguous: copied once per basis (once per step; a chart differs from the step's
        only by Omega)."""
        if self._chart is None or chart.Q1 is not self._chart.Q1 or chart.T is not self._chart.T:
            self._chart, self._basis = chart, (np.ascontiguousarray(chart.Q1), np.ascontiguousarray(chart.T))
        return self._basis

    def call(self, t, y, chart):
        """(y', path) of the kernel (nullspace_rhs_kernels.continuation_rhs)."""
        c = self._chart
        if c is not chart and (c is None or chart.Q1 is not c.Q1 or chart.T is not c.T):
            self.basis(chart)
        if self.motions:
            self.pack.drive(t, self.shift, self.dshift, self.ddf)
        return self.kernel(y, self.ints, self.floats, *self._basis)

    def __call__(self, t, y, chart):
        """(y', path) or None (the right-hand side's hot path: no copies, no NumPy call); counts the path."""
        return self.counted(*self.call(t, y, chart))

    def dynamics(self, t, y, chart):
        out, path = self.call(t, y, chart)
        return (out, self.acc.copy(), path, self.X.copy()) if path >= 0 else None


    def continue_basis(self, old, h, Q1_new):
        """T_{k+1} of eq. 22 and App. A from the chart ``old`` (basis_kernels.continue_basis)."""
        from .basis_kernels import continue_basis
        same = self._chart is not None and old.Q1 is self._chart.Q1 and old.T is self._chart.T
        Q1, T = self._basis if same else (np.ascontiguousarray(old.Q1), np.ascontiguousarray(old.T))
        return continue_basis(Q1, T, np.ascontiguousarray(old.Omega), h, np.ascontiguousarray(Q1_new))


    def omega(self, x, v, eps, pqr, Q1, T):
        """Omega (n, n) of eqs 19-20 (basis_kernels.omega)."""
        from .basis_kernels import omega
        p, r = self.pack, Q1.shape[1]
        return omega(x, v, eps, p.prim, p.pval, p.mcols, p.mloc, p.mvec, np.ascontiguousarray(Q1),
                     np.ascontiguousarray(T), np.ascontiguousarray(pqr.perm[:r]), np.ascontiguousarray(pqr.R[:r, :r]),
                     self.rel, self.qe, self.ve, self.A, self.gamma)


class FastFlowRhs(_FastNullSpace):
    """``dynamics(t, y) -> (y' (n + f + n f,), x'' (n,), path, z (f,)) or None`` of ``--basis flow``
    (nullspace_rhs_kernels.flow_rhs)."""

    def __init__(self, formulation):
        from .nullspace_rhs_kernels import flow_rhs
        super().__init__(formulation)
        self.kernel = flow_rhs

    def call(self, t, y):
        """(y', path) of the kernel (nullspace_rhs_kernels.flow_rhs)."""
        if self.motions:
            self.pack.drive(t, self.shift, self.dshift, self.ddf)
        return self.kernel(y, self.ints, self.floats)

    def __call__(self, t, y):
        """(y', path) or None (the right-hand side's hot path: no copies, no NumPy call); counts the path."""
        return self.counted(*self.call(t, y))

    def dynamics(self, t, y):
        out, path = self.call(t, y)
        return (out, self.acc.copy(), path, self.z.copy()) if path >= 0 else None


class NullSpaceAttempts:
    """``(t, y, h_abs, bounds, K, error_prev) -> kernel result`` (:func:`.nullspace_rk.ns_attempts`; the interface of
    :class:`.rk.CompiledAttempts`, for integrate.explicit_compiled.CompiledRungeKutta) of a NullSpace formulation
    whose :func:`attempts_apply`; a state of another length (the singular window's [q, v]) is handed back at once."""

    def __init__(self, formulation, tableau, rtol: float, atol: float, controller, shift: float, floor: float,
                 stretch: float):
        from . import nullspace_rk, rk_kernels
        from .project_kernels import ROW_SPACE_REL
        self.form, self.rhs, self.kernel = formulation, formulation.fast_rhs, nullspace_rk.ns_attempts
        self.OK, self.HAND_BACK, self.FILTER_DECLINED = rk_kernels.OK, rk_kernels.HAND_BACK, rk_kernels.FILTER_DECLINED
        self.tab = (np.ascontiguousarray(tableau.c), np.ascontiguousarray(tableau.a), np.ascontiguousarray(tableau.b),
                    np.ascontiguousarray(tableau.e), int(tableau.n_stages), bool(tableau.fsal),
                    int(tableau.error_order), float(stretch))
        self.ctrl = (float(controller.safety), float(controller.min_factor), float(controller.max_factor),
                     float(controller.beta), float(shift), float(floor))
        self.tols, self.counts = (float(rtol), float(atol)), np.zeros(2, np.int64)
        n, m, nf, p, r = formulation.model.n, formulation.ws.m, formulation.f, self.rhs.pack, self.rhs
        self.filt = (float(formulation.normal_weight), ROW_SPACE_REL, p.prim, p.pval, p.mcols, p.mloc, p.mvec,
                     np.zeros(n + 1), np.zeros(n + 1), np.zeros((m, n + 1)), np.zeros(m), np.zeros((m, m)),
                     int(formulation.generic_rank))
        self.length = n + nf if r.continuation else n + nf + n * nf
        s = int(tableau.n_stages)       # A^T e: the stages' weights of the independent coordinates' estimate (flow_error)
        self.ae = np.zeros(0) if r.continuation else np.ascontiguousarray(tableau.a[:s, :s].T @ tableau.e)
        self.fargs = (r.ints, r.floats)         # the chart's (Q1, T) join per call; a flow run types them empty
        self.cargs = self.fargs + (np.zeros((n, 0)), np.zeros((n, 0)))

    def __call__(self, t, y, h_abs, bounds, K, error_prev):
        if y.shape[0] != self.length:
            return self.HAND_BACK, t, y, h_abs, 0.0, 0.0, 0, 0, False
        r, cargs = self.rhs, self.cargs
        if r.continuation:
            cargs = self.fargs + r.basis(self.form._chart_at(t))
        before = self.counts.copy()
        try:
            out = self.kernel(t, y, h_abs, bounds, self.tab, self.ctrl + (-1.0 if error_prev is None else error_prev,),
                              self.tols, K, self.form.f, r.continuation, cargs, self.fargs, self.filt, self.ae,
                              self.counts)
        except ValueError:      # numba's SVD did not converge: the reference makes the attempt
            out = self.HAND_BACK, t, y, h_abs, 0.0, 0.0, 0, 0, False
        r.paths[0] += int(self.counts[0] - before[0])
        r.paths[1] += int(self.counts[1] - before[1])
        return out


def attempts_apply(formulation) -> bool:
    """True when :class:`NullSpaceAttempts` reproduces the formulation's steps: a compiled right-hand side, only
    holonomic rows (the kernel's error measure) and no prescribed motions (their f(t) is evaluated in Python)."""
    r = getattr(formulation, "fast_rhs", None)
    return isinstance(r, _FastNullSpace) and not formulation.ws.h and not r.pack.motions


def fast_nullspace_rhs(formulation, continuation: bool):
    """The compiled right-hand side (continuation chart or integrated basis T) of a NullSpace formulation whose
    workspace is compiled (:func:`.packed.compiled_workspace`) and whose model has constraints and freedom
    (``formulation.f`` > 0, known after ``initial_state``); else None. The ``recompute`` baseline (paper 000's
    classical method, for comparison) stays on the reference path: its fresh basis at a singular configuration
    is decided by round-off, and the compiled sums took the double four-bar off its branch at t = 8.48 s
    (rtol 1e-9) where the reference passes (tests/test_nullspace.py)."""
    from .packed import CompiledWorkspace
    if (not isinstance(formulation.ws, CompiledWorkspace) or not formulation.ws.m or not formulation.f
            or formulation.basis == "recompute"):
        return None
    return FastContinuationRhs(formulation) if continuation else FastFlowRhs(formulation)
