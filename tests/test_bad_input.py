"""Bad input, class by class (issue 42, section 3): each gets one line on stderr that says what to do,
the right exit code, and nothing lost or changed; input that is fine (a relative --kernel path) just
works. notebook/probes/probe_bad_input.py runs every class end to end and counts the outcomes."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import gpulab
from gpulab.errors import GpulabError
from gpulab.run.lab import RunSpec, compile_record

REPO = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "GPULAB_NO_GPU": "1"}

KERNEL = """/* gpulab variant
name:    mine
summary: naive, one thread per output
param:   TILE = 16 in 8, 16 | the block side
grid:    ceil_div(N, TILE), ceil_div(M, TILE)
block:   TILE, TILE
*/
extern "C" __global__ void sgemm(int M, int N, int K, const float* A, const float* B, float* C) {
    const int col = blockIdx.x * TILE + threadIdx.x, row = blockIdx.y * TILE + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
    C[(size_t)row * N + col] = acc;
}
"""


def gpulab_cli(*args, cwd, env=ENV, **kwargs):
    return subprocess.run([sys.executable, "-m", "gpulab.cli", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300, **kwargs)


def one_line(r, code: int = 2, *words: str) -> None:
    """A refusal: exit `code`, one line on stderr carrying `words`, no traceback."""
    assert r.returncode == code, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    for w in words:
        assert w in r.stderr, r.stderr


# -- a relative --kernel path ----------------------------------------------------------------------
def test_a_relative_kernel_path_compiles(tmp_path, monkeypatch):
    """`gpulab run sgemm --kernel mine.cu` in the file's folder (the README's form): the compile
    found the file under the experiment's own folder instead."""
    (tmp_path / "mine.cu").write_text(KERNEL)
    monkeypatch.chdir(tmp_path)
    exp = gpulab.experiment("sgemm", kernels=["mine.cu"])
    spec = RunSpec(exp, exp.variant("mine"), {"TILE": 8}, exp.shape(64, 64, 64))
    assert compile_record(spec, "sm_90")["reg_per_thread"] > 0


# -- README blocks that cannot be rewritten safely ---------------------------------------------------
@pytest.fixture
def pages(tmp_path):
    """A copy of the results, the README and its results pages: what `gpulab readme` reads and writes."""
    import shutil

    shutil.copytree(REPO / "results" / "h200", tmp_path / "results" / "h200",
                    ignore=shutil.ignore_patterns("*.png", "*.html"))
    shutil.copy(REPO / "README.md", tmp_path / "README.md")
    shutil.copytree(REPO / "docs" / "results", tmp_path / "docs" / "results")
    return tmp_path


def _moved_inside(text: str) -> str:
    """The ladder block moved inside the pivot block: the pivot's rewrite swallowed it."""
    start, end = "<!-- gpulab:h200-sgemm-ladder -->\n", "<!-- /gpulab:h200-sgemm-ladder -->\n"
    ladder = text[text.index(start):text.index(end) + len(end)]
    return text.replace(ladder, "").replace("<!-- gpulab:h200-sgemm -->\n", "<!-- gpulab:h200-sgemm -->\n" + ladder, 1)


OPEN, CLOSE, LADDER = "<!-- gpulab:h200-sgemm -->", "<!-- /gpulab:h200-sgemm -->", "<!-- gpulab:h200-sgemm-ladder -->"


@pytest.mark.parametrize("damage, words, at", [
    (_moved_inside, f"opens inside {OPEN}", lambda before, after: after.index(LADDER)),
    (lambda t: t.replace(CLOSE, "", 1), f"{OPEN} is never closed", lambda before, after: after.index(OPEN)),
    (lambda t: t.replace(OPEN + "\n", "", 1), "closes a block that is not open", lambda before, after: after.index(CLOSE)),
    (lambda t: t.replace(CLOSE, "<!-- /gpulab:h200-sgemm-ladder -->", 1), "closes a block that is not open",
     lambda before, after: before.index(CLOSE)),
    (lambda t: t.replace(OPEN + "\n", OPEN + " the table\n", 1), "must end its line",
     lambda before, after: after.index(OPEN)),
])
def test_readme_refuses_blocks_it_cannot_rewrite_and_writes_nothing(pages, damage, words, at):
    """A block opened inside another was destroyed by the outer one's rewrite, and an unclosed one
    skipped, both with exit 0 (issue 42): now the file, line and column of the marker, and no file
    written."""
    page = pages / "docs" / "results" / "sgemm.md"
    text = damage(original := page.read_text())
    page.write_text(text)
    before = {p: p.read_bytes() for p in pages.rglob("*.md")}
    r = gpulab_cli("readme", cwd=pages)
    offset = at(original, text)
    line, column = text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)
    one_line(r, 2, words, f"docs/results/sgemm.md:{line}:{column}: ")
    assert {p: p.read_bytes() for p in pages.rglob("*.md")} == before


