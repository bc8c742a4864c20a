"""Nsight Compute's source counters (counters per SASS instruction): the capture that asks for them,
how they are read from a report (a stand-in report anywhere; the recorded H200 report of sgemm v9 at
129x67x33 where it is committed and an interface can read it), held to the access model instruction
kind by instruction kind; the `--sass` tables."""

from pathlib import Path

import pytest

from gpulab.experiments import get_experiment
from gpulab.gpu import ncu as ncu_mod
from gpulab.gpu import ncu_source
from gpulab.model.predict import instruction_table
from gpulab.report.sass_tables import hot_table, kind_of, kinds_table, model_by_kind
from ncu_reports import interface, metric, recorded, recorded_info, stub_interface, stub_report

SGEMM = get_experiment("sgemm")
SOURCE = "sgemm_v9_129x67x33_source"

# A stand-in report: an FFMA, a guarded LDS.128 that ran with 40 of its 64 threads on, an STG, an
# LDGSTS (global and shared, load and store), and a never-reached instruction the report has the
# code of but no counter for.
PCS = (0x7F00, 0x7F10, 0x7F20)
STUB_LAUNCH = {
    "name": "sgemm",
    "sass": {str(0x7F00): "      FFMA R1, R2, R3, R1 ;", str(0x7F10): "@!P3  LDS.128 R4, [R8+0x120]",
             str(0x7F20): "      STG.E [R2.64], R1", str(0x7F28): "      LDGSTS.E [R69], desc[UR8][R26.64]",
             str(0x7F30): "      EXIT"},
    "metrics": {
        "inst_executed": metric(8, instances=(4, 2, 2), pcs=PCS),
        "thread_inst_executed": metric(256, instances=(128, 64, 64), pcs=PCS),
        "thread_inst_executed_true": metric(232, instances=(128, 40, 64), pcs=PCS),
        "memory_l1_wavefronts_shared": metric(6, instances=(6,), pcs=PCS[1:2]),
        "memory_l1_wavefronts_shared_ideal": metric(4, instances=(4,), pcs=PCS[1:2]),
        "memory_l1_tag_requests_global": metric(2, instances=(2,), pcs=PCS[2:]),
        "memory_l2_theoretical_sectors_global": metric(16, instances=(16,), pcs=PCS[2:]),
        "memory_type": metric(0, instances=(16, 4, 20), pcs=(*PCS[1:], 0x7F28)),
        "memory_access_type": metric(0, instances=(2, 4, 6), pcs=(*PCS[1:], 0x7F28)),
        "memory_access_size_type": metric(0, instances=(128, 32, 32), pcs=(*PCS[1:], 0x7F28)),
        "smsp__pcsamp_sample_count": metric(9, instances=(1, 6, 2), pcs=PCS),
        "smsp__pcsamp_warps_issue_stalled_selected": metric(1, instances=(1,), pcs=PCS[:1]),
        "smsp__pcsamp_warps_issue_stalled_short_scoreboard": metric(5, instances=(5,), pcs=PCS[1:2]),
        "smsp__pcsamp_warps_issue_stalled_mio_throttle": metric(1, instances=(1,), pcs=PCS[1:2]),
        "smsp__pcsamp_warps_issue_stalled_lg_throttle": metric(2, instances=(2,), pcs=PCS[2:]),
        "smsp__pcsamp_warps_issue_stalled_lg_throttle_not_issued": metric(2, instances=(2,), pcs=PCS[2:]),
        "dram__bytes_read.sum": metric(1024, "byte"),
    },
}


