#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# End-to-end CRIU tests: Debian's real criu checkpoints and restores
# build/e2e/gpu_app, a process computing on both simulated GPUs, with the
# KFD plugin build/plugin/kfd_plugin.so. For the test VM, as root, from the
# repository root:
#
#   scripts/vm-run -- selftests/e2e/run.sh
#
# (build first: make -C selftests/e2e, the plugin, and the module.)
#
# The module. This script loads kfdsim itself, more than once: the tests
# need seed=0 with 2 GPUs (a module already loaded that way is kept), then
# "other nodes" (seed=1 with 2 GPUs, seed=2 with 1 GPU), then seed=0 again.
# Each load first unloads the module, then insmods $KFDSIM_KO if set, else
# the same file as the module that was loaded when the script started (the
# candidate whose build id matches: ./kfdsim.ko, build/e2e-ko/kfdsim.ko or
# the installed one), else runs `modprobe kfdsim`. So either load the
# module you want tested before running this script, or set KFDSIM_KO. The
# module is left loaded (seed=0, 2 GPUs) at the end.
#
# Tests, in order (each prints one TAP line with its duration; criu steps
# print their times and image sizes as comments):
#   plain_app    dump/restore of a process without /dev/kfd, plugin loaded
#   run          an uninterrupted gpu_app run gives the expected result
#   dump         dump mid-computation, the process is gone, restore -d, it
#                finishes with the expected RESULT line
#   copy-paths   the dump test with KFD_BO_COPY=cpu, then =sdma: the
#                plugin's INFO lines show every GPU used that path, at
#                dump and at restore, and the RESULT is right
#   corrupt      a byte flipped in a plugin pages image and a truncated
#                plugin KFD image: restore refuses, with the plugin's
#                message, and leaves no process
#   other-node   the same images restored after reloading with seed=1
#                (other gpu_ids and render minors); the restored gpu_app
#                rings its doorbells (checksum kernel, downloads), so the
#                plugin must move its /dev/kfd mappings to the new
#                devices' offsets (left at the old ones, mmap fails with
#                ENODEV and so does the restore)
#   too-few      the same images on a node with 1 GPU: restore fails with
#                the plugin's message
#   leave        dump --leave-running: the original finishes OK, and so
#                does a restore of those images afterwards
#   consistent   a consistent snapshot: gpu_app --spread keeps the loop
#                kernel writing arrays in VRAM, GTT and USERPTR memory
#                while it is dumped; the restored run must end with every
#                array equal to the CPU reference, which holds only if the
#                memory image (USERPTR pages) and the saved queue state
#                (the dispatch and step each queue stopped at) were taken
#                at the same moment: the GPU must stay paused until criu
#                has dumped the memory, not only the files. The plugin's
#                log must say when it let the GPU run again.
#   consistent-leave  the same with --leave-running: the original and a
#                restore of its images both end with the reference result
#   cycles       three dump/restore cycles of one run
#   tree         a parent and a child process, each with its own /dev/kfd
#   stream       criu --stream (skipped: Debian has no criu-image-streamer)
# and finally: the driver's debugfs counters are all 0 (nothing leaked).
# Every test waits for its processes to end, so each needs the pid its
# images hold to be free.
#
# The expected RESULT lines come from `gpu_app --expected` (CPU only).
# Tests that need the plugin are skipped while it is not built.
#
# Output: TAP lines, then "# Totals: pass:N fail:N xfail:0 xpass:0 skip:N
# error:0" (the format of the kselftest harness, which selftests/run.sh adds
# up). Exit status 0 unless something failed. Logs of failed tests are
# copied to $KFDSIM_VM_RESULTS/e2e/ when that is writable.
#
# Environment:
#   KFDSIM_E2E_STEPS       loop steps per dispatch (default 500)
#   KFDSIM_E2E_DISPATCHES  loop dispatches (default 4)
#   KFDSIM_E2E_SIZE        array per GPU (default 1M)
#   KFDSIM_E2E_SPREAD      steps, dispatches and array size of the
#                          consistent tests (default "200 20 256K")
#   KFDSIM_E2E_ONLY        space-separated test names to run (default all)
#   KFDSIM_KO, KFDSIM_PLUGIN_DIR, KFDSIM_CRIU: see selftests/e2e/lib.sh

