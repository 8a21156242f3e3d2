"""The first run with a cold numba cache for the spatial kernels (:mod:`.spatial_kernels`, issue 16), under the
cold-start policy of :mod:`.warm` (issue 13 item 1): ``"wait"`` (the library's default) compiles them in this
process (~10 s, once) after a one-line notice; ``"background"`` (the CLI's) gives this run the NumPy reference
path, which computes the same numbers, while a detached process compiles them for the next run.
"""
from __future__ import annotations

from . import warm

#: the run that fills the cache: every kernel called from Python (constrained and reduced energy-momentum runs,
#: the reduced one also with a closure, a lagrange run of the linkage); quad_hessian is compiled into
#: constrained_newton and not called on its own by a run
WARM_SCRIPT = ("from multibody.models.spatial_models import gyro_top, six_body_linkage; "
               "from multibody.simulation import RunOptions, simulate; "
               "em = RunOptions(integrator='energy-momentum', step=1e-3); "
               "[simulate(f(), t_end=0.003, formulation=s, options=em) for f in (gyro_top, six_body_linkage) "
               "for s in ('constrained', 'reduced')]; "
               "simulate(six_body_linkage(), t_end=0.003)")
#: (module, kernel) pairs a run calls from Python: the energy-momentum steps (one by one and in batches) and their
#: channels, the lagrange rhs, its compiled step attempts and per-step work (the stored states' output in batches,
#: also for one state: fast.spatial_record) and the crossing certificate (issue 16)
_RUN_KERNELS = (("spatial_kernels", "quad_eval"), ("spatial_kernels", "quad_gamma"),
                ("em_constrained_kernels", "constrained_newton"), ("spatial_kernels", "lagrange_rhs"),
                ("em_reduced_kernels", "reduced_newton"), ("em_reduced_kernels", "null_space_at"),
                ("spatial_sparse", "lagrange_rhs_at"), ("spatial_sparse", "sparse_project"),
                ("spatial_sparse", "sparse_tangent_error"), ("spatial_rk_kernels", "spatial_attempts"),
                ("spatial_record", "record_batch"),
                ("spatial_monitor", "factor_rows"), ("spatial_monitor", "relative_change"),
                ("em_batch_kernels", "constrained_run"), ("em_batch_kernels", "reduced_run"),
                ("em_batch_kernels", "momenta"), ("em_batch_kernels", "joint_coordinates"))
_state = {"started": False, "announced": False, "warm": False}


def cache_is_cold() -> bool:
    """True if a kernel that a run calls from Python has no cache entry numba would load. Once found warm, the
    answer is kept for the process (reading the cache's index files cost ~1 ms a run, issue 16)."""
    if _state["warm"]:
        return False
    try:
        from . import (em_batch_kernels, em_constrained_kernels, em_reduced_kernels, spatial_kernels, spatial_monitor,
                       spatial_record, spatial_rk_kernels, spatial_sparse)
        mods = {"spatial_kernels": spatial_kernels, "em_reduced_kernels": em_reduced_kernels,
                "em_constrained_kernels": em_constrained_kernels, "spatial_record": spatial_record,
                "spatial_monitor": spatial_monitor,
                "em_batch_kernels": em_batch_kernels, "spatial_sparse": spatial_sparse,
                "spatial_rk_kernels": spatial_rk_kernels}
        cold = any(not getattr(mods[m], name)._cache._cache_file._load_index() for m, name in _RUN_KERNELS)
    except Exception:       # private numba API changed: assume warm, numba compiles if needed
        return False
    _state["warm"] = not cold
    return cold


def use_spatial_compiled() -> bool:
    """Whether a spatial model should take the compiled path now; announces a cold cache once."""
    return warm.follow_policy(cache_is_cold(), _state, WARM_SCRIPT, "the spatial kernels")
