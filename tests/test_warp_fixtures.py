"""The warp model held to what Nsight Compute counted on a real GPU.

tests/fixtures/warp_patterns.json is written on a GPU machine by
    python3 scripts/pattern_fixtures.py --out tests/fixtures/warp_patterns.json
and records, for each pattern of gpulab/model/patterns.py, what ncu counted for one launch of its
probe kernel. Every pattern's predicted requests, sectors, wavefronts and bank conflicts must equal
the measured ones. Until the file exists these tests skip and say how to make it.

The rest of this file runs anywhere: the metric names exist in ncu's list, the CSV parser reads
ncu's format, and the fixture script's plumbing works end to end with a stand-in for ncu.
"""

from __future__ import annotations

import importlib.util
import json
import stat
import sys
from pathlib import Path

import pytest

from gpulab.gpu import ncu
from gpulab.model import warp
from gpulab.model.patterns import PATTERNS, Pattern, pattern
from gpulab import quantities as Q

# The one-warp probes were recorded with the hardware counters (exact for launches this small), also
# where fidelity reads ncu's instrumented count instead (store sectors, shared requests and
# wavefronts): the model's key -> the hardware metric of it.
FIXTURE_METRICS = ({q.predicted_as: q.metric for q in Q.COUNTED if q.metric and q.judged in (Q.EXACT, Q.INSTRUMENTED)}
                   | {q.predicted_as: q.metric for q in Q.COUNTED if q.judged == Q.HARDWARE})
FIXTURE = Path(__file__).parent / "fixtures" / "warp_patterns.json"
MAKE_IT = "python3 scripts/pattern_fixtures.py --out tests/fixtures/warp_patterns.json (on a GPU)"


def _script():
    """scripts/pattern_fixtures.py, the fixture-recording program (a script, not a package module)."""
    path = Path(__file__).resolve().parents[1] / "scripts" / "pattern_fixtures.py"
    spec = importlib.util.spec_from_file_location("pattern_fixtures", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_SCRIPT = _script()
METRICS, measure, number = _SCRIPT.METRICS, _SCRIPT.measure, _SCRIPT.number


def expected_metrics(p: Pattern) -> dict[str, int]:
    """What the warp model says ncu must count for one launch of p's probe."""
    c = warp.count(p.addresses, p.width, p.space, p.kind, p.active)
    prefix = "gmem" if p.space == "global" else "smem"
    fields = ("requests", "sectors") if p.space == "global" else ("requests", "wavefronts", "bank_conflicts")
    return {FIXTURE_METRICS[f"{prefix}_{p.kind}_{f}"]: int(getattr(c, f)) * p.repeat for f in fields}


def mismatches(p: Pattern, entry: dict) -> list[str]:
    if entry["offsets"] != list(p.offsets) or entry["width"] != p.width or entry.get("repeat", 1) != p.repeat:
        return [f"the fixture's {p.name} is not today's pattern: re-run {MAKE_IT}"]
    out = []
    for metric, want in expected_metrics(p).items():
        got = entry["measured"].get(metric)
        if got != want:
            out.append(f"{metric}: model {want}, measured {got}")
    return out


def _load_fixture() -> dict:
    if not FIXTURE.exists():
        pytest.skip(f"no hardware fixture yet: {FIXTURE} is made by {MAKE_IT}")
    return {e["name"]: e for e in json.loads(FIXTURE.read_text())["patterns"]}


@pytest.mark.parametrize("name", [p.name for p in PATTERNS])
def test_model_matches_the_hardware(name):
    measured = _load_fixture()
    if name not in measured:
        pytest.skip(f"{name} is newer than the fixture: re-run {MAKE_IT}")
    p = pattern(name)
    problems = mismatches(p, measured[name])
    assert not problems, f"{name} ({p.rule}): " + "; ".join(problems)


# -- runs anywhere -------------------------------------------------------------------------------


def test_metric_names_exist_in_ncu(ncu_metric_types):
    known = ncu_metric_types
    for name in set(METRICS) | set(FIXTURE_METRICS.values()):
        base = name.split(".", 1)[0]  # the .sum roll-up is not in the list, the counter is
        assert base in known, name


def test_every_predicted_metric_is_measured_by_the_fixture_script():
    needed = {m for p in PATTERNS for m in expected_metrics(p)}
    assert needed <= set(METRICS)


SAMPLE_CSV = """==PROF== Connected to process 4242 (/usr/bin/python3)
==PROF== Profiling "probe_lds128": 0%....50%....100% - 9 passes
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum","l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
"","","","","","","","","sector"
"0","4242","python3","127.0.0.1","probe_lds128","1","7","4","0"
"1","4242","python3","127.0.0.1","probe_ldg32","1","7","0","16,777,216"
==PROF== Disconnected from process 4242
"""


def test_the_probes_csv_parses_with_gpulabs_parser():
    rows = ncu.parse_csv(SAMPLE_CSV)
    assert [r.kernel for r in rows] == ["probe_lds128", "probe_ldg32"]
    assert number(rows[1].metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]) == 16_777_216
    assert number(rows[0].metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]) == 4
    assert number(float("nan")) is None and number(1.5) == 1.5
    assert ncu.parse_csv("==ERROR== nothing profiled") == []


