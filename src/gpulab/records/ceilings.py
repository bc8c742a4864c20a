"""The card's ceilings as a table: what results/<gpu>/ceilings.csv holds, how it is read, and how
rows are held against it. Measuring them is gpulab.jobs.ceilings; this module needs no GPU.

Every rate gpulab reports is shown against a limit measured on the same card, never a datasheet:
  copy_memcpy       cudaMemcpyAsync device to device, 1 GiB, bytes read + written
  copy_kernel       gpulab's float4 copy kernel (experiments/ceilings/copy.cu), same buffers
  fma_fp32          gpulab's FFMA kernel (experiments/ceilings/fma.cu): 8 independent chains per thread
  l2_read           gpulab's L2 read kernel (experiments/ceilings/l2_read.cu): float4 reads that
                    bypass L1 (ld.global.cg), PASSES passes over a buffer of at most half the L2
                    (its size in size_bytes; 30.3 MB on an H200), already in L2; bytes read
  cublas_fp32_N     cuBLAS SGEMM through CuPy, FP32 compute (TF32 off), N = 4096 and 8192
  cublas_tf32_N     the same with CUBLAS_COMPUTE_32F_FAST_TF32 (tensor cores), to show what a
                    "FP32" baseline that lets TF32 in would claim
  tensor_bf16       the dense BF16 tensor-core rate, FP32 accumulate, by the card's fastest
                    instruction, named in the row's `instruction` column: on sm_90 (Hopper) gpulab's
                    wgmma kernel (experiments/ceilings/wgmma_peak.cu: back-to-back m64n256k16 on
                    operands in shared memory, what the Hopper GEMMs issue); on sm_80-89 its mma.sync
                    kernel (experiments/ceilings/mma_bf16.cu: m16n8k16 on registers); beside the
                    card's datasheet dense BF16 rate where gpulab knows it (datasheet_gflops)
  tensor_bf16_mma_sync  on sm_90 only: the mma.sync kernel as well, the rate of the instruction class
                    WMMA and mma.sync GEMMs issue there (optional: older files lack it)
  tensor_tf32       on sm_90 only: the same wgmma kernel on TF32 (m64n256k8), the rate sgemm's v14
                    (3xTF32) runs on, beside the datasheet's dense TF32 rate
  cublas_bf16_N     cuBLAS BF16 GEMM (cublasGemmEx, BF16 in, FP32 out, CUBLAS_COMPUTE_32F, the "TN"
                    layout of gemm_bf16), N = 4096 and 8192
The L2 row is the roof of the roofline's L2 line (report/roofline.py); files measured before it
existed lack it and stay complete: the roofline then leaves that line out. The BF16 rows are the
ceiling of gemm_bf16 (its compute_ceiling); a file without them stays complete too, and `ensure`
measures just the tensor rows (tensor_names) and adds them on a card that has BF16 tensor cores (sm_80
and newer), as it does where the stored tensor_bf16 row was measured with another instruction than
this card's fastest (a file from before the wgmma kernel: mma.sync on Hopper, below what wgmma GEMMs
reach), or where a Hopper file lacks tensor_tf32 (one from before it).
The copy ceiling is the better of the two copies; memory-bound records get `pct_of_ceiling` against
it, compute-bound ones against their variant's compute ceiling (Experiment.ceiling_for: fma_fp32 for
sgemm's FFMA rungs, a third of tensor_tf32 for its 3xTF32 v14; they already carry pct_of_cublas from
their own cuBLAS row). They are stored in results/<gpu>/ceilings.csv with the date, driver and clocks, and
reused until `gpulab ceilings --refresh`.

The table sits in records/ (below the report and the jobs, which all read it), not in gpu/: it knows
how an experiment's `bound` picks its ceiling, and gpu/ knows nothing of experiments.

% of the copy ceiling for the memory-bound shapes of a compute-bound experiment (attach_copy): a
compute-bound experiment (SGEMM) is shown against the FMA rate and cuBLAS (attach);
but a 1 x N x K product does 2 flops per 4-byte element of B it must read, and no kernel can pass the
card's copy bandwidth on it. A shape is memory-bound on a card when its arithmetic intensity (flops
per compulsory byte: gflops / gbps of one row, since both rates share its time) is below the card's
ridge point: the row's compute ceiling (`ceiling_gflops`, which attach set from the
experiment's compute_ceiling: the FP32 FMA rate for SGEMM) over the copy GB/s, ~15 flop/byte for
FP32 on an H200. Its rows then also get
`pct_of_copy`: the GB/s of the bytes the problem must move (each input read once, the output
written once) against the copy ceiling.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Iterable

from gpulab.errors import GpulabError
from gpulab.records import SeveralCards, read_csv, results_folder, variant_ran, write_csv

FILE_NAME = "ceilings.csv"
GEMM_SIZES = (4096, 8192)
L2_NAME = "l2_read"
TENSOR_BF16 = "tensor_bf16"
TENSOR_TF32 = "tensor_tf32"
# How pictures name each compute ceiling an experiment can be measured against (its compute_ceiling).
COMPUTE_LABELS = {"fma_fp32": "FMA ceiling", TENSOR_BF16: "tensor ceiling", TENSOR_TF32: "TF32 tensor ceiling"}
BF16_MIN_SM = 80  # BF16 mma.sync: Ampere and newer
MMA_SYNC = "mma.sync m16n8k16"
WGMMA = "wgmma m64n256k16"
WGMMA_TF32 = "wgmma m64n256k8 tf32"
WGMMA_SM = (9, 0)  # wgmma is sm_90a: its code runs on sm_90 alone
TENSOR_BF16_MMA_SYNC = "tensor_bf16_mma_sync"
# Dense BF16 tensor-core rates from the vendor's datasheets, in GFLOP/s (dense: without the 2:4
# sparsity the datasheets quote first), by a piece of the device name. H100 SXM and H200 share SMs
# and clocks: NVIDIA H100/H200 Tensor Core GPU datasheets, 989.4 TFLOP/s; H100 PCIe 756; A100 312.
DATASHEET_BF16_GFLOPS = (("H200", 989_400.0), ("H100 PCIe", 756_000.0), ("H100", 989_400.0),
                         ("A100", 312_000.0))
# The same datasheets give dense TF32 at half the BF16 rate on each of these cards (494.7, 378, 156).
DATASHEET_TF32_PER_BF16 = 0.5


def names() -> tuple[str, ...]:
    """Every ceiling a complete file must hold (L2_NAME and bf16_names() are optional: older files
    lack them)."""
    gemm = tuple(f"cublas_{m}_{n}" for m in ("fp32", "tf32") for n in GEMM_SIZES)
    return ("copy_memcpy", "copy_kernel", "fma_fp32") + gemm


def bf16_names() -> tuple[str, ...]:
    """The BF16 tensor-core ceilings, measured on cards of sm_80 and newer."""
    return (TENSOR_BF16,) + tuple(f"cublas_bf16_{n}" for n in GEMM_SIZES)


def tensor_names(device) -> tuple[str, ...]:
    """The tensor-core ceilings a complete file holds for `device` (besides the optional mma.sync
    row): the BF16 ones on sm_80 and newer, and on sm_90 the TF32 wgmma rate too."""
    if not has_bf16_tensor_cores(device):
        return ()
    return bf16_names() + ((TENSOR_TF32,) if tensor_instruction(device) == WGMMA else ())


def has_bf16_tensor_cores(device) -> bool:
    return tuple(device.compute_capability) >= (BF16_MIN_SM // 10, 0)


def datasheet_bf16_gflops(gpu_name: str) -> float | None:
    """The datasheet's dense BF16 rate of a card, by its name, where gpulab knows it."""
    return next((rate for part, rate in DATASHEET_BF16_GFLOPS if part.lower() in gpu_name.lower()), None)


