#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Checkpoint on one "node", restore on another. In the test VM, as root,
# with kfdsim NOT loaded (run.sh calls this between its seed runs):
#
#   1. load kfdsim with seed=0 and run `criu_test --checkpoint-to DIR`: a
#      worker is checkpointed mid-kernel into DIR (images under /tmp);
#   2. check the counters are back to 0, unload;
#   3. load kfdsim with seed=5 (other gpu_ids, other render minors) and run
#      `criu_test --restore-from DIR`: the restored process keeps its old
#      gpu_ids and its results must be exact;
#   4. check the counters, unload.
#
# The module is loaded the way run.sh loads it: `modprobe kfdsim num_gpus=2
# vram_mb=$KFDSIM_TEST_VRAM_MB seed=N`, or insmod $KFDSIM_KO (default
# ./kfdsim.ko) when modprobe fails and KFDSIM_INSMOD is set, or always with
# KFDSIM_INSMOD=only. KFDSIM_TEST_TIMEOUT limits each binary run (seconds).
#
# Prints one TAP line per step and a harness-style "# Totals:" line; exits
# 0 only if every step passed. Leaves the module unloaded.

set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
exe=$top/build/selftests/criu_test
dir=$(mktemp -d "${TMPDIR:-/tmp}/kfdsim-criu-node.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT

# result, load, unload; vram_mb, limit, counters, checks, passed, failed.
# shellcheck source=selftests/lib/ksft-lib.sh
. "$top/selftests/lib/ksft-lib.sh"

echo "TAP version 13"
if [ "$(id -u)" -ne 0 ]; then
	result 1 "running as root"
elif loaded; then
	result 1 "kfdsim is not loaded at the start"
else
	ok=1
	if load 0; then
		# Record the binary's exit status next to the image.
		(timeout -k 10 "$limit" "$exe" --checkpoint-to "$dir"; \
			echo $? >"$dir/status") 2>&1 | sed 's/^#*/#/'
		rc=$(cat "$dir/status" 2>/dev/null || echo 1)
		result "$rc" "checkpoint a worker mid-kernel (seed 0)"
		[ "$rc" -eq 0 ] && ok=0
		unload "seed 0"
	fi
	if [ $ok -eq 0 ] && load 5; then
		(timeout -k 10 "$limit" "$exe" --restore-from "$dir"; \
			echo $? >"$dir/status") 2>&1 | sed 's/^#*/#/'
		rc=$(cat "$dir/status" 2>/dev/null || echo 1)
		result "$rc" "restore it on seed 5 with its old gpu_ids, exact results"
		unload "seed 5"
	elif [ $ok -ne 0 ]; then
		result 1 "restore on seed 5 (no checkpoint to restore)"
	fi
fi
echo "1..$checks"
echo "# Totals: pass:$passed fail:$failed xfail:0 xpass:0 skip:0 error:0"
[ "$failed" -eq 0 ]
