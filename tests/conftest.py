import os

import numpy as np
import pytest
from hypothesis import settings
from threadpoolctl import threadpool_limits

# The dense systems here are small: a threaded BLAS only competes for the 2 cores of CI (an SVD of a
# 119 x 119 matrix took 150 ms instead of 2 ms with threads on a loaded machine). Same as the CLI.
threadpool_limits(1, user_api="blas")

# Every run explores the same examples (a red test must be reproducible, on CI and on a user's machine
# after the README's install); HYPOTHESIS_PROFILE=explore searches anew with hypothesis's random draws.
settings.register_profile("fixed", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fixed"))


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)
