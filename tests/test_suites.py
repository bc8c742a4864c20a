"""Shape suites (gpulab.experiments.suites): the built-in `llm` (Llama-3-8B and -70B linear layers)
holds the shapes the models' configurations give; a user's own suite is a small TOML file; a bad
one is refused in one line naming the file and the line, before anything runs; suites' rows carry
their columns; the command line's --suite."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import tomllib

import pytest

from gpulab import api
from gpulab.errors import GpulabError
from gpulab.experiments import get_experiment, suites
from gpulab.jobs.main import suite_experiments

GEMM_BF16 = get_experiment("gemm_bf16")
SGEMM = get_experiment("sgemm")
ENV = {**os.environ, "GPULAB_NO_GPU": "1"}


def gpulab(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "gpulab.cli", *args], capture_output=True, text=True,
                          env=ENV, cwd=cwd, timeout=300)


# -- the built-in suite --------------------------------------------------------------------------------
# The models' configurations (Meta's config.json of each, cited in the suite file).
LLAMA = {"Llama-3-8B": {"hidden": 4096, "intermediate": 14336, "heads": 32, "kv_heads": 8},
         "Llama-3-70B": {"hidden": 8192, "intermediate": 28672, "heads": 64, "kv_heads": 8}}


def _layers(model: str) -> dict[str, tuple[int, int]]:
    """Each linear layer's N x K from the configuration: the arithmetic the suite file states."""
    c = LLAMA[model]
    head = c["hidden"] // c["heads"]
    assert head == 128
    return {f"{model} qkv": (c["hidden"] + 2 * c["kv_heads"] * head, c["hidden"]),
            f"{model} o": (c["hidden"], c["hidden"]),
            f"{model} gate+up": (2 * c["intermediate"], c["hidden"]),
            f"{model} down": (c["hidden"], c["intermediate"])}


def test_the_llm_suite_is_the_llama_3_linear_layers_at_five_batch_sizes():
    suite = suites.load("llm")
    expected = _layers("Llama-3-8B") | _layers("Llama-3-70B")
    assert expected["Llama-3-8B qkv"] == (6144, 4096) and expected["Llama-3-70B qkv"] == (10240, 8192)
    for exp in (GEMM_BF16, SGEMM):
        found = suite.shapes(exp)
        assert len(found) == 40
        got = {}
        for s in found:
            assert s.columns["suite"] == "llm"
            got.setdefault(s.columns["layer"], []).append(s.shape.values)
        assert list(got) == list(expected)  # the suite's order: 8B's four layers, then 70B's
        for layer, (n, k) in expected.items():
            assert got[layer] == [(m, n, k) for m in (1, 16, 128, 1024, 8192)]
    assert suite.experiments == ("gemm_bf16", "sgemm") and len(suite.sources) >= 2
    assert any("huggingface.co/meta-llama/Meta-Llama-3-70B" in s for s in suite.sources)
    assert suites.builtin_names() == ["llm"] and suite.csv_name("sgemm") == "sgemm-llm.csv"


def test_the_suite_is_package_data():
    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert "suites/*.toml" in project["tool"]["setuptools"]["package-data"]["gpulab"]
    assert (suites.BUILTIN_DIR / "llm.toml").is_file()


def test_points_draw_each_layer_against_m():
    varied, points = suites.load("llm").points(GEMM_BF16)
    assert varied == "M" and len(points) == 40
    assert points[:5] == [("Llama-3-8B qkv", f"{m}x6144x4096", m) for m in (1, 16, 128, 1024, 8192)]


# -- a user's suite -----------------------------------------------------------------------------------
MINE = """# my decoder's projections
[suite]
name = "mine"
title = "two layers"
experiments = ["sgemm"]

[defaults]
M = [1, 7]

[[shape]]
layer = "proj"
N = 31
K = 1000

[[shape]]
layer = "wide"
model = "x"
M = 300
N = 4096
K = 1000
"""


