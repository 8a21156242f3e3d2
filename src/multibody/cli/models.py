"""``multibody models``: the built-in models, their end times and descriptions."""
from __future__ import annotations

import json
import textwrap

import click


def _description(entry) -> str:
    """The first paragraph of the model factory's docstring, on one line."""
    doc = textwrap.dedent(entry.factory.__doc__ or "").strip()
    return " ".join(doc.split("\n\n")[0].split())


@click.command("models")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per model: name, t_end, events, step (energy-momentum), "
                                                      "description.")
def models_cmd(as_json):
    """List the built-in models with their end time (the default --t-end) and description."""
    from ..models import MODELS

    rows = [{"name": name, "t_end": e.t_end, "events": len(e.events), "step": e.step, "description": _description(e)}
            for name, e in MODELS.items()]
    if as_json:
        click.echo(json.dumps(rows))
        return
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        head = f"{r['name']:<{width}}  t_end {r['t_end']:g} s" + (f", {r['events']} events" if r["events"] else "")
        click.echo(head)
        click.echo(textwrap.fill(r["description"], width=100, initial_indent="    ", subsequent_indent="    "))
