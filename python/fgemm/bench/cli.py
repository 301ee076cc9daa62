"""python -m fgemm.bench (fgemm-bench): times fgemm's operations and their baselines on a shape table, on the GPU
or the CPU, and writes report-<device>.json and a self-contained report-<device>.html; or compares two runs.

    python -m fgemm.bench --device cuda --table seed,quantize --out DIR
    python -m fgemm.bench --device cpu --op gemm --table my_shapes.json --out DIR
    python -m fgemm.bench --report DIR/report-cpu.json          (the HTML again, from a run's JSON)
    python -m fgemm.bench --compare old.json new.json [--threshold 0.05]
"""

import argparse
import json
import os
import sys
from pathlib import Path

import torch

from . import operations, tables
from .compare import compare_runs, write_comparison
from .cpu_timing import prefer_passive_omp_wait
from .machine import machine_description
from .metrics import derive
from .peaks import cpu_peaks, gpu_peaks
from .report import write_html
from .runner import PROTOCOLS, Timer, run_section

PRECISIONS = ("fp8",)  # what fgemm computes today: DeepSeek-V3's FP8 recipe
DEFAULT_TABLES = {"cuda": "seed,quantize", "cpu": "cpu"}


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="python -m fgemm.bench", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    parser.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto",
                        help="auto: cuda when torch.cuda.is_available(), else cpu")
    parser.add_argument("--op", default="all",
                        help=f"comma-separated operations: {', '.join(operations.OPERATIONS)}, or all (default: "
                             "every operation whose section the table has)")
    parser.add_argument("--precision", default="fp8", help="the operands' precision (today only fp8)")
    parser.add_argument("--table", help="comma-separated shape tables: built in "
                                        f"({', '.join(tables.built_in_tables())}) or JSON files (default: "
                                        f"{DEFAULT_TABLES['cuda']} on cuda, {DEFAULT_TABLES['cpu']} on cpu)")
    parser.add_argument("--baselines", default="all",
                        help="comma-separated baselines, all or none (cuda: cublaslt for the GEMMs; cpu: "
                             "torch-fp32, torch-bf16 for the GEMMs; both: torch-ops for the quantizers)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per shape and side on the CPU (default: 5)")
    parser.add_argument("--sfa-layout", choices=("mn-major", "row-major"),
                        help="the activation scales' layout given to fgemm's GEMMs (default: mn-major on cuda, "
                             "DeepGEMM's; row-major on cpu, as the quantizer returns them)")
    parser.add_argument("--out", help="folder of report-<device>.json and .html, or of compare.html with --compare "
                                      "(default: the current folder; with --report, the JSON's)")
    parser.add_argument("--report", metavar="RUN_JSON", help="only write the HTML of a run's JSON (beside it, "
                                                            "or in --out if given)")
    parser.add_argument("--compare", nargs=2, metavar=("OLD_JSON", "NEW_JSON"),
                        help="compare two runs per shape instead of running; exit status 1 if fgemm regressed")
    parser.add_argument("--threshold", type=float, default=0.05,
                        help="a slow-down of fgemm beyond this fraction is a regression (default: 0.05)")
    args = parser.parse_args(argv)
    if args.precision not in PRECISIONS:
        parser.error(f"--precision {args.precision}: not implemented; fgemm computes {', '.join(PRECISIONS)} "
                     "(DeepSeek-V3's FP8 recipe: A per 1x128, B per 128x128)")
    if args.runs < 1:
        parser.error(f"--runs: expected a positive number, got {args.runs}")
    if not 0 < args.threshold < 1:
        parser.error(f"--threshold: expected a fraction between 0 and 1, got {args.threshold}")
    return args


def chosen_device(name):
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda: torch sees no CUDA device")
    return name


def chosen_operations(op_argument):
    if op_argument == "all":
        return list(operations.OPERATIONS)
    chosen = op_argument.split(",")
    unknown = [name for name in chosen if name not in operations.OPERATIONS]
    if unknown:
        raise ValueError(f"--op: expected operations among {', '.join(operations.OPERATIONS)} or all, "
                         f"got {', '.join(unknown)}")
    return chosen


