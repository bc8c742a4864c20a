"""Device probe: how many clusters of t4 the card holds at once (cuOccupancyMaxActiveClusters), for
each cluster size t4 takes, at its shared memory: a persistent grid of more clusters than that would
run its last ones only after others finish.

    python3 notebook/probes/probe_cluster_occupancy.py [BN]

Prints one line per cluster size t4 takes (its CLUSTER param's choices above 1): the clusters the
driver says fit for t4 itself, the SMs they use, and what gpulab.gpu.clusters.resident_clusters
(which t4_launch sizes its grid by) says from its empty whole-SM kernel. On the H200 (2026-12-02):
66 clusters of two (all 132 SMs), but only 30 of four (120 SMs).
"""

from __future__ import annotations

import sys

from gpulab.experiments import get_experiment
from gpulab.experiments.gemm_bf16.tma_rungs import t4_smem_bytes
from gpulab.gpu.clusters import max_active_clusters, resident_clusters
from gpulab.gpu.compile import compile_kernel
from gpulab.gpu.device import sm_count
from gpulab.gpu.launch import load


def main() -> int:
    exp = get_experiment("gemm_bf16")
    t4 = exp.variant("t4")
    bn = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    sizes = next(p.choices for p in t4.params if p.name == "CLUSTER")
    for cluster in (c for c in sizes if c > 1):  # a kernel without __cluster_dims__ is not asked
        p = t4.default_params() | {"BN": bn, "CLUSTER": cluster}
        kernel = load(compile_kernel(exp.source(t4), exp.entry, p, t4.compile_arch("sm_90")))
        n = max_active_clusters(kernel, cluster, 384, t4_smem_bytes(p))
        print(f"CLUSTER={cluster} BN={bn}: {n} clusters at once ({n * cluster} of {sm_count()} SMs); "
              f"resident_clusters says {resident_clusters(cluster)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
