/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The workload the CRIU tests checkpoint and restore, and the three parts
 * that play CRIU's roles:
 *
 *  - the target ("worker"): a process that uses both GPUs the way a ROCm
 *    application does: VRAM, GTT, USERPTR and doorbell BOs, an events page
 *    BO and five events, an AQL queue running a long loop kernel, an SDMA
 *    queue with copies, an idle AQL queue. It describes what it built in a
 *    struct cw_layout;
 *  - the checkpointer: becomes the target's tracer, takes its /dev/kfd fd,
 *    pauses it mid-kernel, checkpoints it and reads the BO contents
 *    (struct cw_image);
 *  - the restored process: a fresh process that puts the user memory back,
 *    runs RESTORE, writes the contents back and, once the checkpointer sent
 *    RESUME, carries on; it then is a target like the worker.
 *
 * A target obeys one-byte commands on a socket (see cw_target_loop()) and
 * reports through a struct cw_shared in shared memory. Nothing here
 * includes the kselftest harness: functions return 0, or -1 with a message.
 */
#ifndef CRIU_WORK_H
#define CRIU_WORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kfdsim_gpu.h"
#include "kfdsim_criu_util.h"

#define CW_NGPUS	2

/* The BOs of the workload, by role. */
enum cw_role {
	CW_AQL_RING,	/* GTT, GPU 0: ring of the loop queue */
	CW_AQL_CTL,	/* GTT, GPU 0: its pointers, descriptors, kernargs */
	CW_SDMA_RING,	/* GTT, GPU 1 */
	CW_SDMA_CTL,	/* GTT, GPU 1 */
	CW_IDLE_RING,	/* GTT, GPU 1: an AQL queue stopped on a bad packet */
	CW_IDLE_CTL,	/* GTT, GPU 1 */
	CW_SIGNALS,	/* GTT, GPU 0, mapped on both: HSA signals */
	CW_LOOPBUF,	/* VRAM, GPU 0: the loop kernel's array */
	CW_COPYBUF,	/* GTT, GPU 0: a copy of it, by a second dispatch */
	CW_DST,		/* GTT, GPU 0, mapped on both: SDMA destination */
	CW_SRC,		/* VRAM, GPU 1, mapped on both: SDMA source */
	CW_EVPAGE,	/* GTT, GPU 0, mapped on both: the events page */
	CW_SPARE,	/* VRAM, GPU 1, not mapped */
	CW_UPTR0,	/* USERPTR, GPU 0, mapped on both: SDMA source */
	CW_UPTR1,	/* USERPTR, GPU 1, not mapped */
	CW_DOORBELL,	/* DOORBELL, GPU 0, mapped on GPU 0 */
	CW_NBOS
};

enum { CW_Q_LOOP, CW_Q_SDMA, CW_Q_IDLE, CW_NQUEUES };
enum { CW_EV_DONE, CW_EV_SET, CW_EV_AUTO, CW_EV_MEM, CW_EV_SDMA, CW_NEVENTS };

struct cw_bo {
	uint64_t handle;
	uint64_t va;
	uint64_t size;
	uint64_t offset;	/* mmap offset (USERPTR: the CPU address) */
	uint32_t flags;
	uint32_t gpu;		/* index of the GPU it lives on */
	uint32_t map_mask;	/* GPU indices it is mapped on */
	uint32_t seed;		/* initial contents, kt_fill(); 0 = zero */
};

struct cw_queue {
	uint32_t id;
	uint32_t type;
	uint32_t gpu;
	uint32_t ring_size;
	uint64_t doorbell_offset;
	uint32_t ring;		/* enum cw_role of its ring BO */
	uint32_t ctl;		/* enum cw_role of its ctl BO */
	uint64_t windex;	/* what its doorbell says */
};

/* What a target built; the same ids and addresses after every restore. */
struct cw_layout {
	uint32_t magic;
	uint32_t ngpus;
	uint32_t gpu_id[CW_NGPUS];	/* as the process knows them */
	int32_t kfd_fd;			/* its /dev/kfd fd number */
	int32_t pid;
	struct cw_bo bo[CW_NBOS];
	struct cw_queue q[CW_NQUEUES];
	uint32_t ev[CW_NEVENTS];
	uint32_t ev_type[CW_NEVENTS];
	uint64_t sig_loop;		/* GPU VA of the loop's signal */
	uint64_t sig_copy;		/* GPU VA of the copy's signal */
	uint32_t n;			/* loop elements */
	uint32_t steps;			/* loop steps */
	uint64_t sdma_done;		/* SDMA bytes published and run */
	uint64_t sdma_end;		/* SDMA bytes written to the ring */
};

#define CW_LAYOUT_MAGIC	0x43574c31u

/* The image of a checkpoint of a workload target. */
struct cw_image {
	struct kc_image k;
	struct cw_layout lay;
	/* the gpu_ids of the node it was taken on, in topology order */
	struct {
		uint32_t ngpus;
		uint32_t ids[KT_MAX_GPUS];
	} node;
	/* the queues' saved state, as debugfs showed it once paused */
	struct kg_qinfo qs[CW_NQUEUES];
};

/* Shared between the test process and its targets (MAP_SHARED). */
struct cw_shared {
	struct cw_layout lay;
	int32_t status;
	uint32_t points;		/* fault-injection points seen */
	char msg[2048];
};

