"""The Python API (`import gpulab`): light to import, records out, the same errors as the CLI."""

import subprocess
import sys
from pathlib import Path

import pytest

import gpulab
from gpulab import api
from gpulab.errors import GpulabError, NoGpuError
from gpulab.jobs import bench as bench_job
from gpulab.run.lab import plan

ROOT = Path(__file__).resolve().parent.parent


def test_import_gpulab_stays_light():
    code = "import sys, gpulab; gpulab.predict; print(sorted(m for m in ('cupy', 'numpy', 'cuda') if m in sys.modules))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "cupy" not in r.stdout and "cuda" not in r.stdout, r.stdout + r.stderr


def test_the_api_is_reachable_from_the_package():
    assert gpulab.bench is api.bench and gpulab.predict is api.predict and gpulab.profile is api.profile
    assert gpulab.ceilings is api.ceilings and gpulab.tune is api.tune and gpulab.best is api.best


def test_the_package_lends_every_name_the_api_exports():
    """gpulab's lazy names and gpulab.api's __all__ are two lists of one set (the package cannot import
    the API to read it without losing its light import): model_error and tune_replay were in one only.
    `experiments` is the registry package's name at the top."""
    assert set(gpulab._API) == set(api.__all__) - {"experiments"}
    assert set(gpulab.__all__) == {*gpulab._API, "__version__"}  # from gpulab import * gave sys, types, version
    assert all(getattr(gpulab, name) is getattr(api, name) for name in gpulab._API)


def test_api_names_stay_functions_after_their_jobs_are_imported():
    """Importing a job's module (gpulab.jobs.best) never replaces the API's name (gpulab.best) with
    it: gpulab.best() works however many times it is called, whatever was imported before."""
    import gpulab.jobs.best  # noqa: F401
    import gpulab.jobs.ceilings  # noqa: F401
    import gpulab.jobs.tune  # noqa: F401

    assert gpulab.best is api.best and gpulab.ceilings is api.ceilings and gpulab.tune is api.tune
    from gpulab import experiments  # the registry package is not shadowed by an API name

    assert hasattr(experiments, "all_experiments")


def test_run_stays_the_main_job_after_the_pipeline_package_is_imported():
    """gpulab.run is the API's main job and gpulab/run/ the pipeline's package: every import of the
    pipeline (any API call makes one) replaced the function with the package, so gpulab.run() worked
    only until then. The pipeline stays importable by its modules' names."""
    code = ("import gpulab\nfirst = gpulab.run\ngpulab.predict('sgemm', 'v1')\nimport gpulab.run.lab\n"
            "from gpulab.run.worker import LabWorker\nfrom gpulab.run import sweep\n"
            "from gpulab import api, experiments\n"
            "assert first is gpulab.run is api.run, gpulab.run\n"
            "assert hasattr(sweep, 'Cluster') and hasattr(experiments, 'all_experiments')\nprint('ok')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


def test_predict_returns_the_cli_numbers():
    p = gpulab.predict("sgemm", "v1", params={"TILE": 16}, shape="512x512x512")
    assert p.spec.params == {"TILE": 16} and p.summary["flops"] == 2 * 512 ** 3
    assert p.record()["variant"] == "v1" and p.record()["gmem_load_requests"] == p.summary["gmem_load_requests"]
    assert [r["name"] for r in p.instructions] == [i.name for i in p.model.instructions]
    with pytest.raises(GpulabError, match="give it once"):
        gpulab.predict("sgemm", "v1:TILE=16", params={"TILE": 32})


def test_records_are_dicts_with_to_pandas():
    rows = gpulab.variants("coalesce")
    assert isinstance(rows, list) and rows[0]["experiment"] == "coalesce" and {r["variant"] for r in rows} == {
        "cols", "rows", "stride"}
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(GpulabError, match="pip install pandas"):
            rows.to_pandas()
    else:
        assert list(rows.to_pandas()["variant"]) == [r["variant"] for r in rows]


def test_compile_only_needs_no_gpu():
    rows = gpulab.compile_only(["coalesce"], arch="sm_90")
    assert {r["variant"] for r in rows} == {"cols", "rows", "stride"} and all(r["reg_per_thread"] > 0 for r in rows)


def test_bench_checks_its_input_before_asking_for_a_gpu(monkeypatch):
    monkeypatch.setenv("GPULAB_NO_GPU", "1")
    with pytest.raises(GpulabError, match="not accepted"):
        gpulab.bench("sgemm", params={"TILE": (7,)})
    if gpulab.card() is None:
        with pytest.raises(NoGpuError):
            gpulab.bench("sgemm", variants=["v1"], shapes=[64])


def test_bench_hands_each_record_to_the_progress_observer(monkeypatch):
    """The hook for writing rows as they come: every executed run reaches progress.finished before
    bench returns, in order, with progress.planned told the count first."""
    class FakeLab:
        arch = "sm_90"
        env = {"gpu": "Stand-in"}

        def __init__(self, options):
            self.device = type("D", (), {"slug": "fake"})()

        def preflight(self, specs):
            pass

        def execute(self, spec):
            return spec.base_record() | {"time_ms": 1.0, "gflops": 1.0}

    monkeypatch.setattr(bench_job, "open_lab", FakeLab)  # the isolated worker, as the bench opens it
    monkeypatch.setattr(bench_job, "ensure_ceilings", lambda *a, **k: None)
    seen, planned = [], []

    class Watch(gpulab.Progress):
        def planned(self, count):
            planned.append(count)

        def finished(self, record):
            seen.append(record)

    rows = gpulab.bench("sgemm", ["v0"], [64], options=gpulab.BenchOptions(save=False), progress=Watch())
    assert planned == [2] and [r["variant"] for r in seen] == ["v0", "cublas"] and len(rows) == 2
    assert rows.path is None and rows[0]["speedup_vs_baseline"] == 1.0


def test_verify_checks_each_variant_at_the_test_shapes_without_timing(monkeypatch):
    from gpulab.check import CheckResult

    verified = []

    class FakeLab:
        arch = "sm_90"

        def __init__(self, options):
            pass

        def verify(self, spec):
            verified.append(spec.label)
            return CheckResult(ok=True, max_rel_err=0.0, wrong_count=0)

    monkeypatch.setattr(api, "Lab", FakeLab)
    rows = gpulab.verify("coalesce", variants=["rows"])
    shapes = gpulab.experiment("coalesce").test_shapes
    assert len(rows) == len(verified) == 2 * len(shapes)  # rows sweeps VEC=1,4; no library rows
    assert all(r["correct"] for r in rows)


def test_the_example_script_runs(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "api_example.py")], capture_output=True, text=True,
                       timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "bank conflicts" in r.stdout and "registers" in r.stdout