def test_a_users_suite_is_a_small_file(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(MINE)
    suite = api.suite(path)
    found = suite.shapes(SGEMM)
    assert [s.shape.label for s in found] == ["1x31x1000", "7x31x1000", "300x4096x1000"]
    assert found[2].columns == {"suite": "mine", "layer": "wide", "model": "x"}
    assert api.suite(tmp_path / "mine").name == "mine"  # the .toml may be left off
    with pytest.raises(GpulabError, match="is for sgemm, not gemm_bf16"):
        suite.shapes(GEMM_BF16)


def test_a_folder_given_as_a_suite_is_said_to_be_one(tmp_path):
    with pytest.raises(GpulabError, match="is a folder; give a suite file in it"):  # was: "not found"
        api.suite(tmp_path)


def test_a_suite_without_a_name_is_named_by_its_file(tmp_path):
    path = tmp_path / "decode.toml"
    path.write_text("[[shape]]\nM = 1\nN = 64\nK = 64\n")
    suite = api.suite(path)
    assert suite.name == "decode" and suite.experiments == () and len(suite.shapes(GEMM_BF16)) == 1
    coalesce = get_experiment("coalesce")
    assert suite_experiments([GEMM_BF16, SGEMM, coalesce], suite, named=False) == [GEMM_BF16, SGEMM]


# A bad line in a suite that is otherwise MINE, and the line it is on.
BAD = [
    (MINE.replace('N = 31', 'N = = 31'), 12, "not valid TOML"),
    (MINE.replace('title = "two layers"', 'title = "two layers"\ncolour = "red"'), 5, "unknown key 'colour'"),
    (MINE.replace('N = 31', 'W = 31'), 12, "sgemm has no dimension W"),
    (MINE.replace('K = 1000\n\n[[shape]]', '\n[[shape]]'), 10, "gives no K"),
    (MINE.replace('N = 4096', 'N = 4194304'), 19, "larger than"),
    (MINE.replace('N = 31', 'N = 0'), 12, "must be at least 1"),
    # read as columns (text and numbers that are not whole are columns): said of the dimension, at its line
    (MINE.replace('N = 31', 'N = 1.5'), 12, "N: 1.5 is not a whole number"),
    (MINE.replace('N = 31', 'N = "a"'), 12, "N: 'a' is not a whole number"),
    (MINE.replace('N = 31', 'N = true'), 12, "N: True is not a whole number"),
    (MINE.replace('M = [1, 7]', 'M = []'), 8, "an empty list"),
    (MINE.replace('layer = "proj"', 'shape = "proj"'), 11, "cannot name a column"),
    (MINE.replace('name = "mine"', 'name = "My Suite"'), 3, "lower-case letters"),
    (MINE.replace('M = 300\nN = 4096', 'M = 7\nN = 31'), 15, "shape 7x31x1000 is listed twice (first at line 10)"),
    ("[suite]\nname = \"empty\"\n", 1, "names no shapes"),
    (MINE.replace('experiments = ["sgemm"]', 'experiments = ["sgemm", "sgem"]'), 5, "no experiment 'sgem'; gpulab has"),
    ("[sweet]\nM = 1\n", 1, "unknown table or key 'sweet'"),
]


@pytest.mark.parametrize("text, line, words", BAD)
def test_a_bad_suite_is_refused_in_one_line_with_its_file_and_line(text, line, words, tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(GpulabError) as caught:
        api.suite(path).shapes(SGEMM)
    message = str(caught.value)
    assert message.startswith(f"{path}, line {line}: ") and words in message and "\n" not in message, message


def test_an_unknown_suite_name_lists_the_built_ins(tmp_path):
    with pytest.raises(GpulabError, match="no built-in suite 'nosuch': the built-ins are llm"):
        api.suite("nosuch")
    with pytest.raises(GpulabError, match="not found"):
        api.suite(tmp_path / "missing.toml")


def test_shapes_and_a_suite_are_one_or_the_other():
    with pytest.raises(GpulabError, match="shapes or a suite, not both"):
        api.best("sgemm", shapes=[64], suite="llm")


@pytest.mark.parametrize("command", [["bench", "sgemm"], ["best", "sgemm"], ["run", "sgemm"], ["tune", "sgemm"]])
def test_the_command_line_refuses_a_bad_suite_before_anything_runs(command, tmp_path):
    (tmp_path / "bad.toml").write_text(BAD[2][0])
    r = gpulab(*command, "--suite", "bad.toml", cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "bad.toml, line 12: sgemm has no dimension W" in r.stderr and "Traceback" not in r.stderr + r.stdout
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "results").exists()


def test_gpulab_best_shows_the_suites_picks_without_a_gpu(tmp_path):
    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "picks.csv"
    r = gpulab("best", "sgemm", "--suite", "llm", "--gpu", "h200", "--results", str(root / "results"),
               "--csv", str(out), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Llama-3-70B gate+up" in r.stdout and "chosen by" in r.stdout
    from gpulab.records import read_csv

    rows = read_csv(out)
    assert len(rows) == 40 and all(row["variant"] and row["chosen_by"] for row in rows)


def test_gpulab_best_titles_a_suite_file_by_the_suites_name(tmp_path):
    (tmp_path / "layers.toml").write_text(MINE)  # named "mine" inside
    root = Path(__file__).resolve().parents[1]
    r = gpulab("best", "sgemm", "--suite", "layers.toml", "--gpu", "h200", "--results", str(root / "results"),
               cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "gpulab's best row on the mine suite" in r.stdout and "layers.toml suite" not in r.stdout


def test_a_suite_tune_with_no_gpu_and_no_workers_stops_before_it_announces_a_plan(tmp_path):
    r = gpulab("tune", "sgemm", "--suite", "llm", "--top", "1", cwd=tmp_path)
    assert r.returncode == 2 and "no NVIDIA GPU" in r.stderr and "Traceback" not in r.stderr
    assert "tuned at" not in r.stdout  # it printed "sgemm v13: tuned at 12 shape(s) ..." first


def test_tune_with_neither_a_variant_nor_a_suite_says_what_to_give(tmp_path):
    r = gpulab("tune", "sgemm", cwd=tmp_path)
    assert r.returncode == 2 and "name the variant to tune, or give a suite" in r.stderr
