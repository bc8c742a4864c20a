"""Everything that talks to CUDA: compile (no GPU needed), device, launch, timing, ncu."""
