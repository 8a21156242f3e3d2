"""The stored states of a spatial Lagrange run computed together (issue 16: the six-body linkage storing every
accepted state cost 1.1 ms per step, the step alone 0.4 ms).

The recorder keeps each stored state as (t, y) (as on the band path, :mod:`.record_batch`, whose ``write`` appends the
rows here too) and computes them when read: one compiled call for all of them
(fast.spatial_record.record_batch: accelerations, minimum-norm multipliers, violations, A and its left null basis,
the computation of SpatialStep.record), then the energies, the joint reactions' generalized forces
(SpatialReactionMap.generalized_stack) and the uniqueness flags, certified from the null basis where every test is
decided (fast.spatial_certify), else SpatialReactionFlags.record, the reference. States go in blocks of
:data:`BLOCK` (A of a state is m n numbers). A state the output kernel declines is recorded by the per-state path.
"""
from __future__ import annotations

import numpy as np

#: states per compiled call (their A's: BLOCK m n floats, 7.4 MB on the six-body linkage)
BLOCK = 256


class SpatialBatch:
    """``batch(rec, states, write)``: the rows of the leading states, the index of the first the kernel declines or -1."""

    def __init__(self, step):
        self.step = step

    def tag(self):
        """The formulation's active rows when a state is stored (Lagrange._choose_rows assigns a new array when it
        chooses anew): the batch computes each state with the rows its per-state record would have used."""
        return self.step.form.active

    def batch(self, rec, states: list, write) -> int:
        """``write``: record_batch.write, which appends the rows. Blocks of at most BLOCK states with the same rows."""
        start = 0
        while start < len(states):
            end = start + 1
            while end < min(len(states), start + BLOCK) and states[end][2] is states[start][2]:
                end += 1
            bad = self._block(rec, states[start: end], write)
            if bad >= 0:
                return start + bad
            start = end
        return -1

    def _block(self, rec, states: list, write) -> int:
        n = rec.model.n
        Y = np.array([y for _, y, _ in states], dtype=float)
        flags = rec.flags
        bad, acc, lam, viol, C, N, cert = self.step.record_batch(Y, flags.group, len(flags.names), states[0][2])
        good = len(Y) if bad < 0 else bad
        if good:
            Y, C, lam = Y[:good], C[:good], lam[:good]
            write(rec, states[:good], Y, acc[:good], lam, viol[:good],
                  lambda: rec.reactions.generalized_stack(C, lam),
                  lambda: _flags(flags, Y[:, :n], C, N[:good], tuple(c[:good] for c in cert)))
        return bad


def _flags(flags, Q, C, N, cert) -> list:
    """The certified flags of every state (SpatialReactionFlags.certified), the reference's where not decided."""
    return [f if f is not None else flags.record(Q[s], C[s]) for s, f in enumerate(flags.certified(Q, C, N, cert))]


def spatial_batch(rec):
    """A :class:`SpatialBatch` for a recorder whose formulation records by fast.spatial_step.SpatialStep, else None."""
    step = getattr(rec.form, "fast_step", None)
    if step is None or not hasattr(step, "record_batch") or not hasattr(rec.flags, "certified"):
        return None
    return SpatialBatch(step)
