"""gpulab from Python: the README's example as a script. Without a GPU it predicts and compiles
only; with one it also checks and times, and reads the card's ceilings.

    python examples/api_example.py
"""

import gpulab

pred = gpulab.predict("sgemm", "v1:TILE=16", shape="1024x1024x1024")  # the access model, no GPU needed
print("v1 TILE=16: shared-load bank conflicts", pred.summary["smem_load_bank_conflicts"],
      "| global load sectors", pred.summary["gmem_load_sectors"])
for row in gpulab.compile_only(["coalesce"]):  # what ptxas says, no GPU needed
    print(row["variant"], row["params"], row["reg_per_thread"], "registers")
if gpulab.card() is not None:
    rows = gpulab.bench("sgemm", variants=["v1", "v9"], shapes=["2048x2048x2048"], save=False)
    print(rows.to_pandas()[["variant", "params", "gflops", "pct_of_cublas", "correct"]])
    print(gpulab.ceilings().to_pandas()[["ceiling", "gbps", "gflops"]])
