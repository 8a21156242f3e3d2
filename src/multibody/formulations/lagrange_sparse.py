"""The sparse pieces of the Lagrange formulation for large models (issue 7 item 3): accelerations by the
Schur complement S = A M^-1 A^T (paper 000 eqs 3, 6; paper 003 eqs 4-9) with SuperLU
(:mod:`multibody.linalg.sparse`). Needs A of full row rank; see :func:`multibody.assembly.use_sparse`.

Near a singular configuration A loses rank and the factorisation of S refuses (its pivot ratio falls below
linalg.sparse.SPARSE_PIVOT_RATIO). Such evaluations take the dense reference solve of the formulation
(Gauss's principle in the singular-value basis of A, smooth through the singular configuration and on the
same branch; issue 12) instead of stopping the run; they are counted in the summary
(``dense_fallback_evaluations``). A model whose A is rank deficient from the first evaluation on has
redundant rows, not a crossing: that still stops with the message to use the dense path.
"""
from __future__ import annotations

import numpy as np

from ..assembly import use_sparse
from ..errors import MultibodyError, SimulationError
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
        self.fallbacks, self.factored_once = 0, False

    def solve(self, t, q, v):
        """(q'' (n,), lambda (m,), A sparse, f) at (t, q, v), Baumgarte terms included if chosen."""
        Phi, A, Phi_t, gamma = self.ws.sparse_constraints(t, q, v)
        s = self.form.stabilization
        if s.kind == "baumgarte":
            gamma = gamma - 2 * s.alpha * (A @ v + Phi_t) - s.beta ** 2 * Phi
        mass = self.mass or SparseMass(self.model.mass(q))
        f = self.ws.forces(t, q, v)
        try:
            vdot, lam = schur_accelerations(mass, A, f, gamma)
            self.factored_once = True
        except SimulationError:          # rank loss at a singular configuration: the dense solve (module doc)
            if not self.factored_once:   # rank deficient from the start: redundant rows, not a crossing
                raise
            self.fallbacks += 1
            terms, vdot = self.form._solve(t, q, v)
            lam = self.form.multipliers(terms, vdot)
        return vdot, lam, A, f

    def rhs(self, t, y):
        q, v = self.form.split(t, y)
        return np.concatenate([v, self.solve(t, q, v)[0]])

    def summary(self) -> dict:
        return {"linear_algebra": "sparse (SuperLU, Schur complement A M^-1 A^T); per-step rank and "
                                  "uniqueness diagnostics skipped (full row rank checked by the factorisation)",
                "dense_fallback_evaluations": self.fallbacks}