set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
# shellcheck source=selftests/e2e/lib.sh
. "$top/selftests/e2e/lib.sh"

# Restored trees are orphans once `criu restore -d` exits; run under the
# reaper so they are reaped at once and their exit status recorded.
if [ -z "${E2E_REAPED:-}" ]; then
	reaped=$(mktemp "${TMPDIR:-/tmp}/kfdsim-e2e-reaped.XXXXXX") || exit 1
	E2E_REAPED=$reaped exec "$E2E_BIN/reaper" "$reaped" "$0" "$@"
	echo "run.sh: cannot run $E2E_BIN/reaper (make -C selftests/e2e)" >&2
	exit 1
fi

steps=${KFDSIM_E2E_STEPS:-500}
dispatches=${KFDSIM_E2E_DISPATCHES:-4}
size=${KFDSIM_E2E_SIZE:-1M}
only=${KFDSIM_E2E_ONLY:-}
app=$E2E_BIN/gpu_app
plain=$E2E_BIN/plain_app
app_args=(-s "$steps" -k "$dispatches" -n "$size")
# Long enough for a loaded TCG guest, short enough to notice a hang.
run_limit=300

work=$(mktemp -d "${TMPDIR:-/tmp}/kfdsim-e2e.XXXXXX") || exit 1
trap 'rm -rf "$work" "$E2E_REAPED"' EXIT

n=0
pass=0
fail=0
skip=0
suite_start=$(e2e_ms)

tap() {		# tap ok|fail|skip NAME DETAIL
	n=$((n + 1))
	case "$1" in
	ok)	pass=$((pass + 1)); echo "ok $n $2${3:+ # $3}" ;;
	skip)	skip=$((skip + 1)); echo "ok $n $2 # SKIP $3" ;;
	*)	fail=$((fail + 1)); echo "not ok $n $2${3:+ # $3}" ;;
	esac
}

note() {
	echo "# $*"
}

# Keep the logs of a failed test where the host can read them.
keep_logs() {
	local dest
	[ -n "${KFDSIM_VM_RESULTS:-}" ] && [ -w "$KFDSIM_VM_RESULTS" ] || return 0
	dest=$KFDSIM_VM_RESULTS/e2e/$1
	mkdir -p "$dest"
	(cd "$work" && find . \( -name '*.log' -o -name '*.out' \) -print0 |
		xargs -0 -r cp --parents -t "$dest") 2>/dev/null
	dmesg >"$dest/dmesg" 2>/dev/null
}

# Lines of a file, indented as TAP comments.
show() {
	sed 's/^/#   /' "$@" 2>/dev/null
}

wanted() {
	[ -z "$only" ] || [[ " $only " == *" $1 "* ]]
}

# The exit status the reaper recorded for PID, or empty.
reaped_status() {
	awk -v p="$1" '$1 == p { s = $2 " " $3 } END { print s }' "$E2E_REAPED"
}

# The expected RESULT lines for gpu_app with ARGS.
expected() {
	"$app" --expected "$@" | sort
}

# check_result LOG EXPECTED_FILE: the log's RESULT lines are the expected.
check_result() {
	if [ "$(e2e_results "$1")" = "$(cat "$2")" ]; then
		return 0
	fi
	note "RESULT lines differ; expected:"
	show "$2"
	note "got (tail of $1):"
	tail -n 8 "$1" | show
	return 1
}

# dump_mid NAME PID DIR [criu options]: dump, with comments; checks the app
# was still computing (its log, saved as DIR/app.log, has no "loop done").
dump_mid() {
	local name=$1 pid=$2 dir=$3 log=$work/$1.log
	shift 3
	if ! e2e_dump "$pid" "$dir" "$@"; then
		note "criu dump failed after $E2E_DUMP_S s:"
		e2e_criu_errors "$dir/dump.log" 10 | show
		return 1
	fi
	# CRIU checks the size of files at restore: keep the log as dumped.
	cp "$log" "$dir/app.log"
	note "dump of $name: $E2E_DUMP_S s, images $(e2e_du "$dir")"
	if grep -q 'loop done' "$dir/app.log"; then
		note "the loop kernels had already finished at the dump"
		return 1
	fi
	return 0
}

