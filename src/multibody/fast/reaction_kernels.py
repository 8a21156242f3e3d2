"""The joint reactions' generalized forces of many stored states in one compiled call (issue 16: the stored states of
the chain N = 1000, whose NumPy gather with its (states, terms) temporaries cost 0.85 s for 1001 states): the sums of
:meth:`multibody.analysis.reactions.ReactionMap.generalized_entries_batch`, term by term in the same order, so the
same numbers.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def gather_reactions(vals, lam, entry, row, target, out):
    """out (k, width) <- -(sum over the terms j with target[j] = t of vals[i, entry[j]] lam[i, row[j]]) for each state
    i (Q_j = -A[R_j]^T lam[R_j], paper 003's reactions from the multipliers), NaN where a multiplier of the state is
    not finite; ``(entry, row, target)``: ReactionMap.entry_targets."""
    for i in range(vals.shape[0]):
        finite = True
        for r in range(lam.shape[1]):
            if not np.isfinite(lam[i, r]):
                finite = False
                break
        o = out[i]
        o[:] = 0.0
        if not finite:
            o[:] = np.nan
            continue
        for j in range(entry.shape[0]):
            o[target[j]] += vals[i, entry[j]] * lam[i, row[j]]
        for t in range(o.shape[0]):
            o[t] = -o[t]
