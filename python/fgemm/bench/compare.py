"""Two runs side by side: the change of fgemm's throughput per shape, regressions beyond a threshold marked."""

import dataclasses
import html
from pathlib import Path

from .report import TITLES, number, page, percent


@dataclasses.dataclass
class Change:
    operation: str
    table: str
    label: str
    unit: str
    old: float
    new: float
    baseline_changes: dict  # baseline name -> its own change: a change shared by all sides is the machine's
    regression: bool

    @property
    def change(self):
        return self.new / self.old - 1


@dataclasses.dataclass
class Comparison:
    changes: list
    threshold: float
    unmatched: list  # labels of shapes in only one of the runs

    def regressions(self):
        return [change for change in self.changes if change.regression]

    def text(self):
        lines = [f"{'operation':<12} {'shape':<28} {'old':>9} {'new':>9} {'change':>8}  baselines' change"]
        for change in self.changes:
            baselines = ", ".join(f"{name} {percent(value)}" for name, value in change.baseline_changes.items())
            lines.append(f"{change.operation:<12} {change.label:<28} {number(change.old):>9} {number(change.new):>9} "
                         f"{percent(change.change):>8}  {baselines}{'  REGRESSION' if change.regression else ''}")
        lines.append(f"{len(self.regressions())} of {len(self.changes)} shapes slower by more than "
                     f"{percent(self.threshold)}" + (f"; only in one run: {', '.join(self.unmatched)}"
                                                     if self.unmatched else ""))
        return "\n".join(lines)

    def html(self):
        rows = ["<table><tr><th class=text>operation</th><th class=text>shape</th><th>unit</th><th>old</th>"
                "<th>new</th><th>change</th><th class=text>baselines' change</th></tr>"]
        for change in self.changes:
            baselines = ", ".join(f"{name} {percent(value)}" for name, value in change.baseline_changes.items())
            rows.append(f"<tr{' class=regression' if change.regression else ''}>"
                        f"<td class=text>{TITLES[change.operation][0]}</td><td class=text>{html.escape(change.label)}"
                        f"</td><td>{change.unit}</td><td>{number(change.old)}</td><td>{number(change.new)}</td>"
                        f"<td>{percent(change.change)}</td><td class=text>{html.escape(baselines)}</td></tr>")
        rows.append("</table>")
        summary = (f"<p>{len(self.regressions())} of {len(self.changes)} shapes are slower by more than "
                   f"{percent(self.threshold)} (marked).</p>")
        return page("fgemm benchmark: comparison", "<h1>fgemm benchmark: comparison</h1>\n" + summary + "\n".join(rows))


def _rows_by_shape(run):
    return {(section["operation"], section["table"], row["label"]): (section, row)
            for section in run["sections"] for row in section["rows"]}


def compare_runs(old_run, new_run, threshold):
    old_rows, new_rows = _rows_by_shape(old_run), _rows_by_shape(new_run)
    changes = []
    for key, (section, new_row) in new_rows.items():
        if key not in old_rows:
            continue
        old_row = old_rows[key][1]
        old, new = old_row["throughput"]["fgemm"], new_row["throughput"]["fgemm"]
        baseline_changes = {name: new_row["throughput"][name] / old_row["throughput"][name] - 1
                            for name in section["baselines"]
                            if new_row["throughput"].get(name) and old_row["throughput"].get(name)}
        changes.append(Change(operation=key[0], table=key[1], label=key[2], unit=section["unit"], old=old, new=new,
                              baseline_changes=baseline_changes, regression=new < old * (1 - threshold)))
    unmatched = sorted(label for (_, _, label) in old_rows.keys() ^ new_rows.keys())
    return Comparison(changes=changes, threshold=threshold, unmatched=unmatched)


def write_comparison(comparison, folder):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "compare.html"
    path.write_text(comparison.html())
    return path
