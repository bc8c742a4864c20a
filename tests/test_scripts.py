"""The Python tools of scripts/ that no other test covers (scripts/README.md, column "test"):
precompile.py, with_nvrtc.py, probe_vendor_kernels.py and probe_cluster_sanitizer.py. What runs
without a GPU runs for real here: precompile compiles a small config set into a temporary compile
cache, with_nvrtc preloads the installed libnvrtc and runs a script that compiles with it, the
vendor probe parses a real Nsight Compute capture played back by a stand-in ncu, the cluster probe
compiles its kernels and runs its table against a stand-in compute-sanitizer. Bad input is one line
and a non-zero exit. What only a GPU can do (the probes' kernels) is marked `gpu`."""

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from gpulab.errors import CompileError
from gpulab.experiments import get_experiment
from gpulab.gpu.compile import compile_kernel, nvrtc_version
from gpulab.records import read_csv

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"
sys.path.insert(0, str(SCRIPTS))
import precompile  # noqa: E402  (scripts, imported for their functions)
import probe_cluster_sanitizer  # noqa: E402
import probe_vendor_kernels  # noqa: E402
import sass_digest  # noqa: E402

CUBLAS_CAPTURE = ROOT / "tests" / "fixtures" / "ncu" / "sgemm_cublas_512_raw.csv"


def script(name: str, *args: str, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPTS / name), *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, cwd=cwd, timeout=300)