# -- a kernel file's variant that no command could reach -------------------------------------------
@pytest.mark.parametrize("name, words", [("cublas", "the vendor library"), ("best", "gpulab's best row")])
def test_a_variant_named_like_the_library_or_the_best_row_is_refused(tmp_path, name, words):
    """`--variant cublas` and `--variant best` name the library and gpulab's best row, so a file's
    variant of that name was listed and never run (issue 42)."""
    (tmp_path / "mine.cu").write_text(KERNEL.replace("name:    mine", f"name:    {name}"))
    one_line(gpulab_cli("list", "sgemm", "--kernel", "mine.cu", cwd=tmp_path), 2, f"mine.cu:2: variant name '{name}'",
             words)
    with pytest.raises(GpulabError, match=f"variant name '{name}' is taken by {words}"):
        gpulab.experiment("sgemm", kernels=[tmp_path / "mine.cu"])


# -- a kernel's own text in a table ---------------------------------------------------------------
def test_a_kernel_summary_that_looks_like_markup_is_printed_as_written(tmp_path):
    """The terminal tables read rich markup: a summary with '[/]' in it ended `gpulab list` in a
    MarkupError traceback, and '[red]' would have coloured the row."""
    (tmp_path / "mine.cu").write_text(KERNEL.replace("naive, one thread per output", "naive [/] a [red]test"))
    r = gpulab_cli("list", "sgemm", "--kernel", "mine.cu", cwd=tmp_path)
    assert r.returncode == 0 and "Traceback" not in r.stdout + r.stderr, r.stderr
    assert "naive [/] a [red]test" in r.stdout


# -- an access model that raises -------------------------------------------------------------------
def test_an_access_model_that_raises_is_one_line_naming_its_file_and_line(tmp_path):
    """A user's model with a bug ended `gpulab predict` in a full traceback (issue 42)."""
    (tmp_path / "model.py").write_text("def mine(params, shape):\n    return 1 // 0\n")
    (tmp_path / "mine.cu").write_text(KERNEL.replace("*/", "access:  model.py:mine\n*/", 1))
    r = gpulab_cli("predict", "sgemm", "mine", "--kernel", "mine.cu", cwd=tmp_path)
    one_line(r, 2, f"{tmp_path / 'model.py'}:2: mine.cu: the access model mine() raised ZeroDivisionError")


def test_a_packages_access_model_that_raises_is_one_line_too(monkeypatch):
    import copy
    import dataclasses

    def broken(params, shape):
        return {}["missing"]

    exp = copy.copy(gpulab.experiment("coalesce"))
    exp.variants = tuple(dataclasses.replace(v, access=broken) if v.name == "rows" else v for v in exp.variants)
    monkeypatch.setattr(gpulab.api, "get_experiment", lambda name, kernels=(): exp)
    with pytest.raises(GpulabError, match=rf"test_bad_input.py:\d+: coalesce rows .*the access model raised KeyError"):
        gpulab.predict("coalesce", "rows")


# -- names that name nothing, or something twice ---------------------------------------------------
@pytest.mark.parametrize("args, words", [
    (["list", ""], "an experiment is named by text"),  # '' meant every experiment
    (["bench", "sgemm", "--variant", " , ,"], "--variant ' , ,' names nothing"),  # ... every variant
    (["fidelity", "--variant", ","], "--variant ',' names nothing"),
    (["sanitize", "--tool", " "], "--tool ' ' names nothing"),
    (["bench", "sgemm", "--size", ","], "--size ',' names nothing"),
    (["run", "coalesce", "coalesce"], "coalesce named twice"),  # its rows were written twice
    (["run", "--arch", ""], "unknown arch ''"),  # compiled for sm_90 without a word
])
def test_a_name_that_names_nothing_or_twice_is_refused(tmp_path, args, words):
    one_line(gpulab_cli(*args, cwd=tmp_path), 2, words)
    assert not any(tmp_path.iterdir())


