"""python -m gpulab.cli: the command line, as the `gpulab` script runs it."""

from gpulab.cli import main

main()
