"""A small self-contained HTML player for animation frames (no network, no library): an image, a slider, play /
pause / step buttons and the time of the frame shown. Frames are PNG bytes embedded as data URIs."""
from __future__ import annotations

import base64
import itertools
import json

_COUNTER = itertools.count()

_SCRIPT = """(function () {
  const root = document.getElementById("%(id)s"), frames = %(frames)s, times = %(times)s;
  const img = root.querySelector("img"), slider = root.querySelector("input"), label = root.querySelector("span");
  let k = 0, timer = null;
  function show(i) {
    k = Math.max(0, Math.min(frames.length - 1, i));
    img.src = "data:image/png;base64," + frames[k];
    slider.value = k;
    label.textContent = "frame " + (k + 1) + " / " + frames.length + ", t = " + times[k].toFixed(4) + " s";
  }
  function stop() { if (timer) { clearInterval(timer); timer = null; } }
  function play() {
    stop();
    if (k >= frames.length - 1) show(0);
    timer = setInterval(function () { if (k >= frames.length - 1) stop(); else show(k + 1); }, %(interval)f);
  }
  slider.addEventListener("input", function () { stop(); show(parseInt(slider.value, 10)); });
  root.querySelector("[data-act=play]").addEventListener("click", play);
  root.querySelector("[data-act=pause]").addEventListener("click", stop);
  root.querySelector("[data-act=prev]").addEventListener("click", function () { stop(); show(k - 1); });
  root.querySelector("[data-act=next]").addEventListener("click", function () { stop(); show(k + 1); });
  show(0);
})();"""


def player_html(pngs: list[bytes], times: list[float], fps: float) -> str:
    """An HTML fragment that plays ``pngs`` (one per time in ``times``) at ``fps`` frames per second."""
    pid = f"mb-player-{next(_COUNTER)}"
    frames = json.dumps([base64.b64encode(p).decode() for p in pngs])
    script = _SCRIPT % {"id": pid, "frames": frames, "times": json.dumps(times), "interval": 1000.0 / fps}
    buttons = "".join(f"<button type='button' data-act='{a}' title='{t}'>{s}</button>" for a, t, s in
                      (("prev", "previous frame", "&#9664;|"), ("play", "play", "&#9654;"),
                       ("pause", "pause", "||"), ("next", "next frame", "|&#9654;")))
    return (f"<div class='mb-player' id='{pid}'><img alt='animation frame' style='max-width:100%'><br>"
            f"{buttons} <input type='range' min='0' max='{len(pngs) - 1}' value='0' style='width:50%'> "
            f"<span style='font-family:monospace;font-size:.85em'></span><script>{script}</script></div>")
