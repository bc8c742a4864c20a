#!/usr/bin/env bash
# Call 14 (2026-12-05): the whole GPU suite on the final tree of the sessions no device was lent to
# (blocked timing, the best-row model's changes since call 10). Replaces device_call12.sh's first
# half (written, never run); its benches moved to device_call15.sh.
# Usage (on the card, from the repository root): bash notebook/device/device_call14.sh
set -u
source scripts/device_step.sh
call_begin call14 575
gpu_suite 480 75
call_end call14
exit 0
