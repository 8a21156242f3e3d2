"""The linear algebra of the generalized-alpha Newton iterations (:mod:`.generalized_alpha`): the dense LU of
small models (LAPACK) and the choice of the compiled Newton loop (:mod:`.generalized_alpha_kernels`)."""
from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla

#: smallest accepted |U_ii| / max |U_ii| of a dense LU of the iteration matrix (below: singular)
SINGULAR_PIVOT = 1e-14


def compiled_attempt(stepper):
    """The compiled Newton loop (integrate.generalized_alpha_kernels) when numba is installed, its cache warm
    (or the formulation compiled its own path) and the model's constraints, forces and constant mass are what
    the compiled kernels support (no damping matrix); else None (the NumPy reference path)."""
    from ..fast.packed import PackedModel, model_supported, numba_available
    form = stepper.form
    if stepper.tangent.C is not None or model_supported(stepper.model) is not None or not numba_available():
        return None
    if form.fast_step is None and not (stepper.sparse and getattr(form, "fast", True)):
        return None
    from . import generalized_alpha_band, generalized_alpha_kernels, generalized_alpha_rank_kernels
    from ..fast.warm import use_compiled       # a cold cache: the CLI's run takes the NumPy path meanwhile
    if not use_compiled((generalized_alpha_kernels, generalized_alpha_band, generalized_alpha_rank_kernels)):
        return None
    from .generalized_alpha_kernels import CompiledAttempt
    return CompiledAttempt(PackedModel(stepper.model), stepper.tangent.K, stepper.n, stepper.ws.m)


class DenseLU:
    """LAPACK LU of a small dense matrix with the ``solve`` of SuperLU; raises LinAlgError when a pivot
    is below SINGULAR_PIVOT times the largest (redundant rows, singular configuration)."""

    def __init__(self, K: np.ndarray):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", sla.LinAlgWarning)
            self.lu = sla.lu_factor(K, check_finite=False)
        self.getrs = sla.get_lapack_funcs("getrs", (K,))     # LAPACK directly: no wrapper layers per solve
        d = np.abs(np.diag(self.lu[0]))
        if d.size and not d.min() > SINGULAR_PIVOT * d.max():
            raise np.linalg.LinAlgError("singular iteration matrix")

    def solve(self, b: np.ndarray) -> np.ndarray:
        x, info = self.getrs(self.lu[0], self.lu[1], b)
        if info:
            raise np.linalg.LinAlgError(f"LAPACK getrs: info {info}")
        return x


def singular(t: float):
    """The IntegrationError of a singular iteration matrix at t (the guard of generalized_alpha_crossing retries such
    a step with the rank-revealing solve where the model can reach a singular configuration)."""
    from .explicit import IntegrationError
    return IntegrationError(
        f"generalized-alpha: the iteration matrix is singular at t = {t:.6g}: the constraint Jacobian is rank "
        "deficient there (a singular configuration) and the rank-revealing solve did not converge either.")
