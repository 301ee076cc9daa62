"""The self-contained HTML report of a run: per operation, charts (when matplotlib is installed) and a table
of every number, all in one file."""

import html
from pathlib import Path

from . import charts
from .metrics import geomean

TITLES = {
    "gemm": ("fp8_gemm_nt", "M × N × K"),
    "contiguous": ("m_grouped_fp8_gemm_nt_contiguous", "groups × rows per group × N × K"),
    "masked": ("m_grouped_fp8_gemm_nt_masked", "groups × rows per group × N × K (every group full)"),
    "per_token": ("per_token_cast_to_fp8", "M × K, BF16 in"),
    "per_block": ("per_block_cast_to_fp8", "N × K, BF16 in"),
}
STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1250px; color: #222; }
h1 { margin-bottom: 0.2em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
p.note { color: #555; max-width: 1100px; } .banner { background: #fff4d6; padding: 0.6em 1em; }
table { border-collapse: collapse; font-size: 13px; margin: 1em 0; }
th, td { padding: 3px 8px; border-bottom: 1px solid #e4e4e4; text-align: right; }
th { background: #f3f3f3; } td.text, th.text { text-align: left; white-space: nowrap; }
tr.regression td { background: #fde0dc; }
section.chart svg { max-width: 100%; height: auto; }
"""


def number(value, digits=3):
    """A value as the tables show it: about `digits` significant digits, a dash where there is none."""
    if value is None:
        return "—"
    if abs(value) >= 10 ** (digits - 1):
        return f"{value:.0f}"
    return f"{value:.{digits}g}"


def percent(value):
    return "—" if value is None else f"{100 * value:.1f}%"


def cell(text, key=None, css=None):
    attributes = (f' data-key="{key}"' if key else "") + (f' class="{css}"' if css else "")
    return f"<td{attributes}>{html.escape(text)}</td>"


def page(title, body):
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f"<style>{STYLE}</style></head>\n<body>\n{body}\n</body></html>\n")


def machine_lines(result):
    machine, peaks = result["machine"], result["peaks"]
    details = ", ".join(f"{key} {value}" for key, value in machine.items() if key not in ("device", "name", "date"))
    return (f"<p><b>{html.escape(machine['name'])}</b> ({machine['device']}), {html.escape(machine['date'])}; "
            f"{html.escape(details)}.</p>\n"
            "<table><tr><th class=text>roofline</th><th>measured</th><th class=text>by</th></tr>"
            f"<tr><td class=text>compute peak</td>{cell(number(peaks['tflops'], 4) + ' TFLOPS', 'peaks.tflops')}"
            f"{cell(peaks['tflops_how'], css='text')}</tr>"
            f"<tr><td class=text>memory bandwidth</td>{cell(number(peaks['gbps'], 4) + ' GB/s', 'peaks.gbps')}"
            f"{cell(peaks['gbps_how'], css='text')}</tr></table>\n"
            f"<p class=note>Timing: {html.escape(result['protocol'])} The peaks are the higher of a measurement "
            f"before and one after the run. fgemm's GEMMs are given sfa "
            f"{result['sfa_layout']}. Baselines: "
            + "; ".join(f"<b>{html.escape(name)}</b>: {html.escape(about)}"
                        for name, about in result["baselines_about"].items())
            + ". Speed-up = the baseline's time / fgemm's time. Roofline of a GEMM = the lesser of the compute peak "
              "and the bandwidth times its arithmetic intensity (FLOPs / the bytes it must move: A, B, their "
              "scales and D); of a quantizer, the bandwidth. calc_diff: fgemm's result against the same "
              "operation in FP32 torch operations.</p>")


def tables_note(result):
    """Each shape table's own note, once."""
    notes = {section["table"]: section.get("about") for section in result["sections"]}
    return "\n".join(f"<p class=note>Table <b>{html.escape(name)}</b>: {html.escape(about)}</p>"
                     for name, about in notes.items() if about)


def numbers_table(section):
    unit, names = section["unit"], section["baselines"]
    headers = (["#", "shape", "fgemm µs", f"fgemm {unit}"] + [f"{name} {unit}" for name in names]
               + [f"× {name}" for name in names] + [f"roofline {unit}", "bound", "of the roofline", "calc_diff"])
    lines = [f'<table class="numbers" data-operation="{section["operation"]}"><tr>'
             + "".join(f"<th{' class=text' if header == 'shape' else ''}>{html.escape(header)}</th>"
                       for header in headers) + "</tr>"]
    for index, row in enumerate(section["rows"]):
        cells = [cell(str(index + 1)), cell(row["label"], css="text"), cell(number(row["us"]["fgemm"], 4), "us.fgemm"),
                 cell(number(row["throughput"]["fgemm"]), "throughput.fgemm")]
        cells += [cell(number(row["throughput"][name]), f"throughput.{name}") for name in names]
        cells += [cell(number(row["speedup"][name]), f"speedup.{name}") for name in names]
        cells += [cell(number(row["roofline"]), "roofline"), cell(row["bound"]),
                  cell(percent(row["roofline_fraction"]), "roofline_fraction"),
                  cell(f"{row['calc_diff']:.2e}", "calc_diff")]
        lines.append(f'<tr data-row="{index}">' + "".join(cells) + "</tr>")
    lines.append("</table>")
    summary = ["geometric mean of fgemm's speed-up: " + ", ".join(
        f"{number(geomean(row['speedup'][name] for row in section['rows']))}× over {name}" for name in names)] \
        if names else []
    unavailable = {f"{row['label']} ({name}): {why}" for row in section["rows"]
                   for name, why in row.get("unavailable", {}).items()}
    notes = summary + ([f"not run: {'; '.join(sorted(unavailable))}"] if unavailable else [])
    return "\n".join(lines) + "".join(f"\n<p class=note>{html.escape(note)}.</p>" for note in notes)


def chart_sections(section, peaks):
    """(title, SVG) of each chart of an operation's section."""
    unit = section["unit"]
    drawn = [(f"Throughput ({unit})", charts.throughput_chart(section))]
    if section["baselines"]:
        drawn.append(("Speed-up over the baselines", charts.speedup_chart(section)))
    drawn.append(("Fraction of the roofline", charts.roofline_fraction_chart(section)))
    if unit == "TFLOPS":
        drawn.append(("Roofline: one point per shape, numbered as in the table", charts.roofline_chart(section,
                                                                                                     peaks)))
    return drawn


def operation_html(section, peaks, with_charts):
    name, shape_words = TITLES[section["operation"]]
    parts = [f'<h2 id="{section["operation"]}-{html.escape(section["table"])}">{name} '
             f"<small>({section['precision']}, table {html.escape(section['table'])}, shapes {shape_words})</small>"
             "</h2>"]
    if with_charts:
        for title, svg in chart_sections(section, peaks):
            parts.append(f'<section class="chart"><h3>{html.escape(title)}</h3>\n{svg}</section>')
    parts.append(numbers_table(section))
    return "\n".join(parts)


def report_html(result):
    with_charts = charts.matplotlib_available()
    machine = result["machine"]
    body = [f"<h1>fgemm benchmark: {html.escape(machine['name'])}</h1>", machine_lines(result), tables_note(result)]
    if not with_charts:
        body.append('<p class="banner">Tables only: matplotlib is not installed, so this report has no charts '
                    "(<code>pip install fgemm[bench]</code> adds them).</p>")
    body += [operation_html(section, result["peaks"], with_charts) for section in result["sections"]]
    return page(f"fgemm benchmark: {machine['name']}", "\n".join(body))


def write_html(result, path):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(report_html(result))
    return path
