/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A stand-in for kfd_dev.c in the fuzzer: /dev/kfd "exists", the local
 * topology is two fixed GPUs, and RESTORE hands back memfds as dma-bufs,
 * so that restore.c runs end to end on a fuzzed image without a kernel.
 */
#ifndef KFD_FUZZ_FAKE_KFD_H
#define KFD_FUZZ_FAKE_KFD_H

#include "topology.h"

#define KF_NGPUS	2
/* What the fake RESTORE backs with memfds, in all (bigger: -ENOMEM). */
#define KF_MAX_BO_BYTES	(4ULL << 20)

/* GPU @i of the fake topology (also what the seeds checkpointed). */
void kf_fake_gpu(unsigned int i, struct kp_gpu *g);

#endif /* KFD_FUZZ_FAKE_KFD_H */
