"""Figures of results, one module per figure family (no physics computed here, except that
:mod:`.nullspace` reruns a model with the other tangent basis for its comparison).

:func:`run_figures` chooses the families that apply to one run (``multibody run --plot``)."""
from __future__ import annotations

from pathlib import Path


def run_figures(result, model, directory, options) -> list[Path]:
    """The standard figures of a run plus those of its kind: events (topology changes), spatial
    conservation (results with a linear/angular ``momentum`` series px..Lz, the energy-momentum
    stepper's; a run with events has generalized momenta under that name, drawn by the topology figures), the nullspace basis."""
    from .standard import standard_figures

    paths = list(standard_figures(result, model, directory))
    if any(e.get("kind") != "singular" for e in result.events):   # singular: nullspace's own
        from .topology import topology_figures

        paths += topology_figures(result, directory)
    if "momentum" in result.series and result.series["momentum"].labels[3:] == ("Lx", "Ly", "Lz"):
        from .spatial import spatial_figures

        paths += spatial_figures(result, model, directory)
    elif any(type(g).__name__ == "SpatialBodies" for g in model.constraints):   # spatial, Runge-Kutta (issue 23)
        from .spatial import lagrange_figures

        paths += lagrange_figures(result, model, directory)
    if "physical_reactions" in result.series:      # models with a distribution matrix B (paper 001)
        from .physical import physical_reactions_figure

        name = result.summary.get("model", "run")
        paths.append(physical_reactions_figure(result, Path(directory) / f"{name}-physical-reactions.png",
                                               getattr(model.distribution, "unit", "N")))
    if result.summary.get("formulation") == "nullspace":
        from .admissible import admissible_figures
        from .nullspace import nullspace_figures

        paths += nullspace_figures(result, model, directory, options)
        paths += admissible_figures(result, model, directory)      # paper 000 Figs 3, 6, 9
    return paths
