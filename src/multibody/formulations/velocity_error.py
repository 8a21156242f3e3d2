"""The local error of a formulation's generalized velocities, measured as the error of the physical velocity they
make (issue 12, N-four-bar with 40 cells).

Why. The step control judges a local error estimate by the scaled RMS norm of Hairer, Norsett & Wanner I (eq. 4.11),
sqrt(mean((err_i / (atol + rtol |y_i|))^2)), over the components of the formulation's state. ``lagrange`` carries
the physical state [q, v]: a velocity error shows in all n components of v. ``nullspace`` ([x, w], paper 000 eqs 9-11)
and ``partitioning`` ([q, v_I], paper 001 eqs 7, 9-14) carry the velocity in f generalized components, v = V w
(V = T, the tangent basis, or D^T, the dependent velocities), so the same physical error enters the mean as f of
n + f terms: the step control admitted a velocity error sqrt((n + f) / f) times larger than lagrange's (16 for the
N-four-bar with 40 cells, n = 243, f = 1), and the crank-tip error at rtol 1e-6 was 4.2e-2 m (nullspace) and
5.2e-2 m (partitioning) against 4.7e-3 m for lagrange and 6.7e-3 m for the exact reduction integrated by the same
dopri5. The step's physical velocity error is V dw (V of the step's end): its scaled norm over the n components of
v, with lagrange's scales atol + rtol |v_i|, is what this module puts on the f entries of w, so that the RMS over
the formulation's state sees it as lagrange's norm over [q, v] does (up to the number of terms of the mean, n + f
against 2 n: at most sqrt(2) stricter).
"""
from __future__ import annotations

import numpy as np


def physical_velocity_error(V: np.ndarray, w: np.ndarray, dw: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """Entries e (f,) for the error dw of the generalized velocities w (f,) with v = V w (V (n, f)): each
    e_j = (atol + rtol |w_j|) |u| / sqrt(f), u_i = (V dw)_i / (atol + rtol |(V w)_i|), so that
    sum_j (e_j / (atol + rtol |w_j|))^2 = |u|^2, the physical velocity error's contribution to the squared scaled
    norm (Hairer, Norsett & Wanner I, eq. 4.11) with the scales at the step's end (module docstring)."""
    f = w.shape[0]
    if f == 0:
        return np.zeros(0)
    u = (V @ dw) / (atol + rtol * np.abs(V @ w))
    return (atol + rtol * np.abs(w)) * (np.sqrt(u @ u) / np.sqrt(f))
