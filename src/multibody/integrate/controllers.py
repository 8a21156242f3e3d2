"""Step-size control for embedded Runge-Kutta methods.

The controller turns the scaled norm of the local error estimate (``<= 1`` means "accept")
into a factor for the next step size.

References
----------
* E. Hairer, S. P. Norsett, G. Wanner, "Solving Ordinary Differential Equations I", 2nd ed.,
  Springer 1993, Sect. II.4 (error norm (4.11), step-size formula (4.13)).
* E. Hairer, G. Wanner, "Solving Ordinary Differential Equations II", 2nd ed., Springer 1996,
  Sect. IV.2 (PI / "stabilized" step-size control of K. Gustafsson, ACM TOMS 17 (1991) 533-554).
* E. Hairer's Fortran codes dopri5.f / dop853.f (parameter BETA, lower bound on FACOLD).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Lower bound on the previous error norm used by the PI term (Hairer's ``FACOLD = 1e-4``):
#: a nearly exact previous step must not allow an unbounded increase.
ERROR_NORM_FLOOR = 1e-4

#: Coefficient of beta in the reduced exponent ``alpha = 1/(q+1) - PI_ALPHA_SHIFT * beta``
#: of the PI controller, as in Hairer's dopri5.f (``EXPO1 = 0.2 - 0.75 * BETA`` for q = 4).
PI_ALPHA_SHIFT = 0.75


def error_norm(err, y_old, y_new, rtol: float, atol) -> float:
    """Scaled RMS norm of a local error estimate (Hairer, Norsett & Wanner I, eq. (4.11)).

    ``sqrt(mean((err / (atol + rtol * max(|y_old|, |y_new|)))**2))``.

    Parameters
    ----------
    err, y_old, y_new : (N,) arrays
    rtol : float
    atol : float or (N,) array

    Returns
    -------
    float; a step is acceptable when it is ``<= 1``. 0.0 for ``N == 0``.
    """
    err = np.asarray(err, dtype=float)
    if err.size == 0:
        return 0.0
    scale = atol + rtol * np.maximum(np.abs(y_old), np.abs(y_new))
    return float(np.sqrt(np.mean((err / scale) ** 2)))


@dataclass(frozen=True)
class StepController:
    """Step-size factor from the error norm (I controller, optionally PI).

    With the estimator order ``q`` and ``k = q + 1`` the factor is::

        fac = safety * err**(-alpha) * err_prev**beta,   alpha = 1/k - 0.75*beta

    clipped to ``[min_factor, max_factor]``. ``beta = 0`` (default) is the classical
    I controller ``safety * err**(-1/k)`` (Hairer I, eq. (4.13); scipy's RK45/DOP853).
    ``beta > 0`` is the PI controller of Gustafsson as implemented by Hairer; his codes use
    ``beta = 0.04`` for DOPRI5, values up to ~0.1 give smoother step sequences.

    Attributes
    ----------
    safety : float in (0, 1]
    min_factor : float in (0, 1]      largest allowed decrease
    max_factor : float >= 1           largest allowed increase
    beta : float >= 0                 PI weight of the previous accepted error norm
    """

    safety: float = 0.9
    min_factor: float = 0.2
    max_factor: float = 10.0
    beta: float = 0.0

    def __post_init__(self):
        if not 0 < self.safety <= 1:
            raise ValueError(f"safety must be in (0, 1], got {self.safety}")
        if not 0 < self.min_factor <= 1 <= self.max_factor:
            raise ValueError("need 0 < min_factor <= 1 <= max_factor, got "
                             f"{self.min_factor}, {self.max_factor}")
        if self.beta < 0:
            raise ValueError(f"beta must be >= 0, got {self.beta}")

    def factor(self, error_norm: float, error_norm_prev: float | None, order: int) -> float:
        """Multiplier for the step size.

        Parameters
        ----------
        error_norm : scaled norm of the current estimate (``<= 1`` means accepted)
        error_norm_prev : norm of the previous *accepted* step, or None (first step, or a
            rejected step: then only the I part is used, as in Hairer's codes)
        order : order ``q`` of the embedded error estimate (local error O(h**(q+1)))
        """
        if error_norm == 0:
            return self.max_factor
        if not np.isfinite(error_norm):
            return self.min_factor
        alpha = 1.0 / (order + 1) - PI_ALPHA_SHIFT * self.beta
        if alpha <= 0:
            raise ValueError(f"beta={self.beta} too large for an estimator of order {order}")
        fac = self.safety * error_norm ** (-alpha)
        if self.beta > 0 and error_norm_prev is not None:
            fac *= max(error_norm_prev, ERROR_NORM_FLOOR) ** self.beta
        return float(min(self.max_factor, max(self.min_factor, fac)))
