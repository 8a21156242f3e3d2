"""From a model to a Result: the one simulation loop (:mod:`.driver`), its options (:mod:`.options`),
events and transitions (paper 002: :mod:`.events`, :mod:`.transitions`), recording (:mod:`.recorder`),
the result assembly (:mod:`.assemble`), step-size watch and progress. Re-exports only."""
from .driver import simulate
from .events import AtTime, Lock, WhenZero, lock_at, rate_crosses_zero
from .options import RunOptions

__all__ = ["AtTime", "Lock", "RunOptions", "WhenZero", "lock_at", "rate_crosses_zero", "simulate"]
