#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A GPU container checkpointed and restored by a real container engine:
# Debian 12's podman 4.3 with runc 1.1 (which drives Debian's criu 3.17.1
# through its RPC interface), this project's CRIU plugin, and the
# end-to-end workload build/e2e/gpu_app. For the test VM, as root, from the
# repository root (scripts/containers, `make containers`, does it all):
#
#   scripts/vm-run -- selftests/containers/run.sh
#
# Needs: `scripts/install-deps containers` (podman, runc), the module, the
# plugin (make plugin) and the e2e programs (make -C selftests/e2e).
#
# Setup, all in the guest's tmpfs (the root file system is read-only):
# - podman's storage (vfs driver), run root, temporary and libpod
#   directories under a work directory, through CONTAINERS_CONF and
#   CONTAINERS_STORAGE_CONF; cgroupfs as cgroup manager on a cgroup v2
#   hierarchy mounted here, events to a file, runc as the OCI runtime
#   (Debian's crun 1.8.1 is built without CRIU: "compiled without CRIU
#   support. Checkpointing not available");
# - the image: `podman import` of a tarball holding gpu_app and the two
#   libraries it links (no registry);
# - criu finds the plugin through a criu configuration file named by the
#   container's org.criu.config annotation, which runc hands to criu for
#   checkpoint and restore (runc's default is /etc/criu/runc.conf): it
#   says `libdir <plugin dir>`.
# The container gets /dev/kfd and the render node of the second GPU only
# (--device), so its device cgroup (a BPF program runc installs) hides the
# first GPU: gpu_app and the plugin must skip that GPU's topology node,
# which answers -EPERM.
#
# Tests (TAP, each with its time):
#   run        the container runs gpu_app to the end: the CPU reference's
#              RESULT line
#   checkpoint the same workload, checkpointed mid-computation with
#              `podman container checkpoint --export` (the container
#              stops); the plugin's log shows it saved the GPU state
#   restore    `podman container restore --import` of that archive, same
#              module load: the restored container ends with the reference
#              RESULT
#   other-seed the same archive restored after reloading kfdsim with
#              seed=1 (other gpu_ids and render minors; the container's
#              render node now belongs to the other GPU): reference RESULT
# Then the module's live-object counters must be 0 once the containers
# are removed. Output ends with a "# Totals:" line like the kselftest
# harness's; the exit status is 0 unless something failed. Logs go to
# $KFDSIM_VM_RESULTS/containers/ when that is writable.
#
# Environment: KFDSIM_KO (see selftests/e2e/lib.sh), KFDSIM_PLUGIN_DIR,
# KFDSIM_CONTAINERS_STEPS (loop steps per dispatch, default 500).

set -u

# criu refuses to dump a mount namespace whose tasks' roots it cannot see
# as "/" ("The root task has another root than mntns: /newroot"): the VM
# job runs chrooted into the 9p root, so every namespace podman makes
# still hangs below the initramfs. Re-run this script in a mount namespace
# of its own whose root is the 9p mount itself (what switch_root does).
if [ -z "${KFDSIM_CONTAINERS_ROOTED:-}" ]; then
	self=$(readlink -f "$0")
	# shellcheck disable=SC2016 # $0 expands in the inner shell
	exec nsenter -t 1 -m -r /bin/busybox unshare -m /bin/busybox sh -c \
		'cd /newroot && mount --move . / && exec chroot . /usr/bin/env KFDSIM_CONTAINERS_ROOTED=1 /bin/bash "$0"' \
		"$self"
	echo "containers: cannot enter a rooted mount namespace" >&2
	exit 1
fi

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
# shellcheck source=selftests/e2e/lib.sh
. "$top/selftests/e2e/lib.sh"

steps=${KFDSIM_CONTAINERS_STEPS:-500}
app_args=(-g 1 -s "$steps" -k 4 -n 1M --odd-bos)
image=localhost/kfdsim-gpu-app:1
limit=300

n=0
pass=0
fail=0