@dataclasses.dataclass
class Ceilings:
    rows: list[dict]
    path: Path | None = None
    measured: bool = False  # True when measured in this process, False when read from the file

    def row(self, name: str) -> dict | None:
        return next((r for r in self.rows if r.get("ceiling") == name), None)

    @property
    def best_copy(self) -> dict | None:
        copies = [r for r in self.rows if str(r.get("ceiling", "")).startswith("copy") and r.get("gbps")]
        return max(copies, key=lambda r: r["gbps"], default=None)

    @property
    def copy_gbps(self) -> float | None:
        best = self.best_copy
        return best["gbps"] if best else None

    @property
    def l2_gbps(self) -> float | None:
        """The L2 read bandwidth, or None where it was not measured (files from before it existed)."""
        r = self.row(L2_NAME)
        return r.get("gbps") if r else None

    @property
    def fma_gflops(self) -> float | None:
        return self.gflops("fma_fp32")

    def gflops(self, name: str) -> float | None:
        """The rate of compute ceiling `name` (an experiment's compute_ceiling), or None if not measured."""
        r = self.row(name)
        return r.get("gflops") if r else None


# -- the file ------------------------------------------------------------------------------------
def ceilings_path(folder: Path) -> Path:
    return Path(folder) / FILE_NAME


