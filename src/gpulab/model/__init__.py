"""The memory model: what a kernel must ask of memory, predicted before any counter is read.

warp.py      one warp-wide memory instruction -> requests, sectors, lines, wavefronts, conflicts
predict.py   a variant's access model summed over its launch -> predicted counters (flat dict)
patterns.py  one warp instruction per rule, as data, shared by the tests and the GPU fixtures
patterns.cu  the probe kernels of those patterns, which scripts/pattern_fixtures.py measures under
             ncu on a GPU (a tool, not a dependency: nothing here imports CuPy or the driver)

Pure Python and numpy: it knows nothing about CUDA, so `gpulab predict` runs on any machine.
"""
