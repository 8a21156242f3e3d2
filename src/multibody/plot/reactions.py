"""Figure of the elimination experiment in the style of paper 003 Fig. 4: non-unique reactions (left
column) and unique ones (right column) over time, one line per elimination variant."""
from __future__ import annotations

import numpy as np

#: largest number of panels per column
PANELS = 3


def pick_components(ex, count: int = PANELS) -> tuple[list[str], list[str]]:
    """(non-unique, unique) reaction labels to show: components on a moving body, one per pair; for
    non-unique pairs the components that differ most between the variants, for unique ones the
    largest; at most ``count`` each."""
    runs = list(ex.results.values())
    ser = runs[0].series["reactions"]
    data = np.array([r.series["reactions"].data for r in runs])            # (variants, k, labels)
    spread = np.max(np.ptp(data, axis=0), axis=0)
    size = np.max(np.abs(data[0]), axis=0)
    unique = {p.name: p.unique for p in ex.analysis.pairs}
    best: dict[str, tuple[float, str]] = {}
    for i, label in enumerate(ser.labels):
        pair, _, rest = label.partition(".on_")
        if rest.startswith("ground.") or pair not in unique:
            continue
        score = size[i] if unique[pair] else spread[i]
        if score > best.get(pair, (-1.0, ""))[0]:
            best[pair] = (float(score), label)
    non = [best[p][1] for p in best if not unique[p]][:count]
    uni = sorted((p for p in best if unique[p]), key=lambda p: -best[p][0])[:count]
    return non, [best[p][1] for p in uni]


def reactions_figure(ex, path, *, non_unique=None, unique=None):
    """Write the PNG: columns non-unique / unique, rows = components, lines = variants."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    auto = pick_components(ex)
    cols = [list(non_unique or auto[0]), list(unique or auto[1])]
    rows = max(1, max(len(c) for c in cols))
    fig, axes = plt.subplots(rows, 2, figsize=(11, 2.6 * rows + 0.6), sharex=True, squeeze=False)
    styles = ["-", "--", "-.", ":"]
    for j, (labels, title) in enumerate(zip(cols, ("non-unique reactions", "unique reactions"))):
        axes[0, j].set_title(title)
        for i in range(rows):
            ax = axes[i, j]
            if i >= len(labels):
                ax.set_visible(False)
                continue
            for k, (name, res) in enumerate(ex.results.items()):
                ser = res.series["reactions"]
                ax.plot(res.t, ser.data[:, ser.labels.index(labels[i])], styles[k % 4], lw=1.4,
                        label=name)
            ax.set_ylabel(labels[i].replace(".on_", "\non ") + (" [N m]" if labels[i].endswith("Mz") else " [N]"),
                          fontsize=8)
            ax.grid(alpha=0.3)
        axes[min(rows, max(len(labels), 1)) - 1, j].set_xlabel("t [s]")
    axes[0, 0].legend(fontsize=7, loc="best")
    fig.suptitle(f"{ex.analysis.labels and next(iter(ex.results.values())).summary['model']}: "
                 f"reactions for {len(ex.results)} ways of handling p = {ex.analysis.redundancy} redundant rows")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
