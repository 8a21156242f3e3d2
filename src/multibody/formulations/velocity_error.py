"""The local error of the null-space formulations measured on the physical state [x, v] (issue 12): one mechanism,
the ``error_measure`` hook of integrate.explicit.RungeKutta, for every formulation whose state rebuilds the velocity.

Why. The step control judges a local error estimate by the scaled RMS norm of Hairer, Norsett & Wanner I (eq. 4.11),
sqrt(mean((err_i / (atol + rtol |y_i|))^2)), over the components of the formulation's state. ``lagrange`` carries
the physical state [q, v]. ``nullspace`` carries [x, w] (``continuation``, the velocity v = X w in the step's chart,
paper 000 eqs 9-11) or [x, w, vec(T)] (``flow``, v = T w with T integrated by eq. 15), ``partitioning`` [q, v_I]
(paper 001 eqs 7, 9-14): the velocity lives in f generalized components and, for ``flow``, in T as well. Measured on
that state, a physical velocity error entered the mean as f of n + f (+ n f) terms (the N-four-bar with 40 cells,
n = 243, f = 1: 4.2e-2 m at rtol 1e-6 against lagrange's 4.7e-3 m), and the error of the flow basis T, which moves
v = T w by dT w (T's length and its turn inside the tangent space are kept by the re-basis, w <- T_new^T T w), was
weighed on the entries of T with T's own small scales (N-four-bar with 10 cells, dop853, rtol = atol = 1e-10:
3.2e-6 m, 40 times the exact reduction integrated by the same dop853; lagrange 1.6e-7 m).

What. The hook ``error_measure(t_old, y_old, t_new, y_new, err) -> (err', y_old', y_new')`` returns the local error
and both end states in the physical layout [x, v] (2 n entries), and the norm is lagrange's: the same components,
the same scales atol + rtol max(|p_old|, |p_new|), and lagrange's filter (:func:`physical_error`: the normal parts of
dx and dv at NORMAL_ERROR_WEIGHT, Lagrange._tangent_error; measured whole for the integrated basis of ``flow``, whose
normal part acts on the motion within the step: NullSpaceEquations.normal_weight). ``partitioning`` (formulations.partitioning) takes
[dq, dv] as split(y_new) - split(y_new - err), whatever the cause (its dependent velocities move with q like
1 / s_min(C_D)). The null-space formulations take the closed form of :func:`velocity_change`: v = T w is bilinear,
so dv = T w - (T - dT)(w - dw) = T dw + dT (w - dw) exactly (``flow``); in a chart T_k is frozen and dv = T_k dw (``continuation``:
v = X(x) w with X = T_k - Q1_k G^+ A(x) T_k, whose change with x lies in span(Q1_k), the normal directions the filter
weighs down). The compiled attempts (fast.nullspace_rk) compute the same numbers in the attempt loop
(fast.nullspace_kernels.physical_error), with v_old, v_new the x-parts of the first and last (FSAL) stages, which
are split's velocities; so the Python and the compiled paths measure one quantity by one rule. Within the singular
window the state already is [q, v]: measured as it is. (Until the ninth session the null-space formulations put the
physical velocity error T dw on the f entries of w inside their error filter, a second mechanism for the same
principle; partitioning's hook replaced it. On [x, v] the norm has 2 n terms instead of n + f: the continuation's
steps changed, N-four-bar with 10 cells dop853 rtol = atol = 1e-10: 386 -> 376 steps, tip 2.3e-8 -> 1.3e-7 m,
lagrange's 1.6e-7.)

The measure of ``flow`` (eleventh session, derived). The state y = [x, w, T] reaches the motion the run continues
from through two maps: P(y) = (x, B(x, T) w), the velocity of the stages and of ``split`` (paper 000 eq. 11b with the
stage basis B = App. A of T at x, NullSpaceEquations._velocity), and the after-step action pi (x onto Phi = 0 by
eqs 12-13, v <- T_new T_new^T v with T_new = App. A at the projected x). The embedded estimate err is the error of
the lower-order solution against the exact solution of the same ODE (Hairer, Norsett & Wanner I, Sect. II.4), and
the motion of that exact solution is the exact motion, so the error of the continued motion is Dpi DP err to first
order. At a state with T^T T = I, A T = 0 (P_t = I - A^+ A = T T^T), with A'(v) u = C_x[u] v + b_x u (C v + b = 0
the velocity constraints, paper 003 eqs 4-9; symmetric in u, v for holonomic rows, so A'(v) is the A' of eq. 15):
    DP err   = (dx, T (dw + K w) - A^+ A'(v) dx),   K = skew(T^T dT)   (dB = T K - A^+ A_x[dx] T)
    Dpi e    = (P_t e_x, P_t e_v - A^+ A'(v) P_t e_x)
    Dpi DP err = (P_t dx, T (dw + K w) - A^+ A'(v) P_t dx).
So: the normal part of dT never reaches the motion (App. A removes it at every stage and after every step; with
the integrated T taken as it is, the sparse path, it moves the stages' v = T w and their forces); the turn of T inside the
tangent space moves v by T K w and is a gauge only together with dw = -K w, which dw + K w cancels (K = 0 for
f = 1); the normal part of dx is removed by the projection; and the tangential position error turns the tangent
space, forcing the velocity change -A^+ A'(v) P_t dx (:func:`turn_velocity_change`): normal to the constraints but
part of the continued velocity (the projection keeps it: it is what keeps v tangent at the moved q). The measure is
therefore Dpi DP err counted whole, with the part pi removes (the normal part of dx) at NORMAL_ERROR_WEIGHT (landing
on the same branch, as before). The tenth session counted the forced change at 1e-4 with the normal part of dv
(lagrange's filter, whose [q, v] error mixes it with the drift the projection removes). tests/test_velocity_error.py:
the remainder of the continued motion's change against this measure falls 100 times for errors 10 times smaller, 10
times without the forced change. Compiled identically (fast.nullspace_kernels._turn, v = T w there and here).
The same argument applies to lagrange's [q, v] (pi alone: Dpi e = (P_t e_q, P_t e_v - A^+ A'(v) P_t e_q)); since the
twelfth session (12gh, 12ha) Lagrange._tangent_error and so projection's count the forced change whole on every
planar path (dense, band, sparse; compiled and Python; not in the spatial director kernels), with A'(v) u by
:func:`polarised_rate`.
"""
from __future__ import annotations

