"""gpulab from Python: the README's example as a script (tests/test_readme_sync.py holds the two
equal). Without a GPU it predicts and compiles only; with one it also checks and times. It needs
nothing beyond gpulab's own install (records are lists of dicts; `.to_pandas()` is there for those
who have pandas). bench's own worker process starts without running this file again; the
`__main__` guard is there for a Dask cluster's worker processes (BenchOptions(workers=N)), which do.

    python examples/api_example.py
"""

import gpulab

if __name__ == "__main__":  # a Dask cluster's workers (BenchOptions(workers=N)) import this file again
    pred = gpulab.predict("sgemm", "v1:TILE=16", shape="1024x1024x1024")  # the access model: no GPU
    print("bank conflicts", pred.summary["smem_load_bank_conflicts"], "sectors", pred.summary["gmem_load_sectors"])
    for row in gpulab.compile_only(["coalesce"]):                        # ptxas's resources: no GPU
        print(row["variant"], row["params"], row["reg_per_thread"], "registers")
    if gpulab.card() is not None:                                        # a GPU: check and time
        for row in gpulab.bench("sgemm", ["v1", "v9"], [2048], options=gpulab.BenchOptions(save=False)):
            print(row["variant"], row["params"], row.get("gflops"), row.get("pct_of_cublas"), row.get("correct"))
