"""Locking spatial pairs during a run (paper 002 constraint activation for SpatialModelBuilder models,
issue 23): an event action like :class:`~.events.Lock`, for the relative coordinates of R, C and P
pairs (rows of :func:`multibody.model.director_elements.lock_groups`); the velocity jumps by the
transition condition of the run (paper 002 eq. 24 by default: momentum-consistent)."""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import MultibodyError
from ..model.director import LowerPairs
from ..model.director_elements import lock_groups
from ..model.system import Model
from .events import AtTime


@dataclass(frozen=True)
class LockPair:
    """Action: hold the relative coordinates of the named spatial pairs at their current values."""

    joints: tuple

    def __call__(self, model: Model, t, q, v) -> Model:
        return model.with_constraints(*lock_groups(model, self.joints, q))

    def describe(self) -> str:
        return "lock pair " + ", ".join(self.joints)

    def validate(self, model: Model) -> None:
        pairs = {name: g.kind for g in model.constraints if isinstance(g, LowerPairs) for name in g.joint_names}
        bad = [j for j in self.joints if pairs.get(j, "S") not in "RCP"]
        if bad:
            raise MultibodyError(f"event '{self.describe()}': model '{model.name}' has no R, C or P pair "
                                 f"{', '.join(bad)} (pairs: {', '.join(pairs) or 'none'}).")


def lock_pair_at(t: float, *joints: str) -> AtTime:
    """Lock the spatial pairs ``joints`` at time t."""
    return AtTime(float(t), LockPair(tuple(joints)))


__all__ = ["LockPair", "lock_pair_at"]
