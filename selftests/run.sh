#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run the kfdsim selftests. Meant for the test VM (scripts/vm-run), as
# root, from the repository root:  selftests/run.sh
#
# 1. Load kfdsim (num_gpus=2, vram_mb=$KFDSIM_TEST_VRAM_MB, seed=0) and run
#    the test binary of every area in $areas (build/selftests/<area>_test;
#    a guest test binary is added there). The topology run records the
#    gpu_ids and render minors of seed 0.
# 2. Reload with seed=1 and seed=3 and run the topology test again, which
#    checks that every GPU's gpu_id and render minor changed; reload with
#    seed=0 and check they are the recorded ones again.
# 3. Before every unload, every debugfs counter must be back to 0, and
#    `rmmod kfdsim` must succeed.
#
# Results: each binary's TAP output is shown as it runs; each binary's
# "# Totals:" line is added up (a binary that crashes or prints none counts
# as one failure), plus one result per check done here. Every skip is
# named (from its TAP line, or the harness's RUN line before it) and
# looked up in selftests/skip-allowlist: a skip listed there with its
# reason counts as skipped, any other is one failure. The last line is
# "N passed, N failed" (", N skipped" when there are skips); the exit
# status is 0 only if nothing failed.
#
# Environment:
#   KFDSIM_INSMOD=1      if `modprobe kfdsim` fails, insmod $KFDSIM_KO
#   KFDSIM_INSMOD=only   always insmod $KFDSIM_KO (a fresh build while an
#                        older copy is installed)
#   KFDSIM_KO            module file for insmod (default ./kfdsim.ko)
#   KFDSIM_TEST_VRAM_MB  VRAM per GPU while testing (default 256, the
#                        module's default; the VRAM exhaustion tests
#                        allocate and zero all of it, a few seconds under
#                        TCG)
#   KFDSIM_TEST_TIMEOUT  seconds per test binary (default 900); the
#                        end-to-end area, the longest (about 300 s of
#                        guest time on Debian's kernel, over an hour under
#                        the debug kernel), gets three times that
#   KFDSIM_AREAS         run only these areas (space-separated; area
#                        names as in $areas, plus criu-other-node, reload
#                        for the seed reload checks, and e2e); a developer's
#                        shortcut, make check runs them all
#   KFDSIM_TIMEOUT_SCALE multiply every time limit (the binaries' and each
#                        test's hang guard) by this whole number: make
#                        check-debug sets it for the slow debug kernel

set -u

top=$(cd "$(dirname "$0")/.." && pwd)
bin=$top/build/selftests
areas="topology devcgroup memory apertures isolation teardown badinput abi queues compute sdma events preempt libdrm amdplugin hsakmt rocr criu stress gpustate restore_fuzz f32 gfx9 memcg gfx9_fuzz cwsr"
work=$(mktemp -d "${TMPDIR:-/tmp}/kfdsim-selftests.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

# result, load, unload; vram_mb, limit, counters, checks, passed, failed.
# shellcheck source=selftests/lib/ksft-lib.sh
. "$top/selftests/lib/ksft-lib.sh"
result_prefix="run.sh: "
skipped=0

# run NAME [VAR=VALUE...]: run build/selftests/NAME_test and add up its
# totals.
run() {
	name=$1
	shift
	case $name in
	criu-other-node) exe=$top/selftests/criu/run-other-node.sh ;;
	e2e) exe=$top/selftests/e2e/run.sh ;;
	*) exe=$bin/${name}_test ;;
	esac
	log=$work/$name.log
	if [ ! -x "$exe" ]; then
		result 1 "$exe is missing (make -C selftests)"
		return
	fi
	echo "# ---- ${name}_test $*"
	start=$(date +%s)
	area_limit=$limit
	[ "$name" != e2e ] || area_limit=$((limit * 3))
	env "$@" timeout -k 10 "$area_limit" "$exe" >"$log" 2>&1 &
	tpid=$!
	# Shown as it runs (a long area's progress is visible); following the
	# file, not a pipe, so a process the test left behind holding its
	# stdout cannot keep the run waiting.
	tail -n +1 -s 1 -f --pid="$tpid" "$log" &
	fpid=$!
	wait "$tpid"
	rc=$?
	wait "$fpid"
	if [ -n "${KFDSIM_VM_RESULTS:-}" ] && [ -w "$KFDSIM_VM_RESULTS" ]; then
		cp "$log" "$KFDSIM_VM_RESULTS/${name}_test.log" 2>/dev/null
	fi
	echo "# ---- ${name}_test exit $rc, $(($(date +%s) - start)) s"

	totals=$(grep '^# Totals: ' "$log" | tail -n 1)
	if [ -z "$totals" ]; then
		result 1 "${name}_test printed no totals (exit $rc)"
		return
	fi
	# "# Totals: pass:N fail:N xfail:N xpass:N skip:N error:N"
	# shellcheck disable=SC2046 # split into the six numbers
	set -- $(echo "$totals" | tr -c '0-9' ' ')
	if [ $# -ne 6 ]; then
		result 1 "${name}_test: cannot parse '$totals'"
		return
	fi
	passed=$((passed + $1 + $3))
	failed=$((failed + $2 + $4 + $6))
	check_skips "$name" "$log" "$5"
	# A binary that reports no failure but exits badly has failed.
	if [ "$rc" -ne 0 ] && [ $(($2 + $4 + $6)) -eq 0 ] && [ "$rc" -ne 4 ]; then
		result 1 "${name}_test exit status $rc"
	fi
}

