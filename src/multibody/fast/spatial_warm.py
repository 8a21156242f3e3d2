"""The first run with a cold numba cache for the spatial kernels (:mod:`.spatial_kernels`, issue 16), under the
cold-start policy of :mod:`.warm` (issue 13 item 1): ``"wait"`` (the library's default) compiles them in this
process (~10 s, once) after a one-line notice; ``"background"`` (the CLI's) gives this run the NumPy reference
path, which computes the same numbers, while a detached process compiles them for the next run.
"""
from __future__ import annotations

from . import warm

#: the run that fills the cache: every kernel called from Python (a constrained energy-momentum run, a lagrange
#: run of the linkage); quad_hessian is compiled into constrained_newton and not called on its own by a run
WARM_SCRIPT = ("from multibody.models.spatial_models import gyro_top, six_body_linkage; "
               "from multibody.simulation import RunOptions, simulate; "
               "simulate(gyro_top(), t_end=0.003, formulation='constrained', "
               "options=RunOptions(integrator='energy-momentum', step=1e-3)); "
               "simulate(six_body_linkage(), t_end=0.003)")
_RUN_KERNELS = ("quad_eval", "quad_gamma", "constrained_newton", "lagrange_rhs")
#: the lagrange run's compiled per-step work and crossing certificate (issue 16), called from Python too
_STEP_KERNELS = {"spatial_step_kernels": ("schur_rhs", "project", "tangent_error", "record"),
                 "spatial_monitor": ("factor_rows", "relative_change")}
_state = {"started": False, "announced": False}


def cache_is_cold() -> bool:
    """True if a kernel that a run calls from Python has no cache entry numba would load."""
    try:
        from . import spatial_kernels, spatial_monitor, spatial_step_kernels
        sets = [(spatial_kernels, _RUN_KERNELS), (spatial_step_kernels, _STEP_KERNELS["spatial_step_kernels"]),
                (spatial_monitor, _STEP_KERNELS["spatial_monitor"])]
        return any(not getattr(mod, name)._cache._cache_file._load_index() for mod, names in sets for name in names)
    except Exception:       # private numba API changed: assume warm, numba compiles if needed
        return False


def use_spatial_compiled() -> bool:
    """Whether a spatial model should take the compiled path now; announces a cold cache once."""
    return warm.follow_policy(cache_is_cold(), _state, WARM_SCRIPT, "the spatial kernels")
