/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the hook entry points (plugin.c) call: checkpoint (dump.c) and
 * restore (restore.c).
 */
#ifndef KFD_PLUGIN_PLUGIN_H
#define KFD_PLUGIN_PLUGIN_H

#include <stdint.h>

#include "bo_copy.h"
#include "gpu_scan.h"
#include "topology.h"

/* Settings read from the environment when the plugin starts. */
struct kp_config {
	uint64_t max_buffer;		/* KFD_MAX_BUFFER_SIZE */
	enum kp_copy_mode copy_mode;	/* KFD_BO_COPY */
	struct kp_match_opts match;	/* KFD_*_CHECK */
	uint32_t chunk_size;		/* KFD_CHUNK_SIZE */
	enum kp_scan_mode scan_mode;	/* KFD_BO_SCAN */
};

/* KFD_CHUNK_SIZE, or the default (with a warning if it is invalid). */
uint32_t kp_chunk_size_from_env(void);

extern struct kp_config kp_config;

/* DUMP_EXT_FILE: 0, -ENOTSUP if @fd is not ours, or -errno. */
int kp_dump_file(int fd, int id);
/*
 * Let every process this dump paused run again (its queues stay paused
 * from DUMP_EXT_FILE until CRIU has dumped all files and memory); @why is
 * logged. Idempotent.
 */
void kp_dump_release(const char *why);
/* Forget what this dump wrote (plugin exit). */
void kp_dump_reset(void);

/* RESTORE_EXT_FILE: the restored fd, -ENOTSUP if no image has @id. */
int kp_restore_file(int id);
/* UPDATE_VMA_MAP: 1 (remapped), 0 (ours, unchanged), -ENOTSUP, -errno. */
int kp_update_vma_map(const char *path, uint64_t addr, uint64_t old_off,
		      uint64_t *new_off, int *plugin_fd);
/* Forget the restore state of this process (plugin exit). */
void kp_restore_reset(void);

#endif /* KFD_PLUGIN_PLUGIN_H */
