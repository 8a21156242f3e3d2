"""Energy-momentum time stepping of constrained systems with constant mass matrix (paper 004 eq. 10)
and its size reduction by the discrete null space method (Sects 2.2, 3.3, 4.3-4.5, 5.4).

Constrained scheme (eq. 10) with v_{n+1/2} = (v_n + v_{n+1})/2 eliminated:

    R_q = 2/dt M (q_{n+1} - q_n) - 2 M v_n + dt grad V + dt G(q_{n+1/2})^T lam = 0   (n rows)
    R_l = Phi(q_{n+1}) = 0                                                          (m rows)

unknowns (q_{n+1}, lam); springs, dampers and applied loads add -dt Q_bar to R_q
(:mod:`multibody.integrate.discrete_forces`, issue 23), grad V being uniform gravity; driver rows
(constrained scheme only) enter as Phi(q_{n+1}, t_{n+1}) = 0 with G(q_{n+1/2}, t_{n+1/2}).
All constraints are at most quadratic, so the discrete Jacobian is
G(q_{n+1/2}) (eqs 38, 67) and the scheme conserves energy and the momentum maps of symmetries
exactly, up to the Newton tolerance. The iteration matrix [[2/dt M + dt/2 sum lam_k H_k, dt G^T],
[G, 0]] has singular values ~1/dt and ~dt^2, hence condition ~dt^-3 (Tables II-V).

Reduced scheme (discrete null space method): unknowns mu (d = n - m), q_{n+1} = F_{q_n}(mu) satisfies
the tree constraints identically (eqs 44, 95, 118, 126, 136, 154, 188-189), and the multipliers
disappear by premultiplying with the discrete null-space matrix P(q_n, q_{n+1}) = P_int(q_mid)
P_ext(q_n, q_{n+1}) (eqs 68-74, 187):  P^T R_q(F(mu)) = 0. Any basis of null G(q_mid) and any F onto Q give
the same q_{n+1}; ``unknowns="joint"`` (default) moves a planar pair's child joint point in the plane with
the parent's joint point and turns a root parent in the pair frame (model.director_tree.pair_frames), so
the condition grows like |gap|^2, not |gap|^4 as with the paper's relative coordinates ("paper"), and the
planar pair at dt = 0.01 runs past the 34 s where the paper's unknowns diverged (docs/theory/paper004.md).

Closed loops (eq. 190; Part I's Appendix C is not in the text, its two steps derived in
docs/theory/paper004.md): the closure constraints Phi_c are kept as equations. Their independent rows
(pivoted QR, the redundant ones are reported) give B = G_c(q_mid) P^o (k, d) with rank k; choosing k
dependent columns D (pivoted QR at q_n, the rest F) the closed-loop discrete null-space matrix is
P^c = P^o P^oc with P^oc[F] = I, P^oc[D] = -B_D^-1 B_F, so G_c(q_mid) P^c = 0 exactly and P^c -> P^c(q) as
dt -> 0 (the discrete counterpart of eqs 191-192). Because the closure constraints are quadratic, G_c(q_mid)
(q_{n+1} - q_n) = Phi_c(q_{n+1}) - Phi_c(q_n) = 0, so q_{n+1} - q_n lies in range P^c and energy is
conserved as in the open case. Equations: (P^c)^T R_q = 0 (d - k) and s Phi_c(q_{n+1}) = 0 (k), with
s = 2/dt |(P^c)^T M P^o|_2 / |B|_2 at q_n ("balanced": the two blocks of the iteration matrix alike, its
condition ~12 for every dt on Table V's linkage) or s = 1 ("none", the paper's pattern 19/10/58).

Newton with complex-step Jacobians for the reduced scheme (exact; all maps are complex-safe) and the
analytic Jacobian for the constrained one. Convergence when the scaled residual is below
``NewtonTolerance.residual`` (relative to the momentum scale max(|2 M v_n|, dt |grad V|) for dynamic
rows -- times the largest column sum of |P(q_n)| for the reduced rows P^T R_q, whose round-off
floor grows with the lever arms of the tree -- absolute for constraint rows in their own units); then one more correction with the last
Jacobian takes the solution to the round-off floor (the reduced scheme: corrections while they halve, at most
3; or a step that moved q_{n+1} by less than 8 eps |q| with the residual within 1e4 tolerances is accepted as
that floor) (without it the reduced scheme, whose rows carry the large rotation increments, drifted in energy
by ~1e-13 relative per step on the top). The reduced scheme starts Newton from the extrapolated unknowns and
accepts a root only if it solves eq. (10) itself (R_q in range G(q_mid)^T): P^T R_q = 0 has spurious roots
where a body turns by pi in one step.
Unknowns are increments (dq, mu), so the residual 2/dt M dq - 2 M v_n + dt grad V has no
cancellation against large coordinates. The constrained scheme starts from dq = dt v_n, lam_n or, where its scaled
residual is smaller, the extrapolation 2 dt v_n - dq_{n-1}, 2 lam_n - lam_{n-1} (second order in dt; the same root,
one iteration fewer on the six-body linkage at dt = 1e-3; fast.em_constrained_kernels).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..assembly import Workspace
from ..errors import MultibodyError, SimulationError
from ..fast.spatial import constrained_step, independent_rows, quadratic_table, row_pivots
from ..fast.em_tree import TreeTable
from ..linalg.rank import pivoted_qr
from ..model.director_tree import build_tree, internal_null_space, pair_frames, reparametrize, twist_matrix
from .discrete_forces import DiscreteForces
from .em_reduced import COMPLEX_STEP, ReducedNewton


@dataclass(frozen=True)
class NewtonTolerance:
    """residual: relative tolerance of the scaled residual; max_iterations per step."""

    residual: float = 1e-13
    max_iterations: int = 30


class EnergyMomentumStepper(ReducedNewton):
    """One model, one scheme, fixed dt: ``step(q, v, t) -> (q, v)``; ``iterations`` and ``condition``
    (2-norm condition number of the last iteration matrix) describe the last step.

    Parameters
    ----------
    model : Model
        A spatial director model (constant mass matrix).
    scheme : {"reduced", "constrained"}
        Discrete null space method or eq. (10) with multipliers.
    dt : float
        Fixed step.
    tol : NewtonTolerance
        Newton's relative residual tolerance and iteration limit.
    condition : bool
        Compute the condition number of each iteration matrix (one SVD per Newton iteration).
    unknowns : {"joint", "paper"}
        Reduced scheme: the planar pairs' unknowns at the joint point in the pair frame, or the paper's
        relative coordinates (eqs 143, 149, 154). Same solution; different Newton conditioning.
    closure_scaling : {"balanced", "none"}
        Reduced scheme with closed loops: scaling of the closure rows (same solution).
    fast : bool
        Evaluate the constraints, and the constrained scheme's Newton iteration, in compiled calls
        (:mod:`multibody.fast.spatial`) where the model is supported; False: the NumPy reference.
    table : QuadraticTable or None
        The packed constraint table of this model's rows (fast.spatial.quadratic_table), when the caller has built
        it already (the formulation's workspace); None: built here.

    Raises
    ------
    MultibodyError
        An unknown scheme, option or a non-positive step; a model without constant mass matrix.
    """

    def __init__(self, model, *, scheme: str = "reduced", dt: float, tol: NewtonTolerance = NewtonTolerance(),
                 condition: bool = True, unknowns: str = "joint", closure_scaling: str = "balanced",
                 fast: bool = True, table=None):
        if scheme not in ("constrained", "reduced"):
            raise MultibodyError(f"unknown energy-momentum formulation '{scheme}' (constrained, reduced).")
        if not (np.isfinite(dt) and dt > 0):
            raise MultibodyError(f"the energy-momentum scheme needs a positive fixed step, got {dt}.")
        self.model, self.scheme, self.dt, self.tol, self.want_cond = model, scheme, float(dt), tol, condition
        self.M = model.mass_matrix
        if self.M is None:
            raise MultibodyError(f"model '{model.name}': the energy-momentum scheme needs a constant mass matrix.")
        self.forces = DiscreteForces(model, dt, scheme)   # gravity, spatial springs, dampers, loads (issue 23)
        self.gradV, self.t_mid = self.forces.gradV, 0.5 * dt
        self.dt_gradV = np.ascontiguousarray(self.dt * self.gradV, dtype=np.float64)   # the compiled steps' force
        self.ws = Workspace(model)
        # compiled constraints (fast.spatial) or None; ``table``: the caller's table of this model's rows, if it has one
        self.fast = (table if table is not None else quadratic_table(model)) if fast else None
        if unknowns not in ("paper", "joint"):
            raise MultibodyError(f"unknown reduced unknowns '{unknowns}' (paper, joint).")
        if closure_scaling not in ("balanced", "none"):
            raise MultibodyError(f"unknown closure_scaling '{closure_scaling}' (balanced, none).")
        self.closure_scaling = closure_scaling
        self.tree = replace(build_tree(model), unknowns=unknowns)
        # the reduced Newton compiled (fast.em_tree; uniform gravity only) or None; the root bodies' pair frames
        self.compiled = (TreeTable(self.tree, model.q0, self.fast, self.M) if scheme == "reduced" and self.fast is not None
                         and not self.forces else None)
        self._framed = bool(pair_frames(self.tree, model.q0))
        A0 = self.ws.constraints(0.0, model.q0, np.zeros(model.n))[1]
        qr = pivoted_qr(A0)
        self.redundant = tuple(model.constraint_labels[i] for i in qr.redundant_rows)
        self.rows = qr.independent_rows                                   # constrained scheme
        self.iterations, self.condition, self.lam = 0, np.nan, np.zeros(len(self.rows))
        # the last two steps' mu and q_n - q_{n-1}: the next Newton guesses (_reduced_step, _guess)
        self.mu = self.mu_prev = self.dq = self._mu = None
        self.previous = None      # the constrained scheme's last (dq, lam before it): its Newton's extrapolated start
        self._setup_closure(A0)

    # ------------------------------------------------------------------ closed loops
    def _setup_closure(self, A0):
        """Closure rows of the model; the independent ones and the dependent unknowns are chosen at
        the start of every step (:meth:`_select`) by pivoted QR at q_n: the reduced equations depend
        only on range(P^c) = null(B), not on that choice, and a fixed choice would become singular
        where the chosen unknowns stop being able to carry the motion (e.g. turning points)."""
        self.all_closure_rows = self.tree.closure_rows(self.model)
        self.closure_rows, self.dep, self.free = self.all_closure_rows, np.zeros(0, int), np.arange(self.tree.d)
        self.closure_scale = 1.0        # "balanced": set per step by _select

    def _select(self, qn):
        """Independent constraint rows (constrained scheme) or closure rows and dependent unknowns
        (reduced scheme) by pivoted QR (linalg.pivoted_qr) at q_n."""
        if self.scheme == "reduced" and len(self.all_closure_rows) == 0:
            return
        A = (self.fast.evaluate(qn)[1] if self.fast is not None
             else self.ws.constraints(self.t_mid - 0.5 * self.dt, qn, np.zeros(self.model.n))[1])
        if self.scheme == "constrained":
            rows = independent_rows(A)
            if len(rows) != len(self.rows):
                raise SimulationError(f"model '{self.model.name}': the rank of the constraint Jacobian changed "
                                      f"({len(self.rows)} -> {len(rows)}): a singular configuration.")
            self.lam = _carry(self.lam, self.rows, rows, self.model.m)
            if self.previous is not None:
                self.previous = (self.previous[0], _carry(self.previous[1], self.rows, rows, self.model.m))
            self.rows = rows
            return
        rows = self.all_closure_rows
        if len(rows) == 0:
            return
        Po = (internal_null_space(self.tree, qn, twist_matrix(self.tree, qn)) if self.compiled is None
              else self.compiled.null_space(qn))
        B = A[rows] @ Po
        independent = independent_rows(B)                   # pivoted_qr(B).independent_rows (fast.spatial)
        self.closure_rows = rows[independent]
        B = B[independent]
        perm, rank = row_pivots(B.T)                         # pivoted_qr(B.T): (perm, rank)
        self.dep = np.sort(perm[:rank])
        free = np.ones(self.tree.d, dtype=bool)
        free[self.dep] = False
        self.free = np.flatnonzero(free)
        if self.closure_scaling == "balanced":   # |d(P^c^T R)/dmu| ~ 2/dt |P^c^T M P^o| against |G_c P^o|
            Poc = np.zeros((self.tree.d, len(self.free)))
            Poc[self.free] = np.eye(len(self.free))
            Poc[self.dep] = -np.linalg.solve(B[:, self.dep], B[:, self.free])
            # 2-norms as np.linalg.norm(., 2): the largest singular value (without its axis handling)
            dyn = 2 / self.dt * np.linalg.svd((Po @ Poc).T @ self.M @ Po, compute_uv=False)[0]
            self.closure_scale = dyn / max(np.linalg.svd(B, compute_uv=False)[0], np.finfo(float).tiny)

    def _closure_values(self, q):
        """Phi_c (..., k) and G_c (..., k, n) at q (..., n), real or complex (closure rows only): the rows'
        einsums of QuadraticConstraints.values on the closure rows alone (row by row the same arithmetic, so
        the same numbers as evaluating every row of the groups and selecting)."""
        qe = np.concatenate([q, np.zeros(q.shape[:-1] + (1,), dtype=q.dtype)], axis=-1)
        H, g, c, cols = self._closure_forms()
        x = qe[..., cols]
        Hx = np.einsum("rij,...rj->...ri", H, x)
        phi = 0.5 * np.einsum("...ri,...ri->...r", x, Hx) + np.einsum("ri,...ri->...r", g, x) + c
        jac = np.zeros(x.shape[:-2] + (len(c), qe.shape[-1]), dtype=Hx.dtype)
        jac[..., np.arange(len(c))[:, None], cols] = Hx + g        # distinct columns apart from the ground's
        return phi, jac[..., :-1]

    def _closure_forms(self):
        """H, g, c, cols of the current closure rows (model.director.QuadraticConstraints), cached per row set."""
        key = tuple(self.closure_rows)
        if getattr(self, "_forms", (None,))[0] != key:
            offsets = np.cumsum([0] + [g.rows for g in self.model.constraints])
            parts = [(g, self.closure_rows[(self.closure_rows >= o) & (self.closure_rows < o + g.rows)] - o)
                     for g, o in zip(self.model.constraints, offsets)]
            parts = [(g, sel) for g, sel in parts if len(sel)]
            self._forms = (key, tuple(np.concatenate([getattr(g, a)[sel] for g, sel in parts])
                                      for a in ("H", "g", "c", "cols")))
        return self._forms[1]

    # ------------------------------------------------------------------ residuals
    def _momentum_residual(self, vn, dq, qn):
        """R_q (..., n) without the multiplier term, from the increment dq = q_{n+1} - q_n (no
        cancellation against large coordinates); forces by integrate.discrete_forces."""
        return 2 / self.dt * (dq @ self.M) - 2 * (self.M @ vn) + self.forces.residual(qn, dq, self.t_mid)

    def _reduced_residual(self, qn, vn, mu):
        """Reduced residual (..., d) and dq (..., n) for mu (..., d) (batched for the Jacobian)."""
        dq = reparametrize(self.tree, qn, mu)
        qm = qn + 0.5 * dq
        P = internal_null_space(self.tree, qm, twist_matrix(self.tree, qm))           # eq. (68)
        r = self._momentum_residual(vn, dq, qn)
        if len(self.closure_rows) == 0:
            return np.einsum("...nd,...n->...d", P, r), dq
        _, Gm = self._closure_values(qm)
        B = Gm @ P
        Poc = np.zeros(B.shape[:-2] + (self.tree.d, len(self.free)), dtype=B.dtype)
        Poc[..., self.free, :] = np.eye(len(self.free))
        Poc[..., self.dep, :] = -np.linalg.solve(B[..., :, self.dep], B[..., :, self.free])
        phi1, _ = self._closure_values(qn + dq)
        return np.concatenate([np.einsum("...nd,...n->...d", P @ Poc, r), self.closure_scale * phi1],
                              axis=-1), dq

    def _scale(self, vn, qn):
        return max(np.max(np.abs(2 * self.M @ vn)), self.forces.scale(qn, vn, self.t_mid), np.finfo(float).tiny)

    # ------------------------------------------------------------------ steps
    def step(self, qn, vn, t=0.0):
        """(q_{n+1}, v_{n+1}) from (q_n, v_n) at t_n = t (the time enters user loads and drivers)."""
        self.t_mid = t + 0.5 * self.dt
        if self.tree.unknowns == "joint" and self.scheme == "reduced" and self._framed:   # the unknowns' frames
            self.tree = replace(self.tree, frames=pair_frames(self.tree, qn))
            if self.compiled is not None:
                self.compiled.set_frames(self.tree.frames)
        self._select(qn)
        dq = self._reduced_step(qn, vn) if self.scheme == "reduced" else self._constrained_step(qn, vn)
        return qn + dq, 2 / self.dt * dq - vn

    def _size(self, qn):
        """The constraint rows' scale max(1, L, |q_n|): Phi(q) carries round-off eps |q|, so a body that has flown
        far (the planar pair: |q| = 6e3 after 26 s at the paper's dt = 0.01) can no longer meet an absolute
        1e-13 L (Newton stalled at |Phi| = 8e-13 and the run stopped)."""
        return max(1.0, self.model.length_scale, np.max(np.abs(qn), initial=0.0))

    def _converged(self, r, split, scale, qn):
        """The dynamic rows against ``scale`` (momenta, forces), the constraint rows against :meth:`_size`."""
        dyn, con = r[:split], r[split:]
        size = self._size(qn)
        return (np.max(np.abs(dyn), initial=0) <= self.tol.residual * scale
                and np.max(np.abs(con), initial=0) <= self.tol.residual * size)

    def _constrained_step(self, qn, vn):
        """Newton on eq. (10) (:meth:`_constrained_newton`, compiled where the model is supported): from the start
        of smaller residual, and should Newton fail from the extrapolated one, again from dq = dt v_n, lam_n."""
        tries = (self.previous, None) if self.previous is not None else (None,)
        for previous in tries:
            try:
                dq, lam, it, extrapolated = self._constrained_newton(qn, vn, previous)
            except np.linalg.LinAlgError:
                if previous is None:
                    raise
                continue
            if it >= 0 or not extrapolated:
                break
        if it < 0:
            raise SimulationError(f"model '{self.model.name}': Newton of the constrained energy-momentum step did "
                                  f"not converge in {self.tol.max_iterations} iterations (dt = {self.dt:g}).")
        self.previous, self.iterations, self.lam = (dq, self.lam), it, lam
        return dq

    def _constrained_start(self, qn, vn, previous, residual, scale):
        """(dq, lam, extrapolated): dq = dt v_n, lam = lam_n, or where ``previous`` = (dq_{n-1}, lam_{n-1}) is given
        and its scaled residual is smaller, the extrapolation 2 dt v_n - dq_{n-1}, 2 lam_n - lam_{n-1}
        (fast.em_constrained_kernels: the same root, fewer iterations)."""
        dq, lam = self.dt * vn, self.lam.copy()
        if previous is None:
            return dq, lam, False
        size, n = self._size(qn), self.model.n
        measure = lambda r: max(np.max(np.abs(r[:n])) / scale, np.max(np.abs(r[n:]), initial=0) / size)  # noqa: E731
        dq2, lam2 = 2 * self.dt * vn - previous[0], 2 * lam - previous[1]
        if measure(residual(dq2, lam2)[0]) < measure(residual(dq, lam)[0]):
            return dq2, lam2, True
        return dq, lam, False

    def _constrained_newton(self, qn, vn, previous):
        """(dq, lam, iterations or -1, extrapolated start) of Newton on eq. (10); LinAlgError on a singular
        iteration matrix."""
        n, rows, dt = self.model.n, self.rows, self.dt
        if self.fast is not None and not self.forces:     # the same Newton, compiled (fast.em_constrained_kernels)
            return self._compiled_constrained(qn, vn, previous)
        scale = self._scale(vn, qn)
        zero = np.zeros(n)

        def residual(dq, lam):
            Gm = self.ws.constraints(self.t_mid, qn + 0.5 * dq, zero)[1][rows]
            Phi1, G1 = (x[rows] for x in self.ws.constraints(self.t_mid + 0.5 * dt, qn + dq, zero)[:2])
            return np.concatenate([self._momentum_residual(vn, dq, qn) + dt * Gm.T @ lam, Phi1]), Gm, G1
        dq, lam, extrapolated = self._constrained_start(qn, vn, previous, residual, scale)
        for it in range(self.tol.max_iterations + 1):
            r, Gm, G1 = residual(dq, lam)
            if self._converged(r, n, scale, qn):
                if it:     # polish: one more correction with the last Jacobian (round-off floor)
                    dx = np.linalg.solve(J, r)
                    dq, lam = dq - dx[:n], lam - dx[n:]
                return dq, lam, it, extrapolated
            if it == self.tol.max_iterations:
                break
            J = np.zeros((n + len(rows), n + len(rows)))
            J[:n, :n] = 2 / dt * self.M + 0.5 * dt * self._hessian(lam) + self.forces.jacobian(qn, dq, self.t_mid)
            J[:n, n:], J[n:, :n] = dt * Gm.T, G1
            if self.want_cond:
                self.condition = float(np.linalg.cond(J))
            dx = np.linalg.solve(J, r)
            dq, lam = dq - dx[:n], lam - dx[n:]
        return dq, lam, -1, extrapolated

    def _compiled_constrained(self, qn, vn, previous):
        """:meth:`_constrained_newton` in one compiled call: constraints from the packed table, forces uniform
        gravity only (dt grad V); the same start, scale and size (_scale, _converged)."""
        dq, lam, it, cond, extrapolated = constrained_step(
            self.fast, qn, vn, self.M, self.dt_gradV, self.dt, self.rows, self.lam, tol=self.tol.residual,
            length=self.model.length_scale, max_it=self.tol.max_iterations, want_cond=self.want_cond,
            previous=previous)
        if self.want_cond and it != 0:
            self.condition = cond
        return dq, lam, it, extrapolated

    def _hessian(self, lam):
        """sum_k lam_k Phi_k,qq over the independent rows (n, n)."""
        full = np.zeros(self.model.m)
        full[self.rows] = lam
        out, start = np.zeros((self.model.n, self.model.n)), 0
        for g in self.model.constraints:
            part = full[start:start + g.rows]
            out += (g.hessian_sum_at(part, self.model.n, self.t_mid) if hasattr(g, "hessian_sum_at")   # drivers
                    else g.hessian_sum(part, self.model.n))
            start += g.rows
        return out

    @property
    def multipliers(self) -> np.ndarray:
        """The discrete multipliers lam (m,) of the last constrained step (NaN for the reduced one and
        for the redundant rows)."""
        out = np.full(self.model.m, np.nan)
        if self.scheme == "constrained":
            out[self.rows] = self.lam
        return out


def _carry(lam, old_rows, new_rows, m):
    """The multipliers of the rows kept when the independent rows change (initial Newton guess)."""
    full = np.zeros(m)
    full[old_rows] = lam
    return full[new_rows]
