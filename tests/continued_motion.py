"""The order check shared by the tests of the error measures (tests/test_velocity_error.py,
tests/test_nullspace_continuation.py): a measure is the first-order change of the motion the run continues from
(formulations.velocity_error module docstring, "The measure")."""
from __future__ import annotations

import numpy as np


def assert_first_order_change(continued, y, err, measured, turn) -> None:
    """The remainder continued(y + c err) - continued(y) - c measured falls a hundred times when c falls ten times
    (second order: measured is the derivative), and only ten times without the forced velocity change ``turn`` (n,)
    on the velocity part (first order: the measure would miss a first-order term). c = 1e-3, 1e-4."""
    n = turn.shape[0]
    base = continued(y.copy())
    rest, rest_without = [], []
    for c in (1e-3, 1e-4):
        change = continued(y + c * err) - base
        rest.append(np.abs(change - c * measured).max())
        rest_without.append(np.abs(change - c * (measured - np.r_[np.zeros(n), turn])).max())
    assert rest[0] / rest[1] >= 50.0                             # second order: 100
    assert 5.0 <= rest_without[0] / rest_without[1] <= 20.0      # first order: 10
