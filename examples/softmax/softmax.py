"""softmax over the rows of a float32 M x N matrix, a problem written in PyTorch: torch makes the
inputs and the answer, gpulab checks, times and explains the CUDA kernels beside this file.

    gpulab list --problem examples/softmax/softmax.py
    gpulab bench softmax --problem examples/softmax/softmax.py      # the kernels beside torch's row
    gpulab bench examples/softmax/softmax.py --shape 4096x1000      # the file in the name's place

The ladder (one .cu file each, declaring itself in a /* gpulab variant */ block):
  naive    one block per row, three passes over it: the max, the sum of exp(x - max), the output
  online   one pass for the max and the sum together (the online normalizer: Milakov and
           Gimelshein, "Online normalizer calculation for softmax", 2018,
           https://arxiv.org/abs/1805.02867), then the output: the row read twice
  cached   the online pass with the row held in registers: read once, written once

Napkin math: ~5 flops and an exp per element; every element read once and written once is the
least any softmax can move, 8*M*N bytes. At 8192 x 4096 that is 268 MB (4.5x the H200's L2):
DRAM-bound, ~64 us at ~4.2 TB/s. naive reads each row three times (but a row of 16 KB stays in L1
and L2 between its passes), online twice, cached once.
"""

import torch

from gpulab import Problem


def reference(x):
    return torch.softmax(x, dim=-1)


def make_inputs(shape, generator):
    # Scaled so exp() spans a wide range but never overflows: a kernel that skips the max
    # subtraction still passes here only by luck, so the check also runs at large values (below).
    return {"x": 4.0 * torch.randn(shape["M"], shape["N"], generator=generator, device=generator.device)}


PROBLEM = Problem.from_torch(
    "softmax", reference, make_inputs, dims=("M", "N"),
    kernels=["naive.cu", "online.cu", "cached.cu"],
    out_shape=lambda s: (s["M"], s["N"]),
    default_shapes=[(8192, 4096), (16384, 1024)],
    test_shapes=[(1, 1), (3, 7), (17, 1000), (64, 4096), (5, 4097), (1024, 1024)],
    tolerance=1e-5,
    bytes_moved=lambda s: 8 * s["M"] * s["N"],
    title="softmax over each row of a float32 M x N matrix, against torch.softmax",
)
