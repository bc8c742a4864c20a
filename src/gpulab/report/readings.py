"""What a number means: one-line readings of Nsight Compute metrics, as data plus small functions.

Each function takes the numbers (measured, and predicted where there is a prediction) and returns
one sentence, or None when the number says nothing worth a line. The thresholds sit next to the
sentences they choose between, so a reader can argue with both in one place. Nothing here reads a
CSV or prints: the profile and compare tables call these.
"""

from __future__ import annotations

import math

from gpulab.quantities import STALL_REASONS, stall_label

# -- warp stall reasons (the table of them is gpulab.quantities.STALL_REASONS) ------------------
def stall_reading(reason: str) -> str:
    s = STALL_REASONS.get(reason)
    if s is None:
        return ""
    return f"top stall {s.label}: {s.meaning}" + (f"; way out: {s.remedy}" if s.remedy else "")


# -- counted quantities: model against hardware --------------------------------------------------
def agreement(measured: float | None, predicted: float | None) -> str | None:
    """How a measured count sits against its prediction."""
    if predicted is None or measured is None or _nan(measured) or _nan(predicted):
        return None
    if predicted == 0:
        return "exact (none predicted, none counted)" if measured == 0 else "counted where none was predicted"
    ratio = measured / predicted
    if measured == predicted:
        return "exact"
    if abs(ratio - 1) < 0.005:
        return f"within {abs(ratio - 1) * 100:.2f}%"
    if ratio >= 2 or ratio <= 0.5:
        return f"{ratio:.3g}x the model's count: the model misses whole instructions or iterations"
    direction = "more" if ratio > 1 else "fewer"
    return f"{abs(ratio - 1) * 100:.1f}% {direction} than the model: its accounting of this kernel is off"


def sectors_per_request(spr: float | None) -> str | None:
    """A warp-wide request touched `spr` 32-byte sectors on average. 4 is a full warp of 4-byte
    lanes on 128 contiguous bytes (8 for 8-byte lanes, 16 for 16-byte lanes); 32 is one sector
    per lane."""
    if spr is None or _nan(spr) or spr <= 0:
        return None
    if spr >= 31.5:
        return f"{spr:.0f} sectors per request: each lane reads its own sector, the access is not coalesced"
    if spr > 16.5:
        return f"{spr:.1f} sectors per request: lanes scattered over many sectors, poorly coalesced"
    if spr in (4.0, 8.0, 16.0):
        width = {4.0: 4, 8.0: 8, 16.0: 16}[spr]
        return (f"{spr:.0f} sectors per request: consecutive lanes on consecutive addresses, coalesced "
                f"(the ideal for {width}-byte lanes)")
    if spr < 4:
        return (f"{spr:.2g} sectors per request: fewer than a full warp of 4-byte lanes needs, so lanes "
                "share addresses (a broadcast) or cover less than 128 bytes; no waste if they are contiguous")
    return f"{spr:.2g} sectors per request: between coalesced 4-byte (4) and one sector per lane (32)"


# Bank conflicts are derived from hardware wavefront and conflict counters (gpulab.quantities); in
# kernels that move shared memory by TMA and wgmma those counters can disagree with the instrumented
# ones, and the difference goes negative (cuBLAS BF16 at 4096^3 on the H200: -751,120).
NOT_A_CONFLICT_COUNT = ("negative, so not a count of conflicts: the hardware counters it is derived from disagree "
                        "with the instrumented ones here (seen in TMA and wgmma kernels)")


def bank_conflicts(conflicts: float | None, requests: float | None, wavefronts: float | None = None) -> str | None:
    """Shared-memory bank conflicts per request: 0 is conflict-free, n-1 is an n-way conflict."""
    if conflicts is None or _nan(conflicts) or not requests or _nan(requests):
        return None
    if conflicts < 0:
        return NOT_A_CONFLICT_COUNT
    per = conflicts / requests
    if conflicts == 0:
        return "no bank conflicts"
    if per < 0.1:
        share = f" ({conflicts / wavefronts * 100:.2f}% of wavefronts)" if wavefronts else ""
        return f"{per:.3f} extra wavefronts per request{share}: a few instructions conflict, most do not"
    return f"{per:.1f} extra wavefronts per request: about a {per + 1:.0f}-way bank conflict on average"


def dram_vs_floor(measured: float | None, floor: float | None, l2_bytes: float | None = None) -> str | None:
    """DRAM bytes moved against the compulsory floor (every input read once, output written once, and
    the passes over an input the L2 cannot keep where the access model counts them)."""
    if measured is None or floor is None or _nan(measured) or not floor:
        return None
    r = measured / floor
    fits = f"; the data fits in the {l2_bytes / 2**20:.0f} MiB L2" if l2_bytes and floor < l2_bytes else ""
    if r < 0.9:
        return (f"{r:.2f}x the compulsory bytes: below the floor, so part of the output is still in L2 as "
                f"dirty lines when the kernel ends, or inputs were already there{fits}")
    if r <= 1.15:
        return f"{r:.2f}x the compulsory bytes: each byte crossed the DRAM bus about once"
    return f"{r:.1f}x the compulsory bytes: re-reads reach DRAM, the caches do not hold the reuse{fits}"


