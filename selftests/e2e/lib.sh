# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # variables for the sourcing script
#
# Shell helpers (bash) for the CRIU end-to-end scripts: selftests/e2e/run.sh,
# scripts/demo-criu and scripts/bench-guest. Source it; it defines e2e_*
# functions and variables and runs nothing.
#
# Everything runs in the test VM, as root, from the repository root.
#
# Environment:
#   KFDSIM_PLUGIN_DIR  directory of the CRIU plugin (default build/plugin)
#   KFDSIM_E2E_PLUGIN  which plugin that directory holds: kfd (this
#                      project's kfd_plugin.so, the default) or amdgpu (AMD's
#                      amdgpu_plugin.so built from CRIU's sources by
#                      scripts/compat)
#   KFDSIM_KO          kfdsim.ko to insmod when the module is (re)loaded;
#                      by default the file whose build id matches the
#                      loaded module (./kfdsim.ko, build/e2e-ko/kfdsim.ko or
#                      the installed one), else `modprobe kfdsim`
#   KFDSIM_CRIU        the criu binary (default criu)
#   KFDSIM_MODPARAMS   more kfdsim parameters for every (re)load, e.g.
#                      "fill_threads=1" (benchmarks: A/B in one build)

E2E_TOP=${E2E_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
E2E_BIN=$E2E_TOP/build/e2e
E2E_PLUGIN_DIR=${KFDSIM_PLUGIN_DIR:-$E2E_TOP/build/plugin}
E2E_CRIU=${KFDSIM_CRIU:-criu}
E2E_PLUGIN=${KFDSIM_E2E_PLUGIN:-kfd}
E2E_PLUGIN_SO=${E2E_PLUGIN}_plugin.so
E2E_TOPOLOGY=/sys/class/kfd/kfd/topology/nodes

# Milliseconds since the epoch.
e2e_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# Seconds since START (ms), one decimal: "12.3".
e2e_since() {
	local d=$(($(e2e_ms) - $1))
	printf '%d.%d' $((d / 1000)) $((d % 1000 / 100))
}

# ---- CRIU ----

# What criu needs in the test VM (see FACTS): loopback up and the netlink,
# tun, veth and socket-diag modules. Harmless when already done.
e2e_criu_prepare() {
	local m
	ip link set lo up 2>/dev/null
	for m in nfnetlink nf_tables tun veth unix_diag inet_diag tcp_diag \
			udp_diag netlink_diag af_packet_diag; do
		modprobe -q "$m" 2>/dev/null
	done
	return 0
}

e2e_have_plugin() {
	[ -f "$E2E_PLUGIN_DIR/$E2E_PLUGIN_SO" ]
}

# The name pattern of the per-/dev/kfd image the plugin writes at dump.
e2e_kfd_image_pattern() {
	case $E2E_PLUGIN in
	amdgpu)	echo 'amdgpu-kfd-*.img' ;;
	*)	echo 'kfd-[0-9]*.img' ;;
	esac
}

# e2e_dump PID DIR [criu options...]: dump the tree of PID into DIR (created)
# with the plugin, log in DIR/dump.log. Sets E2E_DUMP_S (seconds) and
# returns criu's status.
e2e_dump() {
	local pid=$1 dir=$2 t rc
	shift 2
	mkdir -p "$dir"
	t=$(e2e_ms)
	"$E2E_CRIU" dump -t "$pid" -D "$dir" --shell-job \
		--libdir "$E2E_PLUGIN_DIR" -v4 -o dump.log "$@" \
		>"$dir/dump.out" 2>&1
	rc=$?
	E2E_DUMP_S=$(e2e_since "$t")
	return $rc
}

# e2e_restore DIR [criu options...]: restore DIR, detached, log in
# DIR/restore.log. Sets E2E_RESTORE_S and returns criu's status.
e2e_restore() {
	local dir=$1 t rc
	shift
	t=$(e2e_ms)
	"$E2E_CRIU" restore -D "$dir" --shell-job --libdir "$E2E_PLUGIN_DIR" \
		-d -v4 -o restore.log "$@" >"$dir/restore.out" 2>&1
	rc=$?
	E2E_RESTORE_S=$(e2e_since "$t")
	return $rc
}

# The error lines of a criu log, at most N (default 5).
e2e_criu_errors() {
	grep -E 'Error|error|fail' "$1" 2>/dev/null | head -n "${2:-5}"
}

# ---- the kfdsim module ----

e2e_loaded() {
	[ -d /sys/module/kfdsim ]
}

e2e_param() {
	cat "/sys/module/kfdsim/parameters/$1" 2>/dev/null
}

