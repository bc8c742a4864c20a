"""Tests marked `gpu` run only where an NVIDIA GPU is usable; elsewhere they skip with the reason."""

from pathlib import Path

import pytest

# ncu's metric list for the H200's chip, kept in the repository so every test reads the same one.
GH100_METRICS = Path(__file__).parent / "fixtures" / "ncu" / "gh100_metrics.tsv"


@pytest.fixture(scope="session")
def ncu_metric_types() -> dict[str, str]:
    """Every metric ncu knows for gh100, by name: its type (Counter, Ratio, Throughput)."""
    rows = [line.split("\t") for line in GH100_METRICS.read_text().splitlines() if not line.startswith("#")]
    return {name: kind for name, kind in rows}


def pytest_collection_modifyitems(config, items):
    # Tests marked `exhaustive` (the slow cross-checks of a fast default) run only when asked for,
    # by a -m expression that names them: `pytest -m exhaustive`.
    if "exhaustive" not in (config.getoption("markexpr") or ""):
        slow = [item for item in items if "exhaustive" in item.keywords]
        if slow:
            config.hook.pytest_deselected(items=slow)
            items[:] = [item for item in items if "exhaustive" not in item.keywords]
    if not any("gpu" in item.keywords for item in items):
        return
    from gpulab.gpu.device import probe

    info, reason = probe()
    if info is not None:
        return
    skip = pytest.mark.skip(reason=f"needs an NVIDIA GPU: {reason}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report):
    """One line per skip reason in the summary (-ra): pytest folds skips by file and place, which
    without a GPU printed the same "needs an NVIDIA GPU: <reason>" on 103 lines. A skip is reported
    at this folder, with no line, before the terminal reporter folds it; the count says how many."""
    if report.skipped and isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        report.longrepr = (str(Path(__file__).parent), None, report.longrepr[2])


@pytest.fixture
def sms(monkeypatch):
    """Sets the SM count sgemm's persistent and wave-planned grids see (v12, v13: the one module that
    asks for it, gpulab.experiments.sgemm.splitk.launch): 132, the H200's, or what the test calls it
    with."""
    from gpulab.experiments.sgemm.splitk import launch

    def set_count(n):
        monkeypatch.setattr(launch, "sm_count", lambda: n)
    set_count(132)
    return set_count


@pytest.fixture
def tma_sms(monkeypatch):
    """Sets the card gemm_bf16's TMA rungs size their grids for (t2/t3's and kc's one wave, t4's
    persistent grid of clusters, and sgemm's v14, which runs t4): by default the H200, 132 SMs
    holding 66 clusters of two and 30 of four (gpulab.gpu.clusters, as without a GPU), whatever card
    runs the tests; or `n` SMs holding n // size clusters of each size, where the test calls it
    with n."""
    from gpulab.experiments.gemm_bf16 import tma_rungs
    from gpulab.gpu.clusters import resident_clusters_without_gpu
    from gpulab.gpu.device import SM_COUNT_WITHOUT_GPU

    def set_count(n):
        if n == SM_COUNT_WITHOUT_GPU:
            resident = resident_clusters_without_gpu
        else:
            def resident(size):
                return n // size
        monkeypatch.setattr(tma_rungs, "resident_clusters", resident)
        monkeypatch.setattr(tma_rungs, "blocks_at_once", lambda size: resident(size) * size if size > 1 else n)
    set_count(SM_COUNT_WITHOUT_GPU)
    return set_count
