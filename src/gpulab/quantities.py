"""The one table of what gpulab measures with Nsight Compute: every quantity's key, the ncu metric it
comes from (or how it is derived from others), how it is judged against the access model, its label,
unit and better direction, and the model's key for its prediction.

The model (gpulab.model.predict) emits keys only; the profiler asks ncu for the metrics named here,
fidelity judges by the `judged` column, and the reports print the labels. Adding a counter is one
row. Every metric name is checked against ncu 2025.3's gh100 list by tests/test_ncu.py.

How a counted quantity is judged (`judged`):
  exact         a hardware counter that is a fixed count of one launch: must equal the prediction;
  instrumented  ncu's SASS instrumentation (sm__sass_ / smsp__sass_: each executed instruction's
                own predicate and addresses), must equal the prediction;
  derived       computed from other rows (`derived`), must equal the prediction;
  hardware      a hardware counter of a count held exactly elsewhere (hw_<quantity>): shown with the
                prediction and its ratio, never judged;
  measured      measured and shown, never predicted (predicted as 0 only where nothing of it runs);
  tolerance     DRAM bytes read: within DRAM_TOLERANCE of the compulsory bytes where the inputs
                exceed the L2 (below that the caches decide);
  info          shown for the record, no verdict;
  none          a ratio or sum of other rows, shown by `gpulab profile` only.

Why instrumented counts: on the H200 the hardware counters of several counts are not a fixed count
of one launch. Captured three times with gpulab's whole metric list, sgemm v9 at 129x67x33 read
1,410, 1,411 and 1,418 store sectors, and grayscale's row variant at 3840x2160 read 259,011, under
the 259,200 its checked, fully written output needs; captured with seven metrics, both read the
model's 1,417 and 259,200 every time. The shared-load pred_on_any counter read 1,843, 1,845 and
1,843 for v9 at 129x67x33 even with seven metrics; the instrumented count read the model's 1,827 in
all three (2026-12-01, notebook/probes/probe_counters.py).

Shared wavefronts and bank conflicts. The hardware counts (l1tex__data_...) include arbitration:
warps contending for shared memory add a few wavefronts that change from run to run, and ncu counts
exactly those as bank conflicts (two captures of sgemm v1 at 512^3 on the H200: 6,295,263 and
6,295,490 load wavefronts, wavefronts minus conflicts equal; tests/test_ncu_reports.py). So:
  smem_<op>_wavefronts       instrumented (sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld/st),
                             computed from each instruction's addresses: no arbitration;
  smem_<op>_ideal_wavefronts the hardware's wavefronts minus its conflicts, which arbitration moves
                             together: the conflict-free count of the phase and merge rules;
  smem_<op>_bank_conflicts   instrumented wavefronts minus those ideal wavefronts: the layout's own
                             conflicts, measured without the model (ncu's gh100 list has no
                             instrumented bank-conflict counter for LDS/STS, only for LDGSTS, LDSM
                             and STSM). A conflict the model missed shows here and in the wavefronts;
  hw_smem_<op>_wavefronts, hw_smem_<op>_bank_conflicts: the hardware counters, shown, not judged.

Shared "requests" are warp instructions with at least one lane predicated on. cp.async (LDGSTS,
both .ACCESS = .ca and .BYPASS = .cg): the sm__sass_ family covers both (the
l1tex__t_*_op_ldgsts_cache_access counters only .ca). Its sector count is left out: it differs from
the L1TEX count of the same reads (141,440 vs 117,920 for v9 at 300x388x196 on the H200), which
gmem_load_sectors already holds and the model matches. Its shared wavefronts are measured only
(gpulab.model.predict says why).

Warp stalls are `smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio`: the warps per
issue cycle in each state, i.e. the cycles a warp spends in it per instruction issued, which is what
ncu's Warp State Statistics section reports. The `smsp__pcsamp_*` sampling counters are not offered
as --metrics for gh100, and the `smsp__average_warp_latency_issue_stalled_*` family divides by warps
launched, so it grows with the loop trip count. Theoretical occupancy is not among gh100's --metrics
names: the profiled program asks the driver's occupancy calculator (the number ncu's Occupancy
section shows).
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Mapping, Sequence

EXACT, INSTRUMENTED, DERIVED = "exact", "instrumented", "derived"
HARDWARE, MEASURED, TOLERANCE, INFO, NONE = "hardware", "measured", "tolerance", "info", "none"
# Judged by equality with the prediction.
HELD_EXACTLY = (EXACT, INSTRUMENTED, DERIVED)
DRAM_TOLERANCE = 0.15


@dataclasses.dataclass(frozen=True)
class Quantity:
    """One measured number: its key (record column 'ncu_' + key), the ncu metric it comes from, or
    `derived` = (a, op, b) over other keys; how it is judged; a label; which direction is better
    (for compare); the kind of number; the model's key for its prediction; where it is shown."""

    key: str
    metric: str | None
    label: str
    judged: str = NONE
    better: str | None = "lower"
    kind: str = "count"  # count | ratio | pct | bytes | per | ns | hz
    predicted_as: str | None = None  # the model's key (gpulab.model.predict.summarize)
    # (a, op, b), op one of '+', '-', '/', or '-?': a minus b where b was measured, else a (b a
    # counter that captures recorded before it was asked for do not hold)
    derived: tuple[str, str, str] | None = None
    fidelity: bool = True  # a row of results/<gpu>/fidelity.csv