# The GNU build id of the loaded module, and of a module file.
e2e_loaded_build_id() {
	od -An -tx1 -v /sys/module/kfdsim/notes/.note.gnu.build-id 2>/dev/null |
		tr -d ' \n' | tail -c 40
}

e2e_file_build_id() {
	readelf -n "$1" 2>/dev/null | awk '/Build ID:/ { print $3; exit }'
}

# The module file to load again: $KFDSIM_KO, else the candidate with the
# loaded module's build id. Empty if none is known.
e2e_module_file() {
	local want f
	if [ -n "${KFDSIM_KO:-}" ]; then
		echo "$KFDSIM_KO"
		return
	fi
	want=$(e2e_loaded_build_id)
	[ -n "$want" ] || return 0
	for f in "$E2E_TOP/kfdsim.ko" "$E2E_TOP/build/e2e-ko/kfdsim.ko" \
			"$(modinfo -F filename kfdsim 2>/dev/null)"; do
		if [ -f "$f" ] && [ "$(e2e_file_build_id "$f")" = "$want" ]; then
			echo "$f"
			return
		fi
	done
}

# e2e_load SEED NUM_GPUS [VRAM_MB]: (re)load kfdsim with these parameters,
# from the same file as before (see e2e_module_file). Remember the file
# across reloads in E2E_KO.
e2e_load() {
	local seed=$1 n=$2 vram=${3:-256} i
	if [ -z "${E2E_KO:-}" ]; then
		E2E_KO=$(e2e_module_file)
		[ -n "$E2E_KO" ] || E2E_KO=modprobe
	fi
	if e2e_loaded; then
		rmmod kfdsim || return 1
	fi
	modprobe drm || return 1
	if [ "$E2E_KO" = modprobe ]; then
		# shellcheck disable=SC2086 # words: parameters
		modprobe kfdsim seed="$seed" num_gpus="$n" vram_mb="$vram" \
			${KFDSIM_MODPARAMS:-} || return 1
	else
		# shellcheck disable=SC2086
		insmod "$E2E_KO" seed="$seed" num_gpus="$n" vram_mb="$vram" \
			${KFDSIM_MODPARAMS:-} || return 1
	fi
	# devtmpfs creates the nodes as the module loads; give it a moment.
	for i in 1 2 3 4 5 6 7 8 9 10; do
		[ -c /dev/kfd ] && [ -e "$E2E_TOPOLOGY" ] && return 0
		sleep 0.2
	done
	return 1
}

# "gpu_id:renderDN ..." of the GPUs of the loaded module, in node order.
e2e_gpus() {
	local d id minor out=
	for d in "$E2E_TOPOLOGY"/*; do
		id=$(cat "$d/gpu_id")
		[ "$id" != 0 ] || continue
		minor=$(awk '$1 == "drm_render_minor" { print $2 }' "$d/properties")
		out="$out $id:renderD$minor"
	done
	echo "${out# }"
}

# ---- processes ----

# e2e_start LOG PIDFILE CMD [ARGS...]: start CMD in a new session with
# stdin from /dev/null and stdout/stderr to LOG, as CRIU wants it, and
# print its pid (read from PIDFILE, which CMD must write: the apps'
# --pid-file).
e2e_start() {
	local log=$1 pidfile=$2
	shift 2
	rm -f "$pidfile"
	setsid "$@" </dev/null >"$log" 2>&1 &
	for _ in $(seq 1 300); do
		if [ -s "$pidfile" ]; then
			cat "$pidfile"
			return 0
		fi
		kill -0 $! 2>/dev/null || break
		sleep 0.1
	done
	return 1
}

e2e_alive() {
	# A zombie has exited: it only waits to be reaped.
	[ -d "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}

# e2e_wait_file PATH SECONDS [PID]: wait for PATH to exist; give up early
# if PID dies.
e2e_wait_file() {
	local end=$(($(date +%s) + $2))
	while [ ! -e "$1" ]; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		[ -z "${3:-}" ] || e2e_alive "$3" || return 1
		sleep 0.1
	done
}

# e2e_wait_exit PID SECONDS: wait for PID to be gone.
e2e_wait_exit() {
	local end=$(($(date +%s) + $2))
	while e2e_alive "$1"; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.2
	done
}

# Kill PID (and its process group) if it still runs.
e2e_kill() {
	e2e_alive "$1" || return 0
	kill -9 -- "-$1" "$1" 2>/dev/null
	e2e_wait_exit "$1" 10
}

# The RESULT lines of an app's log, sorted.
e2e_results() {
	grep -E '^(child )?RESULT ' "$1" 2>/dev/null | sort
}

# Human-readable size of a directory or file.
e2e_du() {
	du -sh "$1" 2>/dev/null | cut -f1
}
