"""``multibody equilibrium MODEL`` and ``multibody modes MODEL``: static equilibrium, its stability, reactions
and driver efforts, and the natural frequencies and mode shapes about it (analysis.equilibrium; issue 21)."""
from __future__ import annotations

import json

import click
import numpy as np


@click.command("equilibrium")
@click.argument("model")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def equilibrium_cmd(model, as_json):
    """Static equilibrium of MODEL nearest to its initial configuration: q, stability, driver efforts,
    reactions (with paper 003's uniqueness), residual and iterations."""
    from ..analysis.equilibrium import equilibrium
    from ..io.model_source import load_model

    mdl, _ = load_model(model)
    eq = equilibrium(mdl)
    d = eq.to_dict()
    if as_json:
        click.echo(json.dumps(d))
        return
    width = max(map(len, mdl.coordinate_names))
    lines = [f"model {mdl.name}: {eq.stability} equilibrium after {eq.iterations} iterations "
             f"(imbalance |T^T f| {eq.residual:.1e} of the forces)",
             "  reduced stiffness eigenvalues " + " ".join(f"{x:.4g}" for x in eq.stiffness_eigenvalues)]
    lines += [f"  {name:<{width}} {value:+.9g}" for name, value in d["q"].items()]
    for name, value in eq.driver_efforts.items():
        lines.append(f"  driver effort {name} {value:+.6g} (applied in the positive direction of its coordinate)")
    non_unique = [name for name, u in eq.unique.items() if not u]
    if non_unique:
        lines.append("  reactions NOT unique (paper 003): " + ", ".join(non_unique))
    click.echo("\n".join(lines))


@click.command("modes")
@click.argument("model")
@click.option("--at", "at", type=click.Choice(["equilibrium", "initial"]), default="equilibrium",
              show_default=True, help="Linearise about the static equilibrium found from the initial configuration, "
                                      "or about the initial configuration itself (it must be an equilibrium).")
@click.option("--plot", "plot_dir", default=None, metavar="DIR",
              help="Write one PNG per mode (the mechanism at the equilibrium and displaced along the mode).")
@click.option("--animate", "animation", default=None, metavar="FILE",
              help="Animate mode --mode K on the mechanism (.gif, .mp4 or .html, as multibody animate).")
@click.option("--mode", "mode_number", type=click.IntRange(min=1), default=1, show_default=True,
              help="Which mode --animate shows (1 = the lowest).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def modes_cmd(model, at, as_json, plot_dir=None, animation=None, mode_number=1):
    """Natural frequencies (Hz), damping ratios and mode shapes of MODEL about a static equilibrium."""
    from ..analysis.equilibrium import equilibrium
    from ..analysis.linearize import modes
    from ..errors import MultibodyError
    from ..io.model_source import load_model
    from ..results.outputs import check_dir

    if plot_dir is not None:
        check_dir("--plot", plot_dir)

    mdl, _ = load_model(model)
    if animation is not None:
        from ..report.source import ANIMATION_SUFFIXES, check_output
        check_output(animation, ANIMATION_SUFFIXES, "--animate")
    try:
        eq = equilibrium(mdl, max_iterations=0) if at == "initial" else equilibrium(mdl)
    except MultibodyError as exc:
        if at != "initial":
            raise
        raise MultibodyError(f"Model '{mdl.name}': the initial configuration is not a static equilibrium "
                             f"({exc}); use --at equilibrium.") from None
    md = modes(mdl, eq)
    figures = []
    if plot_dir:
        from ..plot.modes import mode_figures
        figures = [str(p) for p in mode_figures(mdl, eq, md, plot_dir)]
    if animation is not None:
        if mode_number > len(md.frequencies_hz):
            raise MultibodyError(f"Model '{mdl.name}' has {len(md.frequencies_hz)} modes; --mode {mode_number} "
                                 "does not exist.")
        from ..plot.modes import mode_result
        from ..report.animation import animate
        figures.append(str(animate(mode_result(mdl, eq, md, mode_number - 1), mdl, animation)))
    if as_json:
        click.echo(json.dumps({"model": mdl.name, "at": at, "stability": eq.stability, **md.to_dict(),
                               "figures": figures}))
        return
    lines = [f"model {mdl.name}: modes about the {eq.stability} equilibrium"]
    for k, (f, z) in enumerate(zip(md.frequencies_hz, md.damping_ratios), 1):
        big = np.argsort(-np.abs(md.shapes[:, k - 1]))[:3]
        shape = ", ".join(f"{mdl.coordinate_names[i]} {md.shapes[i, k - 1]:+.3f}" for i in big)
        freq = "unstable (w^2 < 0)" if np.isnan(f) else f"{f:.6g} Hz"
        lines.append(f"  mode {k}: {freq}, damping ratio {z:.3g}; largest: {shape}")
    click.echo("\n".join(lines + [f"  figure {p}" for p in figures]))


@click.command("linearize")
@click.argument("model")
@click.option("--input", "inputs", multiple=True, metavar="NAME",
              help="An input: a driver (its name, e.g. O-driver: it becomes an actuator whose effort is the input) "
                   "or a coordinate name (a generalized force on it). Repeatable.")
@click.option("--output", "outputs", multiple=True, metavar="q:NAME|v:NAME",
              help="An output: a coordinate's deviation (q:NAME) or rate (v:NAME). Repeatable; default all.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with A, B, C, D and the labels.")
def linearize_cmd(model, inputs, outputs, as_json):
    """State-space model (A, B, C, D) of MODEL about its static equilibrium, in the tangent coordinates z of
    paper 000 (states z and z'), for scipy.signal or python-control."""
    from ..analysis.equilibrium import equilibrium
    from ..analysis.linearize import linearize
    from ..io.model_source import load_model

    mdl, _ = load_model(model)
    lin = linearize(mdl, equilibrium(mdl), inputs=inputs, outputs=outputs or None)
    A, B, C, D = lin.state_space()
    poles = np.linalg.eigvals(A)
    d = lin.M.shape[0]
    states = [f"z{k}" for k in range(d)] + [f"z{k}'" for k in range(d)]
    if as_json:
        click.echo(json.dumps({"model": mdl.name, "states": states, "inputs": list(lin.input_labels),
                               "outputs": list(lin.output_labels), "A": A.tolist(), "B": B.tolist(),
                               "C": C.tolist(), "D": D.tolist(), "poles_real": poles.real.tolist(),
                               "poles_imag": poles.imag.tolist(), "tangent_basis": lin.T.tolist()}))
        return
    click.echo(f"model {mdl.name}: {2 * d} states (z, z' in the tangent basis), inputs "
               f"{', '.join(lin.input_labels) or 'none'}, {len(lin.output_labels)} outputs\n  poles "
               + " ".join(f"{p.real:+.4g}{p.imag:+.4g}j" for p in sorted(poles, key=lambda p: (p.real, p.imag))))
