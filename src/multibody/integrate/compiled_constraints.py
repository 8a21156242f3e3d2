"""Phi and A = Phi_q of a small model in two compiled calls, for the generalized-alpha Newton (issue 16
item 2): the kernels of :mod:`multibody.fast` (``assemble``: A, paper 000 eq. 6; ``constraint_phi``: Phi)
on the packed model of the formulation's compiled right-hand side, instead of one Python call per
constraint group and marker (the Workspace's ``constraints``, which gives the same numbers:
tests/test_generalized_alpha.py). Only for formulations whose ``fast_step`` is set (numba installed and
the model supported by multibody.fast); otherwise the callers keep the Workspace.
"""
from __future__ import annotations

import numpy as np


class CompiledConstraints:
    """``(t, q, v) -> (Phi (m,), A (m, n))``, fresh arrays, of the formulation ``form`` (module doc)."""

    def __init__(self, form):
        from ..fast.kernels import assemble          # numba loads only when the compiled path is used
        from ..fast.step_kernels import constraint_phi

        self.assemble, self.constraint_phi = assemble, constraint_phi
        step, n, m = form.fast_step, form.model.n, form.ws.m
        self.rhs, self.poff, self.n = step.rhs, step.poff, n
        self.qe, self.ve = np.zeros(n + 1), np.zeros(n + 1)      # the last entry: the ground's zero
        self.A, self.gamma, self.phi, self.shift = np.zeros((m, n + 1)), np.zeros(m), np.zeros(m), np.zeros(m)

    def __call__(self, t, q, v):
        r, n = self.rhs, self.n
        self.qe[:n], self.ve[:n] = q, v
        for row, motion in r.motions:                             # prescribed motions f(t) (few)
            self.shift[row] = motion(t)[0]
        self.assemble(self.qe, self.ve, r.prim, r.pval, r.mcols, r.mloc, r.mvec, self.A, self.gamma)
        self.constraint_phi(self.qe, self.ve, r.prim, r.pval, self.poff, r.mcols, r.mloc, r.mvec, self.shift, self.phi)
        return self.phi.copy(), self.A[:, :n].copy()


def compiled_constraints(form) -> CompiledConstraints | None:
    """A :class:`CompiledConstraints` when the formulation has the compiled per-step path, else None."""
    step = getattr(form, "fast_step", None)    # spatial: the SpatialWorkspace is compiled already
    return CompiledConstraints(form) if step is not None and not getattr(step, "spatial", False) else None
