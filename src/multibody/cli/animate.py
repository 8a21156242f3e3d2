"""``multibody animate``: the motion of a saved run as GIF, MP4 or self-contained HTML (issue 15)."""
from __future__ import annotations

import click

from ..errors import MultibodyError


def model_option(f):
    return click.option("--model", "model_spec", default=None, metavar="SPEC",
                        help="The model that produced the result (built-in name, model file or .py file); "
                             "default: the one recorded by `multibody run`, or the built-in model of the "
                             "result's name.")(f)


def max_frames_option(f):
    return click.option("--max-frames", type=click.IntRange(min=2), default=200, show_default=True,
                        help="At most about this many frames: a long run shows evenly spaced stored states "
                             "(plus those at its events).")(f)


def result_and_model(path, model_spec):
    """The result in ``path`` and its model; a clear error when the model cannot be found."""
    from ..report.source import load_result, result_model

    result = load_result(path)
    model = result_model(result, model_spec)
    if model is None:
        raise MultibodyError(f"result file '{path}': its model '{result.summary.get('model', '?')}' is not built in "
                             "and no source was recorded; give it with --model SPEC.")
    return result, model


@click.command("animate")
@click.argument("result_file", metavar="RESULT")
@click.option("-o", "--out", required=True, type=click.Path(),
              help="Output file: .gif (pillow), .mp4 (needs ffmpeg) or .html (self-contained player).")
@model_option
@max_frames_option
def animate_cmd(result_file, out, model_spec, max_frames):
    """Animate the mechanism of the result file RESULT: bodies, joints and ground pivots (spatial models:
    director frames and joint axes), a time readout and the events (singular crossings, locks)."""
    from ..report.animation import animate
    from ..report.source import ANIMATION_SUFFIXES, check_output

    path = check_output(out, ANIMATION_SUFFIXES)
    result, model = result_and_model(result_file, model_spec)
    click.echo(f"wrote {animate(result, model, path, max_frames)}")
