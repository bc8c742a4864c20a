import shutil
from pathlib import Path

import pytest

from gpulab import records
from gpulab.gpu import ncu

ROOT = Path(__file__).resolve().parents[2]


def pytest_collection_modifyitems(config, items):
    # Everything under tests/gpu/ needs the GPU, whether or not a test remembered the marker.
    for item in items:
        if "/tests/gpu/" in str(item.fspath):
            item.add_marker(pytest.mark.gpu)


@pytest.fixture(scope="session")
def lab():
    from gpulab.run.lab import Lab, LabOptions

    return Lab(LabOptions(seed=1234))


@pytest.fixture
def results_root(tmp_path, monkeypatch):
    """A copy of the repository's results/ under tmp_path, made the default results root
    (gpulab.records.RESULTS_ROOT) for this test: a bench, tune or sanitize called in this process
    reads what the card recorded (ceilings, tuned.json, the sanitizer gate's verdicts) as it would
    from the clone, and writes its rows, ceilings and verdicts into the copy, never into results/
    (what gpulab commands wrote on a card, nothing else). bench has no --results: a CLI child
    that benches runs with cwd=tmp_path instead."""
    root = tmp_path / "results"
    shutil.copytree(ROOT / "results", root)
    monkeypatch.setattr(records, "RESULTS_ROOT", root)
    return root


@pytest.fixture(scope="session")
def ncu_path():
    """Nsight Compute's path, or the test skips saying where it was looked for."""
    try:
        return ncu.find_ncu()
    except ncu.NcuNotFound as exc:
        pytest.skip(str(exc))
