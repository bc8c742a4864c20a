"""Nsight Compute's source page: counters per SASS instruction of one launch.

The launch-wide counters (gpulab.gpu.ncu) say how many shared-load instructions a kernel ran; this
page says which instruction ran how often, with how many threads predicated on, how many global
requests and shared wavefronts each one made, and where the warps stalled. That is what settles a
disagreement between an access model and a total: for sgemm v9 at 129x67x33 on the H200 the totals
said 16 more shared loads than the model, while this page agreed with the model instruction by
instruction.

    ncu --section SourceCounters --page source --print-source sass --csv --log-file LOG program...

The log file holds ncu's ==PROF== lines, then `"Kernel Name","<name>",`, then the table: one header
row and one row per SASS instruction, numbers with thousands separators, '-' where a column does
not apply (the memory columns of an FFMA).
"""

from __future__ import annotations

import csv
import dataclasses
import tempfile
from pathlib import Path
from typing import Mapping

from gpulab.gpu import ncu as ncu_mod

# The source page's columns gpulab reads, by the name it gives them.
COLUMNS = {
    "executed": "Instructions Executed",
    "threads_executed": "Thread Instructions Executed",
    "predicated_on_threads": "Predicated-On Thread Instructions Executed",
    "global_requests": "L1 Tag Requests Global",
    "l2_sectors": "L2 Theoretical Sectors Global",
    "l2_sectors_ideal": "L2 Theoretical Sectors Global Ideal",
    "shared_wavefronts": "L1 Wavefronts Shared",
    "shared_wavefronts_ideal": "L1 Wavefronts Shared Ideal",
    "stall_samples": "Warp Stall Sampling (All Samples)",
}


@dataclasses.dataclass(frozen=True)
class SassRow:
    address: str
    source: str  # the instruction as disassembled, predicate included ('@!P3 LDS R197, [R4+0x120]')
    counts: dict[str, float]  # COLUMNS' keys -> numbers (0 where the column does not apply)
    access: str  # 'Address Space Access Operation Access Size' where it is a memory instruction
    stalls: dict[str, float]  # stall reason -> samples

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


def capture_source(request: ncu_mod.CaptureRequest, ncu: str | None = None, env: Mapping[str, str] | None = None,
                   timeout: float = ncu_mod.CAPTURE_TIMEOUT_S) -> str:
    """Run the capture; the log file's text (failures raise the errors gpulab.gpu.ncu raises)."""
    ncu = ncu or ncu_mod.find_ncu(env)
    with tempfile.TemporaryDirectory(prefix="gpulab-ncu-source-") as tmp:
        log = Path(tmp) / "source.csv"
        result = ncu_mod.run_tool(ncu_mod.source_command(ncu, request, log), timeout, env, "ncu")
        output = (result.stdout or "") + "\n" + (result.stderr or "")
        text = log.read_text(errors="replace") if log.exists() else ""
        ncu_mod.classify_failure(result.returncode, output + "\n" + text, request, '"Kernel Name"' in text)
        return text


def parse_source_csv(text: str) -> tuple[str, list[SassRow]]:
    """(kernel name, one SassRow per instruction) from the log file's text."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"Kernel Name"')), None)
    if start is None:
        raise ncu_mod.NcuFailed("ncu's source page holds no kernel: " + (" / ".join(ncu_mod.tool_lines(text))
                                                                         or "the log file is empty"))
    kernel = next(csv.reader([lines[start]]))[1]
    body = [line for line in lines[start + 1:] if line.strip() and not line.startswith("==")]
    rows = list(csv.reader(body))
    header = rows[0]
    col = {name: i for i, name in enumerate(header)}
    stall_cols = [(name[len("stall_"):], i) for name, i in col.items()
                  if name.startswith("stall_") and "(Not Issued)" not in name]
    out = []
    for row in rows[1:]:
        if len(row) != len(header):
            continue
        counts = {key: _number(row[col[name]]) for key, name in COLUMNS.items() if name in col}
        access = " ".join(row[col[c]] for c in ("Address Space", "Access Operation", "Access Size")
                          if c in col and row[col[c]] not in ("", "-"))
        out.append(SassRow(row[col["Address"]], row[col["Source"]].strip(), counts, access,
                           {reason: _number(row[i]) for reason, i in stall_cols}))
    return kernel, out


def _number(cell: str) -> float:
    value = ncu_mod.parse_number(cell)
    return 0.0 if value is None or value != value else value  # '-' and n/a: the column does not apply
