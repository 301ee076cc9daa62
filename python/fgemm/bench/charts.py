"""The report's charts, drawn with matplotlib (the optional extra fgemm[bench]) as inline SVG."""

import io

SIDE_COLOURS = {"fgemm": "#1f77b4", "cublaslt": "#ff7f0e", "torch-fp32": "#8c8c8c", "torch-bf16": "#ff7f0e",
                "torch-ops": "#ff7f0e"}
BOUND_COLOURS = {"compute": "#1f77b4", "memory": "#2ca02c"}


def matplotlib_available():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _figure(rows):
    import matplotlib

    matplotlib.use("Agg")  # no display: the figures are only written out
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.fonttype": "none", "font.size": 9})
    return plt.subplots(figsize=(max(7.0, 0.42 * len(rows) + 2.5), 4.4))


def _svg(figure):
    import matplotlib.pyplot as plt

    figure.tight_layout()
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg")
    plt.close(figure)
    text = buffer.getvalue()
    return text[text.index("<svg"):]  # the element alone, without the XML prologue


def _shape_axis(axes, rows):
    axes.set_xticks(range(len(rows)))
    axes.set_xticklabels([f"{index}: {row['label'].replace(' × ', '×')}" for index, row in enumerate(rows, 1)],
                         rotation=90 if len(rows) > 8 else 30, ha="center" if len(rows) > 8 else "right")
    axes.set_xlim(-0.6, len(rows) - 0.4)
    axes.grid(axis="y", alpha=0.3)


def _legend_above(axes):
    """The legend in a row above the plot, where it hides no bar."""
    axes.legend(loc="lower left", bbox_to_anchor=(0, 1.01), ncol=4, fontsize=8, frameon=False)


def _plain_numbers(axis):
    """Ticks of a log axis as 0.1, 1, 10 rather than powers of ten, and no labels between them."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axis.set_minor_formatter(NullFormatter())


def _log_if_wide(axes, values):
    values = [value for value in values if value]
    if values and max(values) / min(values) > 30:
        axes.set_yscale("log")
        _plain_numbers(axes.yaxis)


def throughput_chart(section):
    """Bars of fgemm's and each baseline's throughput per shape."""
    rows, sides = section["rows"], ["fgemm"] + section["baselines"]
    figure, axes = _figure(rows)
    width = 0.8 / len(sides)
    for offset, side in enumerate(sides):
        values = [row["throughput"][side] or 0 for row in rows]
        axes.bar([index + (offset - (len(sides) - 1) / 2) * width for index in range(len(rows))], values, width,
                 label=side, color=SIDE_COLOURS.get(side))
    _log_if_wide(axes, [row["throughput"][side] for row in rows for side in sides])
    axes.set_ylabel(section["unit"])
    _legend_above(axes)
    _shape_axis(axes, rows)
    return _svg(figure)


def speedup_chart(section):
    """Bars of fgemm's speed-up over each baseline per shape, with the line of parity."""
    rows, names = section["rows"], section["baselines"]
    figure, axes = _figure(rows)
    width = 0.8 / max(len(names), 1)
    for offset, name in enumerate(names):
        values = [row["speedup"][name] or 0 for row in rows]
        axes.bar([index + (offset - (len(names) - 1) / 2) * width for index in range(len(rows))], values, width,
                 label=f"× {name}", color=SIDE_COLOURS.get(name))
    axes.axhline(1.0, color="black", linewidth=0.8)
    _log_if_wide(axes, [row["speedup"][name] for row in rows for name in names])
    axes.set_ylabel("fgemm's speed-up (×)")
    _legend_above(axes)
    _shape_axis(axes, rows)
    return _svg(figure)


def roofline_fraction_chart(section):
    """Bars of fgemm's fraction of the roofline per shape, coloured by what bounds the shape."""
    rows = section["rows"]
    figure, axes = _figure(rows)
    bars = axes.bar(range(len(rows)), [100 * row["roofline_fraction"] for row in rows],
                    color=[BOUND_COLOURS[row["bound"]] for row in rows])
    axes.bar_label(bars, fmt="%.0f%%", fontsize=7)  # small fractions are hard to read off the bars alone
    for bound, colour in BOUND_COLOURS.items():
        if any(row["bound"] == bound for row in rows):
            axes.bar([0], [0], color=colour, label=f"{bound}-bound")
    axes.axhline(100.0, color="black", linewidth=0.8)
    axes.set_ylabel("% of the roofline")
    _legend_above(axes)
    _shape_axis(axes, rows)
    return _svg(figure)


def roofline_chart(section, peaks):
    """fgemm's TFLOPS against each shape's arithmetic intensity (FLOPs per byte it must move), one point per
    shape, under the roof: the bandwidth's slope up to the compute peak."""
    rows = section["rows"]
    figure, axes = _figure(rows[:8])  # not as wide as the bar charts: the x axis is the intensity
    intensities = [row["intensity"] for row in rows]
    ridge = peaks["tflops"] * 1e3 / peaks["gbps"]
    low, high = min(min(intensities), ridge) / 2, max(max(intensities), ridge) * 2
    axes.plot([low, ridge, high], [low * peaks["gbps"] / 1e3, peaks["tflops"], peaks["tflops"]], color="black",
              linewidth=1, label=f"roofline: {peaks['gbps']:.0f} GB/s, {peaks['tflops']:.3g} TFLOPS")
    axes.scatter(intensities, [row["throughput"]["fgemm"] for row in rows], color=SIDE_COLOURS["fgemm"],
                 zorder=3, label="fgemm")
    for index, row in enumerate(rows, 1):
        axes.annotate(str(index), (row["intensity"], row["throughput"]["fgemm"]), textcoords="offset points",
                      xytext=(4, 3), fontsize=7)
    axes.set_xscale("log")
    axes.set_yscale("log")
    _plain_numbers(axes.xaxis)
    _plain_numbers(axes.yaxis)
    axes.set_xlabel("arithmetic intensity (FLOP per byte moved)")
    axes.set_ylabel("TFLOPS")
    axes.grid(which="both", alpha=0.2)
    _legend_above(axes)
    return _svg(figure)