def test_source_rows_are_read_per_instruction_from_a_report(tmp_path):
    kernel, rows = ncu_source.read_source(stub_report(tmp_path / "s.ncu-rep", [STUB_LAUNCH]), stub_interface())
    assert kernel == "sgemm" and [r.address for r in rows] == [hex(pc) for pc in (*PCS, 0x7F28)]
    ffma, lds, stg, ldgsts = rows
    assert (ffma.opcode, ffma.predicate, ffma.source) == ("FFMA", "", "FFMA R1, R2, R3, R1 ;")
    assert (lds.opcode, lds.predicate) == ("LDS.128", "@!P3") and lds.source == "@!P3 LDS.128 R4, [R8+0x120]"
    assert lds["executed"] == 2 and lds["predicated_on_threads"] == 40 and lds["threads_executed"] == 64
    assert (lds["shared_wavefronts"], lds["shared_wavefronts_ideal"], lds["global_requests"]) == (6, 4, 0)
    assert (stg["global_requests"], stg["l2_sectors"], stg["l2_sectors_ideal"]) == (2, 16, 0)  # 0: not in the report
    assert (ffma.access, lds.access, stg.access) == ("", "Shared Load 128", "Global Store 32")
    assert ldgsts.access == "Global,Shared Load,Store 32" and ldgsts["executed"] == 0  # no counter: 0
    # the samples of each state; those taken while no warp issued are another view of the same, left out
    assert stg.stalls == {"lg_throttle": 2, "mio_throttle": 0, "selected": 0, "short_scoreboard": 0}
    assert all(r["stall_samples"] == sum(r.stalls.values()) for r in rows)


def test_the_launch_read_is_the_one_that_executed_the_most_instructions(tmp_path):
    """A library's call may run a small kernel beside its GEMM (a split-K reduction)."""
    small = {"name": "split_k_kernel", "sass": {"1": "EXIT"},
             "metrics": {"inst_executed": metric(3, instances=(3,), pcs=(1,))}}
    kernel, rows = ncu_source.read_source(stub_report(tmp_path / "s.ncu-rep", [small, STUB_LAUNCH]), stub_interface())
    assert kernel == "sgemm" and len(rows) == 4


def test_a_report_without_source_counters_says_so(tmp_path):
    plain = {"name": "sgemm", "metrics": {"dram__bytes_read.sum": metric(1024, "byte")}}
    with pytest.raises(ncu_mod.NcuFailed, match="no per-instruction counters.*SourceCounters"):
        ncu_source.read_source(stub_report(tmp_path / "s.ncu-rep", [plain]), stub_interface())


def test_the_capture_asks_for_the_source_counters_of_one_launch_and_keeps_its_code(tmp_path):
    request = ncu_mod.CaptureRequest(target=("python3", "-m", "prog"), kernel_name="sgemm", launch_skip=3,
                                     metrics=(), source_counters=True)
    cmd = ncu_mod.capture_command("ncu", request, tmp_path / "s.ncu-rep")
    assert cmd[:3] == ["ncu", "--clock-control", "none"]
    for flag, value in (("--kernel-name", "sgemm"), ("--launch-skip", "3"), ("--launch-count", "1"),
                        ("--section", "SourceCounters"), ("--export", str(tmp_path / "s.ncu-rep"))):
        assert cmd[cmd.index(flag) + 1] == value
    assert "--import-sass" not in cmd and "--metrics" not in cmd and "--csv" not in cmd  # the rows are its SASS
    assert cmd[-3:] == ["python3", "-m", "prog"]
    with pytest.raises(ValueError, match="source_counters"):
        ncu_source.capture_source(ncu_mod.CaptureRequest(target=("x",), kernel_name="k", launch_skip=0,
                                                         metrics=("a.sum",)), tmp_path / "s.ncu-rep", ncu="ncu")


# -- the recorded report: sgemm v9 at 129x67x33 on the H200 -------------------------------------------
def _recorded_rows():
    return ncu_source.read_source(recorded(SOURCE), interface())


def _model():
    v = SGEMM.variant("v9")
    access = v.access(v.default_params(), SGEMM.shape(129, 67, 33))
    return model_by_kind(instruction_table(access), {i.name: i.width for i in access.instructions})


