"""Benchmarks of fgemm against torch's baselines, on the GPU or the CPU, and their report.

`python -m fgemm.bench` (also `fgemm-bench`) times the chosen operations on a shape table, writes the numbers as
JSON and a self-contained HTML report, and compares two runs (`--compare old.json new.json`). The modules:
tables (the shape tables, built in under shapes/ or from a JSON file), operations (fgemm's calls on one shape)
and baselines (the same operations in torch), gpu_timing and cpu_timing (how a call is timed), peaks (the
machine's compute and memory bounds), metrics (FLOPs, bytes, throughput, ratios and the roofline of a row),
runner (one operation over a table, with a progress bar from progress), machine (what the run was measured on),
report and charts (the HTML), compare (two runs side by side) and cli (the command line).
"""
