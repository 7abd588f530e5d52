/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ROCr plumbing shared by the ROCr kselftest (rocr_test.c) and the CRIU
 * end-to-end application (../e2e/rocr_app.c): the agents and memory pools
 * they use, access to pool memory for all of them, an AQL dispatch packet
 * and a bounded wait on a signal. It needs ROCr's headers and libhsa-runtime64, so it lives
 * here and not in ../lib, which every selftest links.
 */
#ifndef ROCR_UTIL_H
#define ROCR_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

/* As many GPUs as kfdsim simulates (num_gpus is 1-8). */
#define ROCR_MAX_GPUS	8
/* The work-group size of every dispatch. */
#define ROCR_WG_SIZE	256

struct rocr_agents {
	/*
	 * An agent that is neither CPU nor GPU, or a GPU beyond
	 * ROCR_MAX_GPUS, fails the search (true) or is passed over (false).
	 */
	bool strict;
	hsa_agent_t cpu;		/* the first CPU agent */
	int ncpus;			/* CPU agents seen */
	int ngpus;
	hsa_agent_t gpu[ROCR_MAX_GPUS];
	hsa_amd_memory_pool_t vram[ROCR_MAX_GPUS];	/* coarse grained */
	hsa_amd_memory_pool_t fine;	/* the CPU's, fine grained */
	hsa_amd_memory_pool_t kernarg;	/* the CPU's kernarg pool */
	bool has_fine, has_kernarg;
};

/*
 * Clear @ra and fill it from hsa_iterate_agents (after hsa_init): the
 * first CPU agent with its fine-grained and kernarg system pools, and
 * each GPU agent with its coarse-grained VRAM pool. Returns what
 * hsa_iterate_agents returned; a GPU without a VRAM pool is an error.
 * Which agents and pools were found is for the caller to check.
 */
hsa_status_t rocr_agents_find(struct rocr_agents *ra, bool strict);

/* Let @ra's CPU agent and its first @ngpus GPU agents access @p. */
hsa_status_t rocr_allow_all(const struct rocr_agents *ra, int ngpus,
			    void *p);

/*
 * Write a barrier dispatch of the built-in kernel @desc with @kernarg over
 * @n work-items (1D, ROCR_WG_SIZE a group), completing @done, into the
 * slot @idx of @q that the caller reserved (and found free), and ring
 * @q's doorbell.
 */
void rocr_write_dispatch(hsa_queue_t *q, uint64_t idx, const void *desc,
			 const void *kernarg, uint32_t n, hsa_signal_t done);

/*
 * Wait until @sig drops below 1, for about @timeout_ms at most; returns
 * its last value (1 or more when the time ran out).
 */
hsa_signal_value_t rocr_wait(hsa_signal_t sig, uint64_t timeout_ms);

#endif /* ROCR_UTIL_H */
