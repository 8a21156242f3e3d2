import os

import numpy as np
import pytest
from hypothesis import settings
from threadpoolctl import threadpool_limits

# The dense systems here are small: a threaded BLAS only competes for the 2 cores of CI (an SVD of a
# 119 x 119 matrix took 150 ms instead of 2 ms with threads on a loaded machine). Same as the CLI.
threadpool_limits(1, user_api="blas")

# CI explores the same examples every run (a red CI must be reproducible); locally hypothesis searches anew.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)
