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
"""
from __future__ import annotations

import numpy as np

from ..linalg.rank import NORMAL_ERROR_WEIGHT, row_space_filter


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
    normal, as the chart's (module docstring), and left to the filter's weight. For f = 1, K = 0 and dv = T dw."""
    K = T.T @ dT
    return T @ (dw + 0.5 * (K - K.T) @ w)


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
