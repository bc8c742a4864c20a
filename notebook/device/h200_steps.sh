# The H200 steps of the device records about the best row's model alone (device_call65.sh, 71, 74-78),
# sourced after scripts/device_step.sh (trial). They belong to those records, not to the tools in
# scripts/: each times what `gpulab best --alone` judges on the H200's own llm rows.

# tune_d0: d0 tuned at its tune shapes (the llm suite's decode shapes), within 200 s.
tune_d0() {
    TAIL=12 trial tune_d0 200 gpulab tune gemm_bf16 d0
}

# alone_verdict EXPERIMENT SECONDS: the experiment's llm rows timed again with each shape's model-alone
# pick beside its best row, within SECONDS, then the verdict.
alone_verdict() {
    TAIL=20 trial "bench_alone_$1" "$2" gpulab bench "$1" --suite llm -v best --alone --no-sanitize
    TAIL=6 trial "judge_$1" 40 gpulab best "$1" --suite llm --alone
}

# untimed_picks EXPERIMENT...: only the llm shapes whose model-alone pick the H200 never timed
# (notebook/probes/untimed_picks/EXPERIMENT/llm.toml, a suite under the llm name), each beside its
# shape's best row, into results/h200/EXPERIMENT-llm.csv, then the verdict.
untimed_picks() {
    local exp
    for exp in "$@"; do
        TAIL=14 trial "untimed_$exp" 150 gpulab bench "$exp" --suite "notebook/probes/untimed_picks/$exp/llm.toml" \
            -v best --alone --no-sanitize
        TAIL=6 trial "judge_$exp" 40 gpulab best "$exp" --suite llm --alone
    done
}
