"""The tangential position error of ``--basis flow`` measured in its two parts (issue 12, twelfth session).

Why. ``flow`` carries no independent coordinates: x' = B(x, T) w (paper 000 eq. 11b, B = App. A of T at the stage's
x, orthonormal) moves x by unit-speed directions, so the step's tangential displacement in the basis T at its end is

    T^T (x_1 - x_0) = h sum_i b_i W_i  -  h sum_i b_i (I - T^T B_i) W_i,

the quadrature of the stages' generalized velocities W_i (the update of the independent coordinates q, q' = w: eq. 4a)
minus the turn of the stage bases against T (the chord of the curved path, I - T^T B_i of second order in the turn).
The embedded estimate of the sum, T^T dx (dx the x-part of h sum_i e_i K_i), is the difference of two principal error
terms of the pair, dq = h sum_i e_i W_i and the chord part g = dq - T^T dx, and the two cancel where the motion is fast
(measured on the modified triple four-bar, dopri5, rtol = atol = 1e-12, at the bottom of each swing: dq = 8.6e-11 m,
T^T dx = -2.0e-13 m, while the propagated solution's tangential error was 2.7e-13 m, 1.4 times the estimate; 29 times
at rtol 1e-8). There the step grew to 1.8 times the one the reduction theta'' = -k cos theta takes with the same
dopri5 (whose angle estimate is dq / |dx / dtheta| exactly: the flow's w is the reduction's theta' times |dx / dtheta|
on the four-bar chains), each swing lost 6.5e-10 J, and the crank tip ended 6.5 times lagrange's error. The estimate
of a sum does not bound the sum's error where its terms cancel; the sum of the estimates' sizes does (the triangle
inequality): per component of the basis, |T^T dx| <= |dq| + |g|.

What. :func:`independent_part` returns the change of the measured tangential position error from T c (c = T^T dx_t)
to T (|dq| + |c - dq|), componentwise; the velocity change the tangential position error forces
(formulations.velocity_error.turn_velocity_change) is taken of the bounded error. The sign is fixed (+ along T):
a bound only has a size, and any sign that follows c or dq jumps where they pass zero (c passes zero exactly where
the bound matters; off the manifold, where redundant rows leave no tangent space of the level set, c is round-off
and its sign differed between the compiled and the reference projector), and the norm, whose cross terms between the
tangential part and the normal ones see the sign, would jump with it. Continuous in the state, as T is. dq is the w-part of the stepper's
``integral`` (integrate.explicit.RungeKutta: h^2 (A^T e) K, the embedded estimate of an auxiliary coordinate s' = y);
the compiled attempts form the same sums (fast.nullspace_rk). Only where the stages take the stage basis (the dense
``flow``; the sparse path measures its integrated T as it is, formulations.nullspace_flow_sparse), and for a pair
with one estimate (dopri5): DOP853 controls Hairer's quotient of two estimates (~10 err5^2 / err3), which a bound of
both one's parts does not bound (measured, double four-bar, dop853, rtol = atol = 1e-8: crank tip 3.8e-6 m without,
6.8e-6 m with the bound in both estimates, 7.3e-6 m in err5 alone; the reduction's envelope 6.5e-6 m).
"""
from __future__ import annotations

import numpy as np


def independent_part(T: np.ndarray, dx_t: np.ndarray, dq: np.ndarray) -> np.ndarray:
    """The change (n,) that turns the tangential position error dx_t (n,) into T (|dq| + |c - dq|), c = T^T dx_t,
    dq (f,) the embedded estimate of the independent coordinates (module docstring)."""
    c = T.T @ dx_t
    return T @ (np.abs(dq) + np.abs(c - dq) - c)
