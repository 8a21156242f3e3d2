"""``multibody reactions-experiment MODEL``: the experiment of paper 003 Sects 4.3-4.4 (see
analysis.elimination): several choices of eliminated redundant rows, same motion, unique reactions
equal, the others not; optional figure in the style of paper 003 Fig. 4."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click


@click.command("reactions-experiment")
@click.argument("model")
@click.option("--eliminate", "eliminate", multiple=True, metavar="ROWS",
              help="One variant: comma-separated row labels to eliminate (e.g. 'C.y,W4.normal'); repeat "
                   "for more variants. Default: the minimum-norm run and 3 automatic choices.")
@click.option("--t-end", type=float, default=None, help="End time (default: the model's).")
@click.option("--step", type=float, default=5e-3, show_default=True, help="Fixed rk4 step [s].")
@click.option("--plot", "plot_dir", default=None, metavar="DIR",
              help="Directory for the Fig. 4 style PNG.")
@click.option("--show", multiple=True, metavar="LABEL",
              help="Reaction label to plot (e.g. 'B.on_wheel1.Fx'); default: chosen automatically.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def reactions_experiment_cmd(model, eliminate, t_end, step, plot_dir, show, as_json):
    """Simulate MODEL with several eliminations of redundant rows and compare the reactions."""
    from ..experiments.reactions import choose_variants, run_experiment
    from ..io.model_source import load_model
    from ..errors import MultibodyError
    from ..results.outputs import check_dir

    if plot_dir is not None:
        check_dir("--plot", plot_dir)

    mdl, default_t = load_model(model)
    variants = None
    if eliminate:
        variants = {"minimum-norm": ()}
        variants.update({f"eliminate {e}": tuple(x.strip() for x in e.split(",") if x.strip())
                         for e in eliminate})
    else:
        variants = choose_variants(mdl)
    ex = run_experiment(mdl, variants, t_end=t_end or default_t, step=step,
                        progress=sys.stderr.isatty() and not as_json)
    out = ex.to_dict()
    if plot_dir:
        from ..plot.reactions import reactions_figure
        labels = ex.results["minimum-norm"].series["reactions"].labels
        bad = [s for s in show if s not in labels]
        if bad:
            raise MultibodyError(f"unknown reaction label(s) {', '.join(bad)}; e.g. {', '.join(labels[:5])}.")
        unique = {p.name: p.unique for p in ex.analysis.pairs}
        non = [s for s in show if not unique.get(s.partition(".on_")[0], True)] or None
        uni = [s for s in show if unique.get(s.partition(".on_")[0], False)] or None
        Path(plot_dir).mkdir(parents=True, exist_ok=True)
        out["figure"] = str(reactions_figure(ex, Path(plot_dir) / f"{mdl.name}-reactions.png",
                                             non_unique=non, unique=uni))
    click.echo(json.dumps(out) if as_json else _human(out))


def _human(out) -> str:
    lines = [f"redundancy p = {out['redundancy']}; variants:"]
    lines += [f"  {name}: {', '.join(rows) or 'none (minimum-norm multipliers)'}" for name, rows in
              out["variants"].items()]
    lines.append(f"motion spread between variants: {out['motion_spread']:.2e} (relative to the model length)")
    width = max(len(p["name"]) for p in out["pairs"])
    lines.append(f"  {'pair':<{width}}  analysis    spread     numerically  agree")
    for p in out["pairs"]:
        lines.append(f"  {p['name']:<{width}}  {'unique' if p['unique'] else 'not unique':<10}  "
                     f"{p['spread']:.2e}   {'unique' if p['numerically_unique'] else 'differs':<11}  "
                     f"{'yes' if p['agree'] else 'NO'}")
    if "figure" in out:
        lines.append(f"figure: {out['figure']}")
    return "\n".join(lines)
