#!/usr/bin/env bash
# Issue 42 sections 3 and 4 (branch input) on the card, about 170 s in all: (1) the three GPU tests
# whose speed assertions became plumbing (the transpose bench held to the copy ceiling, about 40 s;
# the BF16 tensor ceilings, about 30 s; the ceilings measured and reused, about 60 s); (2) the
# bad-input and worker tests where a GPU is present (about 30 s); (3) a real bench from a script with
# no __main__ guard: its top level must run once (about 20 s). Logs go to $OUT/input42/.
# Usage: bash scripts/device_trial.sh input42:200
set -u
source scripts/device_step.sh
trials_begin input42 200
TAIL=12 trial gpu_tests 150 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -m gpu \
    tests/gpu/test_own_kernels_gpu.py::test_a_transpose_bench_holds_each_variant_to_the_copy_ceiling \
    tests/gpu/test_gemm_bf16_gpu.py::test_bf16_ceilings_measured_and_plausible \
    tests/gpu/test_memory_experiments_gpu.py::test_ceilings_measured_and_plausible
TAIL=12 trial cpu_tests 60 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider tests/test_bad_input.py \
    tests/test_worker.py
mkdir -p "$dir/unguarded"
cat >"$dir/unguarded/script.py" <<'PY'
import gpulab

with open("count.txt", "a") as f:
    f.write("x")
rows = gpulab.bench("coalesce", ["rows"], ["1024x1024"], options=gpulab.BenchOptions(save=False))
print(len(rows), "rows, correct:", all(r.get("correct") for r in rows if r["variant"] == "rows"))
PY
trial unguarded 40 bash -c "cd '$dir/unguarded' && python3 script.py && test \"\$(cat count.txt)\" = x && echo 'top level ran once'"
trials_end
