"""The results of bench/bench_16bit.py summarised (geometric means and minima of the ratios) and written as the
markdown tables of docs/PERFORMANCE.md."""

NORMAL_KEY = ("m", "n", "k", "layout", "out", "accumulate")


def label(row):
    """A row's shape in a few words, for the minima of the summary."""
    if "m_sum" in row:
        return f"G={row['groups']} {row['m_sum']}x{row['n']}x{row['k']} {row['layout']}" + \
            (" psum" if row["psum_layout"] else "")
    if "k_sum" in row:
        return f"G={row['groups']} {row['m']}x{row['n']} K_sum={row['k_sum']}"
    return f"{row['m']}x{row['n']}x{row['k']} {row['layout']} {row['out']}" + (" +C" if row["accumulate"] else "")


def ratio_summary(prefix, rows, key, geomean):
    """{prefix}_geomean and {prefix}_min (with the row of the minimum) of rows[key], where rows have it."""
    rows = [row for row in rows if row.get(key) is not None]
    if not rows:
        return {}
    lowest = min(rows, key=lambda row: row[key])
    return {f"{prefix}_geomean": geomean([row[key] for row in rows]), f"{prefix}_min": lowest[key],
            f"{prefix}_min_row": label(lowest)}


def fp16_over_bf16(normal_rows):
    """Per row of the normal table run in both types: (row, fgemm's FP16 / BF16 throughput, cuBLAS's)."""
    bf16 = {tuple(row[key] for key in NORMAL_KEY): row for row in normal_rows if row["dtype"] == "bf16"}
    pairs = []
    for row in normal_rows:
        other = bf16.get(tuple(row[key] for key in NORMAL_KEY)) if row["dtype"] == "fp16" else None
        if other:
            pairs.append((row, row["fgemm_tflops"] / other["fgemm_tflops"],
                          row["cublas_tflops"] / other["cublas_tflops"]))
    return pairs


def summarize(results, geomean):
    summary = {}
    normal = results.get("normal", [])
    for dtype in ("bf16", "fp16"):
        rows = [row for row in normal if row["dtype"] == dtype]
        summary.update(ratio_summary(f"{dtype}_normal_vs_cublas", rows, "vs_cublas", geomean))
    bf16_rows = [row for row in normal if row["dtype"] == "bf16"]
    summary.update(ratio_summary("bf16_normal_vs_deepgemm", bf16_rows, "vs_deepgemm", geomean))
    summary.update(ratio_summary("bf16_normal_vs_deepgemm_via_cublas", bf16_rows, "vs_deepgemm_via_cublas", geomean))
    pairs = fp16_over_bf16(normal)
    if pairs:
        summary["fgemm_fp16_over_bf16_geomean"] = geomean([fgemm_ratio for _, fgemm_ratio, _ in pairs])
        summary["cublas_fp16_over_bf16_geomean"] = geomean([cublas_ratio for _, _, cublas_ratio in pairs])
    for section in ("m_grouped", "k_grouped"):
        rows = results.get(section, [])
        summary.update(ratio_summary(f"{section}_vs_cublas_per_expert", rows, "vs_cublas", geomean))
        summary.update(ratio_summary(f"{section}_vs_deepgemm", rows, "vs_deepgemm", geomean))
    return summary


def cell(value, digits=1):
    return "" if value is None else f"{value:.{digits}f}"


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |",
             "| " + " | ".join("---:" for _ in header) + " |"]
    lines += ["| " + " | ".join(str(value) for value in row) + " |" for row in rows]
    return "\n".join(lines)


def markdown(saved):
    """The tables of a run (the JSON bench_16bit.py writes) and its summary, as markdown."""
    results, parts = saved["rows"], [f"GPU: {saved['gpu']}, torch {saved['torch']}" +
                                     (", --quick" if saved.get("quick") else "")]
    normal = results.get("normal", [])
    bf16 = [row for row in normal if row["dtype"] == "bf16"]
    if bf16:
        parts.append(table(
            ["M", "N", "K", "layout", "D", "C", "fgemm µs", "fgemm TFLOPS", "cuBLAS TFLOPS", "× cuBLAS",
             "DeepGEMM TFLOPS (H100 table)", "× DeepGEMM, table", "× DeepGEMM, via cuBLAS", "calc_diff"],
            [[r["m"], r["n"], r["k"], r["layout"], r["out"], "yes" if r["accumulate"] else "", cell(r["fgemm_us"]),
              cell(r["fgemm_tflops"]), cell(r["cublas_tflops"]), cell(r["vs_cublas"], 2),
              cell(r.get("deepgemm_tflops")), cell(r.get("vs_deepgemm"), 2), cell(r.get("vs_deepgemm_via_cublas"), 2),
              f"{r['calc_diff']:.1e}"] for r in bf16]))
    pairs = fp16_over_bf16(normal)
    if pairs:
        parts.append(table(
            ["M", "N", "K", "layout", "D", "C", "fgemm FP16 µs", "fgemm FP16 TFLOPS", "cuBLAS FP16 TFLOPS",
             "× cuBLAS", "fgemm FP16 / BF16", "cuBLAS FP16 / BF16", "calc_diff"],
            [[r["m"], r["n"], r["k"], r["layout"], "fp16" if r["out"] == "bf16" else r["out"],
              "yes" if r["accumulate"] else "", cell(r["fgemm_us"]), cell(r["fgemm_tflops"]), cell(r["cublas_tflops"]),
              cell(r["vs_cublas"], 2), cell(fgemm_ratio, 2), cell(cublas_ratio, 2), f"{r['calc_diff']:.1e}"]
             for r, fgemm_ratio, cublas_ratio in pairs]))
    if results.get("m_grouped"):
        parts.append(table(
            ["G", "M_sum", "N", "K", "layout", "grouped_layout", "fgemm µs", "fgemm TFLOPS",
             "cuBLAS per expert TFLOPS", "× cuBLAS", "DeepGEMM TFLOPS (H100 table)", "× DeepGEMM", "calc_diff"],
            [[r["groups"], r["m_sum"], r["n"], r["k"], r["layout"], "psum" if r["psum_layout"] else "m_indices",
              cell(r["fgemm_us"]), cell(r["fgemm_tflops"]), cell(r["cublas_tflops"]), cell(r["vs_cublas"], 2),
              cell(r.get("deepgemm_tflops")), cell(r.get("vs_deepgemm"), 2), f"{r['calc_diff']:.1e}"]
             for r in results["m_grouped"]]))
    if results.get("k_grouped"):
        parts.append(table(
            ["G", "M", "N", "K_sum", "fgemm µs", "fgemm TFLOPS", "cuBLAS per expert TFLOPS", "× cuBLAS", "calc_diff"],
            [[r["groups"], r["m"], r["n"], r["k_sum"], cell(r["fgemm_us"]), cell(r["fgemm_tflops"]),
              cell(r["cublas_tflops"]), cell(r["vs_cublas"], 2), f"{r['calc_diff']:.1e}"]
             for r in results["k_grouped"]]))
    parts.append("\n".join(f"- {key}: {value:.3f}" if isinstance(value, float) else f"- {key}: {value}"
                           for key, value in saved["summary"].items()))
    return "\n\n".join(parts)