# restore_from NAME DIR [criu options]: put the app's log back as it was at
# the dump, restore detached; returns criu's status.
restore_from() {
	local name=$1 dir=$2
	shift 2
	cp "$dir/app.log" "$work/$name.log"
	if ! e2e_restore "$dir" "$@"; then
		note "criu restore failed after $E2E_RESTORE_S s"
		return 1
	fi
	note "restore of $name: $E2E_RESTORE_S s"
	return 0
}

# finish NAME PID EXPECTED: wait for PID to exit, then check its exit
# status and RESULT lines. Every app ends up a child of the reaper (they
# are started from command substitutions, restored ones from criu -d).
finish() {
	local name=$1 pid=$2 exp=$3 t st
	t=$(e2e_ms)
	if ! e2e_wait_exit "$pid" "$run_limit"; then
		note "$name (pid $pid) still running after $run_limit s"
		tail -n 5 "$work/$name.log" | show
		e2e_kill "$pid"
		return 1
	fi
	st=$(reaped_status "$pid")
	note "$name finished after $(e2e_since "$t") s more (${st:-status unknown})"
	check_result "$work/$name.log" "$exp" || return 1
	[ -z "$st" ] || [ "$st" = "exit 0" ]
}

# start_app NAME ARGS...: start gpu_app with a ready marker; prints its pid
# once the loop kernels run.
start_app() {
	local name=$1 pid
	shift
	pid=$(e2e_start "$work/$name.log" "$work/$name.pid" "$app" \
		--pid-file "$work/$name.pid" --ready "$work/$name.ready" "$@") ||
		{ note "$name did not start"; show "$work/$name.log"; return 1; }
	if ! e2e_wait_file "$work/$name.ready" "$run_limit" "$pid"; then
		note "$name never got ready"
		tail -n 8 "$work/$name.log" | show
		e2e_kill "$pid"
		return 1
	fi
	echo "$pid"
}

# ---- the tests; each returns 0 (pass), 1 (fail) or 2 (skip, reason in
# $why) ----

need_plugin() {
	if ! e2e_have_plugin; then
		why="no plugin at $E2E_PLUGIN_DIR/kfd_plugin.so"
		return 1
	fi
}

t_plain_app() {
	local pid dir=$work/img-plain exp=$work/plain.exp st
	"$plain" --expected -s 100 >"$exp"
	pid=$(e2e_start "$work/plain.log" "$work/plain.pid" "$plain" -s 100 \
		--pid-file "$work/plain.pid" --ready "$work/plain.ready") ||
		return 1
	e2e_wait_file "$work/plain.ready" 60 "$pid" || { e2e_kill "$pid"; return 1; }
	if ! e2e_have_plugin; then
		note "no plugin built: dumping with an empty plugin directory"
		mkdir -p "$work/noplugin"
		E2E_PLUGIN_DIR=$work/noplugin
	fi
	if ! e2e_dump "$pid" "$dir"; then
		note "criu dump failed:"
		e2e_criu_errors "$dir/dump.log" 10 | show
		E2E_PLUGIN_DIR=${KFDSIM_PLUGIN_DIR:-$E2E_TOP/build/plugin}
		e2e_kill "$pid"
		return 1
	fi
	cp "$work/plain.log" "$dir/app.log"
	note "dump: $E2E_DUMP_S s, images $(e2e_du "$dir")"
	e2e_wait_exit "$pid" 10 || { note "still running after the dump"; return 1; }
	if ! e2e_restore "$dir"; then
		note "criu restore failed:"
		e2e_criu_errors "$dir/restore.log" 10 | show
		E2E_PLUGIN_DIR=${KFDSIM_PLUGIN_DIR:-$E2E_TOP/build/plugin}
		return 1
	fi
	E2E_PLUGIN_DIR=${KFDSIM_PLUGIN_DIR:-$E2E_TOP/build/plugin}
	note "restore: $E2E_RESTORE_S s"
	e2e_wait_exit "$pid" 120 || { e2e_kill "$pid"; return 1; }
	st=$(reaped_status "$pid")
	check_result "$work/plain.log" "$exp" || return 1
	[ "$st" = "exit 0" ] || { note "exit: ${st:-unknown}"; return 1; }
	# The plugin must stay silent about a process that has no GPU.
	if grep -E '^\([0-9. ]+\) +Error' "$dir/dump.log" "$dir/restore.log"; then
		note "criu logged errors"
		return 1
	fi
	if grep -hE 'kfd_plugin: (error|warning)' "$dir/dump.log" \
			"$dir/restore.log" | head -n 5 | show | grep .; then
		note "the plugin complained about a process without a GPU"
		return 1
	fi
}