def test_bench_takes_the_vendor_library_by_name():
    """cuBLAS runs beside every shape: naming it among the variants is no error, alone it benches only it;
    other commands that take one variant say what it is."""
    exp = api.experiment("sgemm")
    assert bench_job.variant_names(exp, ["v1", "cublas", "best"]) == ["v1"]
    assert bench_job.variant_names(exp, None) is None
    only = plan(exp, bench_job.variant_names(exp, ["cublas"]), {}, [exp.square(64)])
    assert [s.name for s in only] == ["cublas"]
    with pytest.raises(GpulabError, match="vendor library sgemm runs beside its variants"):
        exp.variant("cublas")


# -- the API's errors name its own arguments ---------------------------------------------------------
@pytest.mark.parametrize("call, words", [
    (lambda tmp: gpulab.tune("sgemm", "v14", budget=0), "budget must be at least 1 config; got 0"),
    (lambda tmp: gpulab.tune("sgemm", "v14", budget="ten"), "budget takes a number of configs (40) or a time"),
    (lambda tmp: gpulab.tune("sgemm", "v14", strategy="anneal"), "strategy must be one of grid, random, bayes"),
    (lambda tmp: gpulab.tune("sgemm", suite="llm", top=0), "top must be a whole number, at least 1; got 0"),
    (lambda tmp: gpulab.tune("sgemm", "v14", workers=0), "workers must be at least 1"),
    (lambda tmp: gpulab.ab("sgemm", "v1", "v9", noise="lots"), "noise lots: give a fraction or a percentage"),
    (lambda tmp: gpulab.ab("sgemm", "v1", "v9", noise="60%"), "noise 60%: must be above 0 and below 50%"),
    (lambda tmp: gpulab.ab("sgemm", "v1", "v9", params={"NOPE": 1}), "neither v1 nor v9 has a param NOPE"),
    (lambda tmp: gpulab.new("fine", tmp, like="fft"), "like 'fft': choose one of copy, sgemm, stencil"),
    (lambda tmp: gpulab.sanitize(["sgemm"], tools=["memcheck", "nope"]), "unknown tool nope: choose from memcheck"),
    (lambda tmp: gpulab.sanitize(["sgemm"], jobs=0), "jobs must be at least 1; got 0"),
    (lambda tmp: gpulab.predict("sgemm", "v1:TILE=16", params={"TILE": 8}), "TILE given both in 'v1:TILE=16'"),
    (lambda tmp: gpulab.compile_only(["sgemm", "coalesce"], kernels=[tmp / "mine.cu"]), "one experiment"),
])
def test_a_bad_argument_is_named_as_the_api_names_it_not_as_a_flag(call, words, tmp_path, monkeypatch):
    """An API caller who passed budget=0 read about a --budget they never typed: the messages shared
    with the command line name the argument bare (or the thing), never a flag."""
    monkeypatch.setenv("GPULAB_NO_GPU", "1")
    with pytest.raises(GpulabError) as err:
        call(tmp_path)
    message = str(err.value)
    assert words in message and "--" not in message and len(message.splitlines()) == 1, message
    assert not any(tmp_path.iterdir())  # nothing written (new's folder least of all)