# -- headline metrics ---------------------------------------------------------------------------
def dram_throughput(pct: float | None) -> str | None:
    if pct is None or _nan(pct):
        return None
    if pct >= 60:
        return "DRAM is busy: memory-bound unless the bytes can be cut"
    if pct < 10:
        return "DRAM nearly idle: the data comes from the caches or shared memory, not from memory"
    return None


def l1_hit_rate(pct: float | None) -> str | None:
    if pct is None or _nan(pct):
        return None
    if pct >= 80:
        return "most global loads hit L1: the same lines are re-read by neighbouring warps"
    if pct < 10:
        return "global loads almost never hit L1: each line is read once per block (or staged via shared memory)"
    return None


def l2_hit_rate(pct: float | None) -> str | None:
    if pct is None or _nan(pct):
        return None
    if pct >= 80:
        return "L2 serves most requests: the working set fits in L2 and is re-read there"
    if pct < 50:
        return "under half of L2 lookups hit: most traffic goes on to DRAM (streaming)"
    return None


def occupancy(achieved: float | None, theoretical: float | None, limiter: str | None = None) -> str | None:
    if achieved is None or _nan(achieved):
        return None
    if theoretical is not None and not _nan(theoretical):
        gap = theoretical - achieved
        limit = f", limited by {limiter}" if limiter and theoretical < 100 else ""
        if gap > 15:
            return (f"achieved {achieved:.0f}% of {theoretical:.0f}% possible{limit}: warps finish unevenly "
                    "or the last wave is partial (tail effect)")
        if theoretical < 50:
            return f"theoretical occupancy only {theoretical:.0f}%{limit}"
    return None


def eligible_warps(per_scheduler: float | None) -> str | None:
    if per_scheduler is None or _nan(per_scheduler):
        return None
    if per_scheduler < 1:
        return (f"{per_scheduler:.2f} eligible warps per scheduler: often none is ready, so cycles go "
                "unissued and latency is exposed")
    if per_scheduler >= 2:
        return "schedulers usually have a choice of ready warps: latency is hidden"
    return None


def issue_slots_busy(pct: float | None) -> str | None:
    if pct is None or _nan(pct):
        return None
    if pct >= 80:
        return "the schedulers issue almost every cycle: instruction-bound, cut instructions to go faster"
    if pct < 40:
        return f"an instruction issues in {pct:.0f}% of cycles: warps mostly wait (see the stalls)"
    return None


# -- comparing two profiles ---------------------------------------------------------------------
def change(a: float | None, b: float | None) -> tuple[str, str]:
    """(arrow, size) for a -> b: ('↓', '16.0x') for a fall to a sixteenth, ('≈', '') within 2%."""
    if a is None or b is None or _nan(a) or _nan(b):
        return "", ""
    if a == b or (a != 0 and abs(b / a - 1) < 0.02):
        return "≈", ""
    if a == 0:
        return "↑", "from 0"
    if b == 0:
        return "↓", "to 0"
    r = b / a
    if r > 1:
        return "↑", f"{r:.3g}x"
    return "↓", f"{1 / r:.3g}x"


def verdict(a: float | None, b: float | None, better: str | None) -> str:
    """'better', 'worse' or '' for a -> b when the metric has a better direction (none between
    counts where either is negative: not a count of anything, see NOT_A_CONFLICT_COUNT)."""
    if any(v is not None and not _nan(v) and v < 0 for v in (a, b)):
        return ""
    arrow, _ = change(a, b)
    if not better or arrow in ("", "≈"):
        return ""
    up = arrow == "↑"
    return "better" if (up and better == "higher") or (not up and better == "lower") else "worse"


# The instructions whose arrival or departure between two kernels tells how their data moves (the
# tensor-core ladder's steps: plain loads -> cp.async and ldmatrix -> TMA and wgmma).
MOVED_TO = (
    ("gmem_ldgsts_requests", "cp.async copies"),
    ("smem_ldsm_requests", "ldmatrix loads"),
    ("tma_load_requests", "TMA copies"),
    ("gmma_requests", "wgmma instructions (per warp)"),
)


