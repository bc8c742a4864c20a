"""Run a Python script with another NVRTC than the installed one: python scripts/with_nvrtc.py LIBDIR
SCRIPT [ARGS...] loads LIBDIR/libnvrtc.so.13 first, so that cuda-bindings (through cuda-pathfinder,
which takes a library already loaded) compiles with it. LIBDIR is an unpacked nvidia-cuda-nvrtc
wheel's nvidia/cu13/lib. Prints the NVRTC version it got, then runs SCRIPT as __main__."""

import ctypes
import os
import runpy
import sys

if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: python scripts/with_nvrtc.py LIBDIR SCRIPT [ARGS...]")
    lib_dir = sys.argv[1]
    lib = os.path.join(lib_dir, "libnvrtc.so.13")
    if not os.path.isfile(lib):
        sys.exit(f"no libnvrtc.so.13 in {lib_dir}: give an unpacked nvidia-cuda-nvrtc wheel's nvidia/cu13/lib")
    if not os.path.isfile(sys.argv[2]):
        sys.exit(f"no script {sys.argv[2]}: give the Python file to run after the preload")
    ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
    from gpulab.gpu.compile import nvrtc_version  # noqa: E402  (after the preload, on purpose)

    print(f"NVRTC {nvrtc_version()} from {lib_dir}", flush=True)
    sys.argv = sys.argv[2:]
    runpy.run_path(sys.argv[0], run_name="__main__")