def one_line_error(r: subprocess.CompletedProcess, *words: str, code: int | None = None) -> None:
    assert r.returncode != 0 and (code is None or r.returncode == code), (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    for word in words:
        assert word in r.stderr, r.stderr


def executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


# -- precompile.py ------------------------------------------------------------------------------
def test_precompile_compiles_every_config_the_limits_allow_into_the_cache_the_lab_reads(tmp_path, monkeypatch):
    """sgemm v4 over BM = 64, 128, 256: 256 is ruled out by its float4 split (no compile), the other
    two are compiled into GPULAB_CACHE, where the lab's own compile of the same config then finds
    them (no new cubin)."""
    exp = get_experiment("sgemm")
    v4 = exp.variant("v4")
    r = script("precompile.py", "sgemm", "v4", "-p", "BM=64,128,256", "--jobs", "2", env={"GPULAB_CACHE": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    allowed = [p for p in v4.param_grid({"BM": (64, 128)})]
    assert sorted(line.rsplit(" ", 1)[0] for line in lines[:-1]) == sorted(
        f"{v4.params_label(p)} spill bytes" for p in allowed)
    assert lines[-1].startswith(f"2 of 2 configs compiled into {tmp_path / 'cubin'}; 1 ruled out by the variant's "
                                "limits (e.g. the 256x8 A tile"), lines[-1]
    stem = Path(v4.file).stem
    cubins = sorted((tmp_path / "cubin").glob(f"{stem}-*.cubin"))
    assert len(cubins) == 2
    monkeypatch.setenv("GPULAB_CACHE", str(tmp_path))
    for params in allowed:
        assert sass_digest.compile_config(exp, v4, params).cubin_path in cubins
    assert sorted((tmp_path / "cubin").glob(f"{stem}-*.cubin")) == cubins


@pytest.mark.parametrize("args, words", [
    (["sgemm", "v1", "-p", "FOO=7"], "has no param FOO"),
    (["sgemm", "v1", "-p", "TILE"], "must look like NAME=V1,V2"),
    (["sgemm", "v1", "-p", "tile=8"], "param names are upper case"),
    (["sgemm", "v1", "-p", "TILE=7"], "TILE=7 is not accepted"),
    (["sgemm", "nope"], "has no variant 'nope'"),
    (["nope", "v1"], "unknown experiment 'nope'"),
    (["sgemm", "v1", "--jobs", "0"], "--jobs must be at least 1"),
])
def test_precompile_refuses_bad_input_in_one_line_and_compiles_nothing(args, words, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GPULAB_CACHE", str(tmp_path))
    assert precompile.main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and words in err and len(err.strip().splitlines()) == 1, err
    assert not list(tmp_path.rglob("*.cubin"))


def test_a_config_that_does_not_compile_is_named_with_the_compilers_first_line(monkeypatch):
    def fail(exp, variant, params):
        raise CompileError("v1_smem_tiling.cu:3: error: expected a ';'\nmore of the log")

    monkeypatch.setattr(precompile, "compile_config", fail)
    assert precompile.one(("sgemm", "v1", {"TILE": 16})) == ("TILE=16", None, "v1_smem_tiling.cu:3: error: expected a ';'")


# -- with_nvrtc.py ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def nvrtc_dir() -> Path:
    """The folder of the installed libnvrtc.so.13 (the nvidia-cuda-nvrtc wheel's nvidia/cu13/lib)."""
    try:
        from cuda.pathfinder import load_nvidia_dynamic_lib

        lib = Path(load_nvidia_dynamic_lib("nvrtc").abs_path)
    except Exception as exc:  # no wheel: NVRTC found elsewhere, or not at all
        pytest.skip(f"no libnvrtc found by cuda-pathfinder: {exc}")
    if lib.name != "libnvrtc.so.13":
        pytest.skip(f"the installed NVRTC is {lib.name}, not the libnvrtc.so.13 with_nvrtc.py loads")
    return lib.parent


def test_with_nvrtc_preloads_the_library_and_runs_the_script_as_main(nvrtc_dir, tmp_path):
    """The script runs as __main__ with its own arguments, compiles a kernel with the preloaded NVRTC
    (the one mapped into the process), and its exit code is the command's."""
    (tmp_path / "k.cu").write_text('extern "C" __global__ void k(float* x) { x[threadIdx.x] = 2.0f * x[threadIdx.x]; }\n')
    user = tmp_path / "user.py"
    user.write_text(
        "import os, sys\n"
        "from pathlib import Path\n"
        "from gpulab.gpu.compile import compile_kernel\n"
        "print('ran as', __name__, 'with', sys.argv[1:])\n"
        f"lib = os.path.realpath({str(nvrtc_dir / 'libnvrtc.so.13')!r})\n"
        "print('mapped:', lib in open('/proc/self/maps').read())\n"
        "c = compile_kernel(Path(sys.argv[1]), 'k', {}, 'sm_90')\n"
        "print('compiled:', c.cubin_path.exists(), c.resources.registers > 0)\n"
        "sys.exit(3)\n")
    r = script("with_nvrtc.py", str(nvrtc_dir), str(user), str(tmp_path / "k.cu"), env={"GPULAB_CACHE": str(tmp_path)})
    assert r.returncode == 3, r.stdout + r.stderr
    assert r.stdout.splitlines() == [f"NVRTC {nvrtc_version()} from {nvrtc_dir}",
                                     f"ran as __main__ with ['{tmp_path / 'k.cu'}']", "mapped: True",
                                     "compiled: True True"]


@pytest.mark.parametrize("args, words", [
    ([], "usage: python scripts/with_nvrtc.py LIBDIR SCRIPT"),
    (["/nonexistent/lib", "x.py"], "no libnvrtc.so.13 in /nonexistent/lib"),
])
def test_with_nvrtc_refuses_bad_input_in_one_line(args, words):
    one_line_error(script("with_nvrtc.py", *args), words)


def test_with_nvrtc_refuses_a_missing_script_before_loading_anything(nvrtc_dir, tmp_path):
    r = script("with_nvrtc.py", str(nvrtc_dir), str(tmp_path / "missing.py"))
    one_line_error(r, "no script", "missing.py")
    assert "NVRTC" not in r.stdout


# -- probe_vendor_kernels.py --------------------------------------------------------------------
@pytest.fixture
def fake_ncu(tmp_path):
    """A stand-in ncu that logs its arguments and prints a real capture of cuBLAS's SGEMM at 512^3
    (ncu --csv --page raw, H200): the call's two kernels (a split-K GEMM and its reduction), a units
    row, five of the probe's metrics not among those captured."""
    log = tmp_path / "ncu-args.txt"
    ncu = executable(tmp_path / "ncu", f'#!/bin/sh\nprintf "%s\\n" "$@" >> {log}\ncat {CUBLAS_CAPTURE}\n')
    return ncu, log


def capture_rows() -> list[dict]:
    import csv

    rows = list(csv.DictReader(CUBLAS_CAPTURE.open()))
    return [r for r in rows if r["ID"].strip().isdigit()]


def test_the_vendor_probe_reads_a_capture_kernel_by_kernel(fake_ncu):
    ncu, log = fake_ncu
    r = script("probe_vendor_kernels.py", "sgemm", "512x512x512", "--run", "v1:TILE=16",
               "--metric", "lts__t_sector_hit_rate.pct", env={"GPULAB_NCU": str(ncu)})
    assert r.returncode == 0, r.stderr
    records = [json.loads(line) for line in r.stdout.splitlines()]
    captured = capture_rows()
    assert len(records) == 2 * len(captured)  # the vendor call, then the variant: the same capture played back
    assert [rec["run"] for rec in records] == ["vendor"] * 2 + ["v1:TILE=16"] * 2
    for rec, row in zip(records, captured * 2):
        assert rec["kernel"] == row["Kernel Name"][:110] and rec["regs"] == int(row["launch__registers_per_thread"])
        assert rec["us"] == round(float(row["gpu__time_duration.sum"].replace(",", "")) / 1e3, 1)
        assert rec["lts__t_sector_hit_rate.pct"] == float(row["lts__t_sector_hit_rate.pct"])
        assert rec["ffma_thread"] is None and rec["lds_inst"] is None  # not in this capture: None, no crash
        assert len(rec["top_stalls"].split()) == 4
    argv = log.read_text().splitlines()
    assert argv.count("--csv") == 2 and argv.count("--child") == 2
    metrics = argv[argv.index("--metrics") + 1].split(",")
    assert set(probe_vendor_kernels.METRICS) | {"lts__t_sector_hit_rate.pct"} == set(metrics)
    # the variant's run captures one launch of its own kernel, after the lab's warm-up launches
    assert argv[-3:] == ["sgemm", "512x512x512", "v1:TILE=16"] and "--launch-count" in argv


def test_the_vendor_probe_keeps_one_row_per_kernel_in_its_csv(fake_ncu, tmp_path, monkeypatch, capsys):
    """--csv upserts one row per (experiment, shape, run, kernel): the call's two kernels (cuBLAS's
    split-K GEMM and its reduction) two rows, a second probe of the same shape replaces them; a
    damaged CSV is refused and left as it was. The card's columns need a GPU (the lab's
    environment), stood in for here."""
    ncu, _ = fake_ncu
    monkeypatch.setenv("GPULAB_NCU", str(ncu))
    card = {"gpu": "NVIDIA H200", "driver": "580.159.04"}
    monkeypatch.setattr(probe_vendor_kernels, "_card_environment", lambda: card)
    out = tmp_path / "vendor.csv"
    monkeypatch.setattr(sys, "argv", ["probe_vendor_kernels.py", "sgemm", "512x512x512", "--csv", str(out)])
    probe_vendor_kernels.main()
    card["driver"] = "580.200.00"  # the same probe again, later: its rows replace the first's
    probe_vendor_kernels.main()
    rows = read_csv(out)
    captured = capture_rows()
    assert [r["kernel"] for r in rows] == [c["Kernel Name"][:110] for c in captured]
    assert len({r["kernel"] for r in rows}) == 2 and all(r["run"] == "vendor" for r in rows)
    assert [r["us"] for r in rows] == [round(float(c["gpu__time_duration.sum"].replace(",", "")) / 1e3, 1) for c in captured]
    assert {r["driver"] for r in rows} == {"580.200.00"}
    capsys.readouterr()
    damaged = out.read_text()[:-20]
    out.write_text(damaged)
    with pytest.raises(SystemExit) as stop:
        probe_vendor_kernels.main()
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.startswith("error: ") and str(out) in err and len(err.strip().splitlines()) == 1
    assert out.read_text() == damaged


@pytest.mark.parametrize("args, words", [
    (["sgemm", "512x0x512"], "must be at least 1"),
    (["sgemm", "512x512"], "needs 3 numbers"),
    (["nope", "512"], "unknown experiment 'nope'"),
    (["sgemm", "512x512x512", "--run", "v99"], "has no variant 'v99'"),
])
def test_the_vendor_probe_refuses_bad_input_before_ncu_starts(args, words, fake_ncu):
    ncu, log = fake_ncu
    one_line_error(script("probe_vendor_kernels.py", *args, env={"GPULAB_NCU": str(ncu)}), "error: ", words, code=2)
    assert not log.exists()


def test_the_vendor_probe_without_ncu_says_where_it_looked(tmp_path):
    one_line_error(script("probe_vendor_kernels.py", "sgemm", "512x512x512", env={"GPULAB_NCU": str(tmp_path / "ncu")}),
                   "GPULAB_NCU=", "is not an executable file", code=2)


def test_the_vendor_probe_says_when_ncu_captured_nothing(tmp_path):
    ncu = executable(tmp_path / "ncu", "#!/bin/sh\necho '==ERROR== the application returned an error' >&2\nexit 1\n")
    r = script("probe_vendor_kernels.py", "sgemm", "512x512x512", env={"GPULAB_NCU": str(ncu)})
    assert r.returncode == 1 and "ncu gave no rows (rc 1)" in r.stderr and "the application returned an error" in r.stderr


@pytest.mark.gpu
@pytest.mark.parametrize("run", [[], ["v1:TILE=16"]])
def test_the_vendor_probes_child_runs_what_ncu_would_capture(run):
    """What ncu launches: the vendor call twice, or the variant through the lab without its check."""
    r = script("probe_vendor_kernels.py", "--child", "sgemm", "512x512x512", *run)
    assert r.returncode == 0, r.stderr


# -- probe_cluster_sanitizer.py -----------------------------------------------------------------
def test_what_each_cluster_case_must_write():
    words = 16 * 64  # the 16 x 64 BF16 matrix the TMA cases copy
    assert probe_cluster_sanitizer.expected(0) == [1, 1, 1, 1]
    assert probe_cluster_sanitizer.expected(3) == [2, 1, 2, 1]  # each block its peer's rank + 1
    assert probe_cluster_sanitizer.expected(5) == [words * (words - 1) // 2] * 4 == [523776] * 4


@pytest.mark.parametrize("text, line", [
    ("========= COMPUTE-SANITIZER\ncase 2 (x): ok [1, 1, 1, 1]\n========= ERROR SUMMARY: 0 errors\n",
     "========= ERROR SUMMARY: 0 errors"),
    ("========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\ntrailing\n",
     "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"),
    ("========= Invalid __global__ read\ncudaErrorIllegalAddress: an illegal memory access was encountered\nTraceback\n",
     "cudaErrorIllegalAddress: an illegal memory access was encountered"),
    ("case 4 (TMA copy into its own block): ok [523776]\n\n", "case 4 (TMA copy into its own block): ok [523776]"),
    ("", "(no output)"),
    ("x" * 200, "x" * 110),
])
def test_the_verdict_is_the_tools_summary_line(text, line):
    assert probe_cluster_sanitizer.verdict(text) == line


@pytest.mark.parametrize("case", sorted(probe_cluster_sanitizer.CASES))
def test_every_cluster_case_compiles_for_sm_90a(case, tmp_path, monkeypatch):
    monkeypatch.setenv("GPULAB_CACHE", str(tmp_path))
    compiled = compile_kernel(probe_cluster_sanitizer.SOURCE, "probe", {"CASE": case}, "sm_90a")
    assert compiled.arch == "sm_90a" and compiled.resources.registers > 0


def test_the_cluster_table_runs_each_case_under_each_tool(tmp_path, monkeypatch, capsys):
    """Against a stand-in compute-sanitizer (its summary per tool; one case, the tools only: the
    kernels themselves need a Hopper GPU): one line per case and tool with the exit code and verdict,
    the child run as the tool's target with host API errors left out; a tool that hangs is cut off."""
    log = tmp_path / "args.txt"
    tool = executable(tmp_path / "compute-sanitizer", f"""#!/bin/sh
printf "%s\\n" "$@" >> {log}
case "$2" in
  racecheck) echo "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)"; exit 1;;
  synccheck) exec sleep 30;;
  *) echo "========= ERROR SUMMARY: 0 errors";;
esac
""")
    monkeypatch.setenv("GPULAB_SANITIZER", str(tool))
    monkeypatch.setattr(probe_cluster_sanitizer, "CASES", {5: "multicast TMA copy"})
    monkeypatch.setattr(probe_cluster_sanitizer, "TOOLS", ("memcheck", "racecheck", "synccheck"))
    assert probe_cluster_sanitizer.run_all(timeout=2) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["case", "tool", "exit", "verdict"]
    assert all(line.startswith("5 multicast TMA copy ") for line in lines[1:])
    assert [line[41:].split(None, 2) for line in lines[1:]] == [
        ["memcheck", "0", "========= ERROR SUMMARY: 0 errors"],
        ["racecheck", "1", "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)"],
        ["synccheck", "-1", "timed out after 2 s"]]
    argv = log.read_text().splitlines()
    assert argv[:4] == ["--tool", "memcheck", "--report-api-errors", "no"]
    assert argv[4:8] == [sys.executable, probe_cluster_sanitizer.__file__, "--case", "5"]


def test_the_t4_table_runs_each_case_alone_and_under_racecheck_on_t4s_launches_only(tmp_path, monkeypatch, capsys):
    """scripts/probe_cluster_sanitizer.py --set t4 against a stand-in compute-sanitizer: one line per
    case and tool with the tool's error count and first report, the tool filtered to gemm_bf16's
    launches as gpulab sanitize runs it. (The child itself needs a Hopper GPU: here it stops at once.)"""
    log = tmp_path / "args.txt"
    tool = executable(tmp_path / "compute-sanitizer", f"""#!/bin/sh
printf "%s\\n" "$@" >> {log}
while [ "$1" != "--log-file" ]; do shift; done
printf "========= Internal Sanitizer Error: The Sanitizer failed to handle a hardware exception.\\n========= ERROR SUMMARY: 1 error\\n" > "$2"
exit 1
""")
    monkeypatch.setenv("GPULAB_SANITIZER", str(tool))
    monkeypatch.setattr(probe_cluster_sanitizer, "T4_CASES", {"memcpy": probe_cluster_sanitizer.T4_CASES["memcpy"]})
    assert probe_cluster_sanitizer.run_t4(timeout=60) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["t4", "case", "tool", "exit", "errors", "verdict"]
    assert lines[1].split()[:2] == ["memcpy", "none"]
    race = lines[2].split(None, 4)
    assert race[:4] == ["memcpy", "racecheck", "1", "1"] and race[4].endswith(
        "| Internal Sanitizer Error: The Sanitizer failed to handle a hardware exception.")
    argv = log.read_text().splitlines()
    # No --launch-count beside the filter: with it racecheck faulted on every cluster launch (H200, 2026-12-04)
    assert argv[:6] == ["--tool", "racecheck", "--kernel-name", "kernel_name=gemm_bf16", "--report-api-errors", "no"]
    assert argv[-4:] == [sys.executable, probe_cluster_sanitizer.__file__, "--t4", "memcpy"]
    assert lines[-1].startswith("cases: memcpy: 17x33x65, the staged layout built on the host")


@pytest.mark.parametrize("how", sorted({how for _, how, _ in probe_cluster_sanitizer.T4_CASES.values()}))
def test_every_t4_case_prepares_its_operands_with_a_stage_step(how):
    t4 = get_experiment("gemm_bf16").variant("t4")
    assert callable(probe_cluster_sanitizer.t4_stage(how, t4))


@pytest.mark.parametrize("args, words, code", [
    ([], "GPULAB_SANITIZER=", 2),
    (["--case", "9"], "invalid choice: 9", 2),
])
def test_the_cluster_probe_refuses_bad_input(args, words, code, tmp_path):
    r = script("probe_cluster_sanitizer.py", *args, env={"GPULAB_SANITIZER": str(tmp_path / "nothing")})
    assert r.returncode == code and words in r.stderr and "Traceback" not in r.stderr, r.stderr


@pytest.mark.gpu
@pytest.mark.parametrize("case", sorted(probe_cluster_sanitizer.CASES))
def test_every_cluster_case_writes_what_it_must_on_a_hopper_gpu(case):
    from gpulab.gpu.device import probe

    info, _ = probe()
    if info is None or info.arch != "sm_90":
        pytest.skip("the cases are sm_90a kernels in clusters: a Hopper GPU")
    r = script("probe_cluster_sanitizer.py", "--case", str(case))
    assert r.returncode == 0 and f"case {case} (" in r.stdout and ": ok " in r.stdout, r.stdout + r.stderr


# -- scripts/README.md's promise ----------------------------------------------------------------
def test_every_python_tool_is_in_the_readme_with_a_test_that_exercises_it():
    """Each Python tool in scripts/ has a row in scripts/README.md's table of tools whose test column
    names test files that exist, one of which names the tool (imports it or runs it by path)."""
    text = (SCRIPTS / "README.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    tested = {}
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        tests = [t.strip() for t in cells[-1].split(",") if t.strip().startswith("test_")]
        for name in re.findall(r"`([\w.]+\.py)`", cells[0]):
            tested[name] = tests
    tools = {p.name for p in SCRIPTS.glob("*.py")}
    assert tools <= set(tested), sorted(tools - set(tested))
    for tool, tests in tested.items():
        assert tests and all((ROOT / "tests" / test).exists() for test in tests), (tool, tests)
        # a row may share its tests among several tools: each is named by one of them at least
        assert any(Path(tool).stem in (ROOT / "tests" / test).read_text() for test in tests), (tool, tests)