/* Commands to a target and its replies. */
#define CW_CMD_FINISH	'F'	/* complete the work and verify it */
#define CW_CMD_QUIT	'Q'	/* exit */
#define CW_CMD_RESUMED	'G'	/* (restored) the checkpointer sent RESUME */
#define CW_CMD_UPTR	'U'	/* (CW_R_LATE_UPTR) put the user memory back */
#define CW_CMD_ALLOC	'A'	/* allocate one more BO */
#define CW_REPLY_OK	'+'
#define CW_REPLY_FAIL	'-'

/* Options of cw_start_restored(). */
#define CW_R_SWEEP	0x1	/* fail every injection point first */
#define CW_R_EXIT	0x2	/* exit right after RESTORE, before RESUME */
#define CW_R_LATE_UPTR	0x4	/* put CW_UPTR1's memory back only on CW_CMD_UPTR */
#define CW_R_SWAP	0x8	/* restore onto the GPUs in reverse order */

/* A target process as the test process sees it. */
struct cw_target {
	pid_t pid;
	int sock;
	struct cw_shared *sh;
};

/* Allocate the shared page (once per test). */
struct cw_shared *cw_shared_new(void);

/*
 * Fork a worker that builds the workload with a loop of @steps steps
 * (0: nothing dispatched) and waits for commands. Returns once it reported
 * its layout (in t->sh->lay).
 */
int cw_start_worker(struct cw_target *t, struct cw_shared *sh,
		    uint32_t steps, char *msg, size_t len);

/*
 * Fork a process that restores @img (see CW_R_*). Returns once it
 * restored and checked the state before RESUME (or, with CW_R_EXIT, once
 * it restored); the checkpointer then sends RESUME and cw_resumed().
 */
int cw_start_restored(struct cw_target *t, struct cw_shared *sh,
		      const struct cw_image *img, unsigned int flags,
		      char *msg, size_t len);
/* Tell a restored target that RESUME was sent; it checks its doorbells. */
int cw_resumed(struct cw_target *t, char *msg, size_t len);

/* Send a command and wait for the reply (the target's message on error). */
int cw_command(struct cw_target *t, char cmd, char *msg, size_t len);
/* SIGKILL the target and reap it. */
void cw_kill(struct cw_target *t);
/* Quit the target and reap it; 0 if it exited cleanly. */
int cw_quit(struct cw_target *t, char *msg, size_t len);

/* Checkpointer options. */
#define CW_CK_MIDLOOP	0x1	/* wait until the loop kernel is mid-way */
#define CW_CK_STOP	0x2	/* also PTRACE_INTERRUPT the target */

/*
 * Checkpoint target @pid, described by @lay: PTRACE_SEIZE it, wait as
 * @flags say (with CW_CK_MIDLOOP, for progress beyond @since if not NULL),
 * PROCESS_INFO, CHECKPOINT, check everything CHECKPOINT returned against
 * @lay, read the contents. The target stays paused and traced; *tfd is
 * the checkpointer's copy of its /dev/kfd fd.
 */
int cw_checkpoint(pid_t pid, const struct cw_layout *lay,
		  const struct kg_qinfo *since, unsigned int flags,
		  struct cw_image *img, int *tfd, char *msg, size_t len);
/*
 * Start a worker (@steps as for cw_start_worker()) and checkpoint it
 * (@flags as for cw_checkpoint()) into @img; then kill the worker and
 * close our copy of its /dev/kfd, whatever happened.
 */
int cw_checkpoint_worker(struct cw_target *w, struct cw_shared *sh,
			 uint32_t steps, unsigned int flags,
			 struct cw_image *img, char *msg, size_t len);
/* Send RESUME for @pid from a /dev/kfd of our own. */
int cw_send_resume(pid_t pid, char *msg, size_t len);

/* Check the private data of @img against @lay (format version 1). */
int cw_check_priv(const struct cw_image *img, const struct cw_layout *lay,
		  char *msg, size_t len);

/*
 * Device buckets to restore @img on this node, with render fds opened:
 * each GPU goes to the GPU at the same topology position, or with @swap at
 * the mirrored one.
 */
int cw_devices(const struct cw_image *img,
	       struct kfd_criu_device_bucket *dev, char *msg, size_t len);
int cw_devices_ex(const struct cw_image *img,
		  struct kfd_criu_device_bucket *dev, bool swap, char *msg,
		  size_t len);
void cw_devices_close(const struct cw_image *img,
		      struct kfd_criu_device_bucket *dev);

/*
 * Put back the user memory of @img's USERPTR BOs at their addresses; with
 * @late only CW_UPTR0's, else all that are not back yet.
 */
int cw_map_userptrs(const struct cw_image *img, bool late, char *msg,
		    size_t len);

/* Store / load an image in a directory. */
int cw_image_save(const struct cw_image *img, const char *dir);
int cw_image_load(struct cw_image *img, const char *dir);
void cw_image_free(struct cw_image *img);

/* The counters, diffed: 0 if equal, else -1 with the difference in @msg. */
int cw_counters_same(const struct kt_props *before, const char *what,
		     char *msg, size_t len);

/* Index of the loop queue's debugfs line, and waiting for it. */
int cw_qinfo(pid_t pid, const struct cw_layout *lay, int q,
	     struct kg_qinfo *qi);

#endif /* CRIU_WORK_H */