t_run() {
	local pid exp=$work/run.exp
	expected "${app_args[@]}" >"$exp"
	pid=$(e2e_start "$work/run.log" "$work/run.pid" "$app" \
		--pid-file "$work/run.pid" "${app_args[@]}") || return 1
	finish run "$pid" "$exp"
}

main_dir=
main_pid=
t_dump() {
	local pid dir=$work/img-main exp=$work/main.exp
	need_plugin || return 2
	expected "${app_args[@]}" >"$exp"
	pid=$(start_app main "${app_args[@]}") || return 1
	sleep 1
	dump_mid main "$pid" "$dir" || { e2e_kill "$pid"; return 1; }
	if ! e2e_wait_exit "$pid" 10; then
		note "pid $pid still there after the dump"
		e2e_kill "$pid"
		return 1
	fi
	# Keep a pristine copy for the other-node and corruption tests.
	cp -a "$dir" "$work/img-main.orig"
	main_dir=$work/img-main.orig
	main_pid=$pid
	restore_from main "$dir" || {
		e2e_criu_errors "$dir/restore.log" 10 | show; return 1; }
	finish main "$pid" "$exp"
}

# copy_path_used LOG MODE WHAT: every GPU's BO contents went via MODE.
copy_path_used() {
	local log=$1 mode=$2 what=$3 want got
	want=$(grep -c "kfd_plugin: GPU [0-9]*: $what BO contents via $mode" "$log")
	got=$(grep -c "kfd_plugin: GPU [0-9]*: $what BO contents via" "$log")
	grep -h "kfd_plugin: GPU [0-9]*: $what BO contents via" "$log" | show
	if [ "$want" -eq 0 ] || [ "$want" -ne "$got" ]; then
		note "$what: $want of $got GPUs went via $mode"
		return 1
	fi
}

t_copy_paths() {
	local mode pid dir exp=$work/paths.exp rc=0
	need_plugin || return 2
	expected "${app_args[@]}" >"$exp"
	for mode in cpu sdma; do
		dir=$work/img-$mode
		pid=$(start_app "paths-$mode" "${app_args[@]}") || return 1
		sleep 1
		KFD_BO_COPY=$mode dump_mid "paths-$mode" "$pid" "$dir" ||
			{ e2e_kill "$pid"; return 1; }
		e2e_wait_exit "$pid" 10 ||
			{ note "pid $pid still there after the dump"; e2e_kill "$pid"; return 1; }
		copy_path_used "$dir/dump.log" "$mode" saving || rc=1
		KFD_BO_COPY=$mode restore_from "paths-$mode" "$dir" || {
			e2e_criu_errors "$dir/restore.log" 10 | show; return 1; }
		copy_path_used "$dir/restore.log" "$mode" restoring || rc=1
		finish "paths-$mode" "$pid" "$exp" || rc=1
		rm -rf "$dir"
	done
	return $rc
}

# A plugin image whose name matches PATTERN, from the pristine dump.
plugin_image() {
	find "$1" -maxdepth 1 -name "$2" | sort | head -n 1
}

