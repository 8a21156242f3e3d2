"""The generalized-alpha method for the index-3 equations of motion, with sparse Newton iterations.

Chung & Hulbert (1993, J. Appl. Mech. 60:371-375) for structural dynamics; Arnold & Bruels (2007,
Multibody Syst. Dyn. 18:185-202, "Convergence of the generalized-alpha scheme for constrained
mechanical systems", Algorithm 1 and eqs 8-15) for the constrained equations

    M(q) a + A(q)^T lambda = f(t, q, v),   Phi(q, t) = 0           (paper 000 eq. 3)

with q' = v, v' = a and the algorithmic accelerations abar,

    q_{n+1}   = q_n + h v_n + h^2 (1/2 - beta) abar_n + h^2 beta abar_{n+1}
    v_{n+1}   = v_n + h (1 - gamma) abar_n + h gamma abar_{n+1}
    (1 - alpha_m) abar_{n+1} + alpha_m abar_n = (1 - alpha_f) a_{n+1} + alpha_f a_n

and the parameters of Chung & Hulbert's optimal family for a spectral radius rho_inf at h -> infinity
(Arnold & Bruels eq. 11): alpha_m = (2 rho - 1)/(rho + 1), alpha_f = rho/(rho + 1),
gamma = 1/2 - alpha_m + alpha_f, beta = (gamma + 1/2)^2 / 4. Second order in q, v and a; rho_inf < 1
damps the high frequencies, which is why the step is set by the accuracy of the slow motion, not by
the stability limit of the stiffest mode (a long chain's highest frequency grows like N; an explicit
method's step shrinks like 1/N).

Newton on (q_{n+1}, lambda_{n+1}) with the iteration matrix of Arnold & Bruels eq. 15, scaled so that
both block rows are of order one (Bottasso, Bauchau & Cardona 2007 preconditioning):

    [ M + (gamma' C_t + K_t) / beta'   A^T ] [ dq           ]   [ -r / beta' ]
    [ A                                0   ] [ dlambda/beta' ] = [ -Phi       ]

with beta' = (1 - alpha_m) / (h^2 beta (1 - alpha_f)), gamma' = gamma / (h beta), K_t and C_t from
:mod:`.tangent_matrix` (coloured differences) and the sparse LU of SuperLU. The matrix is kept over
iterations and steps while the increments contract fast enough (modified Newton); an increment that
does not is discarded and recomputed with the matrix rebuilt at the current iterate (Newton). Models the
compiled kernels support run the whole Newton loop in one compiled call with a band LU
(:mod:`.generalized_alpha_kernels`, the same iterations).

Fixed step (--step): each step of h lands on the grid t0 + k h, in sub-steps h / 2^j where h is too long.
A sub-step whose Newton iterations do not converge, or whose accelerations alternate from step to step by
more than their size without decaying (``_alternating``), is discarded; the scheme restarts at the last
state (velocities projected onto the velocity constraints in the M-norm, consistent a and lambda, abar = a)
and the sub-step is halved; it doubles again after RECOVERY_STEPS accepted sub-steps (as Exudyn's adaptive
step: halve on failure, recover gradually). Why: a physically unstable mode (s^2 > 0 in q'' = s^2 q, e.g. a
compressed link at the free end of a whipping chain) is amplified by the scheme by about -1.5 per step at s h
~ 10, -4.9 at s h = 3 (rho_inf 0.9; the exact factor e^(s h) is positive), the iteration matrix is singular
near s h = 2, and only below that does the scheme follow the motion; the restart removes the alternating
accelerations the long step left behind.

Without --step the step is controlled: the local position error is estimated by h^2 (beta - 1/6)
(a_{n+1} - a_n) (Zienkiewicz & Xie 1991) and measured as dopri5's is (RMS of error / (atol + rtol |q|)); a
step above the tolerance, or whose Newton iterations do not converge, is retried with a smaller h, and
the next h follows the estimate (order 3 in h).

Positions satisfy Phi = 0 to the Newton tolerance at every step (but along a direction pinned next to a singular
configuration, and redundant rows, by the rank-revealing solve of :mod:`.generalized_alpha_crossing`); the
velocities satisfy the velocity constraints only to O(h^2) (index-3; the recorded series show it under "violation").
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..errors import MultibodyError
from .explicit import IntegrationError, Step
from ..assembly import use_sparse
from ..linalg.sparse import SparseMass
from ..linalg.rank import min_norm_solve
from .compiled_constraints import compiled_constraints
from .tangent_matrix import TangentMatrices
from .generalized_alpha_linear import SINGULAR_PIVOT, DenseLU, compiled_attempt, singular
from .generalized_alpha_crossing import CrossingGuard
from .generalized_alpha_rank import roundoff_floor


#: error control (no --step): first step as a fraction of the run, smallest step (as a fraction of what is
#: left of the run), step ratio bounds and safety factor of the controller
FIRST_STEP = 1e-4
MIN_STEP = 1e-12
GROWTH, SHRINK, SAFETY = 2.0, 0.2, 0.9
#: after a step whose Newton iterations failed, the step stays below half of it, a ceiling that rises by this
#: factor per accepted step (growing straight back by GROWTH failed again and again in a whipping chain)
CAP_RELAX = 1.1

#: a remainder up to this fraction of the step is merged into the last step (no sliver steps from the
#: round-off of t sums)
LAST_STEP_SLACK = 1e-6
#: converged sub-steps before a halved fixed step doubles again (Exudyn's adaptiveStepRecoverySteps)
RECOVERY_STEPS = 10
#: accelerations alternate when the cosine of consecutive increments is below -ALTERNATION (_alternating)
ALTERNATION = 0.5
#: ... and M (a_n+1 - a_n) exceeds this fraction of the applied forces (far above the ~1e-8 of a chain hanging
#: at rest: round-off and drift of the index-3 accelerations)
ALTERNATION_FLOOR = 1e-6
#: smallest positive double: the floor of the force scale in the balance test
TINY = np.finfo(float).tiny


@dataclass(frozen=True)
class AlphaParameters:
    """Chung-Hulbert parameters for the spectral radius ``rho_inf`` in [0, 1] (Arnold & Bruels eq. 11)."""

    rho_inf: float = 0.9

    def __post_init__(self):
        if not (0.0 <= self.rho_inf <= 1.0):
            raise MultibodyError(f"rho_inf must lie in [0, 1], got {self.rho_inf}.")

    @property
    def alpha_m(self) -> float:
        return (2 * self.rho_inf - 1) / (self.rho_inf + 1)

    @property
    def alpha_f(self) -> float:
        return self.rho_inf / (self.rho_inf + 1)

    @property
    def gamma(self) -> float:
        return 0.5 - self.alpha_m + self.alpha_f

    @property
    def beta(self) -> float:
        return 0.25 * (self.gamma + 0.5) ** 2


@dataclass(frozen=True)
class NewtonControl:
    """Convergence when max |dq| <= increment * max(length scale, max |q|) and the residual is balanced to
    the same relative size (GeneralizedAlpha._residual); at most max_iterations per
    attempt; a failed step is halved at most max_halvings times. An increment of the kept iteration
    matrix larger than ``contraction`` times the previous one is discarded, and the matrix rebuilt."""

    increment: float = 1e-10
    max_iterations: int = 12
    max_halvings: int = 6
    contraction: float = 0.05


class GeneralizedAlpha:
    """Fixed-step stepper with the interface of :class:`.explicit.RungeKutta` (``t``, ``y = [q, v]``,
    ``step()``, ``n_accepted``, ``n_rejected``) for a Lagrange formulation ``form`` (its Workspace and
    model; the initial a and lambda come from its index-1 solve)."""

    #: the stepper keeps Phi = 0 itself: the driver must not project after its steps
    constrained = True

    def __init__(self, form, t0: float, y0: np.ndarray, t_bound: float, *, step: float | None,
                 rho_inf: float = 0.9, newton: NewtonControl = NewtonControl(), rtol: float = 1e-6,
                 atol: float = 1e-8):
        self.adaptive, self.rtol, self.atol, self.h_cap = step is None, float(rtol), float(atol), np.inf
        if self.adaptive:       # error control (module doc): start small, the controller grows the step
            step = FIRST_STEP * (t_bound - t0)
        if not (np.isfinite(step) and step > 0):
            raise IntegrationError(f"generalized-alpha needs a positive step, got {step}.")
        self.form, self.ws, self.model = form, form.ws, form.model
        if self.model.h:
            raise IntegrationError(f"generalized-alpha integrates holonomic constraints only; the model has "
                                   f"{self.model.h} nonholonomic rows: use a Runge-Kutta integrator.")
        self.par, self.newton, self.h = AlphaParameters(rho_inf), newton, float(step)
        self.h_sub, self.streak, self.d_prev = self.h, 0, None     # fixed step: sub-step control (_advance)
        self.t, self.t_bound, self.y = float(t0), float(t_bound), np.array(y0, float)
        n = self.n = self.model.n
        q, v = self.y[:n], self.y[n:]
        acc = form.accelerations(self.t, q, v)
        self.a, self.lam = np.array(acc.vdot, float), np.array(acc.multipliers, float)[: self.ws.m]
        self.abar = self.a.copy()
        self.sparse = use_sparse(self.model, None)     # small models: dense LU (less overhead per call)
        # dense (small) models: Phi and A in compiled calls when available (integrate.compiled_constraints)
        self.compiled = None if self.sparse else compiled_constraints(form)
        self.tangent = TangentMatrices(self.ws, self.sparse, constraints=self.compiled)
        # singular configurations and redundant rows (generalized_alpha_crossing)
        self.guard = CrossingGuard.make(self)
        compiled = compiled_attempt(self)   # the whole Newton loop compiled, if it can be (the rank-revealing one too)
        self.kernel = compiled if self.guard is None else self.guard.adopt(compiled)
        self.mass = sp.csr_matrix(self.model.mass_matrix) if self.model.mass_matrix is not None else None
        self._lu, self._lu_step, self._restart_mass = None, None, None
        self.n_accepted = self.n_rejected = self.iterations = self.factorizations = 0

    def summary(self, series=None) -> dict:
        """Scalars for the run summary (stepper contract, integrate.steppers)."""
        return {"rho_inf": self.par.rho_inf, "newton_iterations": self.iterations,
                "factorizations": self.factorizations, "halved_steps": self.n_rejected,
                "tangent_column_groups": self.tangent.K.n_groups, **(self.guard.summary() if self.guard else {})}

    def step(self) -> Step:
        """Advance by the fixed step (the last one shortened to end at t_bound), or by the controlled one."""
        if self.adaptive:
            return self._controlled_step()
        left = self.t_bound - self.t
        h = left if left <= self.h * (1 + LAST_STEP_SLACK) else self.h
        t_old = self.t
        self._advance(h)
        self.n_accepted += 1
        return Step(t_old, self.t, self.y.copy(), self.t - t_old, np.nan, None)

    def _advance(self, h: float) -> None:
        """One step of length h, in sub-steps h / 2^k where the step is too long (module doc, "Fixed step"): a
        sub-step whose Newton iterations do not converge, or whose accelerations alternate (_alternating), is
        discarded, the scheme restarted at the last state (_restart) and the sub-step halved, at most
        max_halvings times below h; it doubles again after RECOVERY_STEPS accepted sub-steps."""
        end, smallest = self.t + h, h / 2 ** self.newton.max_halvings
        while self.t < end - LAST_STEP_SLACK * h:
            sub = min(self.h_sub, h)
            sub = end - self.t if end - self.t <= sub * (1 + LAST_STEP_SLACK) else sub
            out = self._attempt(sub)
            if out is None or self._alternating(out[1]):
                if sub <= smallest * (1 + LAST_STEP_SLACK):
                    why = "Newton did not converge" if out is None else "the accelerations alternate"
                    raise IntegrationError(
                        f"generalized-alpha: {why} at t = {self.t:.6g} even with the step halved "
                        f"{self.newton.max_halvings} times (h = {sub:.3g}); the motion may be too fast for this "
                        "step, or the model near a singular configuration.")
                self.n_rejected += 1
                self.h_sub, self.streak = sub / 2, 0
                self._restart()
                continue
            if self.guard is not None:
                self.guard.vouch(sub, out)
            self.t += sub
            self.d_prev = out[1] - self.a
            self.y, self.a, self.abar, self.lam = out
            self.streak += 1
            if self.h_sub < h and self.streak >= RECOVERY_STEPS:
                self.h_sub, self.streak = 2 * self.h_sub, 0
        self.t = end

    def _alternating(self, a1: np.ndarray) -> bool:
        """True when the accelerations alternate from step to step, by more than their size and without decaying:
        the increment d = a_n+1 - a_n reverses the last one dp (cosine below -ALTERNATION), |d| >= |dp| and
        max |d| > max |a_n+1|. The signature of a mode the step cannot follow: a physically unstable one (a
        compressed link at the free end of a whipping chain, growth rate s) is amplified by -1.5 per step at s h
        ~ 10 (rho_inf 0.9) where the exact growth is smooth, and at s h ~ 2 the iteration matrix M + K_t / beta'
        is singular; GA's damped response to stable fast modes alternates too, but decays (by rho_inf per step).
        Round-off (a chain hanging at rest) is not counted: M d must exceed ALTERNATION_FLOOR times the forces."""
        d, dp = a1 - self.a, self.d_prev
        if dp is None or _amax(d) <= _amax(a1):
            return False
        dd, pp = float(d @ d), float(dp @ dp)
        if not (dd >= pp and float(d @ dp) < -ALTERNATION * np.sqrt(dd * pp)):
            return False
        n, M = self.n, self.mass if self.mass is not None else self.model.mass(self.y[:self.n])
        return _amax(M @ d) > ALTERNATION_FLOOR * _amax(self.ws.forces(self.t, self.y[:n], self.y[n:]))

    def _restart(self) -> None:
        """Restart the scheme at the current state as at t0: v projected onto A v + Phi_t = 0 (the index-3 steps
        keep it only to O(h^2); a drift d left in v would reappear as accelerations ~ d / h in the shorter
        sub-steps) by the M-orthogonal projection v - M^-1 A^T (A M^-1 A^T)^-1 (A v + Phi_t), the correction of
        least kinetic energy, which never adds energy (Hairer, Lubich & Wanner, Geometric Numerical Integration,
        2nd ed., Sect. VII.1, the projection of the velocity onto the tangent space in the M-norm); a and
        lambda from the index-1 solve, abar = a (the discarded accelerations do not carry over)."""
        n, t, ws = self.n, self.t, self.ws
        q, v = self.y[:n], self.y[n:]
        if ws.m:
            _, A, Phi_t, _ = (ws.sparse_constraints if self.sparse else ws.constraints)(t, q, v)
            A = sp.csr_matrix(A)
            if self._restart_mass is None or self.mass is None:
                self._restart_mass = SparseMass(self.model.mass(q))
            MiAt = self._restart_mass.Minv @ A.T
            S, c = (A @ MiAt).tocsc(), A @ v + Phi_t
            # redundant rows or a singular configuration: the minimum-norm solve (linalg.rank)
            v = v - MiAt @ (min_norm_solve(S.toarray(), c) if self.guard else spla.splu(S).solve(c))
        self.y = np.concatenate([q, v])
        acc = self.form.accelerations(t, q, v)
        self.a, self.lam = np.array(acc.vdot, float), np.array(acc.multipliers, float)[: self.ws.m]
        self.abar, self.d_prev = self.a.copy(), None

    def _controlled_step(self) -> Step:
        """One step under error control (module doc): an unconverged Newton halves h and caps it there (CAP_RELAX),
        an error estimate above the tolerance shrinks it by the estimate's order (3 in h), an accepted one
        proposes the next h."""
        t_old, span = self.t, self.t_bound - self.t
        while True:
            left = self.t_bound - self.t
            h = left if left <= self.h * (1 + LAST_STEP_SLACK) else self.h
            if h < MIN_STEP * max(span, self.t_bound - self.t, 1e-300) and h < left:
                raise IntegrationError(f"generalized-alpha: the step collapsed to {h:.3g} s at t = {self.t:.6g} "
                                       "(Newton does not converge or the error estimate stays above the tolerance).")
            out = self._attempt(h)
            if out is None:         # Newton's limit, not the error's: keep below it for a while (CAP_RELAX)
                self.n_rejected += 1
                self.h = self.h_cap = h / 2
                continue
            err = self._error(h, out)
            factor = min(GROWTH, max(SHRINK, SAFETY * max(err, 1e-10) ** (-1.0 / 3.0)))
            if err <= 1.0:
                if self.guard is not None:
                    self.guard.vouch(h, out)
                self.t += h
                self.y, self.a, self.abar, self.lam = out
                self.h_cap *= CAP_RELAX
                self.h = min(h * factor, self.h_cap)
                self.n_accepted += 1
                return Step(t_old, self.t, self.y.copy(), self.t - t_old, err, None)
            self.n_rejected += 1
            self.h = h * min(factor, 1.0)

    def _error(self, h: float, out) -> float:
        """RMS over the coordinates of e_q / (atol + rtol max(|q_n|, |q_n+1|)), e_q = h^2 (beta - 1/6)
        (a_n+1 - a_n): the leading term of the local position error of Newmark-type formulas (Zienkiewicz &
        Xie 1991, Earthquake Eng. Struct. Dyn. 20:871-887, eq. 9), with the generalized-alpha beta."""
        n = self.n
        e = h * h * abs(self.par.beta - 1.0 / 6.0) * (out[1] - self.a)
        scale = self.atol + self.rtol * np.maximum(np.abs(self.y[:n]), np.abs(out[0][:n]))
        return float(np.sqrt(np.mean((e / scale) ** 2))) if n else 0.0

    def _attempt(self, h: float):
        """One step's Newton iterations; (y, a, abar, lambda) or None: next to singular configurations and with
        redundant rows the guard chooses the solve (generalized_alpha_crossing), else _regular_attempt."""
        return self._regular_attempt(h) if self.guard is None else self.guard.attempt(h)

    def _regular_attempt(self, h: float):
        """Newton iterations of one step (module doc); (y, a, abar, lambda) or None if not converged."""
        if self.kernel is not None:
            return self._attempt_compiled(h)
        p, n, model = self.par, self.n, self.model
        q, v = self.y[:n], self.y[n:]
        beta_p = (1 - p.alpha_m) / (h * h * p.beta * (1 - p.alpha_f))
        gamma_p = p.gamma / (h * p.beta)
        t1 = self.t + h
        a1 = self.a.copy()                    # predictor: the accelerations of the last step
        abar1 = self._algorithmic(a1)
        q1 = q + h * v + h * h * ((0.5 - p.beta) * self.abar + p.beta * abar1)
        v1 = v + h * ((1 - p.gamma) * self.abar + p.gamma * abar1)
        lam1, last, size = self.lam.copy(), np.inf, np.inf
        lu = self._lu if self._lu_step == h else None       # the last step's matrix, if h is the same
        for _ in range(self.newton.max_iterations + 1):
            M, A, rhs, balanced = self._residual(t1, q1, v1, a1, lam1, beta_p)
            if balanced and size <= self.newton.increment * max(model.length_scale, _amax(q1)):
                return np.concatenate([q1, v1]), a1, self._algorithmic(a1), lam1
            fresh = lu is None
            if fresh:
                lu = self._factor(t1, q1, v1, a1, lam1, M, A, beta_p, gamma_p)
            x = lu.solve(rhs)
            if not fresh and self._size(x) > self.newton.contraction * last:
                lu = self._factor(t1, q1, v1, a1, lam1, M, A, beta_p, gamma_p)   # too slow: Newton here
                x = lu.solve(rhs)
            if not np.isfinite(size := self._size(x)):
                return None
            dq = x[:n]
            q1, v1, a1, lam1 = q1 + dq, v1 + gamma_p * dq, a1 + beta_p * dq, lam1 + beta_p * x[n:]
            self.iterations += 1
            self._lu, self._lu_step = lu, h
            last = size
        return None

    def _attempt_compiled(self, h: float):
        """_attempt in one compiled call (integrate.generalized_alpha_kernels: the same iterations)."""
        status, iterations, factorizations, (q1, v1, a1, abar1, lam1) = self.kernel(self, h, SINGULAR_PIVOT)
        self.iterations += iterations
        self.factorizations += factorizations
        if status == 2:
            raise singular(self.t + h)
        return None if status else (np.concatenate([q1, v1]), a1, abar1, lam1)

    def _algorithmic(self, a1: np.ndarray) -> np.ndarray:
        """abar_{n+1} from (1 - alpha_m) abar_{n+1} + alpha_m abar_n = (1 - alpha_f) a_{n+1} + alpha_f a_n."""
        p = self.par
        return (p.alpha_f * self.a - p.alpha_m * self.abar + (1 - p.alpha_f) * a1) / (1 - p.alpha_m)

    def _residual(self, t, q, v, a, lam, beta_p):
        """(M, A, right-hand side (-r / beta', -Phi), balanced) at an iterate, sparse or dense arrays;
        ``balanced``: |r| <= increment * the largest of |M a|, |A^T lambda|, |f| (or the residual's own round-off,
        generalized_alpha_rank.roundoff_floor, where that is larger: near a singular configuration) and |Phi| <=
        increment * the length scale (the multipliers are converged too, not only the positions)."""
        ws, model = self.ws, self.model
        if self.sparse:
            Phi, A, _, _ = ws.sparse_constraints(t, q, v)
            M = self.mass if self.mass is not None else sp.csr_matrix(model.mass(q))
        else:
            Phi, A = self.compiled(t, q, v) if self.compiled is not None else ws.constraints(t, q, v)[:2]
            M = model.mass(q)
        Ma, reaction, f = M @ a, A.T @ lam, ws.forces(t, q, v)
        r = Ma + reaction - f
        tol = self.newton.increment
        scale = max(_amax(Ma), _amax(reaction), _amax(f), TINY)
        balanced = _amax(r) <= max(tol * scale, roundoff_floor(A, lam)) and _amax(Phi) <= tol * model.length_scale
        return M, A, np.concatenate([-r / beta_p, -Phi]), balanced

    def _size(self, x) -> float:
        """max |dq| of a Newton solution x = (dq, dlambda / beta')."""
        return _amax(x[: self.n])

    def _factor(self, t, q, v, a, lam, M, A, beta_p, gamma_p):
        """LU factor of the scaled iteration matrix (module doc): SuperLU for sparse models, LAPACK for
        small dense ones; a singular matrix raises IntegrationError (halving the step cannot help)."""
        S = self.tangent.stiffness(t, q, v, a, lam) / beta_p
        C = self.tangent.damping(t, q, v)
        if C is not None:
            S = S + (gamma_p / beta_p) * C
        self.factorizations += 1
        try:
            if not self.sparse:
                return DenseLU(np.block([[M + S.toarray(), A.T], [A, np.zeros((len(A), len(A)))]]))
            return spla.splu(sp.bmat([[M + S, A.T], [A, None]], format="csc"))
        except (RuntimeError, np.linalg.LinAlgError):
            raise singular(t) from None


def _amax(x: np.ndarray) -> float:
    """max |x| (0 for an empty x), without NumPy's wrapper layers (called several times per Newton iteration)."""
    return float(np.abs(x).max()) if x.size else 0.0
