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
        ws, model = formulation.ws, formulation.model
        self.pack, self.rel, self.tau = ws.pack, float(formulation.reg.rel), GRAM_PIVOT_RATIO
        n, m = model.n, ws.m
        self.qe, self.ve = np.zeros(n + 1), np.zeros(n + 1)
        self.A, self.gamma, self.phi = np.zeros((m, n + 1)), np.zeros(m), np.zeros(m)
        self.shift, self.dshift, self.ddf = np.zeros(m), np.zeros(m), np.zeros(m)
        self.paths = [0, 0, 0]
        d = formulation.generic_rank if self.continuation else min(m, n)
        self.x, self.K = np.zeros(d), np.zeros((d, d))      # power-iteration warm start, Gram matrix

    def __call__(self, *args):
        """(y', x'') or None; counts the path taken."""
        out = self.dynamics(*args)
        self.paths[2 if out is None else out[2]] += 1
        return out

    def dynamics(self, *args):  # pragma: no cover - abstract
        raise NotImplementedError

    def multipliers(self, A, b, rtol):
        """lam (m,) = (A^T)^+ b with singular values <= rtol s_max dropped (linalg.rank.min_norm_solve; the same
        truncated pseudo-inverse by SVD, project_kernels.pinned_step)."""
        from .project_kernels import pinned_step
        lam = np.empty(A.shape[0])
        pinned_step(np.ascontiguousarray(A.T), np.ascontiguousarray(b), rtol, lam)
        return lam

    def position_error(self, x, err, m, weight):
        """err (n,) of the positions with its part in the row space of the holonomic rows A[:m] at x scaled by
        ``weight`` (the nullspace formulations' error filter; project_kernels.row_space_filter)."""
        from .kernels import assemble
        from .project_kernels import ROW_SPACE_REL, row_space_filter
        p, n = self.pack, x.shape[0]
        self.qe[:n], self.qe[n], self.ve[:] = x, 0.0, 0.0
        assemble(self.qe, self.ve, p.prim, p.pval, p.mcols, p.mloc, p.mvec, self.A, self.gamma)
        tangent = row_space_filter(np.ascontiguousarray(self.A[:m, :n]), np.ascontiguousarray(err),
                                   ROW_SPACE_REL)
        return tangent + weight * (err - tangent)


class FastContinuationRhs(_FastNullSpace):
    """``dynamics(t, y, chart) -> (y' (n + f,), x'' (n,), path, X (n, f)) or None`` of ``--basis continuation`` in
    a chart (nullspace_kernels.continuation_rhs)."""

    continuation = True

    def __init__(self, formulation):
        from .nullspace_kernels import continuation_rhs
        super().__init__(formulation)
        self.kernel, self._chart, self._basis = continuation_rhs, None, None

    def dynamics(self, t, y, chart):
        if chart is not self._chart:          # contiguous copies once per chart (once per step)
            self._chart, self._basis = chart, (np.ascontiguousarray(chart.Q1), np.ascontiguousarray(chart.T))
        p = self.pack
        p.drive(t, self.shift, self.dshift, self.ddf)
        out = self.kernel(y, self.ddf, self.dshift, p.prim, p.pval, p.mcols, p.mloc, p.mvec, p.M, p.diag, p.f,
                          *self._basis, self.rel, self.tau, self.qe, self.ve, self.A, self.gamma, self.x, self.K)
        return out if out[2] >= 0 else None


    def continue_basis(self, old, h, Q1_new):
        """T_{k+1} of eq. 22 and App. A from the chart ``old`` (basis_kernels.continue_basis)."""
        from .basis_kernels import continue_basis
        Q1, T = (self._basis if old is self._chart else (np.ascontiguousarray(old.Q1), np.ascontiguousarray(old.T)))
        return continue_basis(Q1, T, np.ascontiguousarray(old.Omega), h, np.ascontiguousarray(Q1_new))


    def omega(self, x, v, eps, pqr, Q1, T):
        """Omega (n, n) of eqs 19-20 (basis_kernels.omega)."""
        from .basis_kernels import omega
        p, r = self.pack, Q1.shape[1]
        return omega(x, v, eps, p.prim, p.pval, p.mcols, p.mloc, p.mvec, np.ascontiguousarray(Q1),
                     np.ascontiguousarray(T), np.ascontiguousarray(pqr.perm[:r]), np.ascontiguousarray(pqr.R[:r, :r]),
                     self.rel, self.qe, self.ve, self.A, self.gamma)


class FastFlowRhs(_FastNullSpace):
    """``dynamics(t, y) -> (y' (n + f + n f,), x'' (n,), path, z (f,)) or None`` of ``--basis flow`` (and the
    integrated basis of ``recompute``; nullspace_kernels.flow_rhs)."""

    def __init__(self, formulation):
        from .nullspace_kernels import flow_rhs
        super().__init__(formulation)
        self.kernel, self.f, self.r = flow_rhs, formulation.f, formulation.generic_rank

    def dynamics(self, t, y):
        p = self.pack
        p.drive(t, self.shift, self.dshift, self.ddf)
        out = self.kernel(y, self.f, self.r, self.ddf, self.dshift, p.prim, p.pval, p.mcols, p.mloc, p.mvec, p.M, p.diag,
                          p.f, self.rel, self.tau, self.qe, self.ve, self.A, self.gamma, self.x, self.K)
        return out if out[2] >= 0 else None


def fast_nullspace_rhs(formulation, continuation: bool):
    """The compiled right-hand side (continuation chart or integrated basis T) of a NullSpace formulation whose
    workspace is compiled (:func:`.packed.compiled_workspace`) and whose model has constraints and freedom
    (``formulation.f`` > 0, known after ``initial_state``); else None."""
    from .packed import CompiledWorkspace
    if not isinstance(formulation.ws, CompiledWorkspace) or not formulation.ws.m or not formulation.f:
        return None
    return FastContinuationRhs(formulation) if continuation else FastFlowRhs(formulation)
