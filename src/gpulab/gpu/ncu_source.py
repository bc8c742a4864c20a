"""Nsight Compute's source counters: counters per SASS instruction of one launch, read from its report.

The launch-wide counters (gpulab.gpu.ncu) say how many shared-load instructions a kernel ran; these
say which instruction ran how often, with how many threads predicated on, how many global requests
and shared wavefronts each one made, and where the warps stalled. That is what settles a
disagreement between an access model and a total: for sgemm v9 at 129x67x33 on the H200 the totals
said 16 more shared loads than the model, while the source counters agreed with the model
instruction by instruction.

    ncu --section SourceCounters --export REPORT program...

In the report (gpulab.gpu.ncu_reader) every per-instruction metric of the section is an instanced
metric whose correlation ids are the instructions' addresses; the interface disassembles the
instruction at an address from the code the report carries (sass_by_pc). The metrics read, by the
name ncu's source page gives their column:
  inst_executed                          Instructions Executed
  thread_inst_executed                   Thread Instructions Executed
  thread_inst_executed_true              Predicated-On Thread Instructions Executed
  memory_l1_tag_requests_global          L1 Tag Requests Global
  memory_l2_theoretical_sectors_global   L2 Theoretical Sectors Global (and _ideal)
  memory_l1_wavefronts_shared            L1 Wavefronts Shared (and _ideal)
  smsp__pcsamp_sample_count              the warp-state samples at the instruction, every state
  smsp__pcsamp_warps_issue_stalled_<r>   of those, the samples in state r (the stall_* columns)
  memory_type, memory_access_type, memory_access_size_type   Address Space, Access Operation, Size
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Mapping

from gpulab.gpu import ncu as ncu_mod
from gpulab.gpu import ncu_reader

# SassRow.counts' keys -> the report's per-instruction metrics.
METRICS = {
    "executed": "inst_executed",
    "threads_executed": "thread_inst_executed",
    "predicated_on_threads": "thread_inst_executed_true",
    "global_requests": "memory_l1_tag_requests_global",
    "l2_sectors": "memory_l2_theoretical_sectors_global",
    "l2_sectors_ideal": "memory_l2_theoretical_sectors_global_ideal",
    "shared_wavefronts": "memory_l1_wavefronts_shared",
    "shared_wavefronts_ideal": "memory_l1_wavefronts_shared_ideal",
    "stall_samples": "smsp__pcsamp_sample_count",
}
STALL_PREFIX = "smsp__pcsamp_warps_issue_stalled_"
NOT_ISSUED = "_not_issued"  # the samples taken while no warp issued: a second view of the same stalls
# memory_type and memory_access_type are bit sets; these bits are the ones seen in reports (LDG, STG,
# LDS, STS of ncu 2024.1; an LDGSTS, global and shared, load and store, is both bits of each, as ncu
# 2025.3's source page prints it: 'Global,Shared Load,Store'). A bit not named here shows as a number.
SPACES = {4: "Global", 16: "Shared"}
OPERATIONS = {2: "Load", 4: "Store"}


@dataclasses.dataclass(frozen=True)
class SassRow:
    address: str
    source: str  # the instruction as disassembled, predicate included ('@!P3 LDS R197, [R4+0x120]')
    counts: dict[str, float]  # METRICS' keys -> numbers (0 where the metric does not apply)
    access: str  # 'Address Space Access Operation Access Size' where it is a memory instruction
    stalls: dict[str, float]  # stall reason (gpulab.quantities' names) -> samples

    @property
    def predicate(self) -> str:
        first = self.source.split()[0] if self.source.split() else ""
        return first if first.startswith("@") else ""

    @property
    def opcode(self) -> str:
        words = self.source.split()
        words = words[1:] if self.predicate else words
        return words[0].rstrip(";") if words else ""

    def __getitem__(self, key: str) -> float:
        return self.counts.get(key, 0.0)


def capture_source(request: ncu_mod.CaptureRequest, report: Path, ncu: str | None = None,
                   env: Mapping[str, str] | None = None, timeout: float = ncu_mod.CAPTURE_TIMEOUT_S) -> Path:
    """Capture the request's launch with the SourceCounters section into `report`; its path (failures
    raise the errors gpulab.gpu.ncu raises)."""
    if not request.source_counters:
        raise ValueError("a source-counter capture needs a request with source_counters=True")
    return ncu_mod.capture(request, report, ncu, env, timeout).report


def per_instruction(action, metric: str) -> dict[int, float | int | None]:
    """An instanced metric of `action` by instruction address ({} where the report lacks it)."""
    m = action.metric_by_name(metric)
    ids = m.correlation_ids() if m is not None and m.has_correlation_ids() else None
    if ids is None:
        return {}
    return {int(ids.value(i)): m.value(i) for i in range(m.num_instances())}


def _flags(code, names: dict[int, str]) -> str:
    """A bit set as names: 20 -> 'Global,Shared'; '' for none."""
    if not isinstance(code, int) or code <= 0:
        return ""
    unknown = code & ~sum(names)
    return ",".join([name for bit, name in names.items() if code & bit] + ([hex(unknown)] if unknown else []))


def _number(value) -> float:
    return 0.0 if value is None or isinstance(value, str) else float(value)


def sass_rows(action) -> list[SassRow]:
    """One SassRow per instruction any per-instruction metric names, in address order."""
    counts = {key: per_instruction(action, metric) for key, metric in METRICS.items()}
    reasons = sorted(n[len(STALL_PREFIX):] for n in action.metric_names()
                     if n.startswith(STALL_PREFIX) and not n.endswith(NOT_ISSUED))
    stalls = {r: per_instruction(action, STALL_PREFIX + r) for r in reasons}
    space, operation, size = (per_instruction(action, m)
                              for m in ("memory_type", "memory_access_type", "memory_access_size_type"))
    addresses = sorted(set().union(*counts.values(), *stalls.values(), space))
    rows = []
    for pc in addresses:
        access = " ".join(word for word in (_flags(space.get(pc), SPACES), _flags(operation.get(pc), OPERATIONS),
                                            str(size[pc]) if size.get(pc) else "") if word)
        rows.append(SassRow(hex(pc), " ".join(action.sass_by_pc(pc).split()),
                            {key: _number(values.get(pc)) for key, values in counts.items()}, access,
                            {r: _number(values.get(pc)) for r, values in stalls.items()}))
    return rows


def read_source(report: Path, interface: ncu_reader.Interface | None = None) -> tuple[str, list[SassRow]]:
    """(kernel name, one SassRow per instruction) of the launch in `report` that executed the most
    instructions: the captured kernel, or the kernel a library's call spent its work in."""
    found = ncu_reader.actions(report, interface)  # held while its launches are read: it owns them
    action = max(found, key=lambda a: sum(_number(v) for v in per_instruction(a, METRICS["executed"]).values()))
    rows = sass_rows(action)
    if not rows:
        raise ncu_mod.NcuFailed(f"{Path(report).name} holds no per-instruction counters for {action.name()}: "
                                "was it captured with --section SourceCounters?")
    return action.name(), rows
