"""How many thread-block clusters of a size the card runs at once, when each block holds a whole SM
(gemm_bf16's t4, one block per SM, a persistent grid of clusters).

A cluster's blocks run on SMs of one GPC, and a GPC's SM count need not be a multiple of the cluster
size: the H200 holds 66 clusters of two (all of its 132 SMs) but only 30 of four (120 SMs;
cuOccupancyMaxActiveClusters, notebook/probes/probe_cluster_occupancy.py, 2026-12-02). A persistent grid of
more clusters than that would run its last ones only after others finish, so t4 sizes its grid by
`resident_clusters`. The driver answers for a kernel; this module asks about a kernel that does
nothing (whole_sm.cu) with the largest dynamic shared memory a block may take, so each block holds
an SM whatever else it uses."""

from __future__ import annotations

import functools
from pathlib import Path

from gpulab.errors import GpulabError
from gpulab.gpu.compile import compile_kernel
from gpulab.gpu.device import SM_COUNT_WITHOUT_GPU, probe, sm_count
from gpulab.gpu.launch import LoadedKernel, load

WHOLE_SM_SOURCE = Path(__file__).with_name("whole_sm.cu")
# Without a GPU to ask (compile-only, predictions, CPU tests): a 132-SM Hopper's answer, as the SM
# count falls back to an H100/H200's (gpulab.gpu.device.SM_COUNT_WITHOUT_GPU). Sizes 2 and 4 as
# the H200 answered (2026-12-02), 1 to 8 as an H100 80GB HBM3 did (2026-12-05, the same 66 and 30;
# notebook/probes/clusters/): a GPC's SMs need not divide into clusters, so eight-block clusters
# hold 120 SMs, not 128. A size past 8 (not portable) takes SM_COUNT_WITHOUT_GPU // size, an upper
# bound.
RESIDENT_CLUSTERS_WITHOUT_GPU = {1: SM_COUNT_WITHOUT_GPU, 2: 66, 3: 39, 4: 30, 5: 22, 6: 17, 7: 15, 8: 15}


def resident_clusters_without_gpu(size: int) -> int:
    """resident_clusters' answer where there is no card to ask."""
    return RESIDENT_CLUSTERS_WITHOUT_GPU.get(size, SM_COUNT_WITHOUT_GPU // size)


def max_active_clusters(kernel: LoadedKernel, size: int, threads: int, smem_dynamic_bytes: int) -> int:
    """The driver's count (cuOccupancyMaxActiveClusters) of clusters of `size` blocks of `kernel`
    (`threads` threads and `smem_dynamic_bytes` of dynamic shared memory each) resident at once."""
    from cuda.bindings import driver  # as gpulab.gpu.launch: the import costs every command ~90 ms

    kernel.set_max_dynamic_smem(smem_dynamic_bytes)
    attribute = driver.CUlaunchAttribute()
    attribute.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    attribute.value.clusterDim.x, attribute.value.clusterDim.y, attribute.value.clusterDim.z = size, 1, 1
    config = driver.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = sm_count() // size * size, 1, 1
    config.blockDimX, config.blockDimY, config.blockDimZ = threads, 1, 1
    config.sharedMemBytes = smem_dynamic_bytes
    config.attrs = [attribute]
    config.numAttrs = 1
    err, count = driver.cuOccupancyMaxActiveClusters(kernel.function_handle(), config)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise GpulabError(f"cuOccupancyMaxActiveClusters({size}) returned {err.name}")
    return int(count)


@functools.cache
def resident_clusters(size: int) -> int:
    """Clusters of `size` blocks, each block a whole SM, that this card runs at once (without a GPU,
    the H200's count)."""
    info, _ = probe()
    if info is None:
        return resident_clusters_without_gpu(size)
    if size == 1 or info.compute_capability < (9, 0):  # no clusters before sm_90
        return info.sm_count // size
    kernel = load(compile_kernel(WHOLE_SM_SOURCE, "whole_sm", {}, info.arch))
    return max_active_clusters(kernel, size, 32, info.smem_per_block_optin_bytes)


def blocks_at_once(cluster: int) -> int:
    """The blocks of a grid in clusters of `cluster` (1: no clusters) that start at once, each
    block holding a whole SM: every SM, or those that hold whole clusters (120 of the H200's 132 in
    clusters of four)."""
    return resident_clusters(cluster) * cluster if cluster > 1 else sm_count()
