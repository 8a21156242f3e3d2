"""``multibody report``: one self-contained HTML page of a saved run (issue 15)."""
from __future__ import annotations

import click

from .animate import max_frames_option, model_option


@click.command("report")
@click.argument("result_file", metavar="RESULT")
@click.option("-o", "--out", required=True, type=click.Path(), help="Output file (.html).")
@model_option
@max_frames_option
def report_cmd(result_file, out, model_spec, max_frames):
    """Write an offline HTML report of the result file RESULT: summary, interactive figures (coordinates,
    energy balance, constraint violation, multipliers and reactions with their uniqueness), the events
    and the animation. Needs plotly (pip install 'multibody[report]')."""
    from ..report.figures import plotly
    from ..report.page import write_report
    from ..report.source import check_output, load_result, result_model

    path = check_output(out, (".html", ".htm"))
    plotly()
    result = load_result(result_file)
    click.echo(f"wrote {write_report(result, result_model(result, model_spec), path, max_frames)}")
