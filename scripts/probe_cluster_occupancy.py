"""Device probe: how many clusters of t4 the card holds at once (cuOccupancyMaxActiveClusters), for
each cluster size t4 takes, at its shared memory: a persistent grid of more clusters than that would
run its last ones only after others finish.

    python3 scripts/probe_cluster_occupancy.py [BN]

Prints one line per cluster size t4 takes (its CLUSTER param's choices above 1; clusters of four
with scripts/scratch/t4_cluster4.patch applied): the clusters the driver says fit, the SMs they use,
and the grid t4_launch gives (sm_count // CLUSTER clusters). On the H200 (2026-12-02): 66 clusters
of two (all 132 SMs), but only 30 of four (120 SMs), where t4_launch would ask for 33.
"""

from __future__ import annotations

import sys

from gpulab.experiments import get_experiment
from gpulab.experiments.gemm_bf16.tma_rungs import t4_smem_bytes
from gpulab.gpu.compile import compile_kernel
from gpulab.gpu.device import sm_count
from gpulab.gpu.launch import load


def max_active_clusters(kernel, threads: int, smem: int) -> int:
    from cuda.bindings import driver
    kernel._function.max_dynamic_shared_size_bytes = smem
    config = driver.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = sm_count(), 1, 1
    config.blockDimX, config.blockDimY, config.blockDimZ = threads, 1, 1
    config.sharedMemBytes = smem
    config.numAttrs = 0
    err, n = driver.cuOccupancyMaxActiveClusters(driver.CUfunction(kernel._function.kernel.ptr), config)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise SystemExit(f"cuOccupancyMaxActiveClusters: {err.name}")
    return n


def main() -> int:
    exp = get_experiment("gemm_bf16")
    t4 = exp.variant("t4")
    bn = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    sizes = next(p.choices for p in t4.params if p.name == "CLUSTER")
    for cluster in (c for c in sizes if c > 1):  # a kernel without __cluster_dims__ is not asked
        p = t4.default_params() | {"BN": bn, "CLUSTER": cluster}
        kernel = load(compile_kernel(exp.source(t4), exp.entry, p, t4.compile_arch("sm_90")))
        n = max_active_clusters(kernel, 384, t4_smem_bytes(p))
        print(f"CLUSTER={cluster} BN={bn}: {n} clusters at once ({n * cluster} of {sm_count()} SMs); "
              f"t4_launch asks for {sm_count() // cluster}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
