# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh disable=SC2034 # variables for the sourcing script
#
# Shell helpers (POSIX sh) shared by selftests/run.sh and
# selftests/criu/run-other-node.sh: TAP results, loading kfdsim with the
# test parameters, and the counters check before unloading. Source it; it
# defines functions and variables and runs nothing.
#
# Environment (see selftests/run.sh): KFDSIM_INSMOD, KFDSIM_KO,
# KFDSIM_TEST_VRAM_MB, KFDSIM_TEST_TIMEOUT, KFDSIM_TIMEOUT_SCALE (a whole
# number that multiplies every time limit, for a slow debug kernel).
#
# The sourcing script may set result_prefix: text put before the name of
# every result (run.sh tags its own checks "run.sh: ").

vram_mb=${KFDSIM_TEST_VRAM_MB:-256}
timeout_scale=${KFDSIM_TIMEOUT_SCALE:-1}
case $timeout_scale in
'' | *[!0-9]*) timeout_scale=1 ;;
esac
limit=$((${KFDSIM_TEST_TIMEOUT:-900} * timeout_scale))
counters=/sys/kernel/debug/kfdsim/counters
result_prefix=

checks=0
passed=0
failed=0

# result STATUS NAME: one TAP line, "ok" if STATUS is 0.
result() {
	checks=$((checks + 1))
	if [ "$1" -eq 0 ]; then
		passed=$((passed + 1))
		echo "ok $checks $result_prefix$2"
	else
		failed=$((failed + 1))
		echo "not ok $checks $result_prefix$2"
	fi
}

loaded() {
	[ -d /sys/module/kfdsim ]
}

# load SEED: load kfdsim with 2 GPUs of $vram_mb MB and this seed.
load() {
	params="num_gpus=2 vram_mb=$vram_mb seed=$1"
	ko=${KFDSIM_KO:-./kfdsim.ko}
	rc=1
	# modprobe of a loaded module succeeds without applying $params.
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
	# devtmpfs creates the device nodes while the module loads.
	[ $rc -eq 0 ] && [ -c /dev/kfd ] && [ -r "$counters" ]
	rc=$?
	result $rc "load kfdsim $params"
	return $rc
}

# unload WHAT: every counter of the loaded module is 0; then rmmod.
unload() {
	if [ -r "$counters" ] && awk '$2 != 0 { bad = 1 } END { exit bad }' \
			"$counters"; then
		result 0 "counters at baseline before rmmod ($1)"
	else
		echo "# counters:"
		sed 's/^/#   /' "$counters" 2>/dev/null
		result 1 "counters at baseline before rmmod ($1)"
	fi
	rmmod kfdsim
	result $? "rmmod kfdsim ($1)"
}