tap() {		# tap ok|fail NAME SECONDS [DETAIL]
	n=$((n + 1))
	if [ "$1" = ok ]; then
		pass=$((pass + 1))
		echo "ok $n $2 # ${3}s${4:+, $4}"
	else
		fail=$((fail + 1))
		echo "not ok $n $2 # ${3}s${4:+, $4}"
	fi
}

note() {
	echo "# $*"
}

w=$(mktemp -d /tmp/kfdsim-containers.XXXXXX) || exit 1
logs=
if [ -n "${KFDSIM_VM_RESULTS:-}" ] && [ -w "$KFDSIM_VM_RESULTS" ]; then
	logs=$KFDSIM_VM_RESULTS/containers
	mkdir -p "$logs"
fi

keep() {	# keep FILE...: copy logs to the results directory
	[ -n "$logs" ] && cp "$@" "$logs/" 2>/dev/null
	return 0
}

finish() {
	echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
	[ "$fail" -eq 0 ]
	exit
}

bail() {
	note "$*"
	fail=$((fail + 1))
	finish
}

for prog in podman runc; do
	command -v "$prog" >/dev/null ||
		bail "$prog is not installed (scripts/install-deps containers)"
done
[ -x "$E2E_BIN/gpu_app" ] || bail "$E2E_BIN/gpu_app missing (make -C selftests/e2e)"
e2e_have_plugin || bail "no $E2E_PLUGIN_DIR/$E2E_PLUGIN_SO (make plugin)"

# ---- the host side of the engine ----

e2e_criu_prepare
modprobe -q overlay 2>/dev/null
if ! mountpoint -q /sys/fs/cgroup; then
	mount -t cgroup2 none /sys/fs/cgroup || bail "cannot mount cgroup2"
fi
e2e_loaded && [ "$(e2e_param seed)" = 0 ] && [ "$(e2e_param num_gpus)" = 2 ] ||
	e2e_load 0 2 || bail "cannot load kfdsim seed=0 num_gpus=2"

mkdir -p "$w/tmp" "$w/out" "$w/rootfs/lib64" \
	"$w/rootfs/lib/x86_64-linux-gnu" "$w/rootfs/out"
cat >"$w/containers.conf" <<EOF
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$w/events.log"
runtime = "runc"
image_copy_tmp_dir = "$w/tmp"
tmp_dir = "$w/libpod"
EOF
cat >"$w/storage.conf" <<EOF
[storage]
driver = "vfs"
graphroot = "$w/graph"
runroot = "$w/runroot"
EOF
cat >"$w/criu.conf" <<EOF
libdir $E2E_PLUGIN_DIR
log-file $w/criu.log
EOF
export CONTAINERS_CONF=$w/containers.conf
export CONTAINERS_STORAGE_CONF=$w/storage.conf
export TMPDIR=$w/tmp

# The image: gpu_app and what it links, nothing else.
cp "$E2E_BIN/gpu_app" "$w/rootfs/gpu_app"
for lib in $(ldd "$E2E_BIN/gpu_app" | awk '$(NF - 1) ~ /^\// { print $(NF - 1) } $1 ~ /^\// { print $1 }'); do
	mkdir -p "$w/rootfs$(dirname "$lib")"
	cp -L "$lib" "$w/rootfs$lib"
done
tar -C "$w/rootfs" -cf "$w/rootfs.tar" . || bail "cannot pack the rootfs"
start=$(e2e_ms)
podman import "$w/rootfs.tar" "$image" >"$w/import.log" 2>&1 || {
	keep "$w/import.log"
	bail "podman import failed: $(tail -n 1 "$w/import.log")"
}
note "podman import of the gpu_app rootfs: $(e2e_since "$start") s"

expected=$("$E2E_BIN/gpu_app" "${app_args[@]}" --expected)
# The container's GPU: the second one in node order.
minor() {
	e2e_gpus | tr ' ' '\n' | sed -n 2p | sed 's/.*:renderD//'
}
m=$(minor)
[ -n "$m" ] || bail "no second GPU"
note "container device: /dev/dri/renderD$m; expected: $expected"

