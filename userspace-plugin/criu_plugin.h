/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CRIU plugin ABI, as far as this plugin uses it.
 *
 * CRIU ships no header for it on Debian, so the layout is declared here
 * from the documented facts of criu 3.17.1 (the oldest CRIU we support)
 * and of the newer ones (criu_compat.c decides which applies at run time):
 *
 *  - CRIU dlopen()s every *.so in its plugin directory and looks up the
 *    data symbol CR_PLUGIN_DESC, a struct plugin_desc below.
 *  - Descriptor version 0.2.0 (0x200) is the newest every CRIU accepts.
 *    A CRIU refuses a descriptor whose max_hooks exceeds its own number of
 *    hooks (3.17-3.19: 10, 4.0-4.1: 12, 4.2: 13, criu-dev: 15), so the
 *    descriptor starts at 10 and the plugin raises max_hooks when it is
 *    loaded into a CRIU that has more (criu_compat.c).
 *  - Every hook returns an int: a negative errno on failure, -ENOTSUP for
 *    "not mine" (CRIU then asks the next plugin).
 *  - The criu binary exports print_on_level() and criu_get_image_dir() to
 *    plugins. They are declared weak so that the same objects also link
 *    into kfd-inspect and the unit tests, where they are absent (NULL).
 */
#ifndef KFD_PLUGIN_CRIU_PLUGIN_H
#define KFD_PLUGIN_CRIU_PLUGIN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

/* What CRIU is doing when it calls init() and exit(). */
enum criu_stage {
	CRIU_STAGE_DUMP = 0,
	CRIU_STAGE_PRE_DUMP = 1,
	CRIU_STAGE_RESTORE = 2,
};

/* Index of each hook in plugin_desc.hooks[]. */
enum criu_hook {
	CRIU_HOOK_DUMP_UNIX_SK = 0,
	CRIU_HOOK_RESTORE_UNIX_SK = 1,
	CRIU_HOOK_DUMP_EXT_FILE = 2,
	CRIU_HOOK_RESTORE_EXT_FILE = 3,
	CRIU_HOOK_DUMP_EXT_MOUNT = 4,
	CRIU_HOOK_RESTORE_EXT_MOUNT = 5,
	CRIU_HOOK_DUMP_EXT_LINK = 6,
	CRIU_HOOK_HANDLE_DEVICE_VMA = 7,
	CRIU_HOOK_UPDATE_VMA_MAP = 8,
	CRIU_HOOK_RESUME_DEVICES_LATE = 9,
	CRIU_HOOK_COUNT_OLDEST = 10,	/* the most criu 3.17 accepts */
	CRIU_HOOK_PAUSE_DEVICES = 10,	/* criu 4.0 */
	CRIU_HOOK_CHECKPOINT_DEVICES = 11,
	CRIU_HOOK_POST_FORKING = 12,	/* criu 4.2 */
	CRIU_HOOK_RESTORE_INIT = 13,	/* criu-dev (4.3) */
	CRIU_HOOK_DUMP_DEVICES_LATE = 14,
	CRIU_HOOK_COUNT = 15,		/* the hooks this plugin knows */
};

#define CRIU_PLUGIN_VERSION(major, minor, sub) \
	(((major) << 16) + ((minor) << 8) + (sub))

/* Log levels of print_on_level(). */
#define CRIU_LOG_MSG	0
#define CRIU_LOG_ERROR	1
#define CRIU_LOG_WARN	2
#define CRIU_LOG_INFO	3
#define CRIU_LOG_DEBUG	4

/* Signatures of the hooks this plugin implements. */
typedef int (*criu_dump_ext_file_fn)(int fd, int id);
typedef int (*criu_restore_ext_file_fn)(int id);
/* criu-dev: a restore may ask to be called again later. */
typedef int (*criu_restore_ext_file_retry_fn)(int id, bool *retry_needed);
typedef int (*criu_handle_device_vma_fn)(int fd, const struct stat *st);
typedef int (*criu_update_vma_map_fn)(const char *path, uint64_t addr,
				      uint64_t old_pgoff, uint64_t *new_pgoff,
				      int *plugin_fd);
typedef int (*criu_resume_devices_late_fn)(int pid);
/* criu-dev: after every task's files and memory were dumped (root pid). */
typedef int (*criu_dump_devices_late_fn)(int pid);
/* criu-dev: in the master at restore, after the plugins' init. */
typedef int (*criu_restore_init_fn)(void);

/* The layout of CR_PLUGIN_DESC. Unused hooks stay NULL. */
struct plugin_desc {
	const char *name;
	int (*init)(int stage);
	void (*exit)(int stage, int ret);
	unsigned int version;
	unsigned int max_hooks;
	void *hooks[CRIU_HOOK_COUNT];
};

/* This plugin's descriptor (plugin.c). */
extern struct plugin_desc CR_PLUGIN_DESC;

/* Exported by the criu binary; NULL when running outside CRIU. */
extern void print_on_level(unsigned int level, const char *fmt, ...)
	__attribute__((weak, format(printf, 2, 3)));
extern int criu_get_image_dir(void) __attribute__((weak));
/* Everything else the criu binary exports is looked up with dlsym(). */

#endif /* KFD_PLUGIN_CRIU_PLUGIN_H */
