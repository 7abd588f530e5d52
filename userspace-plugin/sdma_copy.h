/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Moving BO contents with the GPU's SDMA engine through libdrm_amdgpu.
 *
 * A job opens a render node file of its own for its GPU, imports each
 * BO's dma-buf there and has SDMA copy the BO, one window at a time,
 * to or from a host bounce buffer (a userptr BO of the job's window
 * size); the CPU moves the bounce buffer to or from the image and
 * computes the checksum on it. Same image format as the CPU path.
 */
#ifndef KFD_PLUGIN_SDMA_COPY_H
#define KFD_PLUGIN_SDMA_COPY_H

#include <stdbool.h>
#include <stddef.h>

#include "bo_copy.h"

/*
 * Run @j with SDMA on renderD<j->render_minor>. Returns 0 or -errno.
 * On failure *engine is true when SDMA itself (device setup, the test
 * submission, a mapping or a submission) failed, with the reason in
 * @why, so that the CPU path may be tried instead; false when the image
 * or the data is at fault (already logged as an error).
 */
int kp_sdma_run_job(struct kp_copy_job *j, bool *engine, char *why,
		    size_t why_len);

#endif /* KFD_PLUGIN_SDMA_COPY_H */
