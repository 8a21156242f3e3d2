"""Fast paths (issue 7 item 1): compiled right-hand sides that reproduce the reference NumPy path.

Optional: needs numba (``pip install 'multibody[fast]'``); without it every formulation uses its
reference path. See :mod:`multibody.fast.lagrange`.
"""
from .kernel_cache import drop_if_changed

drop_if_changed()     # before any kernel is loaded: no stale machine code of a changed callee (kernel_cache)

from .lagrange import SCHUR_PIVOT_RATIO, FastLagrangeRhs, fast_lagrange_rhs, numba_available, supported

__all__ = ["SCHUR_PIVOT_RATIO", "FastLagrangeRhs", "fast_lagrange_rhs", "numba_available", "supported"]
