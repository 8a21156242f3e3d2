"""The warm-up runs fill numba's cache for every kernel the cold-cache check looks at (issue 13 item 1, issue 16).

The command-line tool takes the NumPy reference path, and starts a compiling process in the background, whenever
:func:`multibody.fast.warm.cache_is_cold` finds a kernel without a cache entry. A kernel that the warm-up script
never compiles (session 8: a dead ``project_kernels.row_space_filter``) therefore kept every CLI run on the NumPy
path and started a new background compile on every run. Here both warm-up scripts run in a fresh process with an
empty cache directory (``NUMBA_CACHE_DIR``), and a second fresh process must then find both caches warm.

Slow (it compiles every kernel, a few minutes on two shared cores): ``pytest -m slow tests/test_warm_cache.py``;
``.ci/run`` runs it.
"""
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

CHECK = ("from multibody.fast import warm, spatial_warm; "
         "from multibody.integrate import generalized_alpha_band, generalized_alpha_kernels; "
         "from multibody.integrate import generalized_alpha_rank_kernels; "
         "cold = [f'{f.py_func.__module__}.{f.py_func.__name__}' for f in "
         "warm._dispatchers((generalized_alpha_kernels, generalized_alpha_band, generalized_alpha_rank_kernels)) "
         "if not f._cache._cache_file._load_index()]; "
         "print('planar cold:', cold); print('spatial cold:', spatial_warm.cache_is_cold()); "
         "assert not cold and not spatial_warm.cache_is_cold()")


def test_warm_up_scripts_leave_no_kernel_cold(tmp_path):
    from multibody.fast import spatial_warm, warm
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), OPENBLAS_NUM_THREADS="1")
    for script in (warm.WARM_SCRIPT, spatial_warm.WARM_SCRIPT):
        subprocess.run([sys.executable, "-c", script], env=env, check=True, capture_output=True, timeout=1800)
    done = subprocess.run([sys.executable, "-c", CHECK], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
