# Sourced by notebook/device/device_call75.sh, 76 and 77 (after scripts/device_step.sh): their H200
# branch. untimed_picks: the llm picks of the model alone the H200 never timed (this folder's suites,
# one per experiment, under the llm name), each beside its shape's best row, into
# results/h200/<experiment>-llm.csv, then both verdicts; then d0 tuned at the llm suite's sixteen
# decode shapes, as far as the call's time goes.
untimed_picks() {
    local exp
    for exp in sgemm gemm_bf16; do
        TAIL=14 trial "untimed_$exp" 150 gpulab bench "$exp" --suite "notebook/probes/untimed_picks/$exp/llm.toml" \
            -v best --alone --no-sanitize
        TAIL=6 trial "judge_$exp" 40 gpulab best "$exp" --suite llm --alone
    done
    TAIL=12 trial tune_d0 200 gpulab tune gemm_bf16 d0
}
