/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Moving BO contents between dma-buf fds and pages images.
 *
 * One job per GPU, each in its own thread. A job walks its BOs in order
 * and moves each through a CPU mapping of its dma-buf, one window at a
 * time, so that no more than KFD_MAX_BUFFER_SIZE bytes (all jobs
 * together) are mapped at once, however large a BO is. The data goes
 * straight between the mapping and the image file; there is no other
 * buffer.
 */
#ifndef KFD_PLUGIN_BO_COPY_H
#define KFD_PLUGIN_BO_COPY_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "images.h"

#define KP_DEFAULT_BUFFER_SIZE	(64ULL << 20)

struct kp_copy_bo {
	uint64_t addr;		/* GPU VA, for messages */
	uint64_t size;
	int dmabuf_fd;
	uint64_t checksum;	/* save: computed; load: expected */
};

enum kp_copy_dir {
	KP_COPY_SAVE,		/* BOs -> image */
	KP_COPY_LOAD,		/* image -> BOs, checksums verified */
};

struct kp_copy_job {
	enum kp_copy_dir dir;
	char image[KP_NAME_LEN];
	uint32_t gpu_id;	/* for messages */
	unsigned int nbos;
	struct kp_copy_bo *bos;
	bool no_sync;		/* tests: plain files, not dma-bufs */

	/* set by kp_copy_run() */
	uint64_t window;
	int ret;
	pthread_t thread;
};

/* KFD_MAX_BUFFER_SIZE, or the default. */
uint64_t kp_copy_buffer_size(void);

/*
 * Run the jobs, one thread each, with at most @max_buffer bytes mapped
 * at a time overall. Returns 0 or the first job's error (each failure has
 * been logged).
 */
int kp_copy_run(struct kp_copy_job *jobs, unsigned int njobs,
		uint64_t max_buffer);

#endif /* KFD_PLUGIN_BO_COPY_H */
