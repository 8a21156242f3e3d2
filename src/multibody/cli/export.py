"""``multibody export``: write a built-in model as a model file (TOML, data only)."""
from __future__ import annotations

from pathlib import Path

import click

from ..results.outputs import atomic_write, check_file


@click.command("export")
@click.argument("model")
@click.option("-o", "--out", default=None, metavar="PATH",
              help="Model file to write (.toml; default MODEL.toml in the current directory).")
def export_cmd(model, out):
    """Write the built-in MODEL as a model file that `multibody run FILE` loads back to the same equations.

    Models given by M(q) and h(q, v, t), chains in relative coordinates and models with Python callables
    (user motions, forces, constraints) cannot be written as data; the error says which."""
    from ..io.export import export_builtin
    from ..io.toml_writer import dumps

    path = Path(f"{model}.toml" if out is None else out)
    check_file("--out", path, (".toml",))
    text = "# multibody model file (schema: multibody/io/model_schema.json); SI units\n" + dumps(export_builtin(model))
    atomic_write(path, lambda tmp: Path(tmp).write_text(text), "--out")
    click.echo(f"wrote {path}")
