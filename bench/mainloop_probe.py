"""Builds and runs bench/mainloop_probe.cu (needs nvcc and a Hopper GPU): the main loop alone, with and without
its loads and clusters, in cycles per K block against the tensor cores' ideal. Prints a Markdown table."""
import argparse
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def wgmma_wrapper(n: int) -> str:
    """An SS wgmma m64n{n}k32 E4M3 x E4M3 -> FP32: the instruction names each accumulator register."""
    regs = n // 2
    outputs = ", ".join(f"%{i}" for i in range(regs))
    constraints = ", ".join(f'"+f"(d[{i}])' for i in range(regs))
    return f"""struct W{n} {{
  static constexpr int N = {n};
  __device__ __forceinline__ static void mma(float (&d)[{regs}], uint64_t desc_a, uint64_t desc_b, bool accumulate) {{
    asm volatile("{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{regs + 2}, 0;\\n"
                 "wgmma.mma_async.sync.aligned.m64n{n}k32.f32.e4m3.e4m3 {{{outputs}}}, %{regs}, %{regs + 1}, p, 1, 1;\\n}}\\n"
                 : {constraints}
                 : "l"(desc_a), "l"(desc_b), "r"(static_cast<uint32_t>(accumulate)));
  }}
}};
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nvcc", default="nvcc")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "probe_wgmma.cuh").write_text("".join(wgmma_wrapper(n) for n in (128, 192)))
        binary = Path(tmp) / "mainloop_probe"
        subprocess.run([args.nvcc, "-std=c++17", "-O3", "-gencode", "arch=compute_90a,code=sm_90a",
                        f"-I{ROOT / 'kernels'}", f"-I{tmp}", str(ROOT / "bench" / "mainloop_probe.cu"),
                        "-o", str(binary)], check=True)
        subprocess.run([str(binary)], check=True)


if __name__ == "__main__":
    main()
