"""Animations of a run: the mechanism at decimated stored states (matplotlib, Agg), a time readout, a timeline
with the events (singular crossings dashed red, locks/releases/impulses solid black) and a cursor, and the
event named in the frame while it happens (the mechanism drawn red at a singular crossing, orange at a
topology event). The static part (axes, ground pivots, start configuration, timeline) is drawn once and each
frame only blits the moving artists over it. Frames are written as GIF (Pillow), MP4 (the ffmpeg program)
or one self-contained HTML player (:mod:`.player`: PNG frames embedded, no network)."""
from __future__ import annotations

import io
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from ..errors import MultibodyError
from .player import player_html
from .scenes import scene_for
from .source import write_atomically
from .timeline import active_marker, frame_indices, locked_coordinates, markers

#: default number of frames (long runs are decimated to about this many stored states)
MAX_FRAMES = 200
#: colours of the mechanism: normal, at a singular crossing, at a topology event
COLORS = {None: "C0", "singular": "C3", "topology": "C1"}
#: palette size of the frames in GIF and HTML (line drawings keep their look at a quarter of the size;
#: Pillow's fast octree keeps the small saturated details, e.g. the director colours, that median cut loses)
PALETTE = 32


def _quantize(image):
    from PIL import Image

    return image.quantize(PALETTE, method=Image.Quantize.FASTOCTREE)


class Animation:
    """The frames of one result; ``fps`` plays the run at about real time (clamped to 5-25 frames per s)."""

    def __init__(self, result, model, max_frames: int = MAX_FRAMES, dpi: int = 80):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        if max_frames < 2:
            raise MultibodyError(f"--max-frames must be at least 2, got {max_frames}.")
        self.result, self.marks = result, markers(result)
        t = np.asarray(result.t, float)
        self.idx = frame_indices(t, max_frames, [m.t for m in self.marks])
        span = float(t[-1] - t[0]) if len(t) > 1 else 0.0
        self.window = max(2.0 * span / max(len(self.idx) - 1, 1), 0.02 * span)
        self.fps = float(np.clip(len(self.idx) / span if span > 0 else 10.0, 5.0, 25.0))
        self.scene = scene_for(model, result.q[self.idx])
        width = 7.5 if self.scene.aspect < 2.0 else 10.0
        self.fig = plt.figure(figsize=(width, float(np.clip(width / self.scene.aspect + 2.4, 3.6, 6.4))), dpi=dpi)
        self._layout()
        self.artists = []

    def _layout(self):
        fig, r = self.fig, self.result
        grid = fig.add_gridspec(2, 1, height_ratios=(8, 1), hspace=0.35, top=1.0 - 0.95 / fig.get_figheight())
        self.ax = fig.add_subplot(grid[0], projection="3d" if self.scene.three_d else None)
        self.scene.draw(self.ax, r.q[self.idx[0]], "0.8", muted=True)      # the start, faint, stays
        self.ax.plot([], [], color="0.8", lw=2, label=f"start (t = {r.t[0]:.3g} s)")
        self.scene.finish(self.ax, f"{r.summary.get('model', '')} ({r.summary.get('formulation', '')}, "
                                   f"{r.summary.get('integrator', '')})")
        tl = fig.add_subplot(grid[1])
        t = r.t
        tl.set_xlim(t[0], t[-1] if t[-1] > t[0] else t[0] + 1.0)
        tl.set_yticks([])
        tl.set_xlabel("t [s]", fontsize=8)
        tl.tick_params(labelsize=7)
        for m in self.marks:
            tl.axvline(m.t, color="C3" if m.kind == "singular" else "k", ls="--" if m.kind == "singular" else "-",
                       lw=1.2)
        tl.set_title("events: singular crossing (red, dashed), lock / release / impulse (black)", fontsize=7)
        self.cursor = tl.axvline(t[0], color="C0", lw=3, alpha=0.6, animated=True)
        top = 1.0 - 0.25 / fig.get_figheight()                 # text lines 0.25 in and 0.5 in below the top
        self.clock = fig.text(0.02, top, "", fontsize=12, family="monospace", va="top", animated=True)
        self.banner = fig.text(0.02, top - 0.25 / fig.get_figheight(), "", fontsize=10, color="C3", va="top",
                               animated=True)

    def _frame(self, i: int):
        """Replace the moving artists by those of frame i (the mechanism, cursor, clock, event banner)."""
        k = self.idx[i]
        t = float(self.result.t[k])
        for a in self.artists:
            a.remove()
        mark = active_marker(self.marks, t, self.window)
        color = COLORS[mark.kind if mark else None]
        self.artists = self.scene.draw(self.ax, self.result.q[k], color, locked_coordinates(self.result, k))
        self.cursor.set_xdata([t, t])
        self.clock.set_text(f"t = {t:9.4f} s")
        self.banner.set_text(f"{mark.text} at t = {mark.t:.4g} s" if mark else "")
        self.banner.set_color(color)
        return self.artists

    def frames(self):
        """The frames as RGB Pillow images: the static figure drawn once, each frame blitted over it."""
        from PIL import Image

        canvas = self.fig.canvas
        canvas.draw()
        background = canvas.copy_from_bbox(self.fig.bbox)
        for i in range(len(self.idx)):
            canvas.restore_region(background)
            for a in self._frame(i) + [self.cursor, self.clock, self.banner]:
                a.set_animated(True)
                self.fig.draw_artist(a)
            yield Image.fromarray(np.asarray(canvas.buffer_rgba())[..., :3].copy())

    def close(self):
        import matplotlib.pyplot as plt

        plt.close(self.fig)

    def html(self) -> str:
        """The animation as an HTML fragment (:func:`.player.player_html`, frames as palette PNGs)."""
        try:
            pngs = [_png(_quantize(im)) for im in self.frames()]
        finally:
            self.close()
        times = [float(self.result.t[k]) for k in self.idx]
        return player_html(pngs, times, self.fps)

    def save(self, path: Path) -> Path:
        """Write ``path`` by its suffix (.gif, .mp4, .html) atomically; MP4 needs the ffmpeg program."""
        suffix = path.suffix.lower()
        if suffix == ".html":
            title = self.result.summary.get("model", "animation")
            page = (f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{title}</title></head>"
                    f"<body>{self.html()}</body></html>\n")
            return write_atomically(path, lambda tmp: tmp.write_text(page, encoding="utf-8"))
        try:
            if suffix == ".gif":
                frames = [_quantize(im) for im in self.frames()]
                return write_atomically(path, lambda tmp: frames[0].save(
                    tmp, format="GIF", save_all=True, append_images=frames[1:], duration=1000.0 / self.fps, loop=0))
            return write_atomically(path, lambda tmp: _mp4(self.frames(), tmp, self.fps))
        finally:
            self.close()