_HW = "  the same, hardware counter (not exact)"


def _exact(key, metric, label, judged=EXACT, better="lower", kind="count"):
    return Quantity(key, metric, label, judged, better, kind, predicted_as=key)


def _hardware(key, metric, label=_HW, better="lower", kind="count"):
    return Quantity(key, metric, label, HARDWARE, better, kind, predicted_as=key.removeprefix("hw_"))


def _per_request(op):
    return Quantity(f"gmem_{op}_sectors_per_request", None, f"  sectors per {op} request", NONE, None, "ratio",
                    predicted_as=f"gmem_{op}_sectors_per_request",
                    derived=(f"gmem_{op}_sectors", "/", f"gmem_{op}_requests"), fidelity=False)


def _shared(op, ncu_op):
    """The rows of shared loads (op 'load', ncu 'ld') or stores ('store', 'st')."""
    waves, conflicts, ideal = f"smem_{op}_wavefronts", f"smem_{op}_bank_conflicts", f"smem_{op}_ideal_wavefronts"
    hw_ideal = f"{ideal}_with_ldsm"
    if op == "load":
        # The hardware op_ld counters count ldmatrix (LDSM) too, the instrumented LDS ones do not:
        # the LDS-only ideal takes the LDSM's own conflict-free wavefronts out (from its
        # instrumented counters; t0/t1 of gemm_bf16 on the H200: without this, 1,048,576 of t0's
        # LDSM wavefronts at 1024^3 read as -1,048,576 bank conflicts of its LDS).
        hw_rows = (Quantity(hw_ideal, None, "  hardware ideal wavefronts, LDS + LDSM (wavefronts - conflicts)",
                            DERIVED, fidelity=False, derived=(f"hw_{waves}", "-", f"hw_{conflicts}")),)
        ideal_row = Quantity(ideal, None, "  ideal wavefronts (hardware wavefronts - conflicts, less LDSM's)",
                             DERIVED, predicted_as=ideal, derived=(hw_ideal, "-?", "smem_ldsm_ideal_wavefronts"))
    else:
        hw_rows = ()
        ideal_row = Quantity(ideal, None, "  ideal wavefronts (hardware wavefronts - conflicts)", DERIVED,
                             predicted_as=ideal, derived=(f"hw_{waves}", "-", f"hw_{conflicts}"))
    return (
        _exact(f"smem_{op}_requests", f"smsp__sass_inst_executed_op_shared_{ncu_op}.sum",
               f"shared {op} requests (instructions)", INSTRUMENTED, None),
        _hardware(f"hw_smem_{op}_requests", f"smsp__inst_executed_op_shared_{ncu_op}_pred_on_any.sum", better=None),
        _exact(waves, f"sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_{ncu_op}.sum",
               f"shared {op} wavefronts", INSTRUMENTED),
        _hardware(f"hw_{waves}", f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ncu_op}.sum"),
        Quantity(conflicts, None, f"shared {op} bank conflicts (wavefronts - ideal)", DERIVED,
                 predicted_as=conflicts, derived=(waves, "-", ideal)),
        _hardware(f"hw_{conflicts}", f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ncu_op}.sum"),
        *hw_rows,
        ideal_row,
    )