t_corrupt() {
	local dir img rc=0 pat_pages pat_kfd msg_pages msg_kfd
	need_plugin || return 2
	[ -n "$main_dir" ] || { why="no images from the dump test"; return 2; }
	# Image names and messages of the plugin (userspace-plugin/).
	pat_pages='kfd-pages-*.img'
	pat_kfd='kfd-[0-9]*.img'
	msg_pages='kfd_plugin: error: .*checksum mismatch'
	msg_kfd='kfd_plugin: error: image kfd-[0-9]+\.img is truncated'

	dir=$work/img-flip
	cp -a "$main_dir" "$dir"
	img=$(plugin_image "$dir" "$pat_pages")
	if [ -z "$img" ]; then
		note "no pages image ($pat_pages) in the dump:"
		find "$dir" -maxdepth 1 -name '*.img' -printf '%f\n' | show
		return 1
	fi
	# Flip one byte in the middle of the BO contents.
	local off=$(($(stat -c %s "$img") / 2)) byte
	byte=$(od -An -tu1 -j "$off" -N1 "$img" | tr -d ' ')
	# shellcheck disable=SC2059 # the format is the octal escape
	printf "$(printf '\\%03o' $((byte ^ 0xff)))" |
		dd of="$img" bs=1 seek="$off" conv=notrunc status=none
	note "flipped the byte at $off of $(basename "$img")"
	if restore_from main "$dir"; then
		note "restore of a corrupted pages image succeeded"
		e2e_kill "$main_pid"
		rc=1
	else
		grep -E "$msg_pages" "$dir/restore.log" | head -n 3 | show
		grep -qE "$msg_pages" "$dir/restore.log" ||
			{ note "no message /$msg_pages/ in the restore log"; rc=1; }
	fi
	e2e_alive "$main_pid" && { note "a process was left behind"; e2e_kill "$main_pid"; rc=1; }

	dir=$work/img-trunc
	cp -a "$main_dir" "$dir"
	img=$(plugin_image "$dir" "$pat_kfd")
	if [ -z "$img" ]; then
		note "no KFD image ($pat_kfd) in the dump"
		return 1
	fi
	truncate -s $(($(stat -c %s "$img") / 2)) "$img"
	note "truncated $(basename "$img") to half"
	if restore_from main "$dir"; then
		note "restore of a truncated KFD image succeeded"
		e2e_kill "$main_pid"
		rc=1
	else
		grep -E "$msg_kfd" "$dir/restore.log" | head -n 3 | show
		grep -qE "$msg_kfd" "$dir/restore.log" ||
			{ note "no message /$msg_kfd/ in the restore log"; rc=1; }
	fi
	e2e_alive "$main_pid" && { note "a process was left behind"; e2e_kill "$main_pid"; rc=1; }
	return $rc
}

t_other_node() {
	local dir=$work/img-node1 before after
	need_plugin || return 2
	[ -n "$main_dir" ] || { why="no images from the dump test"; return 2; }
	before=$(e2e_gpus)
	e2e_load 1 2 || { note "reload with seed=1 failed"; return 1; }
	after=$(e2e_gpus)
	note "GPUs at the dump: $before; now: $after"
	[ "$before" != "$after" ] || { note "seed=1 did not change the GPUs"; return 1; }
	cp -a "$main_dir" "$dir"
	restore_from main "$dir" || {
		e2e_criu_errors "$dir/restore.log" 10 | show; return 1; }
	finish main "$main_pid" "$work/main.exp"
}

t_too_few() {
	local dir=$work/img-node2 rc=0
	local msg='kfd_plugin: error: too few GPUs'
	need_plugin || return 2
	[ -n "$main_dir" ] || { why="no images from the dump test"; return 2; }
	e2e_load 2 1 || { note "reload with num_gpus=1 failed"; return 1; }
	note "GPUs now: $(e2e_gpus)"
	cp -a "$main_dir" "$dir"
	if restore_from main "$dir"; then
		note "restore onto 1 GPU succeeded"
		e2e_kill "$main_pid"
		rc=1
	else
		grep -E "$msg" "$dir/restore.log" | head -n 3 | show
		grep -qE "$msg" "$dir/restore.log" ||
			{ note "no message /$msg/ in the restore log"; rc=1; }
	fi
	e2e_alive "$main_pid" && { note "a process was left behind"; e2e_kill "$main_pid"; rc=1; }
	return $rc
}

# With --leave-running the original goes on writing its log right after
# the dump, so the log could not be saved at the size the images record.
# Stop it around the dump instead; criu then also restores it stopped.
t_leave() {
	local pid dir=$work/img-leave exp=$work/leave.exp
	need_plugin || return 2
	expected "${app_args[@]}" >"$exp"
	pid=$(start_app leave "${app_args[@]}") || return 1
	sleep 1
	kill -STOP "$pid"
	dump_mid leave "$pid" "$dir" --leave-running || { e2e_kill "$pid"; return 1; }
	kill -CONT "$pid"
	e2e_alive "$pid" || { note "the original is gone after --leave-running"; return 1; }
	finish leave "$pid" "$exp" || return 1
	restore_from leave "$dir" || {
		e2e_criu_errors "$dir/restore.log" 10 | show; return 1; }
	grep -q '^State:.*T' "/proc/$pid/status" ||
		note "the restored copy is not stopped: $(grep '^State' "/proc/$pid/status")"
	kill -CONT "$pid"
	finish leave "$pid" "$exp"
}

