"""Tests marked `gpu` run only where an NVIDIA GPU is usable; elsewhere they skip with the reason."""

import pytest


def pytest_collection_modifyitems(config, items):
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