# skip_names LOG: "TEST REASON" of every skip in a TAP log: the harness
# prints "#  RUN  FIXTURE.TEST ..." then "ok N # SKIP REASON"; other TAP
# producers (e2e/run.sh) print "ok N TEST # SKIP REASON".
skip_names() {
	awk '
	/^#  RUN  / { run = $3; next }
	/^ok [0-9]+ # SKIP/ { sub(/^ok [0-9]+ # SKIP ?/, ""); print run, $0; next }
	/^ok [0-9]+ [^#]* # SKIP/ {
		t = $3; sub(/^[^#]* # SKIP ?/, ""); print t, $0
	}' "$1"
}

# check_skips AREA LOG COUNT: each of the COUNT skips of AREA's LOG is on
# the allowlist (counted skipped) or one failure.
check_skips() {
	n=0
	skip_names "$2" >"$work/skips"
	while read -r test why; do
		n=$((n + 1))
		if awk -v a="$1" -v t="$test" '$1 == a && $2 == t { f = 1 }
				END { exit !f }' "$top/selftests/skip-allowlist"; then
			skipped=$((skipped + 1))
		else
			result 1 "${1}_test: $test skipped ($why), not on selftests/skip-allowlist"
		fi
	done <"$work/skips"
	if [ "$n" -ne "$3" ]; then
		result 1 "${1}_test: $3 skips counted, $n found in its output"
	fi
}

finish() {
	if [ "$skipped" -gt 0 ]; then
		echo "$passed passed, $failed failed, $skipped skipped"
	else
		echo "$passed passed, $failed failed"
	fi
	[ "$failed" -eq 0 ]
	exit $?
}

if [ "$(id -u)" -ne 0 ]; then
	echo "run.sh: must run as root (in the test VM: scripts/vm-run)" >&2
	result 1 "running as root"
	finish
fi
if loaded; then
	rmmod kfdsim
	result $? "unload a kfdsim left loaded before the run"
fi

# wanted AREA: is AREA selected by KFDSIM_AREAS (all are when it is unset)?
wanted() {
	case " ${KFDSIM_AREAS:-$1} " in
	*" $1 "*) return 0 ;;
	*) return 1 ;;
	esac
}

ids=$work/seed
if load 0; then
	for area in $areas; do
		wanted "$area" || continue
		if [ "$area" = topology ]; then
			run topology KFDSIM_TOPO_SAVE="$ids.0"
		elif [ "$area" = restore_fuzz ]; then
			# A fixed seed and a count of blobs, not a time
			# limit, so that a run here can be replayed blob for
			# blob; `make fuzz` explores seeds from the clock.
			run restore_fuzz \
				KFDSIM_FUZZ_SEED="${KFDSIM_FUZZ_SEED:-0x6b66647369}" \
				KFDSIM_FUZZ_COUNT="${KFDSIM_FUZZ_COUNT:-10000}" \
				KFDSIM_FUZZ_SECONDS=0
		elif [ "$area" = gfx9_fuzz ]; then
			# The instruction fuzzer's smoke run: a fixed seed
			# and a small count (`make fuzz` runs a million).
			run gfx9_fuzz \
				KFDSIM_GFX9_FUZZ_SEED="${KFDSIM_GFX9_FUZZ_SEED:-0x67667839}" \
				KFDSIM_GFX9_FUZZ_COUNT="${KFDSIM_GFX9_FUZZ_COUNT:-1500}"
		else
			run "$area"
		fi
	done
	unload "seed 0"
fi

# Checkpoint on seed 0, restore on seed 5 (loads and unloads kfdsim itself).
! wanted criu-other-node || run criu-other-node

if wanted reload && load 1; then
	run topology KFDSIM_TOPO_SAVE="$ids.1" KFDSIM_TOPO_DIFFERENT="$ids.0"
	unload "seed 1"
fi

if wanted reload && load 3; then
	run topology KFDSIM_TOPO_DIFFERENT="$ids.0:$ids.1"
	unload "seed 3"
fi

if wanted reload && load 0; then
	run topology KFDSIM_TOPO_SAME="$ids.0"
	unload "seed 0 again"
fi

# CRIU end to end with the plugin: e2e/run.sh (re)loads kfdsim itself and
# leaves it loaded.
if wanted e2e; then
	[ "${KFDSIM_INSMOD:-}" != only ] ||
		export KFDSIM_KO="${KFDSIM_KO:-./kfdsim.ko}"
	run e2e
	unload "after e2e"
fi

finish