def save(path: Path, rows: list[dict]) -> None:
    write_csv(path, rows)  # atomic: a temporary file, then a rename


def load(path: Path) -> Ceilings | None:
    """The stored ceilings, or None when the file is missing or lacks one of them."""
    path = Path(path)
    if not path.exists():
        return None
    rows = read_csv(path)
    if not set(names()) <= {str(r.get("ceiling")) for r in rows}:
        return None
    return Ceilings(rows, path, measured=False)


def tensor_instruction(device) -> str:
    """The instruction that measures tensor_bf16 on `device`: wgmma on sm_90, mma.sync elsewhere."""
    return WGMMA if tuple(device.compute_capability) == WGMMA_SM else MMA_SYNC


def tensor_instruction_current(stored: Ceilings, device) -> bool:
    """Whether the stored tensor_bf16 row was measured with this card's instruction (rows from before
    the `instruction` column were mma.sync)."""
    row = stored.row(TENSOR_BF16) or {}
    return (row.get("instruction") or MMA_SYNC) == tensor_instruction(device)


# -- applying them to records --------------------------------------------------------------------
def attach(records: Iterable[dict], experiment, ceilings: Ceilings | None) -> list[dict]:
    """Add `ceiling` (its name), its value, and `pct_of_ceiling` to every timed record.

    Memory-bound experiments (Experiment.bound == 'memory') are measured against the best copy
    (GB/s of the bytes the problem must move); compute-bound ones against their variant's compute
    ceiling (Experiment.ceiling_for: the FP32 FMA rate unless the experiment or the variant names
    another, as gemm_bf16 names tensor_bf16), in the problem's FLOPs: a variant whose every FLOP costs
    `ops` of the ceiling's operations (sgemm v14: three TF32 products) is held to the rate / ops,
    named 'tensor_tf32/3'. A best row is held to the ceiling of the variant it picked.
    """
    records = list(records)
    if ceilings is None:
        return records
    for r in records:
        if experiment.bound == "compute":
            # The variant's own ceiling; a file measured before that ceiling existed gives none (never
            # the FMA rate in its place: a tensor-core GEMM at 900% of the FP32 pipe says nothing).
            name, ops = experiment.ceiling_for(variant_ran(r))
            rate, column = "gflops", "ceiling_gflops"
            value = (ceilings.gflops(name) or 0.0) / ops
            name = name if ops == 1 else f"{name}/{ops}"
        else:
            best = ceilings.best_copy
            name = best["ceiling"] if best else ""
            value, rate, column = ceilings.copy_gbps, "gbps", "ceiling_gbps"
        if value and r.get(rate) and r.get("time_ms"):
            r["ceiling"] = name
            r[column] = value
            r["pct_of_ceiling"] = 100.0 * r[rate] / value
    return records


