// SPDX-License-Identifier: GPL-2.0
/*
 * ROCr plumbing shared by rocr_test and rocr_app; see rocr_util.h.
 */
#include <string.h>
#include <time.h>

#include "rocr_util.h"

/*
 * One memory pool of the agent being looked at: for the CPU agent (@gpu
 * false), its kernarg and fine-grained system pools; for GPU agent
 * @ra->ngpus, its VRAM, the first coarse-grained global pool.
 */
static hsa_status_t rocr_pool(struct rocr_agents *ra,
			      hsa_amd_memory_pool_t pool, bool gpu)
{
	hsa_amd_segment_t seg;
	uint32_t flags;
	bool alloc;

	if (hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT,
					 &seg) || seg != HSA_AMD_SEGMENT_GLOBAL)
		return HSA_STATUS_SUCCESS;
	if (!gpu &&
	    (hsa_amd_memory_pool_get_info(pool,
			HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &alloc) ||
	     !alloc))
		return HSA_STATUS_SUCCESS;
	if (hsa_amd_memory_pool_get_info(pool,
			HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags))
		return HSA_STATUS_ERROR;
	if (gpu) {
		if (!(flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED))
			return HSA_STATUS_SUCCESS;
		ra->vram[ra->ngpus] = pool;
		return HSA_STATUS_INFO_BREAK;
	}
	if (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT) {
		ra->kernarg = pool;
		ra->has_kernarg = true;
	} else if (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED) {
		ra->fine = pool;
		ra->has_fine = true;
	}
	return HSA_STATUS_SUCCESS;
}

static hsa_status_t rocr_sys_pool_cb(hsa_amd_memory_pool_t pool, void *data)
{
	return rocr_pool(data, pool, false);
}

static hsa_status_t rocr_vram_cb(hsa_amd_memory_pool_t pool, void *data)
{
	return rocr_pool(data, pool, true);
}

static hsa_status_t rocr_agent_cb(hsa_agent_t agent, void *data)
{
	struct rocr_agents *ra = data;
	hsa_device_type_t type;
	hsa_status_t s;

	if (hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type))
		return HSA_STATUS_ERROR;
	if (type == HSA_DEVICE_TYPE_CPU) {
		if (ra->ncpus++)
			return HSA_STATUS_SUCCESS;
		ra->cpu = agent;
		return hsa_amd_agent_iterate_memory_pools(agent,
							  rocr_sys_pool_cb, ra);
	}
	if (type != HSA_DEVICE_TYPE_GPU || ra->ngpus == ROCR_MAX_GPUS)
		return ra->strict ? HSA_STATUS_ERROR : HSA_STATUS_SUCCESS;
	ra->gpu[ra->ngpus] = agent;
	s = hsa_amd_agent_iterate_memory_pools(agent, rocr_vram_cb, ra);
	if (s != HSA_STATUS_INFO_BREAK)
		return HSA_STATUS_ERROR;
	ra->ngpus++;
	return HSA_STATUS_SUCCESS;
}

hsa_status_t rocr_agents_find(struct rocr_agents *ra, bool strict)
{
	memset(ra, 0, sizeof(*ra));
	ra->strict = strict;
	return hsa_iterate_agents(rocr_agent_cb, ra);
}

hsa_status_t rocr_allow_all(const struct rocr_agents *ra, int ngpus,
			    void *p)
{
	hsa_agent_t all[ROCR_MAX_GPUS + 1];
	int i;

	all[0] = ra->cpu;
	for (i = 0; i < ngpus; i++)
		all[i + 1] = ra->gpu[i];
	return hsa_amd_agents_allow_access(ngpus + 1, all, NULL, p);
}

void rocr_write_dispatch(hsa_queue_t *q, uint64_t idx, const void *desc,
			 const void *kernarg, uint32_t n, hsa_signal_t done)
{
	hsa_kernel_dispatch_packet_t *pkt;
	uint16_t header;

	pkt = (hsa_kernel_dispatch_packet_t *)q->base_address +
	      (idx & (q->size - 1));
	memset((uint8_t *)pkt + 4, 0, sizeof(*pkt) - 4);
	pkt->workgroup_size_x = ROCR_WG_SIZE;
	pkt->workgroup_size_y = 1;
	pkt->workgroup_size_z = 1;
	pkt->grid_size_x = n;
	pkt->grid_size_y = 1;
	pkt->grid_size_z = 1;
	pkt->kernel_object = (uint64_t)(uintptr_t)desc;
	pkt->kernarg_address = (void *)kernarg;
	pkt->completion_signal = done;
	header = HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE |
		 1 << HSA_PACKET_HEADER_BARRIER |
		 HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE |
		 HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE;
	/* The header last: the packet becomes valid with it. */
	__atomic_store_n((uint32_t *)pkt, header | 1u << 16, __ATOMIC_RELEASE);
	hsa_signal_store_screlease(q->doorbell_signal, idx);
}

static uint64_t rocr_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

hsa_signal_value_t rocr_wait(hsa_signal_t sig, uint64_t timeout_ms)
{
	uint64_t deadline = rocr_now_ms() + timeout_ms;
	hsa_signal_value_t v;

	do {
		v = hsa_signal_wait_scacquire(sig, HSA_SIGNAL_CONDITION_LT, 1,
					      UINT64_MAX,
					      HSA_WAIT_STATE_BLOCKED);
	} while (v >= 1 && rocr_now_ms() < deadline);
	return v;
}