FAKE_NCU = '''#!{python}
"""A stand-in for ncu: 'profiles' the child by writing what the warp model predicts."""
import csv, json, sys
from gpulab.model.patterns import PATTERNS
sys.path.insert(0, {tests!r})
from test_warp_fixtures import expected_metrics
argv = sys.argv[1:]
if argv == ["--version"]:
    print("NVIDIA (R) Nsight Compute Command Line Profiler\\nVersion 0.0 (stand-in)")
    sys.exit(0)
arg = lambda flag: argv[argv.index(flag) + 1] if flag in argv else None
metrics = arg("--metrics").split(",")
only = arg("--only")
import re
chosen = [p for p in PATTERNS if only is None or re.search(only, p.name)]
with open(arg("--order"), "w") as f:
    json.dump({{"device": "stand-in GPU", "names": [p.name for p in chosen]}}, f)
with open(arg("--log-file"), "w", newline="") as f:
    f.write("==PROF== Connected to process 1\\n")
    w = csv.writer(f, quoting=csv.QUOTE_ALL)
    w.writerow(["ID", "Kernel Name", *metrics])
    w.writerow(["", "", *["" for _ in metrics]])
    for i, p in enumerate(chosen):
        want = expected_metrics(p)
        w.writerow([str(i), p.probe, *["{{:,}}".format(want.get(m, 0)) for m in metrics]])
'''


def test_fixture_script_end_to_end_with_a_stand_in_ncu(tmp_path, monkeypatch):
    monkeypatch.setenv("GPULAB_CACHE", str(tmp_path / "cache"))
    fake = tmp_path / "ncu"
    fake.write_text(FAKE_NCU.format(python=sys.executable, tests=str(Path(__file__).parent)))
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    out = tmp_path / "fixtures" / "warp_patterns.json"
    fixture = measure(out, "sm_90", str(fake), only=r"^(lds|ldg)", timeout_s=120)

    written = json.loads(out.read_text())
    assert written == json.loads(json.dumps(fixture))
    assert written["device"] == "stand-in GPU" and written["ncu_version"] == "0.0"
    names = [e["name"] for e in written["patterns"]]
    assert names == [p.name for p in PATTERNS if p.name.startswith(("lds", "ldg"))]
    by_name = {e["name"]: e for e in written["patterns"]}
    for name in names:
        assert mismatches(pattern(name), by_name[name]) == []
    # ... and the comparison does fail when the hardware disagrees or the pattern changed.
    entry = by_name["lds128_ex1_consecutive"]
    entry["measured"][FIXTURE_METRICS["smem_load_wavefronts"]] = 2
    assert mismatches(pattern("lds128_ex1_consecutive"), entry) == [
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum: model 4, measured 2"
    ]
    entry["offsets"][0] = 8
    assert "re-run" in mismatches(pattern("lds128_ex1_consecutive"), entry)[0]

    # A second, partial run merges into the file in catalogue order.
    measure(out, "sm_90", str(fake), only=r"^sts", timeout_s=120)
    merged = [e["name"] for e in json.loads(out.read_text())["patterns"]]
    assert merged == [p.name for p in PATTERNS if p.name.startswith(("lds", "ldg", "sts"))]
