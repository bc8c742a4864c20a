import pytest

from gpulab.gpu import ncu


def pytest_collection_modifyitems(config, items):
    # Everything under tests/gpu/ needs the GPU, whether or not a test remembered the marker.
    for item in items:
        if "/tests/gpu/" in str(item.fspath):
            item.add_marker(pytest.mark.gpu)


@pytest.fixture(scope="session")
def lab():
    from gpulab.run.lab import Lab, LabOptions

    return Lab(LabOptions(seed=1234))


@pytest.fixture(scope="session")
def ncu_path():
    """Nsight Compute's path, or the test skips saying where it was looked for."""
    try:
        return ncu.find_ncu()
    except ncu.NcuNotFound as exc:
        pytest.skip(str(exc))