def compare_story(a: dict, b: dict, name_a: str, name_b: str) -> list[str]:
    """A few sentences under the side-by-side table: what moved, and what it means.

    `a` and `b` map the profile's keys (gmem_load_requests, dram_throughput_pct, top_stall, ...) to
    numbers (top_stall to a reason name)."""
    lines = []

    def ratio(key):
        x, y = a.get(key), b.get(key)
        if x is None or y is None or _nan(x) or _nan(y) or x <= 0 or y <= 0:
            return None
        return y / x

    r = ratio("duration_ns")
    if r is not None and abs(r - 1) >= 0.05:
        lines.append(f"{name_b} runs in {r:.2f}x the time of {name_a} under the profiler "
                     f"({'faster' if r < 1 else 'slower'}; the benchmark, not ncu, is the timing to quote).")
    lines += _issue_story(ratio("warp_instructions"), a.get("issue_slots_busy_pct"), b.get("issue_slots_busy_pct"),
                          name_a, name_b)
    r = ratio("sm_clock_hz")
    if r is not None and abs(r - 1) >= 0.02:  # clocks are unlocked under ncu (gpulab.gpu.ncu)
        lines.append(f"{name_b} ran at {b['sm_clock_hz'] / 1e6:,.0f} MHz against {a['sm_clock_hz'] / 1e6:,.0f}: a "
                     "kernel that draws more power runs at a lower clock at the card's power limit, so part of "
                     "the difference in time is the clock, not the code.")
    r = ratio("gmem_load_requests")
    if r is not None and abs(r - 1) >= 0.1:
        word = f"fell {1 / r:.3g}x" if r < 1 else f"rose {r:.3g}x"
        lines.append(f"Global load requests {word}: " + (
            "data once fetched per element is now reused from shared memory or registers."
            if r < 1 else "more trips to global memory per unit of work."))
    sa, sb = a.get("smem_load_requests") or 0, b.get("smem_load_requests") or 0
    # Shared loads appearing are the operands' new home only where global loads fell with them (a
    # persistent kernel reading its tile grid from shared memory is not that).
    if sb > 0 and sa == 0 and (a.get("gmem_load_requests") or 0) > (b.get("gmem_load_requests") or 0):
        lines.append(f"{name_b} moves its operand traffic into shared memory: "
                     f"{sb:,.0f} shared load instructions where {name_a} had none.")
    for key, what in MOVED_TO:
        x, y = a.get(key) or 0, b.get(key) or 0
        if _nan(x) or _nan(y):
            continue
        if y > 0 and x == 0:
            lines.append(f"{name_b} issues {what} ({y:,.0f}) where {name_a} issued none.")
        elif x > 0 and y == 0:
            lines.append(f"{name_b} issues no {what} ({name_a} issued {x:,.0f}).")
    r = ratio("dram_throughput_pct")
    if r is not None and abs(r - 1) >= 0.2:
        lines.append(f"DRAM throughput {'dropped' if r < 1 else 'rose'} {max(r, 1 / r):.2g}x: "
                     + ("global memory is less of a bottleneck." if r < 1 else "more of the time is spent moving bytes."))
    ca, cb = a.get("smem_load_bank_conflicts") or 0, b.get("smem_load_bank_conflicts") or 0
    ra, rb = a.get("smem_load_requests") or 0, b.get("smem_load_requests") or 0
    if rb and cb / rb >= 0.1 and (not ra or ca / ra < cb / rb):
        lines.append(f"{name_b} has shared-memory bank conflicts ({cb / rb:.1f} extra wavefronts per load).")
    ta, tb = a.get("top_stall"), b.get("top_stall")
    if ta and tb and ta != tb:
        lines.append(f"The top stall moved from {stall_label(ta)} to {stall_label(tb)}: the bottleneck moved; "
                     f"{name_b}'s warps now mostly wait because {STALL_REASONS[tb].meaning if tb in STALL_REASONS else tb}.")
    elif ta and tb:
        lines.append(f"Both stall most on {stall_label(tb)}: "
                     f"{STALL_REASONS[tb].meaning if tb in STALL_REASONS else tb}.")
    return lines


def _issue_story(instructions: float | None, busy_a, busy_b, name_a: str, name_b: str) -> list[str]:
    """The work and how it was issued: the same instructions issued better or worse (sgemm v13 and
    cuBLAS at 2048^3 on the H200: the same 0.301 G, 81.3% against 88.5% of issue slots busy), or a
    different amount of work."""
    if instructions is None:
        return []
    if abs(instructions - 1) < 0.02:
        if busy_a is None or busy_b is None or _nan(busy_a) or _nan(busy_b) or abs(busy_b - busy_a) < 2:
            return []
        return [f"Both executed the same warp instructions (within {abs(instructions - 1) * 100:.1f}%); {name_b} "
                f"kept its issue slots {'busier' if busy_b > busy_a else 'less busy'} ({busy_b:.1f}% against "
                f"{busy_a:.1f}%): the same work, issued {'better' if busy_b > busy_a else 'worse'}."]
    if abs(instructions - 1) >= 0.1:
        return [f"{name_b} executed {instructions:.2f}x the warp instructions of {name_a}."]
    return []


def _nan(x) -> bool:
    return isinstance(x, float) and math.isnan(x)
