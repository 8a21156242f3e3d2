"""Fast paths (issue 7 item 1): compiled right-hand sides that reproduce the reference NumPy path.

Optional: needs numba (``pip install 'multibody[fast]'``); without it every formulation uses its
reference path. See :mod:`multibody.fast.lagrange`.
"""
from .lagrange import SCHUR_PIVOT_RATIO, FastLagrangeRhs, fast_lagrange_rhs, numba_available, supported

__all__ = ["SCHUR_PIVOT_RATIO", "FastLagrangeRhs", "fast_lagrange_rhs", "numba_available", "supported"]
