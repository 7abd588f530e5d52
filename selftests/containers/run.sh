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
# A second image holds a HIP program, build/e2e/hip_e2e_app (built by
# Debian's hipcc for gfx906, see selftests/e2e/hip_e2e_app.hip), with
# Debian's HIP runtime and all it loads: the libraries ldd lists (ROCr,
# libhsakmt, libdrm_amdgpu ...), the code object manager libamd_comgr.so.2
# that the HIP runtime dlopen()s, with the libraries it links (LLVM among
# them), and libdrm's amdgpu.ids. It runs on the one GPU the container may
# use (-g 1): one kernel whose last workgroup parks half way, its 4 waves
# spinning until the test releases them, so the checkpoint stops live
# waves. libhsakmt opens its semaphore in the container's /dev/shm; the
# test puts it there (hip_sem) between `podman init` and `podman start`, so
# libhsakmt maps it by its name and criu needs no link-remap (a semaphore
# libhsakmt created itself would be mapped under the temporary name glibc
# then renames). podman keeps the container's /dev/shm in the checkpoint
# archive.
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
#   hip-run    the HIP container runs to the end: the host CPU's RESULT
#   hip-checkpoint  the HIP container checkpointed with --export once its
#              kernel is parked (the app's ready marker); kfdsim only:
#              debugfs cwsr shows at least the 4 parked waves saved to the
#              queue's context save area during the checkpoint
#   hip-restore, hip-other-seed  that archive restored on the same load
#              and after the reload with seed=1; released, the app must
#              find its parked progress unchanged and end with the host
#              CPU's RESULT; kfdsim only: at least 4 waves resumed from
#              the save area
# (in the order run, checkpoint, hip-run, hip-checkpoint, restore,
# hip-restore, reload, other-seed, hip-other-seed).
# Then the module's live-object counters must be 0 once the containers
# are removed. Output ends with a "# Totals:" line like the kselftest
# harness's; the exit status is 0 unless something failed. Logs go to
# $KFDSIM_VM_RESULTS/containers/ when that is writable.
#
# Environment: KFDSIM_KO (see selftests/e2e/lib.sh), KFDSIM_PLUGIN_DIR,
# KFDSIM_CONTAINERS_STEPS (loop steps per dispatch, default 500),
# KFDSIM_CONTAINERS_HIP (0: no HIP container; its tests fail without
# build/e2e/hip_e2e_app), KFDSIM_CONTAINERS_GPU_APP (0: only the
# HIP container), KFDSIM_TIMEOUT_SCALE (multiplies the 300 s limits).

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
hip_app=$E2E_BIN/hip_e2e_app
hip_args=(-g 1 -s 512 -b 2)
hip_image=localhost/kfdsim-hip-app:1
with_hip=${KFDSIM_CONTAINERS_HIP:-1}
with_gpu_app=${KFDSIM_CONTAINERS_GPU_APP:-1}
limit=300
case ${KFDSIM_TIMEOUT_SCALE:-1} in
'' | *[!0-9]*) ;;
*) limit=$((limit * KFDSIM_TIMEOUT_SCALE)) ;;
esac

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

mkdir -p "$w/tmp" "$w/out" "$w/out-hip"
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
# No link-remap: the HIP container's semaphore exists before its program
# starts (hip_sem), so libhsakmt maps it by its name.
cat >"$w/criu-hip.conf" <<EOF
libdir $E2E_PLUGIN_DIR
log-file $w/criu-hip.log
EOF
export CONTAINERS_CONF=$w/containers.conf
export CONTAINERS_STORAGE_CONF=$w/storage.conf
export TMPDIR=$w/tmp

# rootfs DIR PROG [FILE...]: a root file system in DIR with PROG at /,
# each FILE at its own path, and every library ldd lists for any of them
# at the path ldd gives (copies, links resolved).
rootfs() {
	local dir=$1 prog=$2 f lib
	shift 2
	mkdir -p "$dir/out" "$dir/tmp" && chmod 1777 "$dir/tmp" &&
		cp "$prog" "$dir/" || return 1
	for f in "$prog" "$@"; do
		if [ "$f" != "$prog" ]; then
			mkdir -p "$dir$(dirname "$f")" && cp -L "$f" "$dir$f" ||
				return 1
		fi
		for lib in $(ldd "$f" 2>/dev/null | awk '$(NF - 1) ~ /^\// { print $(NF - 1) } $1 ~ /^\// { print $1 }'); do
			[ -e "$dir$lib" ] && continue
			mkdir -p "$dir$(dirname "$lib")" && cp -L "$lib" "$dir$lib" ||
				return 1
		done
	done
}