# The counted quantities, in the order of the profile table and of fidelity.csv's rows (grouped
# there by `judged`, see FIDELITY).
COUNTED: tuple[Quantity, ...] = (
    _exact("gmem_load_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "global load requests"),
    _exact("gmem_load_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "global load sectors"),
    _per_request("load"),
    _exact("gmem_store_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "global store requests"),
    _exact("gmem_store_sectors", "smsp__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_st.sum",
           "global store sectors", INSTRUMENTED),
    _hardware("hw_gmem_store_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),
    _per_request("store"),
    _exact("l1tex_global_load_bytes", "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum", "L1TEX global load bytes",
           kind="bytes"),
    Quantity("l1tex_global_store_bytes", "l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum",
             "L1TEX global store bytes (hardware, not exact)", HARDWARE, kind="bytes",
             predicted_as="l1tex_global_store_bytes"),
    *_shared("load", "ld"),
    *_shared("store", "st"),
    # cp.async (LDGSTS) alone; its global side is inside the global load counters above as well.
    _exact("gmem_ldgsts_requests", "sm__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum",
           "cp.async global requests", INSTRUMENTED),
    _exact("smem_ldgsts_requests", "smsp__inst_executed_op_ldgsts_pred_on_any.sum", "cp.async instructions",
           better=None),
    Quantity("smem_ldgsts_wavefronts", "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum",
             "cp.async shared wavefronts (not modelled)", MEASURED),
    Quantity("smem_ldgsts_bank_conflicts", "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum",
             "cp.async shared bank conflicts (not modelled)", MEASURED),
    # ldmatrix (LDSM): counted apart from LDS by the instrumented counters. (The hardware op_ld
    # counters, hw_smem_load_*, include LDSM, so in a kernel that issues LDSM the derived ideal
    # wavefronts and bank conflicts of the loads above carry its wavefronts too.)
    _exact("smem_ldsm_requests", "sm__sass_inst_executed_op_ldsm.sum", "ldmatrix instructions (LDSM)",
           INSTRUMENTED, None),
    _exact("smem_ldsm_wavefronts", "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
           "  ldmatrix shared wavefronts", INSTRUMENTED),
    _exact("smem_ldsm_bank_conflicts", "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum",
           "  ldmatrix bank conflicts", INSTRUMENTED),
    Quantity("smem_ldsm_ideal_wavefronts", None, "  ldmatrix conflict-free wavefronts", DERIVED, fidelity=False,
             derived=("smem_ldsm_wavefronts", "-", "smem_ldsm_bank_conflicts")),
    # TMA copies and wgmma (Hopper): counted per instruction, not per lane (gpulab.model.predict's
    # BULK_KEYS). The TMA rows are hardware counters of the TMA unit and its L2 reads; the wgmma
    # instructions are instrumented. wgmma's shared-memory reads (its operands, through descriptors)
    # are measured only: ncu counts them in wavefronts of the data stage, and how many a
    # m64nNk16's A and B operands take is not documented.
    _exact("tma_load_requests", "sm__inst_executed_pipe_tma.sum", "TMA instructions (UTMALDG)", better=None),
    _exact("tma_load_bytes", "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum",
           "TMA global load bytes (from L2)", kind="bytes"),
    _exact("gmma_requests", "sm__sass_inst_executed_op_shared_gmma.sum", "wgmma instructions (HGMMA, per warp)",
           INSTRUMENTED, None),
    Quantity("smem_gmma_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum",
             "  wgmma shared wavefronts (not modelled)", MEASURED),
    Quantity("smem_gmma_bank_conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum",
             "  wgmma shared bank conflicts (not modelled)", MEASURED),
    # DRAM: fidelity predicts reads and writes from the compulsory bytes and the output's size.
    Quantity("dram_read_bytes", "dram__bytes_read.sum", "DRAM bytes read", TOLERANCE, kind="bytes"),
    Quantity("dram_write_bytes", "dram__bytes_write.sum", "DRAM bytes written", INFO, kind="bytes"),
    Quantity("dram_bytes", None, "DRAM bytes read + written (vs compulsory)", NONE, kind="bytes",
             predicted_as="dram_compulsory_bytes", derived=("dram_read_bytes", "+", "dram_write_bytes"),
             fidelity=False),
)

# Where `gpulab fidelity` writes its rows (results/<gpu>/FIDELITY_FILE), where `gpulab profile`
# and `compare` join their records (results/<gpu>/PROFILE_FILE), and where `gpulab sanitize` keeps
# one row per (run, tool) (results/<gpu>/SANITIZE_FILE).
FIDELITY_FILE = "fidelity.csv"
PROFILE_FILE = "profile.csv"
SANITIZE_FILE = "sanitize.csv"
SANITIZE_REQUIRED_COLUMNS = ("experiment", "variant", "params", "shape", "tool", "errors", "verdict")
# An experiment's or a variant's name: letters, digits, _ . -, at most 64 characters. A kernel file
# declares no other (gpulab.experiments.declared), and a CSV cell in a name column holding anything
# else is damage (gpulab.records), since it would match no variant and leave its table cell empty.
NAME = re.compile(r"[A-Za-z_][\w.-]{0,63}")
# A bench row's verdict from the sanitizer gate (gpulab.jobs.clean): CLEAN, or why not. Only a clean
# row is called the best of its shape (gpulab.report.tables.best_per_shape).
SANITIZED = "sanitized"
CLEAN = "clean"
# A sanitize row's verdict where the tool failed inside itself and the values were right outside it
# (gpulab.jobs.sanitize.verdict): the row's evidence says why, and it is not held against the kernel.
TOOL_FAULT = "TOOL_FAULT"
# A fidelity row's verdict where the counters a derived count is read from contradict each other
# (gpulab.jobs.fidelity): no number is given, the note says why.
UNMEASURABLE = "unmeasurable"


# The start of a verdict that says the tools could not check a config (compute-sanitizer missing, a
# fault inside the tool, a run past its time): no hazard was found and none was ruled out.
NOT_SANITIZED = "not sanitized"


def may_be_best(row: Mapping) -> bool:
    """Whether a bench row may be called the best of its shape: the gate found it clean; or the tools
    could not check it (NOT_SANITIZED: the row says so wherever it is shown, but a missing
    compute-sanitizer or a fault inside the tool is not evidence against the kernel); or the row
    predates the gate (no verdict recorded: it is taken as it was). A config a tool found errors in
    never is."""
    verdict = row.get(SANITIZED)
    return verdict in (None, "", CLEAN) or str(verdict).startswith(NOT_SANITIZED)
# What a fidelity CSV must hold to be read back (tables, --rejudge): anything less is a damaged file.
FIDELITY_REQUIRED_COLUMNS = ("experiment", "variant", "params", "shape", "quantity", "predicted", "measured",
                             "exact", "verdict")
# The rows of fidelity.csv, in order: those held exactly, then the hardware counters, the
# measured-only ones and DRAM.
_FIDELITY_ORDER = (HELD_EXACTLY, (HARDWARE,), (MEASURED,), (TOLERANCE, INFO))
FIDELITY: tuple[Quantity, ...] = tuple(
    q for group in _FIDELITY_ORDER for q in COUNTED if q.fidelity and q.judged in group)


HEADLINE: tuple[Quantity, ...] = (
    Quantity("duration_ns", "gpu__time_duration.sum", "duration under ncu (not a timing)", kind="ns"),
    # Clocks are unlocked (gpulab.gpu.ncu): a kernel at the card's power limit runs at a lower clock,
    # and two kernels compared may differ by that alone. Not better or worse: the kernel does not set it.
    Quantity("sm_clock_hz", "sm__cycles_elapsed.avg.per_second", "SM clock", better=None, kind="hz"),
    # The same work in fewer instructions leaves issue slots (and power) for the math.
    Quantity("warp_instructions", "smsp__inst_executed.sum", "warp instructions executed", kind="count"),
    Quantity("memory_throughput_pct", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
             "memory throughput", better=None, kind="pct"),
    Quantity("dram_throughput_pct", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
             "DRAM throughput", better=None, kind="pct"),
    Quantity("l1tex_throughput_pct", "l1tex__throughput.avg.pct_of_peak_sustained_active",
             "L1/TEX throughput", better=None, kind="pct"),
    Quantity("l2_throughput_pct", "lts__throughput.avg.pct_of_peak_sustained_elapsed", "L2 throughput",
             better=None, kind="pct"),
    Quantity("sm_throughput_pct", "sm__throughput.avg.pct_of_peak_sustained_elapsed", "SM throughput",
             better=None, kind="pct"),
    # No better direction for hit rates: a kernel that stages data in shared memory loses L1 hits
    # because it stopped re-reading, which is the improvement.
    Quantity("l1_hit_rate_pct", "l1tex__t_sector_hit_rate.pct", "L1 hit rate", better=None, kind="pct"),
    Quantity("l2_hit_rate_pct", "lts__t_sector_hit_rate.pct", "L2 hit rate", better=None, kind="pct"),
    # From the profiled program's info (the driver's occupancy calculator), not from ncu.
    Quantity("theoretical_occupancy_pct", None, "theoretical occupancy (driver)", better=None, kind="pct"),
    Quantity("achieved_occupancy_pct", "sm__warps_active.avg.pct_of_peak_sustained_active",
             "achieved occupancy", better="higher", kind="pct"),
    Quantity("warps_active_per_sm", "sm__warps_active.avg.per_cycle_active", "warps active per SM",
             better="higher", kind="per"),
    Quantity("eligible_warps_per_scheduler", "smsp__warps_eligible.avg.per_cycle_active",
             "eligible warps per scheduler", better="higher", kind="per"),
    Quantity("issue_slots_busy_pct", "smsp__issue_active.avg.pct_of_peak_sustained_active",
             "issue slots busy", better="higher", kind="pct"),
)


# -- warp stall reasons -------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Stall:
    label: str
    meaning: str  # what the warp is waiting for
    remedy: str  # the usual way out


# ncu's names (smsp__average_warps_issue_stalled_<reason>_per_issue_active), in alphabetical order
# (the order of the records' ncu_stall_* columns; ties between stalls rank alphabetically).
STALL_REASONS: dict[str, Stall] = dict(sorted({
    "long_scoreboard": Stall(
        "long scoreboard", "waiting for data from L1TEX: a global, local or texture load in flight",
        "more independent loads in flight per thread, or reuse data from shared memory or registers"),
    "mio_throttle": Stall(
        "MIO throttle", "the MIO instruction queue is full: too many shared-memory (or special-math) "
        "instructions issued back to back",
        "fewer, wider shared loads (LDS.64/128) and more FMAs per shared load (register tiling)"),
    "short_scoreboard": Stall(
        "short scoreboard", "waiting for the result of an MIO instruction, usually a shared-memory load",
        "load shared data into registers earlier and reuse it; remove bank conflicts"),
    "barrier": Stall(
        "barrier", "waiting at __syncthreads() for the other warps of the block",
        "more work between barriers, or smaller blocks so fewer warps wait on the slowest"),
    "lg_throttle": Stall(
        "LG throttle", "the LSU queue for global/local memory instructions is full",
        "fewer, wider global accesses (vector loads), fewer spills"),
    "math_pipe_throttle": Stall(
        "math pipe throttle", "an execution pipe (FMA, ALU...) is busy: the arithmetic is the limit",
        "nothing to fix in memory; this is what a compute-bound kernel looks like"),
    "wait": Stall(
        "wait", "a fixed-latency dependency: the next instruction needs a result a few cycles away",
        "more independent instructions (ILP) between dependent ones"),
    "not_selected": Stall(
        "not selected", "eligible, but the scheduler issued another warp: there is parallelism to spare",
        "none needed; occupancy could even be lowered"),
    "dispatch_stall": Stall(
        "dispatch stall", "the dispatcher could not take the instruction (pipeline conflict)",
        "rarely actionable"),
    "no_instruction": Stall(
        "no instruction", "the instruction was not fetched yet: an instruction-cache miss or a jump",
        "smaller unrolled loops, fewer divergent branches"),
    "branch_resolving": Stall(
        "branch resolving", "waiting for a branch target to be computed", "fewer divergent branches"),
    "drain": Stall(
        "drain", "after EXIT, waiting for the warp's stores to drain", "usually small; large at the tail"),
    "imc_miss": Stall(
        "IMC miss", "an immediate-constant cache miss", "fewer distinct constants"),
    "membar": Stall(
        "membar", "waiting on a memory fence", "fewer fences (__threadfence)"),
    "misc": Stall("misc", "a miscellaneous hardware reason", "rarely actionable"),
    "sleeping": Stall("sleeping", "in __nanosleep or a yield", "by design"),
    "tex_throttle": Stall(
        "TEX throttle", "the TEX pipe queue is full", "fewer texture/surface or LDG through TEX"),
    "gmma": Stall("GMMA", "waiting on warpgroup MMA (WGMMA) to arrive", "pipeline the WGMMA stages"),
    "selected": Stall("selected", "issuing this cycle (not a stall)", ""),
}.items()))
# 'selected' is one cycle per issued instruction by definition: the issue itself, never a stall.
NOT_A_STALL = ("selected",)


def stall_label(reason: str) -> str:
    return STALL_REASONS[reason].label if reason in STALL_REASONS else reason.replace("_", " ")


def stall_metric(reason: str) -> str:
    return f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"


def stall_key(reason: str) -> str:
    return f"stall_{reason}_cycles_per_inst"


STALLS: tuple[Quantity, ...] = tuple(
    Quantity(stall_key(r), stall_metric(r), f"stall: {stall_label(r)}", better="lower", kind="per")
    for r in STALL_REASONS
)


def top_stalls(stalls: Mapping[str, float | None], n: int = 3) -> list[tuple[str, float, float]]:
    """(reason, cycles per issued instruction, share of all stall cycles), largest first."""
    real = {r: v for r, v in stalls.items() if r not in NOT_A_STALL and v is not None and not math.isnan(v)}
    total = sum(real.values())
    ranked = sorted(real.items(), key=lambda kv: kv[1], reverse=True)
    return [(r, v, v / total if total else 0.0) for r, v in ranked[:n] if v > 0]


# The rows of `gpulab compare`, in order: the key metrics plus the counted ones that move.
COMPARE_KEYS = (
    "duration_ns", "sm_clock_hz", "warp_instructions", "memory_throughput_pct", "dram_throughput_pct", "l1tex_throughput_pct",
    "l2_throughput_pct", "sm_throughput_pct", "l1_hit_rate_pct", "l2_hit_rate_pct",
    "gmem_load_requests", "gmem_load_sectors", "gmem_load_sectors_per_request",
    "l1tex_global_load_bytes", "smem_load_requests", "smem_load_bank_conflicts", "dram_read_bytes",
    "theoretical_occupancy_pct", "achieved_occupancy_pct", "eligible_warps_per_scheduler",
    "issue_slots_busy_pct",
)

ALL: tuple[Quantity, ...] = (*COUNTED, *HEADLINE, *STALLS)
BY_KEY: dict[str, Quantity] = {q.key: q for q in ALL}


def metric_names() -> list[str]:
    """Every metric a capture asks ncu for, each once."""
    return list(dict.fromkeys(q.metric for q in ALL if q.metric))


def metric_text(key: str) -> str:
    """What a quantity is read from, in ncu's names: its metric, or the formula of a derived one
    ('' for a key with neither). Recorded beside each fidelity row (column ncu_metric)."""
    q = BY_KEY.get(key)
    if q is None:
        return ""
    if q.metric:
        return q.metric
    if q.derived:
        a, op, b = q.derived
        inner = [metric_text(x) for x in (a, b)]
        inner = [f"({t})" if " " in t else t for t in inner]
        return f"{inner[0]} {op.rstrip('?')} {inner[1]}"
    return ""


def measure(metrics: Mapping[str, float]) -> dict[str, float]:
    """Every counted, headline and stall quantity from one launch's {ncu metric: value}: those
    with a metric read, the derived ones computed (nan where an input is missing). Quantities
    with neither (theoretical occupancy) are left out."""
    out: dict[str, float] = {q.key: metrics.get(q.metric, math.nan) for q in ALL if q.metric}
    return out | derive(out)


def additive(q: Quantity) -> bool:
    """Whether q adds up over the kernels of one call (a library's split-K GEMM and its reduction):
    a count, bytes or time that ncu sums over the launch ('.sum'), or a quantity derived from two of
    them (a ratio of sums is recomputed from the sums). Rates, percentages, clocks and stalls are not."""
    if q.derived is not None:
        return additive(BY_KEY[q.derived[0]]) and additive(BY_KEY[q.derived[2]])
    return q.kind in ("count", "bytes", "ns") and bool(q.metric) and q.metric.endswith(".sum")


def measure_call(launches: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """The additive quantities of one call, each summed over the call's launches ({ncu metric: value}
    each), the derived ones computed from the sums; nan where a launch lacks a metric."""
    summed = {q.metric: sum(m.get(q.metric, math.nan) for m in launches) for q in ALL if q.metric and additive(q)}
    values = measure(summed)
    return {q.key: values[q.key] for q in ALL if additive(q)}


def derive(values: Mapping[str, float]) -> dict[str, float]:
    """The derived quantities from the others' values (nan where an input is missing; a ratio over
    zero requests is 0; nan where the inputs contradict each other, see unmeasurable)."""
    out = _derive_raw(values)
    return out | {key: math.nan for key in unmeasurable(values, out)}


def _derive_raw(values: Mapping[str, float]) -> dict[str, float]:
    out: dict[str, float] = {}

    def value(key: str) -> float:
        if key in out:
            return out[key]
        q = BY_KEY[key]
        if q.derived is None:
            v = values.get(key, math.nan)
            return math.nan if v is None else float(v)
        a, op, b = (value(q.derived[0]), q.derived[1], value(q.derived[2]))
        if op == "/":
            result = a / b if b and not math.isnan(b) else 0.0
        elif op == "-?":
            result = a if math.isnan(b) else a - b
        else:
            result = a + b if op == "+" else a - b
        out[key] = result
        return result

    for q in COUNTED:
        if q.derived:
            value(q.key)
    return out


def unmeasurable(values: Mapping[str, float], derived: Mapping[str, float] | None = None) -> dict[str, str]:
    """{key: why} for the derived counts these values cannot give: a count derived as a - b that
    comes out below zero (a count never is), and b with it where b is itself derived, since b is the
    one that holds more than it should. The case seen: shared bank conflicts = the instrumented
    wavefronts minus the hardware's conflict-free ("ideal") wavefronts, where the ideal exceeds the
    instrumented count (t4 at 1536x2560x1000 on the H200: 123,930 against 123,000 store wavefronts,
    the model's and the instrumented count; at 1024^3 the ideal read 33,295 and 33,115 in two
    captures against 32,800). The instrumented count is each instruction's own; the hardware's
    wavefronts hold more, which arbitration adds and its conflict counter does not see, moving from
    capture to capture: the ideal is the wrong one, and no conflict count can be read from it."""
    derived = _derive_raw(values) if derived is None else derived

    def value(key: str) -> float:
        v = derived.get(key, values.get(key, math.nan))
        return math.nan if v is None else float(v)

    out: dict[str, str] = {}
    for q in COUNTED:
        if not (q.derived and q.kind == "count" and q.derived[1] in ("-", "-?")):
            continue
        a, _, b = q.derived
        va, vb = value(a), value(b)
        if not (math.isnan(va) or math.isnan(vb)) and va - vb < 0:
            why = (f"unmeasurable: the {BY_KEY[b].label.strip()}, {vb:,.0f}, exceed the {BY_KEY[a].label.strip()}, "
                   f"{va:,.0f}, by {vb - va:,.0f}")
            out[q.key] = why
            if BY_KEY[b].derived:
                out[b] = why
    return out


def predicted_value(q: Quantity, predicted: Mapping | None) -> float | None:
    """The model's prediction of `q` from the model's output (gpulab.model.predict.summarize), or None."""
    if not predicted or q.predicted_as is None:
        return None
    value = predicted.get(q.predicted_as)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def agreement(rows) -> tuple[int, int]:
    """(counted quantities equal to their prediction, counted quantities judged) over fidelity rows."""
    held = set(held_exactly())
    judged = [r for r in rows if r.get("quantity") in held and r.get("exact") is not None]
    return sum(1 for r in judged if r["exact"] is True), len(judged)


def held_exactly() -> tuple[str, ...]:
    """The keys fidelity holds to the prediction exactly, in order."""
    return tuple(q.key for q in FIDELITY if q.judged in HELD_EXACTLY)
