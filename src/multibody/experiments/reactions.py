"""The experiment of paper 003 Sects 4.3-4.4: simulate an overconstrained model with several choices of
eliminated redundant rows (and the minimum-norm multipliers); the motion is the same in every run,
the reactions the solvability analysis calls unique are the same, the others differ.

Every variant is run with the lagrange formulation on one fixed time grid (default rk4); the motion
spread (max |q - q_ref| / length_scale) is reported: it is round-off at consistent states and
shrinks with the step (the runs differ only where RK stage states leave the constraint manifold,
where the redundant rows of Gamma are slightly inconsistent).
Numerical verdict per pair X, free of that integration effect: along the reference run, the reactions
of every variant are evaluated at the *same* states (t, q, v); spread_X = max over time, variants
and reaction components of X of |r - r_ref| / scale (scale = largest |reaction| of the reference);
X counts as numerically unique when spread_X <= ``NUMERIC_UNIQUE``.
"""
from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass

import numpy as np

from ..errors import MultibodyError
from ..kinematics import consistent_state
from ..formulations.lagrange import Lagrange
from ..model.system import Model
from ..analysis.reactions import reaction_map
from ..simulation.driver import RunOptions, simulate
from ..analysis.solvability import Solvability, pair_rows, solvability_at

#: relative spread below which a pair's reactions count as equal across variants (fixed-step runs agree
#: to round-off, about 1e-12; non-unique reactions differ by O(1))
NUMERIC_UNIQUE = 1e-6
#: combinations of rows tried when choosing elimination variants automatically
MAX_COMBINATIONS = 5000
#: a row takes part in a redundancy when its entry of a unit left-null vector of C exceeds this
NULL_ENTRY = 1e-9
#: eliminating rows E keeps rank C iff N[E] (p, p) is invertible; |det N[E]| above this counts (the
#: columns of N are orthonormal, so a well-chosen E has |det| of order 1)
ELIMINATION_DET = 1e-6


@dataclass(frozen=True)
class ExperimentResult:
    """variants: name -> eliminated row labels (() = minimum-norm); results: name -> Result;
    analysis at the initial state; spread: pair -> relative spread; motion_spread: max |q - q_ref|
    / length_scale over variants."""

    variants: dict
    results: dict
    analysis: Solvability
    spread: dict
    motion_spread: float

    def verdicts(self) -> list[dict]:
        """Per pair: analysis verdict, numerical verdict, agreement."""
        out = []
        for p in self.analysis.pairs:
            if p.name not in self.spread:
                continue
            numeric = self.spread[p.name] <= NUMERIC_UNIQUE
            out.append({"name": p.name, "unique": p.unique, "spread": self.spread[p.name],
                        "numerically_unique": numeric, "agree": numeric == p.unique})
        return out

    def to_dict(self) -> dict:
        return {"variants": {k: list(v) for k, v in self.variants.items()}, "redundancy": self.analysis.redundancy,
                "motion_spread": self.motion_spread, "pairs": self.verdicts()}


def choose_variants(model: Model, count: int = 3, t: float = 0.0) -> dict:
    """``count`` sets of p rows whose elimination keeps rank C (paper 003 Sect. 3.1), taken from the
    rows of non-unique pairs and as different from each other as possible (greedy), plus the
    minimum-norm run (no elimination)."""
    q, _ = consistent_state(model, t)
    sol = solvability_at(model, q, t)
    labels, p = model.velocity_labels, sol.redundancy
    if p == 0:
        raise MultibodyError(f"Model '{model.name}' has no redundant constraints: every reaction is unique "
                             "and there is nothing to eliminate.")
    N = sol.null_left
    rows = [i for i in range(len(labels)) if np.max(np.abs(N[i])) > NULL_ENTRY]
    valid = []
    for combo in itertools.islice(itertools.combinations(rows, p), MAX_COMBINATIONS):
        if abs(np.linalg.det(N[list(combo)])) > ELIMINATION_DET:     # kept rows keep rank r
            valid.append(set(combo))
    chosen: list[set] = []
    while valid and len(chosen) < count:
        best = max(valid, key=lambda c: min((len(c - o) for o in chosen), default=p))
        chosen.append(best)
        valid.remove(best)
    out = {"minimum-norm": ()}
    for combo in chosen:
        names = tuple(labels[i] for i in sorted(combo))
        out["eliminate " + ", ".join(names)] = names
    return out


def run_experiment(model: Model, variants: dict | None = None, *, t_end: float, step: float = 5e-3,
                   integrator: str = "rk4", progress: bool = False) -> ExperimentResult:
    """Simulate ``model`` once per variant (name -> labels of eliminated rows) with the lagrange
    formulation on one fixed time grid; compare motion and joint reactions (see module docstring).
    ``progress``: a progress bar per run and one line per variant on the ``multibody`` logger."""
    variants = variants or choose_variants(model)
    q0, _ = consistent_state(model)
    analysis = solvability_at(model, q0)
    opts = RunOptions(integrator=integrator, step=step)
    results = {}
    for i, (name, rows) in enumerate(variants.items()):
        if progress:
            logging.getLogger("multibody").warning(f"variant {i + 1}/{len(variants)}: {name}")
        results[name] = simulate(model, t_end=t_end, options=opts, formulation_options={"eliminate": tuple(rows)},
                                 progress=progress)
    ref = next(iter(results.values()))
    if "reactions" not in ref.series:
        raise MultibodyError(f"Model '{model.name}' has no joint reactions to compare (build it with joints).")
    motion = max(float(np.max(np.abs(r.series["q"].data - ref.series["q"].data))) for r in results.values())
    same = {name: reactions_along(model, ref, rows) for name, rows in variants.items()}
    base = next(iter(same.values()))
    scale = max(float(np.max(np.abs(base))), np.finfo(float).tiny)
    rlab = ref.series["reactions"].labels
    spread = {}
    for name, idx in pair_rows([lab.rpartition(".on_")[0] + ".r" for lab in rlab]).items():
        spread[name] = max(float(np.max(np.abs(r[:, idx] - base[:, idx]))) for r in same.values()) / scale
    return ExperimentResult(dict(variants), results, analysis, spread, motion / model.length_scale)


def reactions_along(model: Model, result, eliminate=()) -> np.ndarray:
    """(k, len(reaction labels)) joint reactions at the recorded states of ``result`` computed with the
    rows ``eliminate`` left out (their multipliers zero; the rest minimum-norm), paper 003 Sect. 3.1."""
    form = Lagrange(model, eliminate=tuple(eliminate))
    rmap = reaction_map(model)
    out = []
    for t, q, v in zip(result.t, result.series["q"].data, result.series["v"].data):
        lam = form.accelerations(t, q, v).multipliers
        out.append(rmap.values(q, form.ws.velocity_constraints(t, q, v)[1], lam))
    return np.array(out)
