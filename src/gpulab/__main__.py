"""`python -m gpulab`: the `gpulab` command, for an environment whose scripts folder is not on PATH."""

from gpulab.entry import main

if __name__ == "__main__":
    main()