# import DIR IMAGE: podman import of the root file system in DIR as IMAGE.
# DIR and its tarball go once imported: they live in the guest's memory.
import() {
	local dir=$1 start mib
	start=$(e2e_ms)
	tar -C "$dir" -cf "$dir.tar" . || return 1
	rm -rf "$dir"
	mib=$(du -m "$dir.tar" | cut -f1)
	if ! podman import "$dir.tar" "$2" >"$w/import.log" 2>&1; then
		keep "$w/import.log"
		note "podman import of $2 failed: $(tail -n 1 "$w/import.log")"
		rm -f "$dir.tar"
		return 1
	fi
	rm -f "$dir.tar"
	note "podman import of $2 ($mib MiB): $(e2e_since "$start") s"
}

# The image: gpu_app and what it links, nothing else.
if [ "$with_gpu_app" != 0 ]; then
	rootfs "$w/rootfs" "$E2E_BIN/gpu_app" || bail "cannot build the gpu_app rootfs"
	import "$w/rootfs" "$image" || bail "cannot import the gpu_app image"
fi

# The HIP image: hip_e2e_app, what it links, the code object manager the
# HIP runtime dlopen()s with what that links (LLVM), libdrm's GPU names.
hip_ok=
hip_expected=
if [ "$with_hip" = 0 ]; then
	note "KFDSIM_CONTAINERS_HIP=0: no HIP container"
elif [ ! -x "$hip_app" ]; then
	note "no $hip_app (Debian's hipcc missing at build)"
else
	comgr=$(ldconfig -p | awk '$1 == "libamd_comgr.so.2" { print $NF; exit }')
	if [ -z "$comgr" ]; then
		note "no libamd_comgr.so.2 (libamd-comgr2), which the HIP runtime loads"
	elif rootfs "$w/rootfs-hip" "$hip_app" "$comgr" \
			/usr/share/libdrm/amdgpu.ids &&
	     import "$w/rootfs-hip" "$hip_image"; then
		hip_ok=1
		hip_expected=$("$hip_app" --expected "${hip_args[@]}")
	else
		note "cannot build the HIP image"
	fi
fi

expected=$("$E2E_BIN/gpu_app" "${app_args[@]}" --expected)
# The container's GPU: the second one in node order.
minor() {
	e2e_gpus | tr ' ' '\n' | sed -n 2p | sed 's/.*:renderD//'
}
m=$(minor)
[ -n "$m" ] || bail "no second GPU"
note "container device: /dev/dri/renderD$m; expected: $expected${hip_expected:+, HIP: $hip_expected}"

# run_app NAME OUT IMAGE CONF CMD...: start CMD in container NAME of
# IMAGE, with the criu configuration file CONF, the directory OUT as /out
# and the podman options in the array run_opts; wait until CMD created
# /out/ready. With pre_start set, the container is created and
# initialised first (its mounts made, its process waiting before CMD) and
# the function named by pre_start runs with that process's pid before
# the container starts.
run_opts=()
pre_start=
run_app() {
	local name=$1 out=$2 img=$3 conf=$4 i pid
	local opts=(--name "$name" --network host "${run_opts[@]}"
		--device /dev/kfd --device "/dev/dri/renderD$m"
		-v "$out:/out" --annotation "org.criu.config=$conf")
	shift 4
	rm -f "$out/ready" "$out/go"
	if [ -z "$pre_start" ]; then
		podman run -d "${opts[@]}" "$img" "$@" -r /out/ready --go /out/go \
			>"$w/$name.run" 2>&1 || return 1
	else
		podman create "${opts[@]}" "$img" "$@" -r /out/ready --go /out/go \
			>"$w/$name.run" 2>&1 &&
			podman init "$name" >>"$w/$name.run" 2>&1 || return 1
		pid=$(podman inspect -f '{{.State.Pid}}' "$name")
		"$pre_start" "$pid" >>"$w/$name.run" 2>&1 &&
			podman start "$name" >>"$w/$name.run" 2>&1 || return 1
	fi
	for ((i = 0; i < limit * 5; i++)); do
		[ -e "$out/ready" ] && return 0
		[ "$(podman inspect -f '{{.State.Running}}' "$name" 2>/dev/null)" = true ] ||
			return 1
		sleep 0.2
	done
	return 1
}

# finish_app NAME OUT EXPECTED: let it verify (OUT/go), wait for it; its
# log must hold the EXPECTED RESULT line and it must exit 0.
finish_app() {
	local rc
	touch "$2/go"
	rc=$(timeout "$limit" podman wait "$1" 2>/dev/null)
	podman logs "$1" >"$w/$1.log" 2>&1
	keep "$w/$1.log"
	[ "$rc" = 0 ] && grep -qx "$3" "$w/$1.log"
}