# The consistent tests: gpu_app --spread. Short dispatches, so that the GPU
# moves between the three arrays many times while criu dumps.
read -r spread_steps spread_dispatches spread_size <<<"${KFDSIM_E2E_SPREAD:-200 20 256K}"
spread_args=(--spread -s "$spread_steps" -k "$spread_dispatches" -n "$spread_size")

# released_late DIR PID: the dump log says the plugin let PID's GPU work go
# on only after criu had dumped everything (the plugin's exit or
# DUMP_DEVICES_LATE), and not before.
released_late() {
	local log=$1/dump.log pid=$2 line
	line=$(grep -h "kfd_plugin: GPU queues of pid $pid run again" "$log")
	[ -z "$line" ] || echo "$line" | show
	case $line in
	*"every task's files and memory are dumped"*) return 0 ;;
	esac
	note "no line 'GPU queues of pid $pid run again: every task's files and memory are dumped' in the dump log"
	return 1
}

t_consistent() {
	local pid dir=$work/img-consist exp=$work/consist.exp rc=0
	need_plugin || return 2
	expected "${spread_args[@]}" >"$exp"
	pid=$(start_app consist "${spread_args[@]}") || return 1
	sleep 1
	dump_mid consist "$pid" "$dir" || { e2e_kill "$pid"; return 1; }
	e2e_wait_exit "$pid" 10 ||
		{ note "pid $pid still there after the dump"; e2e_kill "$pid"; return 1; }
	released_late "$dir" "$pid" || rc=1
	restore_from consist "$dir" || {
		e2e_criu_errors "$dir/restore.log" 10 | show; return 1; }
	finish consist "$pid" "$exp" && return $rc
}

# As t_leave: the original is stopped around the dump (its GPU work is
# not: SIGSTOP stops only the CPU side).
t_consistent_leave() {
	local pid dir=$work/img-consist-leave exp=$work/consist.exp rc=0
	need_plugin || return 2
	expected "${spread_args[@]}" >"$exp"
	pid=$(start_app consist-leave "${spread_args[@]}") || return 1
	sleep 1
	kill -STOP "$pid"
	dump_mid consist-leave "$pid" "$dir" --leave-running ||
		{ e2e_kill "$pid"; return 1; }
	kill -CONT "$pid"
	released_late "$dir" "$pid" || rc=1
	finish consist-leave "$pid" "$exp" || return 1
	restore_from consist-leave "$dir" || {
		e2e_criu_errors "$dir/restore.log" 10 | show; return 1; }
	kill -CONT "$pid"
	finish consist-leave "$pid" "$exp" && return $rc
}

# "fd target" lines of a process, by fd number.
fd_list() {
	local f
	for f in /proc/"$1"/fd/*; do
		echo "${f##*/} $(readlink "$f")"
	done | sort -n
}

# Three times the work: each cycle costs the app several seconds of run
# time. After every restore the process must hold exactly the fds it had.
t_cycles() {
	local pid c exp=$work/cycles.exp rc=0
	local args=(-s $((steps * 3)) -k "$dispatches" -n "$size")
	need_plugin || return 2
	expected "${args[@]}" >"$exp"
	pid=$(start_app cycles "${args[@]}") || return 1
	fd_list "$pid" >"$work/cycles.fds"
	for c in 1 2 3; do
		sleep 0.5
		dump_mid cycles "$pid" "$work/img-cycle$c" ||
			{ e2e_kill "$pid"; return 1; }
		e2e_wait_exit "$pid" 10 || { e2e_kill "$pid"; return 1; }
		restore_from cycles "$work/img-cycle$c" || {
			e2e_criu_errors "$work/img-cycle$c/restore.log" 10 | show
			return 1; }
		e2e_alive "$pid" || { note "cycle $c: not running after the restore"; break; }
		fd_list "$pid" >"$work/cycles.fds.$c"
		if ! e2e_alive "$pid"; then
			note "cycle $c: finished before its fds could be compared"
		elif ! diff "$work/cycles.fds" "$work/cycles.fds.$c" >"$work/cycles.fddiff"; then
			note "cycle $c: the fds changed:"
			show "$work/cycles.fddiff"
			rc=1
		fi
	done
	finish cycles "$pid" "$exp" && return $rc
}

