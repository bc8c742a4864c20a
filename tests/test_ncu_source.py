"""ncu's source page (counters per SASS instruction) parsed from a recorded H200 capture, and held
to the access model instruction kind by instruction kind; the command that captures it; the
`--sass` tables."""

import json
from pathlib import Path

from gpulab.experiments import get_experiment
from gpulab.gpu import ncu as ncu_mod
from gpulab.gpu.ncu_source import parse_source_csv
from gpulab.model.predict import instruction_table
from gpulab.report.sass_tables import hot_table, kind_of, kinds_table, model_by_kind

FIXTURE = Path(__file__).parent / "fixtures" / "ncu" / "sgemm_v9_129x67x33_source.csv"
SGEMM = get_experiment("sgemm")


def _rows():
    return parse_source_csv(FIXTURE.read_text())


def _model():
    v = SGEMM.variant("v9")
    access = v.access(v.default_params(), SGEMM.shape(129, 67, 33))
    return model_by_kind(instruction_table(access), {i.name: i.width for i in access.instructions})


def test_the_recorded_page_parses():
    kernel, rows = _rows()
    assert kernel == "sgemm" and len(rows) > 400
    first = rows[0]
    assert first.address.startswith("0x") and first.opcode
    guarded = [r for r in rows if r.opcode == "LDS" and r.predicate.startswith("@!P") and r.predicate != "@!PT"]
    assert guarded and all(r["executed"] == 6 for r in guarded)  # 6 warps; the guard is per lane
    never = [r for r in rows if r.predicate == "@!PT"]
    assert never and all(r["predicated_on_threads"] == 0 for r in never)  # the compiler's never-run LDS
    assert any(r.access for r in rows if r.opcode.startswith("LDS"))


def test_the_model_agrees_with_every_instruction_kind_it_counts_the_same_way():
    """Threads predicated on (the model's active lanes) and shared wavefronts, summed per kind."""
    _, rows = _rows()
    model = _model()
    sums = {}
    for r in rows:
        kind = kind_of(r.opcode)
        if kind:
            s = sums.setdefault(kind, {"threads": 0, "waves": 0, "executed": 0})
            s["threads"] += r["predicated_on_threads"]
            s["waves"] += r["shared_wavefronts"]
            s["executed"] += r["executed"]
    assert sums[("shared", "load")]["threads"] == model[("shared", "load")]["lanes"]  # 8,643 in the epilogue + the fragments
    assert sums[("shared", "load")]["waves"] == model[("shared", "load")]["wavefronts"]
    assert sums[("shared", "store")]["waves"] == model[("shared", "store")]["wavefronts"]
    assert sums[("global", "store")]["threads"] == model[("global", "store")]["lanes"]
    assert sums[("global", "ldgsts")]["executed"] == 720  # every LDGSTS a warp issued (the model's 720)


def test_the_store_sectors_the_hardware_counter_missed_are_in_the_instruction_counts():
    """The launch-wide l1tex store-sector counter read 1,411 and 1,410 for this run in two
    captures (fidelity.csv); the source page's theoretical L2 sectors of the STG instructions are
    the model's 1,417 exactly, as are the LDGSTS sectors (2,414)."""
    _, rows = _rows()
    model = _model()
    stores = sum(r["l2_sectors"] for r in rows if kind_of(r.opcode) == ("global", "store"))
    copies = sum(r["l2_sectors"] for r in rows if kind_of(r.opcode) == ("global", "ldgsts"))
    assert stores == model[("global", "store")]["sectors"] == 1417
    assert copies == model[("global", "ldgsts")]["sectors"] == 2414


def test_kinds_and_hot_tables_render():
    from rich.console import Console

    _, rows = _rows()
    console = Console(width=200, record=True)
    console.print(kinds_table(rows, _model(), "v9"))
    console.print(hot_table(rows, n=5))
    text = console.export_text()
    assert "shared load" in text and "global ldgsts" in text and "LDGDEPBAR" not in text
    assert "hottest instructions" in text


def test_source_command_asks_for_the_source_page_of_one_launch(tmp_path):
    request = ncu_mod.CaptureRequest(target=("python3", "-m", "prog"), kernel_name="sgemm", launch_skip=3,
                                     metrics=(), source_counters=True)
    cmd = ncu_mod.source_command("ncu", request, tmp_path / "log.csv")
    assert cmd[:3] == ["ncu", "--clock-control", "none"]
    for flag, value in (("--kernel-name", "sgemm"), ("--launch-skip", "3"), ("--launch-count", "1"),
                        ("--section", "SourceCounters"), ("--page", "source"), ("--print-source", "sass"),
                        ("--log-file", str(tmp_path / "log.csv"))):
        assert cmd[cmd.index(flag) + 1] == value
    assert "--csv" in cmd and "--export" not in cmd and "--metrics" not in cmd
    assert cmd[-3:] == ["python3", "-m", "prog"]


def test_fixture_provenance_is_recorded():
    meta = json.loads(FIXTURE.with_suffix(".json").read_text())
    assert meta["gpu"] == "NVIDIA H200" and "SourceCounters" in meta["command"]
