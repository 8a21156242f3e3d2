"""The output files of ``multibody run``: checked before the run, written all or nothing after it
(:class:`multibody.results.outputs.Outputs`; issue 17)."""
from __future__ import annotations

from pathlib import Path

from ..results.outputs import HDF5_SUFFIXES, Outputs


def default_out(model: str) -> str:
    """MODEL.h5 in the current directory (a model file's stem, a built-in model's name)."""
    return f"{Path(model).stem if Path(model).suffix else model}.h5"


def plan_run_outputs(out, csv_path, plot_dir, report_path=None) -> Outputs:
    """Check --out, --csv, --plot and --report before anything runs (exit 2 naming the option and the path;
    --report also needs plotly, the extra 'report')."""
    outputs = Outputs()
    if report_path is not None:
        from ..report.figures import plotly
        plotly()
        outputs.file("--report", report_path, (".html", ".htm"))
    outputs.file("--out", out, HDF5_SUFFIXES)
    if csv_path is not None:
        outputs.file("--csv", csv_path, (".csv", ".txt"))
    if plot_dir is not None:
        outputs.directory("--plot", plot_dir)
    return outputs


def write_run_outputs(outputs: Outputs, result, model, options) -> None:
    """Write the result file, the CSV and the figures (all or none) and note them in the summary."""
    figures = []
    with outputs.staging():
        result.write_hdf5_to(outputs.stage("--out"))
        if "--csv" in outputs.files:
            result.write_csv_to(outputs.stage("--csv"))
        if "--plot" in outputs.dirs:
            from ..plot import run_figures

            figures = run_figures(result, model, outputs.stage_dir("--plot"), options)
        if "--report" in outputs.files:
            from ..report.page import report_html_for

            outputs.stage("--report").write_text(report_html_for(result, model), encoding="utf-8")
    result.summary["result_file"] = str(outputs.final("--out"))
    if "--csv" in outputs.files:
        result.summary["csv_file"] = str(outputs.final("--csv"))
    if "--plot" in outputs.dirs:
        result.summary["figures"] = [str(outputs.final("--plot", Path(p).name)) for p in figures]
    if "--report" in outputs.files:
        result.summary["report_file"] = str(outputs.final("--report"))
