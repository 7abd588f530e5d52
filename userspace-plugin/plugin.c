// SPDX-License-Identifier: GPL-2.0
/*
 * kfd_plugin: the CRIU plugin for processes using /dev/kfd.
 *
 * This file holds the descriptor CRIU looks up and the hook entry points.
 * Every hook answers -ENOTSUP for what is not ours, so other device
 * plugins keep working, and on a host without /dev/kfd every hook does so
 * without a word. Checkpoint is in dump.c, restore in restore.c.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bo_copy.h"
#include "criu_compat.h"
#include "criu_plugin.h"
#include "kfd_dev.h"
#include "plugin.h"
#include "restore_workers.h"
#include "util.h"

struct kp_config kp_config;

/* The master's /dev/kfd, for RESUME (opened on first use). */
static int kp_resume_kfd = -1;

static const char kp_name[] = "kfd_plugin";

uint32_t kp_chunk_size_from_env(void)
{
	const char *s = getenv("KFD_CHUNK_SIZE");
	uint64_t v;

	if (!s)
		return KP_CHUNK_SIZE;
	if (kp_parse_size(s, &v) || !kp_chunk_size_ok(v)) {
		kp_warn("KFD_CHUNK_SIZE=\"%s\" is not a power of two from %u KiB to %u MiB; using %u KiB",
			s, KP_MIN_CHUNK_SIZE >> 10, KP_MAX_CHUNK_SIZE >> 20,
			KP_CHUNK_SIZE >> 10);
		return KP_CHUNK_SIZE;
	}
	return (uint32_t)v;
}

static int kp_init(int stage)
{
	/*
	 * criu >= 4.1 refuses a restore while a plugin the dump recorded in
	 * the inventory (kp_dump_note_inventory()) has not claimed its entry.
	 */
	if (stage == CRIU_STAGE_RESTORE &&
	    kp_criu.check_and_remove_inventory_plugin)
		kp_criu.check_and_remove_inventory_plugin(kp_name,
							  sizeof(kp_name) - 1);
	/* Without /dev/kfd every hook declines: nothing to set up or say. */
	if (!kp_kfd_present())
		return 0;
	kp_config.max_buffer = kp_copy_buffer_size();
	kp_config.copy_mode = kp_copy_mode_from_env();
	kp_match_opts_from_env(&kp_config.match);
	kp_config.chunk_size = kp_chunk_size_from_env();
	kp_config.scan_mode = kp_scan_mode_from_env();
	kp_debug("init, stage %d, buffer cap %llu bytes, BO copy %s, chunks of %u bytes",
		 stage, (unsigned long long)kp_config.max_buffer,
		 kp_copy_mode_name(kp_config.copy_mode),
		 kp_config.chunk_size);
	kp_debug("criu has %u hooks (%s), this plugin uses %u; UPDATE_VMA_MAP fd owned by criu: %s, inventory plugin list: %s",
		 kp_criu.hooks, kp_criu.how, CR_PLUGIN_DESC.max_hooks,
		 kp_criu.vma_fd_owned ? "yes" : "no",
		 kp_criu.add_inventory_plugin ? "yes" : "no");
	/* In CRIU's master, before it forks anything (restore_workers.c). */
	if (stage == CRIU_STAGE_RESTORE)
		kp_rw_start(kp_rw_threads_from_env(), kp_config.max_buffer);
	return 0;
}

static void kp_exit(int stage, int ret)
{
	/*
	 * CRIU calls exit only once every task's files and memory are dumped
	 * (or the dump failed): only now may the dumped processes' GPU work
	 * go on (criu-dev already did this in DUMP_DEVICES_LATE).
	 */
	if (stage == CRIU_STAGE_DUMP)
		kp_dump_release(ret ? "the dump failed" :
				"every task's files and memory are dumped");
	kp_rw_stop();
	if (kp_resume_kfd >= 0) {
		close(kp_resume_kfd);
		kp_resume_kfd = -1;
	}
	kp_dump_reset();
	kp_restore_reset();
	kp_dev_reset();
}

static int kp_hook_dump_ext_file(int fd, int id)
{
	return kp_dump_file(fd, id);
}

static int kp_hook_restore_ext_file(int id)
{
	return kp_restore_file(id);
}

/* criu-dev's variant: this plugin never needs to be called again. */
static int kp_hook_restore_ext_file_retry(int id, bool *retry_needed)
{
	*retry_needed = false;
	return kp_restore_file(id);
}

static int kp_hook_handle_device_vma(int fd, const struct stat *st)
{
	(void)fd;
	if (kp_is_kfd(st) || kp_render_gpu(st))
		return 0;
	return -ENOTSUP;
}

static int kp_hook_update_vma_map(const char *path, uint64_t addr,
				  uint64_t old_pgoff, uint64_t *new_pgoff,
				  int *plugin_fd)
{
	return kp_update_vma_map(path, addr, old_pgoff, new_pgoff, plugin_fd);
}

/*
 * In CRIU's master, once the restored process's mappings are all back:
 * let its queues run. A process the kernel knows nothing about (-ESRCH)
 * is not ours.
 *
 * The first call waits for the parallel restore's workers. If any BO
 * contents could not be restored, no process of the restore may run:
 * CRIU ignores this hook's errors, so the process is killed instead of
 * resumed, which makes CRIU's next step on it (its registers, then
 * PTRACE_DETACH) fail, and with it the whole restore.
 */
