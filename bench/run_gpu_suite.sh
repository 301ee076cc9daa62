#!/usr/bin/env bash
# On a machine with a Hopper GPU: build and install fgemm, run the GPU tests, then the benchmarks and the report
# (python -m fgemm.bench: report-cuda.json and .html). Logs, the benchmarks' JSON and the report go to $OUT
# (default: ./gpu-suite-out). Extra arguments go to bench_gpu.py.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-suite-out}
mkdir -p "$OUT"
SITE=$(mktemp -d)
export CC=${FGEMM_CC:-gcc} CXX=${FGEMM_CXX:-g++} PYTHONUNBUFFERED=1 CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-16}

nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
echo "== build"
python3 -m pip install --no-build-isolation --no-deps --target "$SITE" . > "$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
echo "== GPU tests"
python3 -m pytest -q -m gpu --maxfail=10 tests/python -p no:cacheprovider 2>&1 | tee "$OUT/tests.log" | tail -40
tests_status=${PIPESTATUS[0]}
echo "== benchmark"
python3 bench/bench_gpu.py --json "$OUT/bench.json" "$@" 2>&1 | tee "$OUT/bench.log"
echo "== quantization benchmark"
python3 bench/bench_quant.py --json "$OUT/bench_quant.json" 2>&1 | tee "$OUT/bench_quant.log"
echo "== report"
python3 -m fgemm.bench --device cuda --out "$OUT" 2>&1 | tee "$OUT/report.log"
exit "$tests_status"
