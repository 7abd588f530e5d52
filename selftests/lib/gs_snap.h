/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small checkpoint/restore harness for tests that build their own GPU
 * work (queues, signals, events, BOs with the selftests' runtime,
 * kfdsim_gpu.h) instead of the CRIU tests' fixed workload:
 *
 *  - a target process builds its state into a struct gs_state in shared
 *    memory and then obeys one-byte commands;
 *  - the test process checkpoints it as CRIU does: every thread seized and
 *    interrupted, PROCESS_INFO, CHECKPOINT, the BO contents read through
 *    the dma-bufs;
 *  - a fresh process restores the image (RESTORE, contents written back,
 *    CPU mappings and doorbells at their new offsets), rebinds a copy of
 *    the state to its own mappings and obeys commands too, so the test
 *    can carry on with the same kg_queue / kg_signal / kg_bo values.
 *
 * Nothing here includes the kselftest harness: functions return 0, or -1
 * with a message.
 */
#ifndef GS_SNAP_H
#define GS_SNAP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "criu_work.h"

#define GS_MAX_QUEUES	8
#define GS_MAX_BOS	8
#define GS_MAX_SIGNALS	8
#define GS_MAX_EVENTS	4
#define GS_MAX_TIDS	16

/* What a target built; pointers are rebound after a restore. */
struct gs_state {
	struct kg_rt rt;
	struct kg_queue q[GS_MAX_QUEUES];
	struct kg_bo bo[GS_MAX_BOS];
	struct kg_signal sig[GS_MAX_SIGNALS];
	uint32_t ev[GS_MAX_EVENTS];
	uint32_t nq, nbo, nsig, nev;
	uint64_t val[16];		/* the test's own numbers */
};

/* Shared between the test process and its targets (MAP_SHARED). */
struct gs_shared {
	struct gs_state st;
	int32_t status;
	int32_t restore_err;		/* GS_R_FAIL: RESTORE's -errno */
	uint64_t restore_ns;		/* RESTORE ioctl */
	uint64_t fill_ns;		/* contents written back */
	uint64_t test[16];		/* the test's own results */
	char msg[2048];
};

struct gs_proc {
	pid_t pid;
	int sock;
	struct gs_shared *sh;
};

/*
 * A target's work: called with cmd 0 to build (in a fresh process), then
 * once per command. Returns 0 or -1 with a message.
 */
typedef int (*gs_fn)(struct gs_shared *sh, char cmd, char *msg, size_t len);

#define GS_CMD_QUIT	'Q'

struct gs_shared *gs_shared_new(void);
void gs_shared_free(struct gs_shared *sh);

/* Fork a target that runs @fn(sh, 0) and then obeys commands. */
int gs_start(struct gs_proc *p, struct gs_shared *sh, gs_fn fn, char *msg,
	     size_t len);
/* Send @cmd to the target and wait for its verdict. */
int gs_command(struct gs_proc *p, char cmd, char *msg, size_t len);
/* SIGKILL the target (traced or not) and reap every thread of it. */
void gs_kill(struct gs_proc *p);
/* Quit and reap; 0 if it exited cleanly. */
int gs_quit(struct gs_proc *p, char *msg, size_t len);

/* A checkpoint in progress: the image, the target's fd, its threads. */
struct gs_ck {
	struct cw_image img;
	int tfd;
	pid_t tids[GS_MAX_TIDS];
	int ntids;
	bool stopped;
	uint64_t info_ns, ckpt_ns, read_ns;	/* how long each step took */
};

/*
 * Checkpoint @pid, whose /dev/kfd is its fd @kfd_fd: seize and interrupt
 * every thread, PROCESS_INFO, CHECKPOINT, read the contents. The target
 * stays paused and stopped; gs_kill() it or gs_release() it.
 */
int gs_checkpoint(pid_t pid, int kfd_fd, struct gs_ck *ck, char *msg,
		  size_t len);
/*
 * The same in two steps, for a test that must pause the GPU the moment
 * something happens: gs_attach() takes the target's fd (seizing its
 * threads without stopping them), gs_dump() stops every thread, runs
 * PROCESS_INFO first and the rest after.
 */
int gs_attach(pid_t pid, int kfd_fd, struct gs_ck *ck, char *msg,
	      size_t len);
int gs_dump(pid_t pid, struct gs_ck *ck, char *msg, size_t len);
/*
 * Kill the checkpointed target as CRIU does after a dump, and drop our
 * copy of its /dev/kfd (which would keep its process, and its VRAM, alive).
 */
void gs_kill_dumped(struct gs_proc *p, struct gs_ck *ck);
/* UNPAUSE the target and detach from its threads; frees the image. */
int gs_release(struct gs_ck *ck, char *msg, size_t len);
void gs_ck_free(struct gs_ck *ck);

/* gs_start_restored() options. */
#define GS_R_SWAP	0x1	/* onto the GPUs in reverse topology order */
#define GS_R_FAIL	0x2	/* RESTORE is to fail: check it left nothing */
#define GS_R_NOSTATE	0x4	/* no gs_state to rebind (@from unused) */

/*
 * Fork a process that restores @img and rebinds a copy of @from (the
 * checkpointed target's state) into sh->st; then @fn obeys commands as in
 * a target. Returns once RESTORE is done (RESUME not sent yet). With
 * GS_R_FAIL, returns 0 once RESTORE failed and was found to leave no fd
 * and no driver object behind (the error in sh->restore_err); the
 * process has exited then.
 */
int gs_start_restored(struct gs_proc *p, struct gs_shared *sh,
		      const struct gs_state *from, const struct cw_image *img,
		      unsigned int flags, gs_fn fn, char *msg, size_t len);

/*
 * Checkpoint the target @orig into @ck, kill it as CRIU does after a dump
 * and start the process restored from @ck's image (with @sh2, @flags and
 * @fn as for gs_start_restored()) in @rest. RESUME is not sent yet.
 */
int gs_move(struct gs_proc *orig, struct gs_ck *ck, struct gs_proc *rest,
	    struct gs_shared *sh2, unsigned int flags, gs_fn fn, char *msg,
	    size_t len);

/* In a restored process: RESTORE's BO buckets (restored offsets). */
const struct kfd_criu_bo_bucket *gs_restored_buckets(void);

/* 64-bit FNV-1a over @len bytes. */
uint64_t gs_hash(const void *buf, size_t len);
uint64_t gs_ns(void);

/* Has thread @tid of @pid been asleep in ioctl() (the syscall file)? */
bool gs_in_ioctl(pid_t pid, pid_t tid);

#endif /* GS_SNAP_H */