# Half the work per process: the two share the GPUs.
t_tree() {
	local pid dir=$work/img-tree exp=$work/tree.exp
	local args=(--fork -s $((steps / 2)) -k "$dispatches" -n "$size")
	need_plugin || return 2
	expected "${args[@]}" >"$exp"
	pid=$(start_app tree "${args[@]}") || return 1
	sleep 1
	note "tree: $(pgrep -s "$pid" | tr '\n' ' ')"
	dump_mid tree "$pid" "$dir" || { e2e_kill "$pid"; return 1; }
	e2e_wait_exit "$pid" 10 || { e2e_kill "$pid"; return 1; }
	restore_from tree "$dir" || {
		e2e_criu_errors "$dir/restore.log" 10 | show; return 1; }
	finish tree "$pid" "$exp"
}

t_stream() {
	if ! command -v criu-image-streamer >/dev/null; then
		why="criu-image-streamer not packaged in Debian 12"
		return 2
	fi
	why="criu-image-streamer found but no stream test written"
	return 2
}

# ---- main ----

run_test() {
	local name=$1 fn=$2 t rc
	wanted "$name" || return 0
	why=
	note "---- $name"
	t=$(e2e_ms)
	"$fn"
	rc=$?
	if [ $rc -eq 2 ]; then
		tap skip "$name" "$why"
	elif [ $rc -eq 0 ]; then
		tap ok "$name" "$(e2e_since "$t") s"
	else
		tap fail "$name" "$(e2e_since "$t") s"
		keep_logs "$name"
	fi
}

echo "TAP version 13"
if [ "$(id -u)" -ne 0 ]; then
	tap fail "running as root"
elif [ ! -x "$app" ] || [ ! -x "$plain" ]; then
	tap fail "build/e2e binaries present (make -C selftests/e2e)"
elif ! command -v "$E2E_CRIU" >/dev/null; then
	tap fail "criu installed"
else
	e2e_criu_prepare
	note "$("$E2E_CRIU" --version | head -n 1); plugin dir $E2E_PLUGIN_DIR"
	if "$E2E_CRIU" check >"$work/check.log" 2>&1; then
		note "criu check: $(tail -n 1 "$work/check.log")"
	else
		note "criu check failed:"
		show "$work/check.log"
	fi
	if [ "$(e2e_param seed)" != 0 ] || [ "$(e2e_param num_gpus)" != 2 ]; then
		if e2e_load 0 2; then
			tap ok "load kfdsim seed=0 num_gpus=2 (${E2E_KO:-})"
		else
			tap fail "load kfdsim seed=0 num_gpus=2 (${E2E_KO:-})"
		fi
	fi
	note "module from ${E2E_KO:-$(e2e_module_file)}; GPUs: $(e2e_gpus)"
	note "gpu_app ${app_args[*]}"

	run_test plain_app t_plain_app
	run_test run t_run
	run_test dump t_dump
	run_test copy-paths t_copy_paths
	run_test corrupt t_corrupt
	run_test other-node t_other_node
	run_test too-few t_too_few
	if [ "$(e2e_param seed)" != 0 ] || [ "$(e2e_param num_gpus)" != 2 ]; then
		if e2e_load 0 2; then
			tap ok "reload kfdsim seed=0 num_gpus=2"
		else
			tap fail "reload kfdsim seed=0 num_gpus=2"
		fi
	fi
	run_test leave t_leave
	run_test consistent t_consistent
	run_test consistent-leave t_consistent_leave
	run_test cycles t_cycles
	run_test tree t_tree
	run_test stream t_stream

	# Every process is gone: the driver must hold nothing any more.
	counters=/sys/kernel/debug/kfdsim/counters
	if [ -r "$counters" ] && awk '$2 != 0 { bad = 1 } END { exit bad }' "$counters"; then
		tap ok "no KFD objects left (debugfs counters at 0)"
	else
		show "$counters"
		tap fail "no KFD objects left (debugfs counters at 0)"
	fi
fi

note "e2e suite: $(e2e_since "$suite_start") s"
echo "1..$n"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
[ "$fail" -eq 0 ]