static int kp_hook_resume_devices_late(int pid)
{
	struct kfd_ioctl_criu_args args = {
		.op = KFD_CRIU_OP_RESUME,
		.pid = (uint32_t)pid,
	};
	int ret;

	if (!kp_kfd_present())
		return -ENOTSUP;
	ret = kp_rw_finish(pid);
	if (ret) {
		kp_err("pid %d is killed, not resumed: BO contents of this restore are missing (%s)",
		       pid, strerror(-ret));
		kill(pid, SIGKILL);
		return ret;
	}
	if (kp_resume_kfd < 0) {
		kp_resume_kfd = kp_kfd_open();
		if (kp_resume_kfd < 0)
			return kp_resume_kfd;
	}
	ret = kp_ioctl(kp_resume_kfd, AMDKFD_IOC_CRIU_OP, &args);
	if (ret == -ESRCH)
		return -ENOTSUP;
	if (ret) {
		kp_err("RESUME of pid %d failed: %s", pid, strerror(-ret));
		return ret;
	}
	kp_info("resumed the GPU queues of pid %d", pid);
	return 0;
}

/*
 * criu-dev, in the master at restore, before any task is forked: this
 * criu passes RESTORE_EXT_FILE a retry argument (criu_compat.c), so the
 * hook that takes it replaces the one that does not. Always "not mine",
 * so that every other plugin gets the hook too.
 */
static int kp_hook_restore_init(void)
{
	kp_criu.restore_retry_arg = true;
	CR_PLUGIN_DESC.hooks[CRIU_HOOK_RESTORE_EXT_FILE] =
		(void *)kp_hook_restore_ext_file_retry;
	return -ENOTSUP;
}

/*
 * criu-dev, after every task's files and memory were dumped: let the
 * dumped processes' queues run again. Always "not mine", so that every
 * other plugin gets the hook too.
 */
static int kp_hook_dump_devices_late(int pid)
{
	(void)pid;
	kp_dump_release("every task's files and memory are dumped");
	return -ENOTSUP;
}

/* The hooks must have exactly the signatures CRIU calls them with. */
static const criu_dump_ext_file_fn kp_sig1 __attribute__((unused)) =
	kp_hook_dump_ext_file;
static const criu_restore_ext_file_fn kp_sig2 __attribute__((unused)) =
	kp_hook_restore_ext_file;
static const criu_handle_device_vma_fn kp_sig3 __attribute__((unused)) =
	kp_hook_handle_device_vma;
static const criu_update_vma_map_fn kp_sig4 __attribute__((unused)) =
	kp_hook_update_vma_map;
static const criu_resume_devices_late_fn kp_sig5 __attribute__((unused)) =
	kp_hook_resume_devices_late;
static const criu_restore_ext_file_retry_fn kp_sig6 __attribute__((unused)) =
	kp_hook_restore_ext_file_retry;
static const criu_dump_devices_late_fn kp_sig7 __attribute__((unused)) =
	kp_hook_dump_devices_late;
static const criu_restore_init_fn kp_sig8 __attribute__((unused)) =
	kp_hook_restore_init;

/*
 * The one symbol the plugin exports. It declares the 10 hooks every CRIU
 * has; kp_load() raises max_hooks to what the running CRIU has (at most
 * the 15 this plugin knows) before CRIU reads the descriptor.
 */
__attribute__((visibility("default")))
struct plugin_desc CR_PLUGIN_DESC = {
	.name = kp_name,
	.init = kp_init,
	.exit = kp_exit,
	.version = CRIU_PLUGIN_VERSION(0, 2, 0),
	.max_hooks = CRIU_HOOK_COUNT_OLDEST,
	.hooks = {
		[CRIU_HOOK_DUMP_EXT_FILE] = (void *)kp_hook_dump_ext_file,
		[CRIU_HOOK_RESTORE_EXT_FILE] = (void *)kp_hook_restore_ext_file,
		[CRIU_HOOK_HANDLE_DEVICE_VMA] = (void *)kp_hook_handle_device_vma,
		[CRIU_HOOK_UPDATE_VMA_MAP] = (void *)kp_hook_update_vma_map,
		[CRIU_HOOK_RESUME_DEVICES_LATE] =
			(void *)kp_hook_resume_devices_late,
		[CRIU_HOOK_RESTORE_INIT] = (void *)kp_hook_restore_init,
		[CRIU_HOOK_DUMP_DEVICES_LATE] =
			(void *)kp_hook_dump_devices_late,
	},
};

/*
 * Runs when CRIU dlopen()s the plugin, before it looks at CR_PLUGIN_DESC:
 * fit the descriptor to the CRIU it is in (criu_compat.c).
 */
__attribute__((constructor))
static void kp_load(void)
{
	kp_criu_detect();
	CR_PLUGIN_DESC.max_hooks = KP_MIN(kp_criu.hooks,
					  (unsigned int)CRIU_HOOK_COUNT);
	/* RESTORE_EXT_FILE's retry variant: only from RESTORE_INIT on. */
}