def _png(image) -> bytes:
    out = io.BytesIO()
    image.save(out, "PNG", optimize=True)
    return out.getvalue()


def _mp4(frames, path: Path, fps: float) -> None:
    """H.264 MP4 by the ffmpeg program from PNG frames in a temporary directory (even size by padding)."""
    with tempfile.TemporaryDirectory() as d:
        for i, im in enumerate(frames):
            im.save(Path(d) / f"f{i:05d}.png")
        cmd = [shutil.which("ffmpeg"), "-y", "-loglevel", "error", "-framerate", f"{fps:g}", "-i",
               str(Path(d) / "f%05d.png"), "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", "-pix_fmt", "yuv420p",
               "-f", "mp4", str(path)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode:
            raise MultibodyError(f"ffmpeg failed writing '{path}': {done.stderr.strip()[-300:]}")


def check_ffmpeg(path) -> None:
    """MP4 is written by ffmpeg: a clear error before any work when it is not installed."""
    if shutil.which("ffmpeg") is None:
        raise MultibodyError(f"-o {path}: writing MP4 needs ffmpeg, which is not installed (not on the PATH); "
                             "install it (e.g. apt-get install ffmpeg) or write .gif or .html instead.")


def animate(result, model, path, max_frames: int = MAX_FRAMES) -> Path:
    """Write the animation of ``result`` (drawn with ``model``) to ``path`` (.gif, .mp4 or .html)."""
    path = Path(path)
    if path.suffix.lower() == ".mp4":
        check_ffmpeg(path)
    return Animation(result, model, max_frames).save(path)