def chosen_baselines(argument, device, operation):
    """The baselines of `argument` that apply to `operation` on `device`; a name that applies to nothing on the
    device is an error."""
    available = operations.BASELINES[(device, operations.baseline_kind(operation))]
    if argument == "all":
        return list(available)
    if argument == "none":
        return []
    on_device = {name for (where, _), names in operations.BASELINES.items() if where == device for name in names}
    unknown = [name for name in argument.split(",") if name not in on_device]
    if unknown:
        raise ValueError(f"--baselines: expected names among {', '.join(sorted(on_device))} (on {device}), all "
                         f"or none, got {', '.join(unknown)}")
    return [name for name in argument.split(",") if name in available]


def run(args):
    device = chosen_device(args.device)
    ops = chosen_operations(args.op)
    table_names = (args.table or DEFAULT_TABLES[device]).split(",")
    plan = []  # (operation, table name, its entries, its note, the baselines)
    for name in table_names:
        table = tables.load_table(name)
        for operation in ops:
            entries = tables.section_entries(table, operation, args.precision, name)
            if entries:
                plan.append((operation, name, entries, table.get("about", ""),
                             chosen_baselines(args.baselines, device, operation)))
    if not plan:
        raise ValueError(f"--table {','.join(table_names)}: no section for the operations {', '.join(ops)}")
    machine = machine_description(device)  # before the run: it notes the machine's load at the start
    timer = Timer(device, args.runs)
    measure_peaks = (lambda: gpu_peaks(timer.busy_flush)) if device == "cuda" else cpu_peaks
    print("measuring the roofline's peaks ...", file=sys.stderr)
    peaks_before = measure_peaks()
    sfa_mn_major = (args.sfa_layout or ("mn-major" if device == "cuda" else "row-major")) == "mn-major"
    sections = [dict(run_section(operation, entries, timer, baselines, sfa_mn_major, about), table=name,
                     precision=args.precision) for operation, name, entries, about, baselines in plan]
    print("measuring the roofline's peaks again ...", file=sys.stderr)
    peaks = best_peaks(peaks_before, measure_peaks())
    for section in sections:
        for row in section["rows"]:
            derive(row, section["unit"], peaks)
    return dict(format="fgemm-bench 1", machine=machine, peaks=peaks,
                protocol=PROTOCOLS[device].format(runs=args.runs),
                sfa_layout="mn-major" if sfa_mn_major else "row-major",
                baselines_about={name: operations.BASELINE_ABOUT[name] for section in sections
                                 for name in section["baselines"]}, sections=sections)


def best_peaks(first, second):
    """The higher compute peak and bandwidth of two measurements, one before and one after the run: on a shared
    machine, a phase of other work lowers a measurement, and a peak measured low would put shapes above the
    roofline."""
    return {key: max(first, second, key=lambda peaks: peaks[kind])[key]
            for kind in ("tflops", "gbps") for key in (kind, f"{kind}_how")}


def needs_passive_omp_restart(args):
    """Whether this process must start again with OMP_WAIT_POLICY set: it is read when torch loads OpenMP, which
    importing fgemm has done already (see prefer_passive_omp_wait for why it matters)."""
    return not args.compare and not args.report and "OMP_WAIT_POLICY" not in os.environ and \
        chosen_device(args.device) == "cpu"


def write_run(result, folder):
    """report-<device>.json and .html in `folder`; the HTML's path."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = folder / f"report-{result['machine']['device']}"
    stem.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    return write_html(result, stem.with_suffix(".html"))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    try:
        if args.compare:
            old, new = (json.loads(Path(path).read_text()) for path in args.compare)
            comparison = compare_runs(old, new, args.threshold)
            print(comparison.text())
            if args.out:
                print(f"wrote {write_comparison(comparison, Path(args.out))}")
            sys.exit(1 if comparison.regressions() else 0)
        if args.report:
            run_json = Path(args.report)
            html_path = Path(args.out or run_json.parent) / run_json.with_suffix(".html").name
            print(f"wrote {write_html(json.loads(run_json.read_text()), html_path)}")
            return
        if needs_passive_omp_restart(args):
            prefer_passive_omp_wait()
            os.execv(sys.executable, [sys.executable, "-m", "fgemm.bench", *argv])
        result = run(args)
    except ValueError as error:
        sys.exit(f"fgemm.bench: {error}")
    print(f"wrote {write_run(result, Path(args.out or '.'))}")
