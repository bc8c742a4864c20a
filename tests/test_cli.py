"""The command line as a user meets it, in a subprocess: exit codes, one-line errors, no traceback,
and nothing written when a command fails."""

import csv
import os
import subprocess
import sys

import pytest

ENV = {**os.environ, "GPULAB_NO_GPU": "1"}


def gpulab(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "gpulab.cli", *args], capture_output=True, text=True,
                          env=ENV, cwd=cwd, timeout=300)


def test_an_unknown_option_is_a_usage_error_not_a_traceback(tmp_path):
    r = gpulab("bench", "sgemm", "--nosuch", cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert "No such option" in r.stderr and "Traceback" not in r.stderr + r.stdout


@pytest.mark.parametrize("args, words", [
    (["bench", "sgemm", "--size", "0"], "at least 1"),
    (["bench", "sgemm", "--size", "-4"], "at least 1"),
    (["bench", "sgemm", "--size", "abc"], "not a whole number"),
    (["bench", "sgemm", "--shape", "10x10"], "needs 3 numbers"),
    (["bench", "nosuch"], "unknown experiment"),
    (["bench", "sgemm", "--variant", "v99"], "no variant 'v99'"),
    (["bench", "sgemm", "--param", "TILE=7"], "not accepted"),
    (["bench", "sgemm", "--param", "TILE"], "NAME=V1,V2"),
    (["bench", "sgemm", "--param", "NOPE=1"], "no chosen variant"),
    (["bench", "sgemm", "--size", "64"], "no NVIDIA GPU"),
    (["fidelity", "--rejudge"], "no fidelity table to rejudge"),
    (["run", "--arch", "sm_50"], "does not support sm_50; choose one of sm_75"),
    # params that would validate yet change what runs
    (["bench", "sgemm", "--param", "TILE=,"], "gives no value; write e.g. --param TILE=8,16"),
    (["tune", "sgemm", "v9", "--param", "TILE=8"], "has no param TILE; its params are: BM"),
    (["bench", "sgemm", "--param", "tile=16"], "upper case; write --param TILE=16"),
    (["bench", "sgemm", "--param", "TILE=8", "--param", "TILE=16"], "given twice; give its values once: --param TILE=8,16"),
])
def test_bad_input_is_one_line_exit_2(args, words, tmp_path):
    r = gpulab(*args, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert words in r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "results").exists()  # no partial CSV


def test_run_without_gpu_compiles_and_exits_0(tmp_path):
    r = gpulab("run", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Resources per thread and block" in r.stdout and "v1" in r.stdout
    assert "need an NVIDIA GPU" in r.stdout


def test_version_says_gpulab_and_its_nvrtc(tmp_path):
    from gpulab.version import __version__

    r = gpulab("--version", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"gpulab {__version__} (NVRTC ") and "Python" in r.stdout


def test_list_names_every_variant():
    from gpulab.experiments import all_experiments

    r = gpulab("list")
    assert r.returncode == 0
    for exp in all_experiments():
        for v in exp.variants:
            assert v.name in r.stdout


def test_run_without_gpu_for_a_t4_skips_what_needs_sm_80(tmp_path):
    """The Shared Memory Tiling wiki page ran on a T4 (sm_75): everything compiles for it except the cp.async rung, which is
    skipped with its reason instead of stopping the run."""
    r = gpulab("run", "--arch", "sm_75", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "needs sm_80" in r.stdout  # the note column, however the table wraps it
    assert "Traceback" not in r.stdout + r.stderr


def test_an_unwritable_kernel_cache_is_one_line(tmp_path):
    (tmp_path / "file").write_text("")
    r = subprocess.run([sys.executable, "-m", "gpulab.cli", "run"], capture_output=True, text=True, cwd=tmp_path,
                       env={**ENV, "GPULAB_CACHE": str(tmp_path / "file")}, timeout=300)
    assert r.returncode == 2 and "set GPULAB_CACHE" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args", [
    ["predict", "sgemm", "v1", "--size", "256,512"],
    ["predict", "sgemm", "v1", "--param", "TILE=8,16"],
])
def test_predict_errors_do_not_speak_of_profiling(args, tmp_path):
    r = gpulab(*args, cwd=tmp_path)
    assert r.returncode == 2 and "one " in r.stderr and "profil" not in r.stderr.lower(), r.stderr


def test_one_broken_kernel_is_marked_and_the_others_are_shown(monkeypatch, tmp_path, capsys):
    """A variant whose .cu does not compile: the resource table still lists every other variant,
    marks the broken one with NVRTC's error, and the command exits 1 naming it."""
    from gpulab import cli
    from gpulab.experiments import get_experiment

    broken = tmp_path / "broken.cu"
    broken.write_text('extern "C" __global__ void stencil(float* a) { a[0] = undefined_name; }\n')
    exp = get_experiment("stencil")
    real_source = type(exp).source
    victim = exp.variants[0].name
    monkeypatch.setattr(type(exp), "source", lambda self, v: broken if v.name == victim else real_source(self, v))
    monkeypatch.setenv("GPULAB_NO_GPU", "1")
    monkeypatch.setattr(sys, "argv", ["gpulab", "run", "--out-dir", str(tmp_path / "out")])
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    out, err = capsys.readouterr()
    assert exit_.value.code == 1 and "did not compile" in err and f"stencil {victim}" in err
    assert "Resources per thread and block" in out  # the table, printed before the error
    from gpulab.experiments import all_experiments
    from gpulab.records import read_csv

    rows = read_csv(tmp_path / "out" / "resources-sm_90.csv")
    assert {r["variant"] for r in rows} == {v.name for e in all_experiments() for v in e.variants}
    marked = [r for r in rows if str(r.get("skip_reason") or "").startswith("does not compile")]
    assert marked and all(r["experiment"] == "stencil" and r["variant"] == victim for r in marked)
    assert all("undefined_name" in r["skip_reason"] for r in marked)
    assert len(marked) < len([r for r in rows if r["experiment"] == "stencil"])


def test_run_without_gpu_writes_its_table_where_out_dir_says(tmp_path):
    r = gpulab("run", "--out-dir", "elsewhere", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "elsewhere" / "resources-sm_90.csv").exists() and not (tmp_path / "results").exists()
    (tmp_path / "a-file").write_text("")
    r = gpulab("run", "--out-dir", "a-file", cwd=tmp_path)
    assert r.returncode == 2 and "a-file" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_a_spilling_kernel_is_noted_in_the_resource_table(tmp_path, monkeypatch):
    """Compiled with a register limit it cannot live in, a kernel spills: the table says so."""
    from rich.console import Console

    from gpulab.gpu.compile import compile_kernel
    from gpulab.report.tables import bench_table, resources_table

    monkeypatch.setenv("GPULAB_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "spill.cu"
    src.write_text('extern "C" __global__ void k(float* a) {\n  float v[48];\n'
                   '  for (int i = 0; i < 48; ++i) v[i] = a[i * blockDim.x + threadIdx.x];\n'
                   '  float s = 0.f;\n  for (int i = 0; i < 48; ++i) s += v[i] * v[(i * 7) % 48];\n'
                   '  for (int i = 0; i < 48; ++i) a[i * blockDim.x + threadIdx.x] = s * v[i];\n}\n')
    compiled = compile_kernel(src, "k", extra_options=("--maxrregcount=16",))
    assert compiled.resources.spill_stores_bytes > 0  # the premise: ptxas reported spills
    record = {"experiment": "mine", "variant": "v1", "params": "", "shape": "1", **compiled.resources.as_record()}
    console = Console(width=400, record=True)
    console.print(resources_table([record], "resources"))
    console.print(bench_table([record | {"correct": True, "time_ms": 1.0, "gbps": 1.0}], "bench"))
    text = console.export_text()
    assert text.count(f"spills registers: {compiled.resources.spill_stores_bytes} B stored") == 2


def test_best_says_how_far_the_models_times_held_on_the_card(tmp_path):
    """Under its table, `gpulab best` gives the model's error on each suite's rows the card timed."""
    results = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "results")
    r = gpulab("best", "sgemm", "--size", "512", "--results", results, "--gpu", "h200", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("the model's times against sgemm-llm.csv"))
    assert "% off over " in line and "within 25% at " in line


def test_best_alone_on_a_cut_off_suite_file_says_which_and_fails(tmp_path):
    """`--alone` asked for the model alone on the card's suites; a suite file cut off mid-line is
    named on its line, the command exits 2 with one line, and no file is rewritten."""
    import shutil

    source = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "results", "h200")
    card = tmp_path / "results" / "h200"
    card.mkdir(parents=True)
    for name in os.listdir(source):
        if name == "tuned.json" or name == "ceilings.csv" or name.startswith("tune-sgemm") or name == "sgemm.csv":
            shutil.copy(os.path.join(source, name), card / name)
    with open(os.path.join(source, "sgemm-llm.csv"), "rb") as f:
        (card / "sgemm-llm.csv").write_bytes(f.read()[:5000])
    before = {p.name: p.read_bytes() for p in card.iterdir()}
    r = gpulab("best", "sgemm", "--shape", "64x64x64", "--alone", "--results", str(tmp_path / "results"),
               "--gpu", "h200", cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stdout + r.stderr
    assert "the model alone against sgemm-llm.csv: not read (" in " ".join(r.stdout.split())
    assert r.stderr.strip().splitlines()[-1].startswith("error: --alone could not read ")
    assert {p.name: p.read_bytes() for p in card.iterdir()} == before


def test_shapes_may_be_comma_separated_as_sizes_and_variants_are(tmp_path):
    """`--shape A,B` is two shapes, as `--size 512,1024` is two sizes; repeated --shape adds more;
    a bad one among them is the usual one-line error."""
    results = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "results")
    r = gpulab("best", "sgemm", "--shape", "7x4096x4096,2048x31x4096", "--shape", "300x11008x4096",
               "--results", results, "--gpu", "h200", "--csv", "picks.csv", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    with open(tmp_path / "picks.csv", newline="") as f:
        assert [row["shape"] for row in csv.DictReader(f)] == ["7x4096x4096", "2048x31x4096", "300x11008x4096"]
    bad = gpulab("best", "sgemm", "--shape", "7x4096x4096,10x10", "--results", results, "--gpu", "h200", cwd=tmp_path)
    assert bad.returncode != 0 and "needs 3 numbers" in bad.stderr and "Traceback" not in bad.stderr + bad.stdout


def test_best_ranking_prints_what_the_model_weighed_at_each_shape(tmp_path):
    results = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "results")
    r = gpulab("best", "sgemm", "--shape", "4096x64x4096,128x4096x1000", "--ranking", "--results", results,
               "--gpu", "h200", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    for label in ("4096x64x4096", "128x4096x1000"):
        assert f"sgemm {label}: what the model weighed" in r.stdout
    assert r.stdout.count(" pick ") == 2 and "never" in r.stdout


def test_python_dash_m_gpulab_is_the_gpulab_command(tmp_path):
    """Where the environment's scripts folder is not on PATH, new users try `python -m gpulab`."""
    r = subprocess.run([sys.executable, "-m", "gpulab", "predict", "sgemm", "v1", "--shape", "4x0x4"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300, env={**os.environ, "GPULAB_NO_GPU": "1"})
    assert r.returncode == 2 and r.stderr.strip() == "error: 4x0x4: N 0 must be at least 1", r.stderr


@pytest.mark.parametrize("command", ["bench", "predict", "tune"])
def test_each_commands_help_names_the_problem_option_every_command_takes(command, tmp_path):
    r = gpulab(command, "--help", cwd=tmp_path)
    assert r.returncode == 0 and "Also takes --problem FILE.py" in r.stdout, r.stdout[-400:]
