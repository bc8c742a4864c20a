"""`gpulab ARGS...` with hack_fixup.py applied first (a record's trial, not a tool): the best row's
model with a split tile's fixup read as serial on one SM. Usage: python with_fixup.py bench ..."""
import sys
from pathlib import Path

exec((Path(__file__).parent / "hack_fixup.py").read_text())
from gpulab.cli import main  # noqa: E402  (after the patch, as the trial needs)

sys.argv[0] = "gpulab"
main()
