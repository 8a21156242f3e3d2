"""The first run with a cold numba cache for the spatial kernels (:mod:`.spatial_kernels`, issue 16), under the
cold-start policy of :mod:`.warm` (issue 13 item 1): ``"wait"`` (the library's default) compiles them in this
process (~10 s, once) after a one-line notice; ``"background"`` (the CLI's) gives this run the NumPy reference
path, which computes the same numbers, while a detached process compiles them for the next run.
"""
from __future__ import annotations

import logging
import subprocess
import sys

from . import warm

log = logging.getLogger("multibody")

#: the run that fills the cache: every kernel called from Python (a constrained energy-momentum run, a lagrange
#: run of the linkage); quad_hessian is compiled into constrained_newton and not called on its own by a run
WARM_SCRIPT = ("from multibody.models.spatial_models import gyro_top, six_body_linkage; "
               "from multibody.simulation import RunOptions, simulate; "
               "simulate(gyro_top(), t_end=0.003, formulation='constrained', "
               "options=RunOptions(integrator='energy-momentum', step=1e-3)); "
               "simulate(six_body_linkage(), t_end=0.003)")
_RUN_KERNELS = ("quad_eval", "quad_gamma", "constrained_newton", "lagrange_rhs")
_state = {"started": False, "announced": False}


def cache_is_cold() -> bool:
    """True if a kernel that a run calls from Python has no cache entry numba would load."""
    try:
        from . import spatial_kernels
        return any(not getattr(spatial_kernels, name)._cache._cache_file._load_index() for name in _RUN_KERNELS)
    except Exception:       # private numba API changed: assume warm, numba compiles if needed
        return False


def use_spatial_compiled() -> bool:
    """Whether a spatial model should take the compiled path now; announces a cold cache once."""
    if not cache_is_cold():
        return True
    if warm._state["policy"] == "background":
        if not _state["started"]:
            _state["started"] = True
            subprocess.Popen([sys.executable, "-c", WARM_SCRIPT], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            log.warning("compiling the spatial kernels in the background (first run only); this run uses the "
                        "NumPy path")
        return False
    if not _state["announced"]:
        _state["announced"] = True
        log.warning("compiling the spatial kernels (first run only)...")
    return True
