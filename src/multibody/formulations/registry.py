"""The formulations a run can name (``--formulation``): one entry per class, no import tricks.

A new formulation is one module keeping the contract of :mod:`.base` and one line here."""
from __future__ import annotations

from functools import partial

from ..errors import MultibodyError
from ..model.system import Model
from .base import Formulation
from .closing import Closing
from .discrete import DiscreteEquations
from .lagrange import Lagrange
from .minimal import Minimal
from .nullspace_sparse import nullspace
from .partitioning import Partitioning
from .projection import Projection

FORMULATIONS = {
    "lagrange": Lagrange,           # paper 000 eqs 3-6 (with multipliers; paper 003 for the reactions)
    "nullspace": nullspace,         # paper 000 eqs 7-22 (Maggi-Kane with a continued QR basis)
    "projection": Projection,       # paper 002 eqs 6-9 (Gauss-principle weighted projection)
    "minimal": Minimal,             # paper 002 eqs 10-13 (Voronets)
    "partitioning": Partitioning,   # paper 001 eqs 5-15, 23 (mass-weighted coordinate partitioning)
    "closing": Closing,             # paper 001 eqs 27-29 (explicit closing conditions)
}

#: the discrete schemes of paper 004, integrated only by the energy-momentum stepper
DISCRETE_SCHEMES = {
    "constrained": partial(DiscreteEquations, scheme="constrained"),   # eq. 10 with multipliers
    "reduced": partial(DiscreteEquations, scheme="reduced"),           # the discrete null space method
}


def make_formulation(name: str, model: Model, **options) -> Formulation:
    known = {**FORMULATIONS, **DISCRETE_SCHEMES}
    if name not in known:
        raise MultibodyError(f"unknown formulation '{name}'; choose one of: {', '.join(known)}.")
    import inspect

    accepted = inspect.signature(known[name]).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in accepted.values()):
        unknown = sorted(set(options) - set(accepted) - {"model"})
        if unknown:
            takes = ", ".join(k for k in accepted if k not in ("model", "self")) or "none"
            raise MultibodyError(f"formulation '{name}' has no option {', '.join(map(repr, unknown))}; "
                                 f"its options: {takes}.")
    try:
        return known[name](model, **options)
    except TypeError as exc:     # an option passed on to another class (projection -> Lagrange)
        if "unexpected keyword argument" not in str(exc):
            raise
        option = str(exc).rpartition("unexpected keyword argument ")[2]
        raise MultibodyError(f"formulation '{name}' has no option {option}.") from None