# -- the roofline floor of a prediction (gpulab predict, no GPU needed) -----------------------------
# An H200's figures measured before gpulab measured its own (CuPy copy, PyTorch FMA-bound and cuBLAS
# BF16 runs, November 2026; the L2 rate, "about 10 TB/s", from te42kyfo/gpu-benches' streaming
# benchmark): what the roofline floor and the best-row model hold a card to when no measured ceilings
# are at hand, labelled so wherever shown. The BF16 tensor row is cuBLAS BF16 at 8192^3, a lower
# bound of the rate; the TF32 row cuBLAS TF32 at 8192^3 (PyTorch with TF32 on), likewise.
H200_REFERENCE_CEILINGS = {"fma_gflops": 64_000.0, "copy_gb_per_s": 4_180.0, "l2_gb_per_s": 10_000.0,
                           TENSOR_BF16: 721_000.0, TENSOR_TF32: 393_000.0}
_REFERENCE = "H200 REFERENCE values, not measured by gpulab on this card: run gpulab ceilings on the card"


def ceilings_for_roofline(gpu: str | None, results: Path | None = None,
                          compute: str = "fma_fp32", ops: int = 1) -> tuple[float, float, str]:
    """(compute GFLOP/s, copy GB/s, where they come from) for the roofline floor; `compute` names the
    compute ceiling and `ops` how many of its operations each FLOP of the problem costs (a variant's
    Experiment.ceiling_for: the FMA rate, tensor_bf16, or tensor_tf32 three times for 3xTF32), so
    the rate returned is in the problem's FLOPs: the ceiling's / ops. From the ceilings.csv of the
    card `gpulab best` would read (records.results_folder: the card named, this machine's, the one
    card with results), else the H200 reference values, labelled as such (also for a compute
    ceiling the stored file lacks, and where several cards' results and no GPU leave the card
    unsaid: predicting needs no card, so the label names them rather than refusing). A `gpu` named
    without complete ceilings is an error, not a fallback."""
    reference = H200_REFERENCE_CEILINGS["fma_gflops" if compute == "fma_fp32" else compute] / ops
    fallback = _REFERENCE
    try:
        folder = results_folder(gpu, results)
    except SeveralCards as several:
        folder, fallback = None, f"{_REFERENCE}, or name one of {', '.join(several.cards)} with --gpu"
    if folder is not None:
        stored = load(ceilings_path(folder))
        if stored is not None and stored.fma_gflops and stored.copy_gbps:
            first = stored.rows[0]
            when = str(first.get("date") or "")[:10]
            where = f"measured on {first.get('gpu') or folder.name}{' ' + when if when else ''} ({stored.path})"
            rate = (stored.row(compute) or {}).get("gflops")
            if rate:
                return rate / ops, stored.copy_gbps, where + (f"; {compute} / {ops}" if ops != 1 else "")
            return reference, stored.copy_gbps, f"copy {where}; {compute}: {_REFERENCE}"
        if gpu is not None:
            raise GpulabError(f"no complete ceilings in {ceilings_path(folder)}; measure them on that card "
                              "with gpulab ceilings, or leave out gpu")
    return reference, H200_REFERENCE_CEILINGS["copy_gb_per_s"], fallback


def attach_copy(records: Iterable[dict], experiment, ceilings) -> list[dict]:
    """Add `pct_of_copy` to the timed rows of memory-bound shapes (compute-bound experiments only;
    a memory-bound experiment's `pct_of_ceiling` is already against the copy)."""
    records = list(records)
    if ceilings is None or experiment.bound != "compute" or not ceilings.copy_gbps:
        return records
    for r in records:
        if not (r.get("time_ms") and r.get("gflops") and r.get("gbps") and r.get("ceiling_gflops")):
            continue
        if r["gflops"] / r["gbps"] < r["ceiling_gflops"] / ceilings.copy_gbps:
            r["pct_of_copy"] = 100.0 * r["gbps"] / ceilings.copy_gbps
    return records
