"""The reduced energy-momentum step's Newton iteration (paper 004 Sects 4.3-4.5, 5.4: P^T R_q(F_{q_n}(mu)) = 0
for the unknowns mu of the discrete null space method), a mixin of
:class:`~multibody.integrate.energy_momentum.EnergyMomentumStepper`, which supplies the residuals
(``_reduced_residual``, ``_momentum_residual``), the tolerances and the tree. Starting guesses, the root's
consistency test against eq. (10), the polish to the round-off floor and the stall test are here."""
from __future__ import annotations

import numpy as np

from ..errors import SimulationError
from ..model.director_tree import null_space_matrix, predictor, reparametrize

#: complex step for the Jacobians (any tiny value: no subtraction error)
COMPLEX_STEP = 1e-30


class ReducedNewton:
    """Newton on the reduced scheme's equations (the methods below; state: ``mu``, ``mu_prev``, ``dq``)."""

    def _reduced_step(self, qn, vn):
        """Newton from the extrapolated unknowns 2 mu_n - mu_{n-1} (the increments of a steady motion are
        steady: the planar pair in its pair frame, 3.0 iterations per step against 4.7 from the fitted guess);
        should it fail (diverge, stall, or reach a spurious solution, :meth:`_consistent`), from mu_n, the
        fitted guess (:meth:`_guess`) and the predictor (the same discrete solution is sought)."""
        if self.mu is None:
            starts = [lambda: predictor(self.tree, qn, self.dt * vn)]
        else:
            last = self.mu
            previous = last if self.mu_prev is None else self.mu_prev
            starts = [lambda: 2 * last - previous, lambda: last, lambda: self._guess(qn, vn),
                      lambda: predictor(self.tree, qn, self.dt * vn)]
        for start in starts:
            dq = self._reduced_newton(qn, vn, start().copy())
            if dq is not None and self._consistent(qn, vn, dq):
                self.mu_prev, self.mu, self.dq = self.mu, self._mu, dq
                return dq
        raise SimulationError(f"model '{self.model.name}': Newton of the reduced energy-momentum step did not "
                              f"converge in {self.tol.max_iterations} iterations from {len(starts)} starting "
                              f"guess(es) (dt = {self.dt:g}); take a smaller step.")

    def _consistent(self, qn, vn, dq):
        """Whether q_n + dq solves eq. (10) itself: R_q in range G(q_mid)^T to sqrt(eps) of the momentum
        scale. P^T R_q = 0 has spurious solutions where P(q_mid) loses rank: a body turning by pi in one step
        has mid-point directors (d + R d)/2 of length cos(theta/2) = 0 (the planar pair at 428.33 s: the plate
        by pi about n, E jumped by 435 E0, R_q 12 scales outside range G^T; true steps 1e-12). The mid-point
        frame has |det| = cos^2(theta/2); while every body turns by at most pi/2 (|det| >= 1/2) the frames,
        hence P_int and the pairs' columns of P(q_mid), are regular and P^T R_q = 0 is eq. (10): the
        least-squares test (0.9 ms on the six-body linkage) is made only for larger turns."""
        known, det = getattr(self, "_mid_det", (None, None))     # the compiled Newton's smallest |det| of this dq
        if known is not dq:
            det = np.min(np.abs(np.linalg.det(self.tree.bodies.frames(qn + 0.5 * dq)[1])), initial=1.0)
        if det >= 0.5:
            return True
        r = self._momentum_residual(vn, dq, qn)
        G = self.ws.constraints(self.t_mid, qn + 0.5 * dq, np.zeros(self.model.n))[1]
        outside = r - G.T @ np.linalg.lstsq(G.T, r, rcond=None)[0]
        return np.max(np.abs(outside)) <= np.sqrt(np.finfo(float).eps) * self._scale(vn, qn)

    def _reduced_newton(self, qn, vn, mu):
        """q_{n+1} - q_n, or None when Newton does not converge (or meets a singular matrix); the whole loop in
        one compiled call where the stepper has the compiled tree (fast.em_tree: :meth:`_compiled_newton`)."""
        if self.compiled is not None:
            return self._compiled_newton(qn, vn, mu)
        d, h = self.tree.d, COMPLEX_STEP
        split = d - len(self.closure_rows)
        # a reduced row k is P[:, k] . r: its round-off floor grows with the column sum of |P| (lever
        # arms of the tree), so the dynamic rows are measured against scale * max_k |P[:, k]|_1
        lever = np.max(np.abs(null_space_matrix(self.tree, qn)).sum(axis=0))
        scale = self._scale(vn, qn) * max(1.0, lever)
        closure = np.ones(d)
        closure[split:] = self.closure_scale if len(self.closure_rows) else 1.0
        last = None
        for it in range(self.tol.max_iterations + 1):
            r, dq = self._reduced_residual(qn, vn, mu)
            if not np.all(np.isfinite(r)):
                return None
            if self._converged(r / closure, split, scale, qn) or self._stalled(r / closure, dq, last, scale, qn):
                if it:
                    mu, dq = self._polish(qn, vn, mu, r, J)
                self.iterations, self._mu = it, mu
                return dq
            if it == self.tol.max_iterations:
                return None
            J = self._reduced_residual(qn, vn, mu + 1j * h * np.eye(d))[0].imag.T / h   # complex step
            if self.want_cond:
                self.condition = float(np.linalg.cond(J))
            try:
                mu, last = mu - np.linalg.solve(J, r.real), dq
            except np.linalg.LinAlgError:
                return None
        return None

    def _compiled_newton(self, qn, vn, mu):
        """:meth:`_reduced_newton` in one compiled call (fast.em_tree, uniform gravity only: R_q = 2/dt M dq
        - 2 M v_n + dt grad V; the same scale, lever and size)."""
        dq, mu, it, cond, det = self.compiled.newton(
            qn, vn, self.dt_gradV, self.dt, self.closure_rows, self.dep, self.free,
            self.closure_scale, mu, tol=self.tol.residual, length=self.model.length_scale,
            max_it=self.tol.max_iterations, step=COMPLEX_STEP, want_cond=self.want_cond)
        if self.want_cond and not np.isnan(cond):
            self.condition = cond
        if dq is not None:
            self.iterations, self._mu, self._mid_det = it, mu, (dq, det)
        return dq

    def _polish(self, qn, vn, mu, r, J):
        """Corrections with the last Jacobian while they shrink at least by half (at most 3): mu to the round-off
        floor. The tolerance admits a residual ~1e-13 scale times the lever (2e5 for the planar pair at 1000 s),
        and what Newton leaves has the sign of the guess's error step after step: one correction left the
        planar pair an energy bias of -5e-17 E0 per step (-1.8e-12 E0 at 400 s; docs/guide/energy-momentum.md)."""
        step = np.linalg.solve(J, r.real)
        for _ in range(3):
            mu = mu - step
            r, dq = self._reduced_residual(qn, vn, mu)
            new = np.linalg.solve(J, r.real)
            if not np.max(np.abs(new)) < 0.5 * np.max(np.abs(step)):
                break
            step = new
        return mu, dq

    def _stalled(self, r, dq, last, scale, qn):
        """Converged to the round-off floor: the last correction moved q_{n+1} by less than 8 eps |q| (below
        the rounding of q_{n+1} = q_n + dq itself) and the dynamic residual is within 1e4 times its tolerance.
        The reduced rows' floor grows with the lever arm times the rounding of dq (a far planar child), so
        past ~1e5 m the residual test alone could fail although Newton had converged."""
        if last is None:
            return False
        size = max(1.0, self.model.length_scale, np.max(np.abs(qn), initial=0.0))
        return (np.max(np.abs(dq - last)) <= 8 * np.finfo(float).eps * size
                and np.max(np.abs(r.real)) <= 1e4 * self.tol.residual * scale)

    def _guess(self, qn, vn, iterations=1):
        """Newton guess: mu with F_{q_n}(mu) - q_n closest to the extrapolated increment
        2 dt v_n - (q_n - q_{n-1}) = dt (2 v_n - v_{n-1/2}) ~ dt v_{n+1/2} (Gauss-Newton from the last mu,
        complex-step Jacobian of F). The last mu itself is a poor guess when a child is far from its
        parent: the unknowns are relative, and the parent's rotation moves the child by ~|theta|^2 |arm|."""
        d, mu = self.tree.d, self.mu.copy()
        target = 2 * self.dt * vn - self.dq
        for _ in range(iterations):
            F = reparametrize(self.tree, qn, mu + 1j * COMPLEX_STEP * np.eye(d)).imag.T / COMPLEX_STEP
            mu = mu - np.linalg.lstsq(F, reparametrize(self.tree, qn, mu) - target, rcond=None)[0]
        return mu
