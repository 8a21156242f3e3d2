"""The sparse pieces of the Lagrange formulation for large models (issue 7 item 3): accelerations by the
Schur complement S = A M^-1 A^T (paper 000 eqs 3, 6; paper 003 eqs 4-9) with SuperLU
(:mod:`multibody.linalg.sparse`). Needs A of full row rank; see :func:`multibody.assembly.use_sparse`.
"""
from __future__ import annotations

import numpy as np

from ..assembly import use_sparse
from ..errors import MultibodyError
from ..linalg.sparse import SparseMass, schur_accelerations


def lagrange_sparse(form, sparse: bool | None, eliminate, choose_rows) -> bool:
    """Resolve the Lagrange ``sparse`` option (None: automatic for large eligible models without
    ``eliminate``/``choose_rows`` and with the plain Lagrange acceleration solve)."""
    plain = form.plain_solve
    if sparse is None:
        return use_sparse(form.model, None) and plain and not eliminate and not choose_rows
    if sparse and (not plain or eliminate or choose_rows):
        raise MultibodyError(f"Model '{form.model.name}': sparse=True needs the plain 'lagrange' solve "
                             "without eliminate/choose_rows (the sparse path requires independent rows).")
    return use_sparse(form.model, sparse)


class SparseLagrange:
    """The sparse pieces of :class:`~multibody.formulations.lagrange.Lagrange` (``sparse=True``)."""

    def __init__(self, form):
        self.form, self.model, self.ws = form, form.model, form.ws
        M0 = self.model.mass(self.model.q0)
        self.mass = SparseMass(M0) if self.model.mass_matrix is not None else None

    def solve(self, t, q, v):
        """(q'' (n,), lambda (m,), A sparse, f) at (t, q, v), Baumgarte terms included if chosen."""
        Phi, A, Phi_t, gamma = self.ws.sparse_constraints(t, q, v)
        s = self.form.stabilization
        if s.kind == "baumgarte":
            gamma = gamma - 2 * s.alpha * (A @ v + Phi_t) - s.beta ** 2 * Phi
        mass = self.mass or SparseMass(self.model.mass(q))
        f = self.ws.forces(t, q, v)
        vdot, lam = schur_accelerations(mass, A, f, gamma)
        return vdot, lam, A, f

    def rhs(self, t, y):
        q, v = self.form.split(t, y)
        return np.concatenate([v, self.solve(t, q, v)[0]])

    @staticmethod
    def summary() -> dict:
        return {"linear_algebra": "sparse (SuperLU, Schur complement A M^-1 A^T); per-step rank and "
                                  "uniqueness diagnostics skipped (full row rank checked by the factorisation)"}