# run_app NAME: start gpu_app in container NAME, wait until its loop
# kernels run.
run_app() {
	local i
	rm -f "$w/out/ready" "$w/out/go"
	podman run -d --name "$1" --network host \
		--device /dev/kfd --device "/dev/dri/renderD$m" \
		-v "$w/out:/out" --annotation "org.criu.config=$w/criu.conf" \
		"$image" /gpu_app "${app_args[@]}" -r /out/ready --go /out/go \
		>"$w/$1.run" 2>&1 || return 1
	for ((i = 0; i < limit * 5; i++)); do
		[ -e "$w/out/ready" ] && return 0
		[ "$(podman inspect -f '{{.State.Running}}' "$1" 2>/dev/null)" = true ] ||
			return 1
		sleep 0.2
	done
	return 1
}

# finish_app NAME: let it verify, wait for it; its log must hold the
# reference RESULT and it must exit 0.
finish_app() {
	local rc
	touch "$w/out/go"
	rc=$(timeout "$limit" podman wait "$1" 2>/dev/null)
	podman logs "$1" >"$w/$1.log" 2>&1
	keep "$w/$1.log"
	[ "$rc" = 0 ] && grep -qx "$expected" "$w/$1.log"
}

# ---- tests ----

start=$(e2e_ms)
if run_app app-run && finish_app app-run; then
	tap ok run "$(e2e_since "$start")"
else
	tap fail run "$(e2e_since "$start")" "$(tail -n 1 "$w/app-run.log" 2>/dev/null)"
fi
podman rm -f app-run >/dev/null 2>&1

start=$(e2e_ms)
ckpt=$w/ckpt.tar.gz
if run_app app &&
   podman container checkpoint --export "$ckpt" app >"$w/checkpoint.out" 2>&1 &&
   [ "$(podman inspect -f '{{.State.Status}}' app)" = exited ] &&
   grep -q 'kfd_plugin: ' "$w/criu.log"; then
	tap ok checkpoint "$(e2e_since "$start")" "archive $(du -k "$ckpt" | cut -f1) KiB"
else
	tap fail checkpoint "$(e2e_since "$start")" "$(tail -n 1 "$w/checkpoint.out")"
fi
cp "$w/criu.log" "$w/dump.log" 2>/dev/null
keep "$w/dump.log" "$w/checkpoint.out"
podman rm -f app >/dev/null 2>&1

# restore NAME TEST: restore the archive as container NAME.
restore() {
	local start
	start=$(e2e_ms)
	rm -f "$w/out/go"
	if timeout "$limit" podman container restore --import "$ckpt" \
			--name "$1" >"$w/$1.restore" 2>&1 && finish_app "$1"; then
		tap ok "$2" "$(e2e_since "$start")"
	else
		tap fail "$2" "$(e2e_since "$start")" \
			"$(tail -n 1 "$w/$1.restore") $(tail -n 1 "$w/$1.log" 2>/dev/null)"
	fi
	cp "$w/criu.log" "$w/$1-criu.log" 2>/dev/null
	dmesg >"$w/$1.dmesg" 2>/dev/null
	keep "$w/$1.restore" "$w/$1-criu.log" "$w/$1.dmesg"
	podman rm -f "$1" >/dev/null 2>&1
}

if [ -s "$ckpt" ]; then
	restore app-r1 restore
	if e2e_load 1 2; then
		note "reloaded with seed=1: $(e2e_gpus)"
		restore app-r2 other-seed
	else
		tap fail other-seed 0 "cannot reload kfdsim with seed=1"
	fi
else
	tap fail restore 0 "no checkpoint archive"
	tap fail other-seed 0 "no checkpoint archive"
fi

if [ -r /sys/kernel/debug/kfdsim/counters ] &&
   awk '$2 != 0 { bad = 1 } END { exit bad }' /sys/kernel/debug/kfdsim/counters; then
	tap ok counters 0
else
	tap fail counters 0 "$(tr '\n' ' ' </sys/kernel/debug/kfdsim/counters 2>/dev/null)"
fi
e2e_load 0 2 >/dev/null 2>&1
rm -rf "$w/graph" "$w/rootfs" "$w/rootfs.tar"
finish