import numpy as np

from ..linalg.rank import NORMAL_ERROR_WEIGHT, row_space_filter
from ..linalg.tangent import jacobian_rate_times

#: step (at |u| = 1 in the max norm) of the central difference for the Pfaffian rows' (Psi v + psi_t)_x u; the
#: value of nullspace.PFAFFIAN_RATE_STEP (truncation ~ step^2, round-off ~ eps / step, both ~1e-10)
PFAFFIAN_TURN_STEP = 1e-5


def velocity_change(T: np.ndarray, w: np.ndarray, dw: np.ndarray, dT: np.ndarray | None = None) -> np.ndarray:
    """dv (n,) of v = T w for the errors dw (f,) of w and dT (n, f) of T (None: T frozen, the continuation's chart):
    T w - (T - dT)(w - dw), the exact difference of the bilinear map (module docstring), written T dw + dT (w - dw)
    (no cancellation of two velocities of size |v|)."""
    if dT is None:
        return T @ dw
    return T @ dw + dT @ (w - dw)


def stage_velocity_change(T: np.ndarray, w: np.ndarray, dw: np.ndarray, dT: np.ndarray) -> np.ndarray:
    """dv (n,) of the flow basis whose stages take the basis B(x, T) = App. A of T at x (NullSpaceEquations.stage_basis;
    v = B(x, T) w) for the errors dw of w and dT of T, at a state whose T is orthonormal and tangent to the
    tolerance: T (dw + K w), K = (T^T dT - dT^T T) / 2. First order in (dx, dT, dw), exact to second order: the
    polar factor B changes with T only by its turn inside the tangent space, B K (the length and the normal part of dT
    are removed by App. A at every stage, so they move no velocity); its change with x (the tangent space turning) is
    normal: the part -A^+ A'(v) P_t dx of it that the projection keeps is :func:`turn_velocity_change` (module
    docstring, "The measure of flow"). For f = 1, K = 0 and dv = T dw."""
    K = T.T @ dT
    return T @ (dw + 0.5 * (K - K.T) @ w)


