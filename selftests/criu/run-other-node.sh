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
vram_mb=${KFDSIM_TEST_VRAM_MB:-256}
limit=${KFDSIM_TEST_TIMEOUT:-900}
counters=/sys/kernel/debug/kfdsim/counters
dir=$(mktemp -d "${TMPDIR:-/tmp}/kfdsim-criu-node.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT

n=0
pass=0
fail=0

result() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		pass=$((pass + 1))
		echo "ok $n $2"
	else
		fail=$((fail + 1))
		echo "not ok $n $2"
	fi
}

loaded() {
	[ -d /sys/module/kfdsim ]
}

# load SEED: as run.sh does.
load() {
	params="num_gpus=2 vram_mb=$vram_mb seed=$1"
	ko=${KFDSIM_KO:-./kfdsim.ko}
	rc=1
	if loaded; then
		result 1 "load kfdsim $params: still loaded"
		return 1
	fi
	# $params is split into its words on purpose.
	# shellcheck disable=SC2086
	if [ "${KFDSIM_INSMOD:-}" != only ]; then
		modprobe kfdsim $params
		rc=$?
	fi
	if [ $rc -ne 0 ] && [ -n "${KFDSIM_INSMOD:-}" ]; then
		echo "# insmod $ko $params"
		modprobe drm
		# shellcheck disable=SC2086
		insmod "$ko" $params
		rc=$?
	fi
	[ $rc -eq 0 ] && [ -c /dev/kfd ] && [ -r "$counters" ]
	rc=$?
	result $rc "load kfdsim $params"
	return $rc
}

# unload WHAT: every counter is 0, then rmmod.
unload() {
	if [ -r "$counters" ] && awk '$2 != 0 { bad = 1 } END { exit bad }' \
			"$counters"; then
		result 0 "counters at baseline ($1)"
	else
		echo "# counters:"
		sed 's/^/#   /' "$counters" 2>/dev/null
		result 1 "counters at baseline ($1)"
	fi
	rmmod kfdsim
	result $? "rmmod kfdsim ($1)"
}

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
echo "1..$n"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ "$fail" -eq 0 ]