# checkpoint NAME ARCHIVE LOG [OPTION...]: `podman container checkpoint
# --export` of the running container NAME; it must have stopped, and
# criu's log LOG must show this project's plugin at work.
checkpoint() {
	local name=$1 archive=$2 log=$3
	shift 3
	rm -f "$log"
	podman container checkpoint --export "$archive" "$@" "$name" \
		>"$w/$name.checkpoint" 2>&1 &&
		[ "$(podman inspect -f '{{.State.Status}}' "$name")" = exited ] &&
		grep -q 'kfd_plugin: ' "$log"
}

# "saved restored": the waves the simulated GPUs wrote to and resumed
# from context save areas since the module loaded (debugfs cwsr; kfdsim
# only).
cwsr() {
	awk '$1 == "saved_waves" { s = $2 } $1 == "restored_waves" { r = $2 }
	     END { print s + 0, r + 0 }' /sys/kernel/debug/kfdsim/cwsr 2>/dev/null
}

# ---- tests ----

gpu_app_tests() {
	local start
	start=$(e2e_ms)
	if run_app app-run "$w/out" "$image" "$w/criu.conf" /gpu_app "${app_args[@]}" &&
	   finish_app app-run "$w/out" "$expected"; then
		tap ok run "$(e2e_since "$start")"
	else
		tap fail run "$(e2e_since "$start")" "$(tail -n 1 "$w/app-run.log" 2>/dev/null)"
	fi
	podman rm -f app-run >/dev/null 2>&1

	start=$(e2e_ms)
	if run_app app "$w/out" "$image" "$w/criu.conf" /gpu_app "${app_args[@]}" &&
	   checkpoint app "$ckpt" "$w/criu.log"; then
		tap ok checkpoint "$(e2e_since "$start")" "archive $(du -k "$ckpt" | cut -f1) KiB"
	else
		tap fail checkpoint "$(e2e_since "$start")" "$(tail -n 1 "$w/app.checkpoint")"
	fi
	cp "$w/criu.log" "$w/dump.log" 2>/dev/null
	keep "$w/dump.log" "$w/app.checkpoint"
	podman rm -f app >/dev/null 2>&1
}
ckpt=$w/ckpt.tar.gz
[ "$with_gpu_app" = 0 ] || gpu_app_tests

# hip_sem PID: put libhsakmt's semaphore into the /dev/shm of the created
# container whose process is PID, before its program starts. glibc's
# sem_open creates a semaphore under a temporary name, maps it and then
# links it to its real name: a process that creates it keeps a mapping of
# a file with no name, which criu dumps only with link-remap, and criu
# 3.17.1 then fails the container's restore while cleaning that up. A
# semaphore that already exists is opened and mapped by its name. It is
# made here by rocr_app --make-sem (sem_open, sem_close) and copied in.
# shellcheck disable=SC2317 # called through pre_start
hip_sem() {
	local sem=/dev/shm/sem.hsakmt_semaphore had=
	[ -e "$sem" ] && had=1
	"$E2E_BIN/rocr_app" --make-sem || return 1
	cp -p "$sem" "/proc/$1/root$sem" || return 1
	[ -n "$had" ] || rm -f "$sem"
}

# The HIP container: an uninterrupted run, then one checkpointed with its
# kernel parked half way (4 waves spinning).
hip_ckpt=$w/hip-ckpt.tar.gz
hip_tests() {
	local start s0 s1
	# kfdsim pins userptr pages and counts them against RLIMIT_MEMLOCK
	# (upstream does not pin them: HMM); ROCr's queues register 20 MiB
	# of user memory, podman's default limit is 8 MiB.
	local run_opts=(--ulimit memlock=-1:-1) pre_start=hip_sem
	start=$(e2e_ms)
	if [ "${KFDSIM_CONTAINERS_HIP_RUN:-1}" = 0 ]; then
		note "KFDSIM_CONTAINERS_HIP_RUN=0: no hip-run"
	elif run_app hip-run "$w/out-hip" "$hip_image" "$w/criu-hip.conf" \
			/hip_e2e_app "${hip_args[@]}" &&
	   finish_app hip-run "$w/out-hip" "$hip_expected"; then
		tap ok hip-run "$(e2e_since "$start")"
	else
		podman logs hip-run >"$w/hip-run.log" 2>&1
		keep "$w/hip-run.log" "$w/hip-run.run"
		tap fail hip-run "$(e2e_since "$start")" \
			"$(tail -n 1 "$w/hip-run.log" 2>/dev/null)"
	fi
	podman rm -f hip-run >/dev/null 2>&1

	start=$(e2e_ms)
	s0=$(cwsr)
	if ! run_app hip "$w/out-hip" "$hip_image" "$w/criu-hip.conf" \
			/hip_e2e_app "${hip_args[@]}"; then
		podman logs hip >"$w/hip.log" 2>&1
		keep "$w/hip.log" "$w/hip.run"
		tap fail hip-checkpoint "$(e2e_since "$start")" \
			"never ready: $(tail -n 1 "$w/hip.log")"
	# A HIP process's images are large (the e2e hip test's: 113 MiB):
	# compressing them costs minutes under TCG.
	elif ! checkpoint hip "$hip_ckpt" "$w/criu-hip.log" --compress none; then
		tap fail hip-checkpoint "$(e2e_since "$start")" \
			"$(tail -n 1 "$w/hip.checkpoint")"
	else
		s1=$(cwsr)
		s1=$((${s1% *} - ${s0% *}))
		if [ "$s1" -ge 4 ]; then
			tap ok hip-checkpoint "$(e2e_since "$start")" \
				"archive $(du -k "$hip_ckpt" | cut -f1) KiB, $s1 waves saved"
		else
			tap fail hip-checkpoint "$(e2e_since "$start")" \
				"$s1 waves saved to the context save area, not the 4 parked"
		fi
	fi
	cp "$w/criu-hip.log" "$w/hip-dump.log" 2>/dev/null
	keep "$w/hip-dump.log" "$w/hip.checkpoint"
	podman rm -f hip >/dev/null 2>&1
}
if [ -n "$hip_ok" ]; then
	hip_tests
