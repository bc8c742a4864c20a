"""gpulab.gpu.ncu without a GPU: the command builder, finding ncu, one capture (one ncu process
writing a report), and every failure path, driven by fake `ncu` executables that print the real
texts ncu prints and exit the way it does; the raw-CSV parser scripts/pattern_fixtures.py reads
(synthetic and recorded ncu output). Reading reports: tests/test_ncu_reader.py (any machine) and
tests/test_ncu_reports.py (the reports recorded on the H200)."""

import math
import stat
import textwrap
from pathlib import Path

import pytest

from gpulab.gpu import ncu
from gpulab.run.ncu_child import CHECK_LAUNCHES, LAUNCH_SKIP, TOTAL_LAUNCHES, WARMUP_LAUNCHES
from gpulab.jobs.profile import library_facts, measure
from gpulab.quantities import COUNTED, HEADLINE, STALL_REASONS, STALLS, metric_names

FIXTURES = Path(__file__).parent / "fixtures" / "ncu"

# The texts real ncu prints (2025.3; the permission line is verbatim from NVIDIA's error page).
PERM_TEXT = """==PROF== Connected to process 9012 (/usr/bin/python3.12)
==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0. For instructions on enabling permissions and to get more information see https://developer.nvidia.com/ERR_NVGPUCTRPERM
==PROF== Disconnected from process 9012
"""
NO_KERNEL_TEXT = """==PROF== Connected to process 716 (/usr/bin/python3.12)
gpulab.run.ncu_child: sgemm v1 TILE=32 64x64x64: 4 launches, the last one is the capture
==PROF== Disconnected from process 716
==WARNING== No kernels were profiled.
"""
OTHER_FAILURE_TEXT = """==PROF== Connected to process 716 (/usr/bin/python3.12)
==ERROR== Failed to profile "sgemm" in process 716
==ERROR== Unknown Error on device 0.
==PROF== Disconnected from process 716
"""
TARGET_FAILURE_TEXT = """==PROF== Connected to process 716 (/usr/bin/python3.12)
gpulab-target: error: sgemm v1 TILE=32 64x64x64 computes a wrong answer (12 wrong elements)
==PROF== Disconnected from process 716
==ERROR== The application returned an error code (2).
"""


def fake_ncu(tmp_path: Path, text: str, code: int, name: str = "ncu", stderr: bool = False) -> Path:
    """An executable that prints `text` (to stdout, or stderr) and exits `code`, whatever its args."""
    body = tmp_path / f"{name}.txt"
    body.write_text(text)
    script = tmp_path / name
    script.write_text(f"#!/bin/sh\ncat '{body}' {'>&2' if stderr else ''}\nexit {code}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return script


def request(**kw) -> ncu.CaptureRequest:
    defaults = dict(target=("python3", "-m", "gpulab.run.ncu_child", "sgemm", "v1"), kernel_name="sgemm",
                    launch_skip=3, metrics=("dram__bytes_read.sum", "lts__t_sector_hit_rate.pct"))
    return ncu.CaptureRequest(**(defaults | kw))


# -- parsing ------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, value", [
    ("16,777,216", 16777216.0), ('"1,234.5"', 1234.5), ("50.73", 50.73), ("0", 0.0), ("3.2e-05", 3.2e-05),
])
def test_parse_number(text, value):
    assert ncu.parse_number(text) == value


@pytest.mark.parametrize("text", ["n/a", "", "N/A"])
def test_parse_number_missing_is_nan(text):
    assert math.isnan(ncu.parse_number(text))


def test_parse_number_text_is_none():
    assert ncu.parse_number("(16, 16, 1)") is None


WIDE = textwrap.dedent('''\
    ==PROF== Connected to process 1234 (/usr/bin/python3)
    the program's own line, with, commas
    ==PROF== Profiling "sgemm" - 0: 0%....50%....100% - 9 passes
    "ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","dram__bytes_read.sum","l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum","lts__t_sector_hit_rate.pct","smsp__average_warps_issue_stalled_gmma_per_issue_active.ratio","launch__block_size"
    "","","","","","","","","","","","byte","","%","inst",""
    "0","1234","python3","127.0.0.1","sgemm","1","7","(16, 16, 1)","(32, 32, 1)","0","9.0","2,103,808","8,388,608","96.84","n/a","(16, 16, 1)"
    ==PROF== Disconnected from process 1234
    ''')


