#!/usr/bin/env bash
# Second call of 2026-12-04: the kernels after the first run (device_kernels2.sh), the llm suite on
# both GEMMs (every shape; the model's contenders within 1.2x; the gate off: each pick would be
# sanitized first, and d0/kc are sanitized on their own below), compute-sanitizer on the new kernels,
# the Nsight Compute report fixtures and the report path (device_ncu_report.sh), and the softmax
# example (a problem written in PyTorch) benched beside torch with its GPU tests.
# Everything comes back as call2.tgz (logs, CSVs, the fixtures and the results files written).
# Usage (on the card, from the repository root): bash notebook/device/device_call2.sh
set -u
BACK=$OUT
export OUT=/tmp/call2; mkdir -p "$OUT"
source scripts/device_setup.sh || exit 1
source scripts/device_step.sh
part() {  # part NAME SECONDS COMMAND...: one piece under its own limit, its log in $OUT/NAME.log
    local name=$1 limit=$2; shift 2; local t0=$SECONDS
    timeout -k 5 "$limit" "$@" >"$OUT/$name.log" 2>&1
    echo "== $name: exit $? in $((SECONDS - t0)) s"; tail -n "${TAIL:-25}" "$OUT/$name.log"
}
TAIL=40 part kernels2 150 bash notebook/device/device_kernels2.sh
# The model's efficiency for d0 and kc, new here, from runs at shapes of no suite (into the main CSV,
# where the model reads them), before the suite's picks are made.
TAIL=12 part calibrate 30 gpulab bench gemm_bf16 --variant d0,kc --no-sanitize --shape 8x12288x4096 \
    --shape 16x5120x5120 --shape 128x3072x4096 --shape 256x5120x2048
TAIL=12 part llm_bf16 130 gpulab bench gemm_bf16 --suite llm --contenders 1.5 --no-sanitize
TAIL=12 part llm_sgemm 100 gpulab bench sgemm --suite llm --contenders 1.3 --no-sanitize
TAIL=30 part llm_figure 15 python3 -c 'import sys; from gpulab.report.picks import summary; print(summary(sys.argv[1:]))' \
    results/h200/gemm_bf16-llm.csv results/h200/sgemm-llm.csv
TAIL=12 part sanitize_new 30 gpulab sanitize gemm_bf16 -v d0,kc -j 16
# The report interface: the install's own (extras/python) is what gpulab looks for first; where it
# does not import, the wheel carried in .whl/ is installed beside (PYTHONPATH) and used instead.
python3 -c "from gpulab.gpu import ncu, ncu_reader; print(ncu_reader.find_interface(ncu.find_ncu()).describe())" \
    >"$OUT/interface.log" 2>&1 || { python3 -m pip install -q --no-deps --no-index --target /tmp/site .whl/ncu_report*.whl \
    && export PYTHONPATH=/tmp/site; echo "install's interface failed; the wheel installed" >>"$OUT/interface.log"; }
cat "$OUT/interface.log"
TAIL=40 part ncu 90 bash notebook/device/device_ncu_report.sh
mkdir -p examples/softmax/results/h200
TAIL=20 part softmax 30 gpulab bench softmax --problem examples/softmax/softmax.py --shape 8192x4096 \
    --shape 16384x1024 --out examples/softmax/results/h200/softmax.csv
tar czf "$BACK/call2.tgz" -C "$OUT" . -C "$PWD" results/h200 tests/fixtures/ncu_reports examples/softmax/results 2>/dev/null
exit 0