def test_the_api_refuses_an_experiment_named_twice():
    for call in (lambda: gpulab.compile_only(["coalesce", "coalesce"]), lambda: gpulab.run(["stencil", "stencil"])):
        with pytest.raises(GpulabError, match="named twice: name each experiment once"):
            call()


# -- standard output closed ------------------------------------------------------------------------
def test_a_closed_stdout_is_one_line_on_stderr(tmp_path):
    """`gpulab list >&-`: an AttributeError's traceback at import (issue 42)."""
    r = gpulab_cli("list", cwd=tmp_path, preexec_fn=lambda: os.close(1))
    one_line(r, 2, "standard output is closed")


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path):
    """`gpulab list | head -1`: the reader closes the pipe; the command stops quietly, with click's
    exit code for it (1), no traceback and nothing on stderr."""
    p = subprocess.Popen([sys.executable, "-m", "gpulab.cli", "list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=ENV, cwd=tmp_path)
    p.stdout.close()  # before gpulab writes a byte
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 1 and err == "", err


# -- a scheduler's address -------------------------------------------------------------------------
def _closed_port() -> int:
    import socket

    with socket.socket() as s:  # a port the system just handed out, and nobody listens on now
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("address, words", [
    ("not a url", "scheduler 'not a url' is not a scheduler's address"),  # a ValueError's traceback
    ("tcp://host", "is not a scheduler's address"),
    ("tcp://host:99999", "port 99999"),
    ("udp://host:8786", "is not a scheduler's address"),
])
def test_a_scheduler_address_that_is_not_one_is_refused(tmp_path, address, words):
    one_line(gpulab_cli("bench", "sgemm", "--scheduler", address, cwd=tmp_path), 2, words, "tcp://host:8786")


def test_a_scheduler_address_where_nothing_listens_is_refused_at_once(tmp_path):
    """A closed port took Dask's 30 s connect timeout (issue 42); a refused connection is known at once."""
    import time

    start = time.monotonic()
    r = gpulab_cli("tune", "sgemm", "v1", "--scheduler", f"tcp://127.0.0.1:{_closed_port()}", cwd=tmp_path)
    one_line(r, 2, "no Dask scheduler answered at tcp://127.0.0.1:")
    assert time.monotonic() - start < 15


# -- first contact ---------------------------------------------------------------------------------
def test_the_no_gpu_message_does_not_ask_for_what_is_installed(tmp_path, monkeypatch):
    """`pip install 'gpulab[gpu]'` was the advice right after the user ran it (issue 42): with
    CuPy installed the message says the card or its driver is what is missing."""
    from gpulab.gpu import device

    r = gpulab_cli("bench", "sgemm", cwd=tmp_path)
    one_line(r, 2, "no NVIDIA GPU", "CuPy is installed")
    assert "gpulab[gpu]" not in r.stderr
    monkeypatch.setattr(device.importlib.util, "find_spec", lambda name: None)  # a machine without CuPy
    assert "pip install 'gpulab[gpu]'" in device.no_gpu_hint()


def test_help_names_values_in_words_and_shows_nothing_after_a_flag(tmp_path):
    """typer 0.2x printed Python's type names after each option (<bool> after a flag, <list[Path]>)."""
    import re

    from gpulab.cli import app
    from typer.main import get_command

    for args in ([], *([name] for name in get_command(app).commands)):
        r = gpulab_cli(*args, "--help", cwd=tmp_path, env={**ENV, "COLUMNS": "200"})
        assert r.returncode == 0, r.stderr
        assert not re.search(r"<(bool|str|int|float|path|Path|list\[\w+\])>", r.stdout), (args, r.stdout)
    r = gpulab_cli("bench", "--help", cwd=tmp_path, env={**ENV, "COLUMNS": "200"})
    assert re.search(r"--warm-l2\s+do not flush L2", r.stdout) and re.search(r"--seed\s+INTEGER", r.stdout), r.stdout


def test_skips_are_summed_up_one_line_per_reason(tmp_path):
    """Without a GPU the suite printed 103 SKIPPED lines, one per file and place, for one reason
    (issue 42): tests/conftest.py folds them into one line per reason, with the count."""
    import shutil

    shutil.copy(REPO / "tests" / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "fixtures" / "ncu").mkdir(parents=True)
    for name in ("a", "b"):
        (tmp_path / f"test_{name}.py").write_text(
            "import pytest\n\n\n@pytest.mark.gpu\ndef test_on_the_card():\n    pass\n\n\n"
            "@pytest.mark.gpu\n@pytest.mark.parametrize('n', [1, 2])\ndef test_more(n):\n    pass\n\n\n"
            "def test_here():\n    pytest.skip('root ignores file permissions')\n")
    r = subprocess.run([sys.executable, "-m", "pytest", "-ra", "-p", "no:cacheprovider", "-m", "gpu or not gpu",
                        str(tmp_path)], capture_output=True, text=True, cwd=tmp_path, timeout=300, env=ENV)
    skipped = [line for line in r.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(skipped) == 2 and " 8 skipped" in r.stdout, r.stdout
    assert any(line.startswith("SKIPPED [6] ") and line.endswith("needs an NVIDIA GPU: GPULAB_NO_GPU is set")
               for line in skipped), skipped
    assert any(line.startswith("SKIPPED [2] ") and "root ignores file permissions" in line for line in skipped)


# -- the Python API: values of the wrong kind are one GpulabError each, never a TypeError ---------
@pytest.mark.parametrize("call, words", [
    (lambda: gpulab.predict("sgemm", None), "a variant is named by text"),
    (lambda: gpulab.predict("sgemm", "v1", shape=(512, 512)), "needs 3 whole numbers"),
    (lambda: gpulab.predict("sgemm", "v1", shape=("a", "b", "c")), "needs 3 numbers"),
    (lambda: gpulab.predict("sgemm", "v1", params=16), "params must be a dict"),
    (lambda: gpulab.predict("sgemm", "v1", kernels=[None]), "kernels are paths of .cu files"),
    (lambda: gpulab.predict(None, "v1"), "an experiment is named by text"),
    (lambda: gpulab.bench("sgemm", shapes=[(512, 512)]), "needs 3 whole numbers"),
    (lambda: gpulab.bench("sgemm", variants=[5]), "variants are named by text"),
    (lambda: gpulab.bench("sgemm", shapes=512.5), "a shape is a number, text like"),
    (lambda: gpulab.verify("sgemm", params={"TILE": "big"}), "values must be whole numbers"),
    (lambda: gpulab.new(None), "an experiment is named by text"),
])
def test_the_api_refuses_values_of_the_wrong_kind_in_one_line(call, words):
    """Issue 42 found each of these ending in a TypeError or ValueError from deep inside."""
    with pytest.raises(GpulabError, match=words):
        call()


def test_an_exhaustive_test_runs_only_when_asked_for(tmp_path):
    """The slow cross-checks (test_predict's every config of every access model, about 4 minutes of
    each CI run before) are marked `exhaustive`: left out unless -m names them."""
    import shutil

    shutil.copy(REPO / "tests" / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "fixtures" / "ncu").mkdir(parents=True)
    (tmp_path / "test_x.py").write_text("import pytest\n\n\ndef test_quick():\n    pass\n\n\n"
                                        "@pytest.mark.exhaustive\ndef test_slow():\n    pass\n")

    def run(*args):
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, str(tmp_path)],
                              capture_output=True, text=True, cwd=tmp_path, timeout=300, env=ENV).stdout

    assert "1 passed, 1 deselected" in run()
    assert "1 passed, 1 deselected" in run("-m", "exhaustive")  # test_quick is the one left out now
    assert "2 passed" in run("-m", "exhaustive or not exhaustive")


# -- gpulab best --csv: picks join picks, never a bench's results ----------------------------------
def _best(tmp_path, shape: str, csv: Path):
    return gpulab_cli("best", "gemm_bf16", "--shape", shape, "--results", str(REPO / "results"), "--gpu", "h200",
                      "--csv", str(csv), cwd=tmp_path)


def test_best_csv_joins_the_picks_of_other_shapes(tmp_path):
    from gpulab.records import read_csv

    picks = tmp_path / "picks.csv"
    for shape in ("7x4096x4096", "1x5120x3000", "7x4096x4096"):
        r = _best(tmp_path, shape, picks)
        assert r.returncode == 0, r.stderr
    rows = read_csv(picks)
    assert sorted(r["shape"] for r in rows) == ["1x5120x3000", "7x4096x4096"]  # the second 7x4096x4096 replaced the first
    assert all(r["variant"] and r["chosen_by"] for r in rows)


@pytest.mark.parametrize("text, words", [
    (None, ("holds timed runs", "time_ms")),  # a bench's results file, which picks once replaced whole
    ("experiment,variant,params,shape,chosen_by\ngemm_bf16,t4,,1x2x3,x", ("cut off",)),
    ("a,b\n1,2\n", ("lacks the columns experiment, variant, params, shape, chosen_by",)),
    # a picks file that lost its params column: picks that no longer say what they run, not rewritten
    ("experiment,variant,shape,chosen_by\ngemm_bf16,t4,1x2x3,x\n", ("lacks the column params",)),
])
def test_best_csv_refuses_what_is_not_its_picks_and_leaves_it(tmp_path, text, words):
    target = tmp_path / "target.csv"
    if text is None:
        target.write_bytes((REPO / "results" / "h200" / "gemm_bf16.csv").read_bytes())
    else:
        target.write_text(text)
    before = target.read_bytes()
    one_line(_best(tmp_path, "7x4096x4096", target), 2, *words)
    assert target.read_bytes() == before


def test_best_from_a_results_folder_that_does_not_exist_is_refused(tmp_path):
    """`--results` names where the cards' results are: one that does not exist was read as empty, and
    the model chose from another card's runs without a word."""
    one_line(gpulab_cli("best", "sgemm", "--shape", "64x64x64", "--results", str(tmp_path / "nowhere"), cwd=tmp_path),
             2, "no results folder", "nowhere")


@pytest.mark.parametrize("call, words", [
    (lambda: gpulab.best("sgemm", 1024, results=3), "results is a folder of results/<gpu>/ folders"),
    (lambda: gpulab.best("sgemm", 1024, gpu=5), "gpu names a card's results folder"),
    (lambda: gpulab.predict("sgemm", "v1", gpu=5), "gpu names a card's results folder"),
    (lambda: gpulab.best("sgemm", 1024, results=REPO / "results" / "h200"), "is one card's folder"),
    (lambda: gpulab.best("sgemm", 1024, progress=print), "progress is a gpulab.Progress"),
    (lambda: gpulab.bench("sgemm", options={"save": False}), "options is a gpulab.BenchOptions"),
    (lambda: gpulab.compile_only(["coalesce"], arch=90), "unknown arch '90'"),
    (lambda: gpulab.variants(""), "an experiment is named by text"),  # gave every experiment's variants
])
def test_the_api_refuses_more_values_of_the_wrong_kind_in_one_line(call, words):
    """A new user's review (2026-12-05) found each ending in a TypeError or AttributeError, or (a
    card's folder as results=) read silently as a root of cards, its tune unread."""
    with pytest.raises(GpulabError, match=re.escape(words)):
        call()


def test_kernels_none_is_no_kernels():
    assert gpulab.experiment("sgemm", kernels=None).name == "sgemm"


def test_best_tells_progress_of_each_pick(monkeypatch):
    seen = []

    class Seen(gpulab.Progress):
        def finished(self, record):
            seen.append(record)

    rows = gpulab.best("sgemm", [512, 1024], results=REPO / "results", gpu="h200", progress=Seen())
    assert seen == list(rows) and all(r["variant"] for r in seen)


def test_numpy_integers_are_whole_numbers_as_pythons_are():
    """np.int64 from an array was refused: 'a shape is a number ... got np.int64(512)'."""
    np = pytest.importorskip("numpy")
    assert gpulab.predict("sgemm", "v1", shape=np.int64(512)).spec.shape.label == "512x512x512"
    pred = gpulab.predict("sgemm", "v1", shape=tuple(np.array([64, 128, 256])), params={"TILE": np.int64(16)})
    assert pred.spec.shape.label == "64x128x256" and pred.spec.params["TILE"] == 16
    assert type(pred.spec.params["TILE"]) is int
    with pytest.raises(GpulabError, match="values must be whole numbers"):
        gpulab.predict("sgemm", "v1", params={"TILE": np.float64(16)})
