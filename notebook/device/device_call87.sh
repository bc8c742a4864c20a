#!/usr/bin/env bash
# call 87 (2026-12-06, ninth session, an H200 held warm after call 86; call 85, written for this and call
# 88 before any machine came, never ran and is not kept): the whole GPU suite on the tree
# of call 86 (the tail term, cost.TAIL_IDLE_COST, uncommitted then; committed unchanged after). Run as
# the device command itself, written here as it ran. Its logs: notebook/probes/gpu_suite/call87-h200/.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call87.sh
source scripts/device_step.sh
call_begin call87 520
gpu_suite 430 70
rm -rf results/*/reports
call_end call87