elif [ "$with_hip" != 0 ]; then
	tap fail hip-run 0 "no HIP image"
	tap fail hip-checkpoint 0 "no HIP image"
fi

# restore NAME TEST ARCHIVE OUT EXPECTED LOG [hip]: restore ARCHIVE as
# container NAME and release it: it must end with the EXPECTED RESULT
# line (criu's log is LOG). With hip, it must also have confirmed its
# parked progress and resumed at least the 4 parked waves from the save
# area.
restore() {
	local start r0 r1
	start=$(e2e_ms)
	r0=$(cwsr)
	rm -f "$4/go"
	if ! timeout "$limit" podman container restore --import "$3" \
			--name "$1" >"$w/$1.restore" 2>&1 ||
	   ! finish_app "$1" "$4" "$5"; then
		tap fail "$2" "$(e2e_since "$start")" \
			"$(tail -n 1 "$w/$1.restore") $(tail -n 1 "$w/$1.log" 2>/dev/null)"
	elif [ -z "${7:-}" ]; then
		tap ok "$2" "$(e2e_since "$start")"
	else
		r1=$(cwsr)
		r1=$((${r1#* } - ${r0#* }))
		if [ "$r1" -ge 4 ] && grep -q 'progress still' "$w/$1.log"; then
			tap ok "$2" "$(e2e_since "$start")" "$r1 waves resumed"
		else
			tap fail "$2" "$(e2e_since "$start")" \
				"$r1 waves resumed from the save area (4 parked), or the parked progress not confirmed"
		fi
	fi
	cp "$6" "$w/$1-criu.log" 2>/dev/null
	dmesg >"$w/$1.dmesg" 2>/dev/null
	keep "$w/$1.restore" "$w/$1-criu.log" "$w/$1.dmesg"
	podman rm -f "$1" >/dev/null 2>&1
}

# restore_both SUFFIX TEST: the gpu_app archive as test TEST, the HIP one
# as hip-TEST.
restore_both() {
	if [ "$with_gpu_app" = 0 ]; then
		:
	elif [ -s "$ckpt" ]; then
		restore "app-$1" "$2" "$ckpt" "$w/out" "$expected" "$w/criu.log"
	else
		tap fail "$2" 0 "no checkpoint archive"
	fi
	if [ -s "$hip_ckpt" ]; then
		restore "hip-$1" "hip-$2" "$hip_ckpt" "$w/out-hip" \
			"$hip_expected" "$w/criu-hip.log" hip
	elif [ "$with_hip" != 0 ]; then
		tap fail "hip-$2" 0 "no HIP checkpoint archive"
	fi
}

restore_both r1 restore
if e2e_load 1 2; then
	note "reloaded with seed=1: $(e2e_gpus)"
	restore_both r2 other-seed
else
	[ "$with_gpu_app" = 0 ] || tap fail other-seed 0 "cannot reload kfdsim with seed=1"
	[ "$with_hip" = 0 ] || tap fail hip-other-seed 0 "cannot reload kfdsim with seed=1"
fi

if [ -r /sys/kernel/debug/kfdsim/counters ] &&
   awk '$2 != 0 { bad = 1 } END { exit bad }' /sys/kernel/debug/kfdsim/counters; then
	tap ok counters 0
else
	tap fail counters 0 "$(tr '\n' ' ' </sys/kernel/debug/kfdsim/counters 2>/dev/null)"
fi
e2e_load 0 2 >/dev/null 2>&1
rm -rf "$w/graph"
finish