def turn_velocity_change(ws, t, x: np.ndarray, v: np.ndarray, u: np.ndarray, A: np.ndarray, r: int,
                         motion: bool = False) -> np.ndarray:
    """The velocity change -A_r^+ (C_x[u] v + b_x u) (n,) of the motion x' = v - A_r^+ b (v = T w: the state's T, as
    the compiled kernel; b = 0 there) that a tangential position error u (n,) forces on the motion
    (the part of Dpi e normal to the constraints, module docstring "The measure"): on the velocity-level manifold
    C(x) v + b(x, t) = 0 (paper 003 eqs 4-9; C = A = Phi_q, b = Phi_t without nonholonomic rows) a consistent error
    satisfies C dv + (C_x[u] v + b_x u) = 0, and its row-space part is this (A_r^+: the r = generic rank largest
    singular values of A, as the stage basis; an extra row of a structurally redundant mechanism has a singular value
    ~ the distance off the manifold, whose inverse must not enter). Holonomic rows by polarisation of gamma
    (Phi_qq[v, u] + Phi_qt u = -(gamma(v + s u) - gamma(v - s u)) / (4 s), exact; s = |v| / |u| against cancellation,
    linalg.tangent.jacobian_rate_times), Pfaffian rows by a central difference along u (PFAFFIAN_TURN_STEP).
    ``motion``: v already is the motion's velocity (lagrange's state, C v + b = 0 to the step's error; the compiled
    kernel fast.step_kernels.forced_change knows no b), taken as it is."""
    U, sv, Wt = np.linalg.svd(A, full_matrices=False)
    pinv = lambda c: Wt[:r].T @ ((U[:, :r].T @ c) / sv[:r])      # noqa: E731
    b = ws.velocity_constraints(t, x, v)[2]
    v = v - pinv(b) if np.any(b) and not motion else v           # the motion's x' (eq. 11b)
    rate = polarised_rate(lambda w: ws.constraints(t, x, w)[3], v, u)
    if rate is None or r == 0:
        return np.zeros_like(x)
    if ws.h:
        e = PFAFFIAN_TURN_STEP / float(np.max(np.abs(u)))
        side = [ws.velocity_constraints(t, x + k * e * u, v) for k in (1.0, -1.0)]
        psi = [(c[1] @ v + c[2])[ws.m:] for c in side]
        rate = np.r_[rate, (psi[0] - psi[1]) / (2.0 * e)]
    return -pinv(rate)


def polarised_rate(gamma_at, v: np.ndarray, u: np.ndarray) -> np.ndarray | None:
    """A'(v) u = Phi_qq[v, u] + Phi_qt u (m,) of the holonomic rows by polarisation of gamma (exact;
    linalg.tangent.jacobian_rate_times with b = s u, divided by s; s = |v| / |u| against cancellation, so v and s u
    are of one size; paper 000 eq. 15), ``gamma_at(w)`` gamma at the fixed (t, q) and velocity w; None where u or v
    is zero (no change forced)."""
    size, speed = float(np.linalg.norm(u)), float(np.linalg.norm(v))
    if size == 0.0 or speed == 0.0:
        return None
    s = speed / size
    return jacobian_rate_times(gamma_at, v, (s * u)[:, None])[:, 0] / s


def physical_error(dx: np.ndarray, dv: np.ndarray, A: np.ndarray, m: int,
                   weight: float = NORMAL_ERROR_WEIGHT) -> np.ndarray:
    """[dx, dv] (2 n,) with the parts normal to the constraints at ``weight`` (Lagrange._tangent_error): positions
    normal to Phi = 0 (the row space of the m holonomic rows of A), velocities normal to A v = 0 (every row)."""
    tx, tv = row_space_filter(A[:m], dx), row_space_filter(A, dv)
    return np.concatenate([tx + weight * (dx - tx), tv + weight * (dv - tv)])


class PhysicalStates:
    """Mixin of a formulation with ``split(t, y) -> (q, v)`` that measures its error on [q, v] (``error_measure``):
    :meth:`_physical` keeps the physical states of the last two states asked for (the step's start and end, which
    dop853's two error estimates and the attempts of one step ask for again). Nullspace and partitioning both inherit it."""

    _phys_memo: list = []

    def _physical(self, t, y):
        """[q, v] of the state y at t."""
        for t_k, y_k, p in self._phys_memo:
            if t_k == t and np.array_equal(y_k, y):
                return p
        p = np.concatenate(self.split(t, y))
        self._phys_memo = self._phys_memo[-1:] + [(t, y.copy(), p)]
        return p