def test_the_recorded_report_reads_per_instruction():
    kernel, rows = _recorded_rows()
    assert kernel == "sgemm" and len(rows) > 100
    assert all(r.address.startswith("0x") and r.opcode for r in rows)
    guarded = [r for r in rows if r.opcode.startswith("LDS") and r.predicate.startswith("@!P") and r.predicate != "@!PT"]
    warps = recorded_info(SOURCE)["launch"]
    ran = [r for r in guarded if r["executed"] > 0]  # at this shape some guarded paths never run at all
    assert ran and all(r["predicated_on_threads"] < 32 * r["executed"] for r in ran)
    never = [r for r in rows if r.predicate == "@!PT"]
    assert all(r["predicated_on_threads"] == 0 for r in never)  # the compiler's never-run instructions
    assert any(r.access.startswith("Shared Load") for r in rows) and any(r.access.startswith("Global") for r in rows)
    assert warps["grid"] and warps["block"]


def test_the_recorded_stall_samples_are_the_sum_of_their_states():
    """Two metrics of the report: the samples at an instruction, and the samples in each warp state."""
    _, rows = _recorded_rows()
    assert sum(r["stall_samples"] for r in rows) > 0
    assert {"selected", "barrier", "long_scoreboard"} <= set(rows[0].stalls)
    assert all(abs(r["stall_samples"] - sum(r.stalls.values())) < 0.5 for r in rows)


def test_the_model_agrees_with_every_instruction_kind_it_counts_the_same_way():
    """Threads predicated on (the model's active lanes), shared wavefronts and global sectors, summed
    per kind (for this run the launch-wide store-sector counter read 1,410 and 1,411 in two captures,
    the model 1,417: the instructions' theoretical sectors are the model's)."""
    _, rows = _recorded_rows()
    model = _model()
    sums = {}
    for r in rows:
        kind = kind_of(r.opcode)
        if kind:
            s = sums.setdefault(kind, {"threads": 0, "waves": 0, "executed": 0, "sectors": 0})
            s["threads"] += r["predicated_on_threads"]
            s["waves"] += r["shared_wavefronts"]
            s["executed"] += r["executed"]
            s["sectors"] += r["l2_sectors"]
    assert sums[("shared", "load")]["threads"] == model[("shared", "load")]["lanes"]
    assert sums[("shared", "load")]["waves"] == model[("shared", "load")]["wavefronts"]
    assert sums[("shared", "store")]["waves"] == model[("shared", "store")]["wavefronts"]
    assert sums[("global", "store")]["threads"] == model[("global", "store")]["lanes"]
    assert sums[("global", "store")]["sectors"] == model[("global", "store")]["sectors"]
    assert sums[("global", "ldgsts")]["sectors"] == model[("global", "ldgsts")]["sectors"]


def test_kinds_and_hot_tables_render_the_recorded_rows():
    from rich.console import Console

    _, rows = _recorded_rows()
    console = Console(width=200, record=True)
    console.print(kinds_table(rows, _model(), "v9"))
    console.print(hot_table(rows, n=5))
    text = console.export_text()
    assert "shared load" in text and "global ldgsts" in text and "LDGDEPBAR" not in text
    assert "hottest instructions" in text


def test_the_stand_in_rows_render_too(tmp_path):
    from rich.console import Console

    _, rows = ncu_source.read_source(stub_report(tmp_path / "s.ncu-rep", [STUB_LAUNCH]), stub_interface())
    console = Console(width=200, record=True)
    console.print(kinds_table(rows, None, "stand-in"))
    console.print(hot_table(rows, n=2))
    text = console.export_text()
    assert "shared load" in text and "global store" in text and "short_scoreboard" in text


def test_capture_source_keeps_the_report_where_asked(tmp_path):
    script = tmp_path / "ncu"
    script.write_text('#!/bin/sh\nprev=""\nfor a in "$@"; do\n  if [ "$prev" = "--export" ]; then echo r > "$a"; fi\n'
                      '  prev="$a"\ndone\n')
    script.chmod(0o755)
    request = ncu_mod.CaptureRequest(target=("python3", "-m", "prog"), kernel_name="sgemm", launch_skip=3,
                                     metrics=(), source_counters=True)
    report = ncu_source.capture_source(request, tmp_path / "kept" / "s.ncu-rep", ncu=str(script))
    assert report == tmp_path / "kept" / "s.ncu-rep" and Path(report).read_text() == "r\n"
