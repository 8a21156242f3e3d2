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
    with outputs.staging():
        result.write_hdf5_to(outputs.stage("--out"))
        figures = _write_others(outputs, result, model, options)
    _note(outputs, result, figures)


def write_streamed_run(outputs: Outputs, run, model, options):
    """``run --stream``: ``run(stream=...)`` (simulate) writes its states into the staged --out file block
    by block (:mod:`multibody.results.stream`: memory flat however long the run); the CSV, figures and
    report then read that file back. Everything is renamed into place only when all was written, so a
    failed run leaves the earlier files. Returns the run's Result (summary and events; no rows)."""
    from ..results.result import Result
    from ..results.stream import ResultStream

    with outputs.staging():
        tmp = outputs.stage("--out")
        result = run(stream=ResultStream(tmp))
        figures = _write_others(outputs, Result.load(tmp), model, options) if len(outputs.files) > 1 \
            or outputs.dirs else []
    _note(outputs, result, figures)
    return result


def _write_others(outputs: Outputs, result, model, options) -> list:
    """The staged CSV, figures and report (inside ``outputs.staging()``); returns the figures."""
    figures = []
    if "--csv" in outputs.files:
        result.write_csv_to(outputs.stage("--csv"))
    if "--plot" in outputs.dirs:
        from ..plot import run_figures

        figures = run_figures(result, model, outputs.stage_dir("--plot"), options)
    if "--report" in outputs.files:
        from ..report.page import report_html_for

        outputs.stage("--report").write_text(report_html_for(result, model), encoding="utf-8")
    return figures


def _note(outputs: Outputs, result, figures) -> None:
    """The written files in the summary."""
    result.summary["result_file"] = str(outputs.final("--out"))
    if "--csv" in outputs.files:
        result.summary["csv_file"] = str(outputs.final("--csv"))
    if "--plot" in outputs.dirs:
        result.summary["figures"] = [str(outputs.final("--plot", Path(p).name)) for p in figures]
    if "--report" in outputs.files:
        result.summary["report_file"] = str(outputs.final("--report"))