def test_parse_wide_csv_with_program_output_units_and_separators():
    (k,) = ncu.parse_csv(WIDE)
    assert k.kernel == "sgemm"
    assert k.info["Grid Size"] == "(32, 32, 1)"
    assert k.metrics["dram__bytes_read.sum"] == 2103808
    assert k.metrics["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == 8388608
    assert k.metrics["lts__t_sector_hit_rate.pct"] == pytest.approx(96.84)
    assert math.isnan(k.metrics["smsp__average_warps_issue_stalled_gmma_per_issue_active.ratio"])
    assert k.units["dram__bytes_read.sum"] == "byte" and k.units["lts__t_sector_hit_rate.pct"] == "%"
    assert k.text["launch__block_size"] == "(16, 16, 1)"
    assert "ID" not in k.metrics and "Block Size" not in k.metrics


def test_parse_wide_csv_without_units_row():
    lines = WIDE.splitlines()
    (k,) = ncu.parse_csv("\n".join(lines[3:4] + lines[5:]))
    assert k.metrics["dram__bytes_read.sum"] == 2103808
    assert k.units == {}


def test_parse_long_csv_details_page():
    text = textwrap.dedent('''\
        "ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
        "0","1","python3","h","sgemm","1","7","(16, 16, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","byte","2,103,808"
        "0","1","python3","h","sgemm","1","7","(16, 16, 1)","(32, 32, 1)","0","9.0","Command line profiler metrics","lts__t_sector_hit_rate.pct","%","n/a"
        "1","1","python3","h","other","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","byte","64"
        ''')
    a, b = ncu.parse_csv(text)
    assert (a.kernel, a.metrics["dram__bytes_read.sum"], a.units["dram__bytes_read.sum"]) == ("sgemm", 2103808, "byte")
    assert math.isnan(a.metrics["lts__t_sector_hit_rate.pct"])
    assert b.kernel == "other"
    assert ncu.single_launch([a, b], "sgemm") is a


def test_no_csv_at_all_is_no_kernel():
    assert ncu.parse_csv("==PROF== Disconnected\n==WARNING== No kernels were profiled.\n") == []
    with pytest.raises(ncu.NoKernelProfiled, match="no kernel was profiled"):
        ncu.single_launch([], "sgemm")


def test_single_launch_rejects_two():
    (k,) = ncu.parse_csv(WIDE)
    with pytest.raises(ncu.NcuFailed, match="expected one"):
        ncu.single_launch([k, k], "sgemm")


def test_single_launch_accepts_demangled_signature():
    (k,) = ncu.parse_csv(WIDE)
    k.kernel = "sgemm(int, int, int, const float *, const float *, float *)"
    assert ncu.single_launch([k], "sgemm") is k


# -- recorded ncu output ------------------------------------------------------------------------
def _fixture(name: str) -> Path:
    path = FIXTURES / name
    if not path.exists():
        pytest.skip(f"{path} is not in this checkout")
    return path


# matmul_profile.cu's numbers for 16 x 16 blocks at 512^3: 32 x 32 blocks of 8 warps; naive: 2 loads per k
# step per warp, 2 sectors each; tiled: 2 loads per tile step, 4 sectors each.
MATMUL_PROFILE = {"v0": (8_388_608, 16_777_216), "v1": (524_288, 2_097_152)}


@pytest.mark.parametrize("variant", ["v0", "v1"])
def test_recorded_full_set_csv(variant):
    """The lead's `--set full` capture (scripts/capture_ncu_raw.sh): program stdout, warnings and
    2,238 columns, some empty; one launch of sgemm."""
    (k,) = ncu.parse_csv(_fixture(f"sgemm_{variant}_512_full_raw.csv").read_text())
    assert k.kernel == "sgemm" and k.info["Block Size"] == "(16, 16, 1)"
    requests, sectors = MATMUL_PROFILE[variant]
    assert k.metrics["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == requests
    assert k.metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == sectors
    assert k.units["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == "sector"
    assert math.isnan(k.metrics["FBSP.TriageCompute.dramc__throughput.avg.pct_of_peak_sustained_elapsed"])
    assert len(k.metrics) + len(k.text) > 2000
    # what ncu's own Warp State section reports: 'selected' is one cycle per issue by definition
    assert k.metrics["smsp__average_warps_issue_stalled_selected_per_issue_active.ratio"] == pytest.approx(1.0)
    m = measure(k, {})
    assert m["gmem_load_sectors_per_request"] == sectors / requests
    assert m["top_stall"] in STALL_REASONS and m["top_stall"] != "selected"


def test_recorded_no_kernel_text_is_recognized():
    text = _fixture("no_kernel.txt").read_text()
    with pytest.raises(ncu.NoKernelProfiled):
        ncu.classify_failure(0, text, request(kernel_name="no_such_kernel"), report_written=False)


# -- the metric names ---------------------------------------------------------------------------
def test_every_metric_exists_for_gh100_with_a_suffix_of_its_type(ncu_metric_types):
    types = ncu_metric_types
    rollups = (".sum", ".avg", ".max", ".min")
    for m in metric_names():
        base, suffix = m.split(".", 1)
        assert base in types, f"{base} is not in ncu's gh100 metric list"
        if types[base] == "Ratio":
            assert suffix in ("ratio", "pct", "max_rate"), m
        else:
            assert ("." + suffix).startswith(rollups), m


def test_every_quantity_has_a_distinct_metric():
    names = [q.metric for q in (*COUNTED, *HEADLINE, *STALLS) if q.metric]
    assert len(names) == len(set(names)) == len(metric_names())


# -- the commands -------------------------------------------------------------------------------
def test_capture_command():
    """One ncu process writes the report: no CSV printed, the kernel's code left out (no counter needs it)."""
    cmd = ncu.capture_command("/x/ncu", request(), Path("/tmp/r.ncu-rep"))
    assert cmd[0] == "/x/ncu"
    joined = " ".join(cmd)
    for part in ("--clock-control none", "--kernel-name-base function", "--kernel-name sgemm",
                 "--launch-skip 3", "--launch-count 1", "--import-sass no",
                 "--metrics dram__bytes_read.sum,lts__t_sector_hit_rate.pct",
                 "--export /tmp/r.ncu-rep --force-overwrite"):
        assert part in joined
    assert cmd[-5:] == ["python3", "-m", "gpulab.run.ncu_child", "sgemm", "v1"]
    assert "--set" not in cmd and "--csv" not in cmd and "--page" not in cmd


def test_a_library_call_is_captured_by_its_profiler_range():
    """A library picks its kernels at run time: no name filter, no skip, profiling off until the
    program's cudaProfilerStart (gpulab.run.ncu_child runs the call inside it)."""
    req = ncu.CaptureRequest(target=("python3", "-m", "gpulab.run.ncu_child", "sgemm", "cublas"), kernel_name="",
                             launch_skip=0, metrics=("dram__bytes_read.sum",), profiler_range=True)
    cmd = ncu.capture_command("ncu", req, Path("r.ncu-rep"))
    assert cmd[cmd.index("--profile-from-start") + 1] == "off"
    assert not {"--kernel-name", "--launch-skip", "--launch-count"} & set(cmd)
    assert cmd[-2:] == ["sgemm", "cublas"]


@pytest.mark.parametrize("kernel_name, profiler_range", [("", False), ("sgemm", True)])
def test_a_capture_names_its_kernel_or_its_range_not_both(kernel_name, profiler_range):
    with pytest.raises(ValueError, match="one of the two"):
        ncu.CaptureRequest(target=("x",), kernel_name=kernel_name, launch_skip=0, metrics=("a.sum",),
                           profiler_range=profiler_range)


def test_range_launches_put_the_longest_first():
    """cuBLAS at 512^3 on the H200 ran a split-K GEMM and then its reduction (recorded capture)."""
    launches = ncu.parse_csv(_fixture("sgemm_cublas_512_raw.csv").read_text())
    first, *rest = ncu.range_launches(launches)
    assert len(launches) == 2 and "split_k" not in first.kernel and "split_k" in rest[0].kernel
    assert first.get("gpu__time_duration.sum") > rest[0].get("gpu__time_duration.sum")
    with pytest.raises(ncu.NoKernelProfiled, match="cudaProfilerStart"):
        ncu.range_launches([])


def test_capture_command_full_set_keeps_the_metrics_and_the_code():
    """A report to open in ncu-ui: every section, and the kernel's code for its source page."""
    cmd = ncu.capture_command("ncu", request(full_set=True), Path("r.ncu-rep"))
    assert cmd[cmd.index("--set") + 1] == "full" and "--metrics" in cmd and "--import-sass" not in cmd


@pytest.mark.parametrize("kw", [dict(target=()), dict(launch_skip=-1), dict(metrics=()),
                                dict(metrics=("a; rm -rf /",))])
def test_capture_request_rejects_nonsense(kw):
    with pytest.raises(ValueError):
        request(**kw)


def test_the_child_programs_launch_order_matches_the_skip():
    assert LAUNCH_SKIP == CHECK_LAUNCHES + WARMUP_LAUNCHES and TOTAL_LAUNCHES == LAUNCH_SKIP + 1


# -- finding ncu --------------------------------------------------------------------------------
def test_find_ncu_prefers_the_env_var(tmp_path):
    mine = fake_ncu(tmp_path, "", 0)
    (tmp_path / "bin").mkdir()
    on_path = fake_ncu(tmp_path / "bin", "", 0)
    assert ncu.find_ncu({"GPULAB_NCU": str(mine), "PATH": str(on_path.parent)}) == str(mine)


def test_find_ncu_on_path(tmp_path):
    fake = fake_ncu(tmp_path, "", 0)
    assert ncu.find_ncu({"PATH": str(tmp_path)}, standard_paths=(), install_globs=()) == str(fake)


def test_find_ncu_newest_standalone_install(tmp_path):
    for version in ("2024.1.1", "2025.3.1", "2025.10.0"):
        (tmp_path / version).mkdir()
        fake_ncu(tmp_path / version, "", 0)
    found = ncu.find_ncu({"PATH": ""}, standard_paths=(str(tmp_path / "none"),),
                         install_globs=(str(tmp_path / "*" / "ncu"),))
    assert found == str(tmp_path / "2025.10.0" / "ncu")


def test_find_ncu_env_var_not_executable():
    with pytest.raises(ncu.NcuNotFound, match="GPULAB_NCU=/no/such/ncu is not an executable"):
        ncu.find_ncu({"GPULAB_NCU": "/no/such/ncu", "PATH": ""})


def test_ncu_not_found_says_where_it_looked_and_how_to_point_at_it(tmp_path):
    with pytest.raises(ncu.NcuNotFound) as info:
        ncu.find_ncu({"PATH": str(tmp_path)}, standard_paths=("/nope/cuda/bin/ncu",),
                     install_globs=("/nope/nsight-compute/*/ncu",))
    msg = str(info.value)
    for words in ("PATH", "/nope/cuda/bin/ncu", "/nope/nsight-compute/*/ncu", "GPULAB_NCU=/path/to/ncu"):
        assert words in msg
    assert "\n" not in msg


# -- failures, through fake ncu executables -----------------------------------------------------
@pytest.mark.parametrize("text, code, error, words", [
    (PERM_TEXT, 1, ncu.CountersNotPermitted, ("ERR_NVGPUCTRPERM", "root", "NVreg_RestrictProfilingToAdminUsers=0")),
    (NO_KERNEL_TEXT, 1, ncu.NoKernelProfiled, ("no kernel was profiled", "'sgemm'", "skipping 3")),
    (NO_KERNEL_TEXT, 0, ncu.NoKernelProfiled, ("no kernel was profiled",)),
    (OTHER_FAILURE_TEXT, 1, ncu.NcuFailed, ("exit 1", 'Failed to profile "sgemm"', "Unknown Error on device 0")),
    (TARGET_FAILURE_TEXT, 2, ncu.ProfiledProgramFailed, ("profiled program failed", "wrong answer")),
    ("", 1, ncu.NcuFailed, ("exit 1", "printed nothing")),
])
@pytest.mark.parametrize("to_stderr", [False, True], ids=["stdout", "stderr"])
def test_capture_failures_are_one_clear_line(tmp_path, text, code, error, words, to_stderr):
    fake = fake_ncu(tmp_path, text, code, stderr=to_stderr)
    with pytest.raises(error) as info:
        ncu.capture(request(), tmp_path / "r.ncu-rep", ncu=str(fake))
    msg = str(info.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg, msg
    assert isinstance(info.value, ncu.GpulabError)  # -> one line and exit 2 at the CLI


def test_exit_zero_without_a_report_is_a_failure(tmp_path):
    fake = fake_ncu(tmp_path, "==PROF== Disconnected from process 1\n", 0)
    with pytest.raises(ncu.NcuFailed, match="no report written"):
        ncu.capture(request(), tmp_path / "r.ncu-rep", ncu=str(fake))


def _scripted_ncu(tmp_path: Path) -> Path:
    """A fake that writes the --export file and prints what ncu prints around the program's output."""
    script = tmp_path / "ncu"
    script.write_text(textwrap.dedent("""\
        #!/bin/sh
        prev=""
        for a in "$@"; do
          if [ "$a" = "--import" ]; then echo "a capture never imports" >&2; exit 9; fi
          if [ "$prev" = "--export" ]; then echo report > "$a"; fi
          prev="$a"
        done
        echo "==PROF== Connected to process 1 (python3)"
        echo "the program's own line"
        echo "==PROF== Disconnected from process 1"
        """))
    script.chmod(0o755)
    return script


def test_capture_is_one_ncu_process_that_writes_the_report(tmp_path):
    fake = _scripted_ncu(tmp_path)
    cap = ncu.capture(request(), tmp_path / "out" / "r.ncu-rep", ncu=str(fake))
    assert cap.report == tmp_path / "out" / "r.ncu-rep" and cap.report.read_text() == "report\n"
    assert "Disconnected" in cap.capture_output and "the program's own line" in cap.capture_output


def test_a_capture_replaces_an_old_report(tmp_path):
    """A report left from an earlier capture must not pass for this one's when ncu writes none."""
    old = tmp_path / "r.ncu-rep"
    old.write_text("from before")
    fake = fake_ncu(tmp_path, "==PROF== Disconnected from process 1\n", 0)
    with pytest.raises(ncu.NcuFailed, match="no report written"):
        ncu.capture(request(), old, ncu=str(fake))
    assert not old.exists()


def test_capture_timeout_is_reported(tmp_path):
    script = tmp_path / "ncu"
    script.write_text("#!/bin/sh\nsleep 30\n")
    script.chmod(0o755)
    with pytest.raises(ncu.NcuFailed, match="did not finish within 1 s"):
        ncu.capture(request(), tmp_path / "r.ncu-rep", ncu=str(script), timeout=1)


def test_report_path_must_be_ncu_rep(tmp_path):
    with pytest.raises(ValueError):
        ncu.capture(request(), tmp_path / "r.csv", ncu="ncu")


def test_ncu_version(tmp_path):
    fake = fake_ncu(tmp_path, "NVIDIA (R) Nsight Compute Command Line Profiler\nCopyright (c) 2018-2025 NVIDIA "
                    "Corporation\nVersion 2025.3.1.0 (build 36398880) (public-release)\n", 0)
    assert ncu.ncu_version(str(fake)) == "2025.3.1.0"
    assert ncu.ncu_version(str(tmp_path / "missing")) == ""


def test_a_library_kernels_resources_come_from_its_counters():
    """What the compile says of a variant, said of cuBLAS BF16's kernel at 512^3 (recorded on the H200):
    registers, launch and the occupancy ncu computed, in the shape gpulab.run.ncu_child reports them."""
    first, *_ = ncu.range_launches(ncu.parse_csv(_fixture("gemm_bf16_cublas_512_raw.csv").read_text()))
    facts = library_facts(first)
    assert first.kernel.startswith("nvjet_sm90")
    assert facts["resources"]["reg_per_thread"] == 168 and facts["launch"]["block"] == [384, 1, 1]
    assert facts["launch"]["smem_dynamic_bytes"] > 200_000
    occ = facts["occupancy"]
    assert occ["blocks_per_sm"] == 1 and occ["warps_per_block"] == 12 and occ["theoretical_occupancy_pct"] == 18.75
    assert "shared memory" in occ["occupancy_limiter"]
