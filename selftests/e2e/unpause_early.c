// SPDX-License-Identifier: GPL-2.0
/*
 * unpause_early.so: the negative control of the end-to-end consistent
 * tests. A CRIU plugin that wraps another one (the plugin file named by
 * $KFDSIM_UNPAUSE_EARLY_PLUGIN, loaded from the constructor, before CRIU
 * reads CR_PLUGIN_DESC): every hook is the wrapped plugin's, except that
 * once its DUMP_EXT_FILE of a /dev/kfd file returned successfully, this
 * sends UNPAUSE on that file, as AMD's amdgpu plugin does inside
 * DUMP_EXT_FILE. The GPU then runs again while CRIU goes on to dump the
 * process's memory, so the memory image is newer than the saved queue
 * state: the restored run of `gpu_app --spread` must end with wrong
 * arrays. If it does not, the consistent tests cannot see the window they
 * guard. The wrapped plugin's own UNPAUSE at the end of the dump then
 * fails, which it logs.
 *
 * Build: make -C selftests/e2e (build/e2e/unpause-early/, a directory of
 * its own, since CRIU loads every .so in its plugin directory). Test use
 * only.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <linux/kfd_ioctl.h>

#include "criu_plugin.h"

#define UE_ENV	"KFDSIM_UNPAUSE_EARLY_PLUGIN"

/* Until the constructor copies the wrapped plugin's: no hooks. */
struct plugin_desc CR_PLUGIN_DESC = {
	.name = "unpause_early",
	.version = CRIU_PLUGIN_VERSION(0, 2, 0),
};

static criu_dump_ext_file_fn ue_wrapped_dump;

#define ue_log(level, fmt, ...) do {					\
	if (print_on_level)						\
		print_on_level(level, "unpause_early: " fmt "\n",	\
			       ##__VA_ARGS__);				\
} while (0)

static int ue_is_kfd(int fd)
{
	struct stat a, b;

	return !fstat(fd, &a) && S_ISCHR(a.st_mode) &&
	       !stat("/dev/kfd", &b) && a.st_rdev == b.st_rdev;
}

static int ue_dump_ext_file(int fd, int id)
{
	struct kfd_ioctl_criu_args args = { .op = KFD_CRIU_OP_UNPAUSE };
	int ret = ue_wrapped_dump(fd, id);

	if (ret || !ue_is_kfd(fd))
		return ret;
	if (ioctl(fd, AMDKFD_IOC_CRIU_OP, &args))
		ue_log(CRIU_LOG_ERROR, "UNPAUSE of /dev/kfd file %d failed: %s",
		       id, strerror(errno));
	else
		ue_log(CRIU_LOG_INFO,
		       "GPU queues of /dev/kfd file %d run again inside DUMP_EXT_FILE, before criu dumps memory",
		       id);
	return ret;
}

__attribute__((constructor)) static void ue_load(void)
{
	const char *path = getenv(UE_ENV);
	const struct plugin_desc *d;
	void *h;

	if (!path) {
		ue_log(CRIU_LOG_ERROR, "%s is not set: no plugin to wrap",
		       UE_ENV);
		return;
	}
	h = dlopen(path, RTLD_NOW);
	d = h ? dlsym(h, "CR_PLUGIN_DESC") : NULL;
	if (!d) {
		ue_log(CRIU_LOG_ERROR, "cannot load %s: %s", path, dlerror());
		return;
	}
	CR_PLUGIN_DESC = *d;
	ue_wrapped_dump = (criu_dump_ext_file_fn)d->hooks[CRIU_HOOK_DUMP_EXT_FILE];
	if (ue_wrapped_dump)
		CR_PLUGIN_DESC.hooks[CRIU_HOOK_DUMP_EXT_FILE] =
			(void *)ue_dump_ext_file;
}
