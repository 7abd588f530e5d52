// SPDX-License-Identifier: GPL-2.0
/*
 * The KFD CRIU ioctl (AMDKFD_IOC_CRIU_OP), tested without CRIU: this
 * process plays CRIU (the target's tracer, pidfd_getfd() for its /dev/kfd,
 * PROCESS_INFO, CHECKPOINT, the BO contents through the dma-bufs, RESUME)
 * and forks the targets and the restored processes (criu_work.c).
 *
 * Besides the kselftest tests, two modes serve run-other-node.sh, which
 * reloads the module between them so the restore happens on "another node"
 * (other gpu_ids and render minors):
 *
 *   criu_test --checkpoint-to DIR   checkpoint a worker mid-kernel into DIR
 *   criu_test --restore-from DIR    restore it, RESUME, check the results
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libdrm/amdgpu_drm.h>

#include "kt_harness.h"
#include "criu_work.h"

/*
 * Loop steps of a workload that must be caught mid-kernel: about 2.5 s of
 * simulated GPU under TCG, and the checkpointer polls every millisecond.
 */
#define STEPS_LONG	5000

#define M	self->msg, sizeof(self->msg)

/* The fixture's setup cannot stop a test by skipping (6.1 harness). */
#define CW_NEEDS() do {						\
	if (_metadata->skip)					\
		return;						\
} while (0)

FIXTURE(criu) {
	struct cw_shared *sh;
	struct kt_props base;
	struct cw_target w, r;
	struct cw_image img;
	int tfd;
	char msg[4096];
};

FIXTURE_SETUP(criu)
{
	struct kt_gpu gpus[KT_MAX_GPUS];
	char err[128];
	int n;

	self->tfd = -1;
	self->w.sock = -1;
	self->r.sock = -1;
	if (geteuid())
		SKIP(return, "needs root");
	n = kt_gpus(gpus, KT_MAX_GPUS);
	if (n < CW_NGPUS)
		SKIP(return, "needs %d GPUs, found %d", CW_NGPUS, n);
	if (access(KC_FAIL_NTH, W_OK))
		SKIP(return, "no %s", KC_FAIL_NTH);
	self->sh = cw_shared_new();
	ASSERT_NE(NULL, self->sh);
	ASSERT_EQ(0, kt_counters(&self->base, err, sizeof(err)))
		TH_LOG("%s", err);
}

FIXTURE_TEARDOWN(criu)
{
	kc_fail_nth_set(0);
	cw_kill(&self->w);
	cw_kill(&self->r);
	if (self->tfd >= 0)
		close(self->tfd);
	cw_image_free(&self->img);
}

#define CW_TEST(name)	TEST_F_TIMEOUT(criu, name, 600)

/* The counters are what they were when the test started. */
#define ASSERT_BASELINE(what) \
	ASSERT_EQ(0, cw_counters_same(&self->base, what, M)) \
		TH_LOG("%s", self->msg)

/* Start a worker and checkpoint it into self->img; the worker dies. */
static int checkpoint_worker(FIXTURE_DATA(criu) *self, uint32_t steps,
			     unsigned int flags)
{
	return cw_checkpoint_worker(&self->w, self->sh, steps, flags,
				    &self->img, M);
}

/* Restore self->img, RESUME it; self->r is the restored process. */
static int restore_and_resume(FIXTURE_DATA(criu) *self,
			      const struct cw_image *img, unsigned int flags)
{
	if (cw_start_restored(&self->r, self->sh, img, flags, M) ||
	    cw_send_resume(self->r.pid, M) || cw_resumed(&self->r, M))
		return -1;
	return 0;
}

/* Tell T to finish its loop, then wait for its clean exit. */
static void finish_and_quit(struct __test_metadata *_metadata,
			    FIXTURE_DATA(criu) *self, struct cw_target *t)
{
	ASSERT_EQ(0, cw_command(t, CW_CMD_FINISH, M)) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, cw_quit(t, M)) TH_LOG("%s", self->msg);
}

/* Start a worker and seize it (see kc_seize); self->tfd is its /dev/kfd. */
static void start_and_seize(struct __test_metadata *_metadata,
			    FIXTURE_DATA(criu) *self, uint32_t steps,
			    bool stop)
{
	ASSERT_EQ(0, cw_start_worker(&self->w, self->sh, steps, M))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, kc_seize(self->w.pid, stop));
	self->tfd = kc_getfd(self->w.pid, self->sh->lay.kfd_fd);
	ASSERT_LE(0, self->tfd);
}

/*
 * Checkpoint a stopped worker into self->img, then run FN on the image in
 * a child; the counters are back at baseline once the child is gone.
 */
static void restore_in_child(struct __test_metadata *_metadata,
			     FIXTURE_DATA(criu) *self, kt_child_fn fn,
			     const char *after)
{
	ASSERT_EQ(0, checkpoint_worker(self, 0, CW_CK_STOP))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, kt_run_child(fn, &self->img, M)) TH_LOG("%s", self->msg);
	ASSERT_BASELINE(after);
}

static void rm_dir(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *d;
	DIR *dp = opendir(dir);

	if (!dp)
		return;
	while ((d = readdir(dp))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		unlink(path);
	}
	closedir(dp);
	rmdir(dir);
}

/* ---- 1. the full flow ---- */

/*
 * Checkpoint a worker mid-kernel (loop kernel on GPU 0, SDMA on GPU 1,
 * every kind of BO, events), store the image in a directory, kill the
 * worker, restore into a fresh process from the stored image, RESUME: the
 * loop ends with the result of an uninterrupted run, every BO, handle,
 * VA, queue id, event id and doorbell is what it was.
 */
CW_TEST(full_flow_restores_mid_kernel_exactly)
{
	char dir[] = "/tmp/kfdsim-criu.XXXXXX";
	struct cw_image loaded;
	int ret;

	CW_NEEDS();
	ASSERT_EQ(0, checkpoint_worker(self, STEPS_LONG,
				       CW_CK_MIDLOOP | CW_CK_STOP))
		TH_LOG("%s", self->msg);
	TH_LOG("checkpointed at loop step %u, workgroup %u (of %u steps)",
	       self->img.qs[CW_Q_LOOP].iteration,
	       self->img.qs[CW_Q_LOOP].next_wg, STEPS_LONG);
	ASSERT_BASELINE("after the worker died");

	ASSERT_NE(NULL, mkdtemp(dir));
	ret = cw_image_save(&self->img, dir);
	if (!ret)
		ret = cw_image_load(&loaded, dir);
	rm_dir(dir);
	ASSERT_EQ(0, ret) TH_LOG("image through %s: %s", dir, strerror(-ret));
	cw_image_free(&self->img);
	self->img = loaded;

	ASSERT_EQ(0, restore_and_resume(self, &self->img, 0))
		TH_LOG("%s", self->msg);
	finish_and_quit(_metadata, self, &self->r);
	ASSERT_BASELINE("after the restored process exited");
}

/* ---- 3. leave running, and restores of restores ---- */

/*
 * CHECKPOINT, then UNPAUSE instead of killing: the original finishes, and
 * so does a copy restored from the checkpoint while the original runs.
 */
CW_TEST(leave_running_original_and_restored_copy_finish)
{
	struct cw_shared *sh2 = cw_shared_new();

	CW_NEEDS();
	ASSERT_NE(NULL, sh2);
	ASSERT_EQ(0, cw_start_worker(&self->w, self->sh, STEPS_LONG, M))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, cw_checkpoint(self->w.pid, &self->sh->lay, NULL,
				   CW_CK_MIDLOOP | CW_CK_STOP, &self->img,
				   &self->tfd, M))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, kc_unpause(self->tfd));
	ASSERT_EQ(-EINVAL, kc_unpause(self->tfd));
	ASSERT_EQ(0, kc_detach(self->w.pid));
	close(self->tfd);
	self->tfd = -1;
	ASSERT_EQ(0, cw_start_restored(&self->r, sh2, &self->img, 0, M))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, cw_send_resume(self->r.pid, M)) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, cw_resumed(&self->r, M)) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, cw_command(&self->w, CW_CMD_FINISH, M))
		TH_LOG("original: %s", self->msg);
	ASSERT_EQ(0, cw_command(&self->r, CW_CMD_FINISH, M))
		TH_LOG("copy: %s", self->msg);
	ASSERT_EQ(0, cw_quit(&self->w, M)) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, cw_quit(&self->r, M)) TH_LOG("%s", self->msg);
	ASSERT_BASELINE("after both exited");
}

/* Checkpoint the worker, then the restored process, then its restore. */
CW_TEST(three_checkpoint_restore_cycles)
{
	struct kg_qinfo since;
	int cycle;

	CW_NEEDS();
	ASSERT_EQ(0, checkpoint_worker(self, STEPS_LONG,
				       CW_CK_MIDLOOP | CW_CK_STOP))
		TH_LOG("%s", self->msg);
	for (cycle = 1; cycle <= 3; cycle++) {
		ASSERT_BASELINE("after the checkpointed process died");
		ASSERT_EQ(0, restore_and_resume(self, &self->img, 0))
			TH_LOG("cycle %d: %s", cycle, self->msg);
		TH_LOG("cycle %d: restored at loop step %u, workgroup %u",
		       cycle, self->img.qs[CW_Q_LOOP].iteration,
		       self->img.qs[CW_Q_LOOP].next_wg);
		if (cycle == 3)
			break;
		/* Checkpoint the restored process once its loop moved on. */
		since = self->img.qs[CW_Q_LOOP];
		cw_image_free(&self->img);
		ASSERT_EQ(0, cw_checkpoint(self->r.pid, &self->sh->lay, &since,
					   CW_CK_MIDLOOP | CW_CK_STOP,
					   &self->img, &self->tfd, M))
			TH_LOG("cycle %d: %s", cycle, self->msg);
		cw_kill(&self->r);
		close(self->tfd);
		self->tfd = -1;
	}
	finish_and_quit(_metadata, self, &self->r);
	ASSERT_BASELINE("after the last restored process exited");
}

/*
 * Restore onto the GPUs in the other order: what the process calls GPU A
 * now runs on the physical GPU B and vice versa. It still finishes exactly,
 * and a checkpoint of it, restored straight, too.
 */
CW_TEST(restore_onto_swapped_gpus)
{
	struct kg_qinfo since;

	CW_NEEDS();
	ASSERT_EQ(0, checkpoint_worker(self, STEPS_LONG,
				       CW_CK_MIDLOOP | CW_CK_STOP))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, restore_and_resume(self, &self->img, CW_R_SWAP))
		TH_LOG("%s", self->msg);
	since = self->img.qs[CW_Q_LOOP];
	cw_image_free(&self->img);
	ASSERT_EQ(0, cw_checkpoint(self->r.pid, &self->sh->lay, &since,
				   CW_CK_MIDLOOP | CW_CK_STOP, &self->img,
				   &self->tfd, M))
		TH_LOG("%s", self->msg);
	/* Its devices are the swapped ones. */
	ASSERT_EQ(self->img.lay.gpu_id[0], self->img.k.devices[1].user_gpu_id);
	ASSERT_EQ(self->img.node.ids[1], self->img.k.devices[1].actual_gpu_id);
	cw_kill(&self->r);
	close(self->tfd);
	self->tfd = -1;
	ASSERT_BASELINE("after the swapped process died");
	ASSERT_EQ(0, restore_and_resume(self, &self->img, 0))
		TH_LOG("%s", self->msg);
	finish_and_quit(_metadata, self, &self->r);
	ASSERT_BASELINE("after the restored process exited");
}

/*
 * RESUME pins the userptr BOs: while the user memory of one is not back it
 * fails (the queues stay stopped), and succeeds once it is; the GPU then
 * sees the restored user memory.
 */
CW_TEST(resume_retries_until_userptr_memory_is_back)
{
	struct kg_qinfo qi;
	int kfd, ret;

	CW_NEEDS();
	ASSERT_EQ(0, checkpoint_worker(self, STEPS_LONG,
				       CW_CK_MIDLOOP | CW_CK_STOP))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, cw_start_restored(&self->r, self->sh, &self->img,
				       CW_R_LATE_UPTR, M))
		TH_LOG("%s", self->msg);
	kfd = kt_open_kfd();
	ASSERT_LE(0, kfd);
	ret = kc_resume(kfd, self->r.pid);
	EXPECT_EQ(-EFAULT, ret) TH_LOG("RESUME without the user memory: %d",
				       ret);
	ASSERT_NE(0, ret);
	ret = kc_resume(kfd, self->r.pid);
	EXPECT_EQ(-EFAULT, ret) TH_LOG("second RESUME: %d", ret);
	ASSERT_EQ(0, cw_qinfo(self->r.pid, &self->sh->lay, CW_Q_LOOP, &qi));
	EXPECT_EQ(1, qi.evicted) TH_LOG("queues run after a failed RESUME");
	EXPECT_EQ(self->img.qs[CW_Q_LOOP].iteration, qi.iteration);
	EXPECT_EQ(self->img.qs[CW_Q_LOOP].next_wg, qi.next_wg);
	ASSERT_EQ(0, cw_command(&self->r, CW_CMD_UPTR, M))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, kc_resume(kfd, self->r.pid));
	EXPECT_EQ(-EINVAL, kc_resume(kfd, self->r.pid));
	close(kfd);
	ASSERT_EQ(0, cw_resumed(&self->r, M)) TH_LOG("%s", self->msg);
	finish_and_quit(_metadata, self, &self->r);
	ASSERT_BASELINE("after the restored process exited");
}

/* ---- 4. malformed input to RESTORE ---- */

/* A RESTORE call being built, for a case to spoil. */
struct rctx {
	struct kfd_ioctl_criu_args a;
	struct kfd_criu_device_bucket dev[KT_MAX_GPUS + 1];
	struct kfd_criu_bo_bucket *bos;
	uint8_t *priv;
	const struct cw_image *img;
	int kfd;
};

typedef void (*spoil_fn)(struct rctx *c);

struct bad_case {
	const char *name;
	spoil_fn spoil;
	int err;
};

/* Slack after the buckets and the private data for cases that grow them. */
#define SLACK	64

static struct kc_hdr *hdr(struct rctx *c)
{
	return (struct kc_hdr *)c->priv;
}

/* The @nth object of @type in the private data being built. */
static void *obj(struct rctx *c, uint32_t type, uint32_t nth)
{
	struct kc_image k = {
		.priv = c->priv,
		.priv_size = c->a.priv_data_size,
	};

	return kc_priv_find(&k, type, nth);
}

static struct kc_obj *obj_hdr(void *payload)
{
	return (struct kc_obj *)payload - 1;
}

static struct kc_obj *last_obj(struct rctx *c)
{
	struct kc_image k = {
		.priv = c->priv,
		.priv_size = c->a.priv_data_size,
	};
	uint32_t t, s;

	return obj_hdr(kc_priv_object(&k, hdr(c)->num_objects - 1, &t, &s));
}

/* Bucket / BO object index of a workload role. */
static uint32_t bidx(struct rctx *c, int role)
{
	uint32_t i;

	for (i = 0; i < c->img->k.num_bos; i++)
		if (c->img->k.bos[i].addr == c->img->lay.bo[role].va)
			break;
	return i;
}

static struct kc_bo_v1 *bo_obj(struct rctx *c, int role)
{
	return obj(c, KC_OBJ_BO, bidx(c, role));
}

static struct kc_queue_v1 *q_obj(struct rctx *c, int q)
{
	struct kc_queue_v1 *o;
	uint32_t i;

	for (i = 0; (o = obj(c, KC_OBJ_QUEUE, i)); i++)
		if (o->id == c->img->lay.q[q].id)
			return o;
	return NULL;
}

static struct kc_event_v1 *ev_obj(struct rctx *c, int e)
{
	struct kc_event_v1 *o;
	uint32_t i;

	for (i = 0; (o = obj(c, KC_OBJ_EVENT, i)); i++)
		if (o->id == c->img->lay.ev[e])
			return o;
	return NULL;
}

static struct kc_proc_v1 *proc_obj(struct rctx *c)
{
	return obj(c, KC_OBJ_PROCESS, 0);
}

/* Grow or shrink the private data and its header's size together. */
static void resize(struct rctx *c, int64_t delta)
{
	c->a.priv_data_size += delta;
	hdr(c)->size += delta;
}

/* An address no BO covers. */
#define HOLE_VA		0x10000000ULL

/* -- header and sizes -- */
static void s_short8(struct rctx *c) { c->a.priv_data_size -= 8; }
static void s_lastobj_missing(struct rctx *c)
{
	resize(c, -(int64_t)(sizeof(struct kc_obj) +
			     sizeof(struct kc_event_v1)));
}
static void s_lastobj_cut(struct rctx *c) { resize(c, -8); }
static void s_tiny(struct rctx *c)
{
	c->a.priv_data_size = 16;
	hdr(c)->size = 16;
}
static void s_empty(struct rctx *c) { c->a.priv_data_size = 0; }
static void s_magic(struct rctx *c) { hdr(c)->magic ^= 1; }
static void s_version0(struct rctx *c) { hdr(c)->version = 0; }
static void s_version3(struct rctx *c) { hdr(c)->version = 3; }
static void s_version_max(struct rctx *c) { hdr(c)->version = 0xffffffff; }
static void s_hdr_size(struct rctx *c) { hdr(c)->size += 8; }
static void s_trailing(struct rctx *c) { resize(c, 8); }
static void s_nobj_more(struct rctx *c) { hdr(c)->num_objects++; }
static void s_nobj_less(struct rctx *c) { hdr(c)->num_objects--; }
static void s_huge(struct rctx *c) { c->a.priv_data_size = 1ULL << 40; }
static void s_over_max(struct rctx *c)
{
	c->a.priv_data_size = KC_MAX_PRIV + 8ULL;
}
static void s_bad_priv_ptr(struct rctx *c) { c->a.priv_data = 8; }
static void s_bad_bos_ptr(struct rctx *c) { c->a.bos = 8; }
static void s_bad_dev_ptr(struct rctx *c) { c->a.devices = 8; }

static const struct bad_case header_cases[] = {
	{ "priv_data_size 8 bytes short of the header's size", s_short8, EINVAL },
	{ "truncated: last object missing", s_lastobj_missing, EINVAL },
	{ "truncated: last object cut short", s_lastobj_cut, EINVAL },
	{ "smaller than the header", s_tiny, EINVAL },
	{ "no private data", s_empty, EINVAL },
	{ "wrong magic", s_magic, EINVAL },
	{ "version 0", s_version0, EINVAL },
	{ "newer version 3", s_version3, EINVAL },
	{ "version 0xffffffff", s_version_max, EINVAL },
	{ "header size differs from priv_data_size", s_hdr_size, EINVAL },
	{ "trailing bytes after the last object", s_trailing, EINVAL },
	{ "header counts one object too many", s_nobj_more, EINVAL },
	{ "header counts one object too few", s_nobj_less, EINVAL },
	{ "priv_data_size 1 TiB", s_huge, EINVAL },
	{ "priv_data_size just over the limit", s_over_max, EINVAL },
	{ "priv_data pointer unmapped", s_bad_priv_ptr, EFAULT },
	{ "bos pointer unmapped", s_bad_bos_ptr, EFAULT },
	{ "devices pointer unmapped", s_bad_dev_ptr, EFAULT },
};

/* -- counts -- */
static void s_nbos_more(struct rctx *c) { c->a.num_bos++; }
static void s_nbos_less(struct rctx *c) { c->a.num_bos--; }
static void s_ndev_less(struct rctx *c) { c->a.num_devices--; }
static void s_ndev_more(struct rctx *c)
{
	/* A third device on a node of two. */
	c->dev[c->a.num_devices] = c->dev[0];
	c->dev[c->a.num_devices].user_gpu_id = 0x77;
	c->a.num_devices++;
}
static void s_nobjects_more(struct rctx *c) { c->a.num_objects++; }
static void s_nobjects_less(struct rctx *c) { c->a.num_objects--; }
static void s_nbos_huge(struct rctx *c) { c->a.num_bos = 1u << 21; }
static void s_nobjects_huge(struct rctx *c) { c->a.num_objects = 1u << 20; }
static void s_proc_queues(struct rctx *c) { proc_obj(c)->num_queues++; }
static void s_proc_events(struct rctx *c) { proc_obj(c)->num_events--; }
static void s_proc_bos(struct rctx *c) { proc_obj(c)->num_bos--; }
static void s_proc_devices(struct rctx *c) { proc_obj(c)->num_devices++; }

static const struct bad_case count_cases[] = {
	{ "num_bos one more than the objects", s_nbos_more, EINVAL },
	{ "num_bos one less than the objects", s_nbos_less, EINVAL },
	{ "num_devices one less than the objects", s_ndev_less, EINVAL },
	{ "more devices than the node has", s_ndev_more, EINVAL },
	{ "num_objects one more", s_nobjects_more, EINVAL },
	{ "num_objects one less", s_nobjects_less, EINVAL },
	{ "num_bos 2^21", s_nbos_huge, EINVAL },
	{ "num_objects 2^20", s_nobjects_huge, EINVAL },
	{ "process object: num_queues + 1", s_proc_queues, EINVAL },
	{ "process object: num_events - 1", s_proc_events, EINVAL },
	{ "process object: num_bos - 1", s_proc_bos, EINVAL },
	{ "process object: num_devices + 1", s_proc_devices, EINVAL },
};

/* -- objects -- */
static void s_size_past_end(struct rctx *c) { last_obj(c)->size = 0xfffffff8; }
static void s_size_odd(struct rctx *c)
{
	obj_hdr(obj(c, KC_OBJ_EVENT, 0))->size = 12;
}
static void s_size_grown(struct rctx *c)
{
	/* The last event object 8 bytes longer, all sizes consistent. */
	memset(c->priv + c->a.priv_data_size, 0, 8);
	last_obj(c)->size += 8;
	resize(c, 8);
}
static void s_type_unknown(struct rctx *c) { last_obj(c)->type = 99; }
static void s_type_zero(struct rctx *c) { last_obj(c)->type = 0; }
static void s_type_svm(struct rctx *c) { last_obj(c)->type = KC_OBJ_SVM_RANGE; }
static void s_type_device_for_bo(struct rctx *c)
{
	/* A BO object claiming to be a device (wrong size for it). */
	obj_hdr(obj(c, KC_OBJ_BO, 0))->type = KC_OBJ_DEVICE;
}
static void s_no_process(struct rctx *c)
{
	/* The process object relabelled: an event object of its size. */
	obj_hdr(proc_obj(c))->type = KC_OBJ_EVENT;
}

static const struct bad_case object_cases[] = {
	{ "object size past the end", s_size_past_end, EINVAL },
	{ "object size not a multiple of 8", s_size_odd, EINVAL },
	{ "object longer than its type", s_size_grown, EINVAL },
	{ "unknown object type 99", s_type_unknown, EINVAL },
	{ "object type 0", s_type_zero, EINVAL },
	{ "reserved object type SVM_RANGE", s_type_svm, EINVAL },
	{ "BO object typed as a device", s_type_device_for_bo, EINVAL },
	{ "no process object", s_no_process, EINVAL },
};

/* -- padding -- */
static void s_pad_hdr(struct rctx *c) { hdr(c)->pad = 1; }
static void s_pad_proc(struct rctx *c) { proc_obj(c)->pad = 1; }
static void s_flags_proc(struct rctx *c) { proc_obj(c)->flags = 1; }
static void s_pad_devobj(struct rctx *c)
{
	((struct kc_dev_v1 *)obj(c, KC_OBJ_DEVICE, 1))->pad = 1;
}
static void s_pad_queue(struct rctx *c) { q_obj(c, CW_Q_SDMA)->pad = 1; }
static void s_pad2_queue(struct rctx *c) { q_obj(c, CW_Q_LOOP)->pad2 = 1; }
static void s_pad_devbucket(struct rctx *c) { c->dev[0].pad = 1; }
static void s_pad_bobucket(struct rctx *c)
{
	c->bos[bidx(c, CW_SPARE)].pad = 1;
}

static const struct bad_case padding_cases[] = {
	{ "header pad", s_pad_hdr, EINVAL },
	{ "process object pad", s_pad_proc, EINVAL },
	{ "process object flags", s_flags_proc, EINVAL },
	{ "device object pad", s_pad_devobj, EINVAL },
	{ "queue object pad", s_pad_queue, EINVAL },
	{ "queue object pad2", s_pad2_queue, EINVAL },
	{ "device bucket pad", s_pad_devbucket, EINVAL },
	{ "BO bucket pad", s_pad_bobucket, EINVAL },
};

/* -- BOs -- */
static void s_dup_handle(struct rctx *c)
{
	/* Two GTT BOs of GPU 0 with one handle. */
	bo_obj(c, CW_COPYBUF)->id = bo_obj(c, CW_DST)->id;
}
static void s_handle_zero(struct rctx *c) { bo_obj(c, CW_SPARE)->id = 0; }
static void s_handle_huge(struct rctx *c)
{
	bo_obj(c, CW_SPARE)->id = 0x80000000u;
}
static void s_overlap(struct rctx *c)
{
	c->bos[bidx(c, CW_SPARE)].addr = c->img->lay.bo[CW_SRC].va + 4096;
}
static void s_overlap_userptr(struct rctx *c)
{
	c->bos[bidx(c, CW_UPTR1)].addr = c->img->lay.bo[CW_LOOPBUF].va;
}
static void s_va_outside(struct rctx *c)
{
	c->bos[bidx(c, CW_SPARE)].addr = 1ULL << 47;
}
static void s_va_zero(struct rctx *c) { c->bos[bidx(c, CW_SPARE)].addr = 0; }
static void s_size_unaligned(struct rctx *c)
{
	c->bos[bidx(c, CW_SPARE)].size -= 8;
}
static void s_size_zero(struct rctx *c) { c->bos[bidx(c, CW_SPARE)].size = 0; }
static void s_mapped_bit(struct rctx *c)
{
	bo_obj(c, CW_SPARE)->mapped = 1u << c->a.num_devices;
}
static void s_bo_gpu(struct rctx *c) { c->bos[bidx(c, CW_SPARE)].gpu_id = 0x77; }
static void s_bo_flag(struct rctx *c)
{
	c->bos[bidx(c, CW_SPARE)].alloc_flags |= 1u << 20;
}
static void s_bo_two_domains(struct rctx *c)
{
	c->bos[bidx(c, CW_SPARE)].alloc_flags |= KT_GTT;
}
static void s_bo_no_domain(struct rctx *c)
{
	c->bos[bidx(c, CW_SPARE)].alloc_flags &= ~(uint32_t)KT_VRAM;
}
static void s_bo_mmio(struct rctx *c)
{
	c->bos[bidx(c, CW_SPARE)].alloc_flags =
		KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP | KT_WRITABLE;
	c->bos[bidx(c, CW_SPARE)].size = 2 * KT_PAGE;
}
static void s_userptr_no_addr(struct rctx *c)
{
	bo_obj(c, CW_UPTR0)->user_addr = 0;
}
static void s_vram_with_addr(struct rctx *c)
{
	bo_obj(c, CW_SPARE)->user_addr = 0x10000;
}
static void s_userptr_unaligned(struct rctx *c)
{
	bo_obj(c, CW_UPTR1)->user_addr += 8;
}
static void s_doorbell_size(struct rctx *c)
{
	c->bos[bidx(c, CW_DOORBELL)].size = KT_PAGE;
}
static void s_evpage_none(struct rctx *c)
{
	proc_obj(c)->events_page = ((uint64_t)c->img->lay.gpu_id[0] << 32) |
				   999;
}
static void s_evpage_userptr(struct rctx *c)
{
	proc_obj(c)->events_page = c->img->lay.bo[CW_UPTR0].handle;
}
static void s_evpage_small(struct rctx *c)
{
	proc_obj(c)->events_page = c->img->lay.bo[CW_IDLE_CTL].handle;
}
static void s_vram_too_big(struct rctx *c)
{
	/* Where nothing else is, but more than the GPU's VRAM. */
	c->bos[bidx(c, CW_SPARE)].addr = 0x700000000000ULL;
	c->bos[bidx(c, CW_SPARE)].size = 1ULL << 40;
}

static const struct bad_case bo_cases[] = {
	{ "two BOs with one handle", s_dup_handle, EINVAL },
	{ "handle id 0", s_handle_zero, EINVAL },
	{ "handle id above INT_MAX", s_handle_huge, EINVAL },
	{ "overlapping VAs", s_overlap, EINVAL },
	{ "userptr BO over a VRAM BO's VA", s_overlap_userptr, EINVAL },
	{ "VA above the GPUVM aperture", s_va_outside, EINVAL },
	{ "VA 0", s_va_zero, EINVAL },
	{ "size not page aligned", s_size_unaligned, EINVAL },
	{ "size 0", s_size_zero, EINVAL },
	{ "mapped on a device the process does not have", s_mapped_bit, EINVAL },
	{ "BO on an unknown gpu_id", s_bo_gpu, EINVAL },
	{ "unknown allocation flag", s_bo_flag, EINVAL },
	{ "two memory domains", s_bo_two_domains, EINVAL },
	{ "no memory domain", s_bo_no_domain, EINVAL },
	{ "MMIO_REMAP BO larger than a page", s_bo_mmio, EINVAL },
	{ "userptr BO without an address", s_userptr_no_addr, EINVAL },
	{ "VRAM BO with a user address", s_vram_with_addr, EINVAL },
	{ "userptr address not page aligned", s_userptr_unaligned, EINVAL },
	{ "doorbell BO of the wrong size", s_doorbell_size, EINVAL },
	{ "events page handle names no BO", s_evpage_none, EINVAL },
	{ "events page is a userptr BO", s_evpage_userptr, EINVAL },
	{ "events page BO too small", s_evpage_small, EINVAL },
	{ "VRAM BO larger than the GPU's VRAM", s_vram_too_big, ENOMEM },
};

/* -- queues -- */
static void s_q_dup_id(struct rctx *c)
{
	q_obj(c, CW_Q_IDLE)->id = c->img->lay.q[CW_Q_SDMA].id;
}
static void s_q_dup_doorbell(struct rctx *c)
{
	/* Both on GPU 1. */
	q_obj(c, CW_Q_IDLE)->doorbell = q_obj(c, CW_Q_SDMA)->doorbell;
}
static void s_q_id_big(struct rctx *c) { q_obj(c, CW_Q_IDLE)->id = 1024; }
static void s_q_db_big(struct rctx *c) { q_obj(c, CW_Q_IDLE)->doorbell = 1024; }
static void s_q_ring_hole(struct rctx *c) { q_obj(c, CW_Q_LOOP)->ring_va = HOLE_VA; }
static void s_q_ring_other_gpu(struct rctx *c)
{
	/* The loop queue's ring is mapped on GPU 0 only. */
	q_obj(c, CW_Q_SDMA)->ring_va = q_obj(c, CW_Q_LOOP)->ring_va;
}
static void s_q_ring_past_bo(struct rctx *c)
{
	q_obj(c, CW_Q_LOOP)->ring_size *= 2;
}
static void s_q_ring_pow2(struct rctx *c) { q_obj(c, CW_Q_LOOP)->ring_size -= 64; }
static void s_q_ring_zero(struct rctx *c) { q_obj(c, CW_Q_LOOP)->ring_va = 0; }
static void s_q_rptr_hole(struct rctx *c) { q_obj(c, CW_Q_LOOP)->rptr_va = HOLE_VA; }
static void s_q_wptr_hole(struct rctx *c) { q_obj(c, CW_Q_SDMA)->wptr_va = HOLE_VA; }
static void s_q_rptr_unaligned(struct rctx *c) { q_obj(c, CW_Q_LOOP)->rptr_va += 4; }
static void s_q_gpu(struct rctx *c) { q_obj(c, CW_Q_IDLE)->user_gpu_id = 0x77; }
static void s_q_type(struct rctx *c) { q_obj(c, CW_Q_IDLE)->type = 7; }
static void s_q_pct(struct rctx *c) { q_obj(c, CW_Q_IDLE)->percentage = 101; }
static void s_q_prio(struct rctx *c) { q_obj(c, CW_Q_IDLE)->priority = 16; }
static void s_q_state_flags(struct rctx *c) { q_obj(c, CW_Q_LOOP)->state_flags = 2; }
static void s_q_sdma_progress(struct rctx *c)
{
	q_obj(c, CW_Q_SDMA)->iteration = 1;
}
static void s_q_sdma_rptr(struct rctx *c) { q_obj(c, CW_Q_SDMA)->rptr += 2; }

/* -- a queue's context save state (version 2) -- */
/* The idle queue's control stack size (criu_work.c: the node's). */
#define CW_CTL_STACK_BYTES	0x5000u

static struct kc_cwsr_v2 *q_cwsr(struct rctx *c, int q)
{
	return (struct kc_cwsr_v2 *)(q_obj(c, q) + 1);
}

static void s_cs_pad(struct rctx *c) { q_cwsr(c, CW_Q_IDLE)->pad = 1; }
static void s_cs_offset(struct rctx *c)
{
	/* 8 bytes of control stack the object does not carry. */
	q_cwsr(c, CW_Q_IDLE)->cntl_stack_offset -= 8;
}
static void s_cs_wg_low(struct rctx *c)
{
	q_cwsr(c, CW_Q_IDLE)->wg_state_offset = CW_CTL_STACK_BYTES - 8;
}
static void s_cs_wg_high(struct rctx *c)
{
	q_cwsr(c, CW_Q_IDLE)->wg_state_offset = CW_CTL_STACK_BYTES + 8;
}
static void s_cs_no_area(struct rctx *c)
{
	q_cwsr(c, CW_Q_LOOP)->wg_state_offset = CW_CTL_STACK_BYTES;
}

/*
 * The idle queue's object carries a control stack the gfx9 engine could
 * have written: two waves of 64 VGPRs of workgroup 0 (words from the top:
 * tag, workgroup, state, last wave, first wave), grown into the slack;
 * @bad spoils one word, or the save area's end when 5.
 */
#define CS_WORDS	5
#define CS_WAVE_BYTES	(64 * 256 + 160 * 4)
static void cs_forge(struct rctx *c, int bad)
{
	uint32_t words[CS_WORDS + 1] = {
		0x52535743u, 0, 1u << 31 | 15 | 6u << 6,
		1 | 1u << 16, 1u << 17,
	};
	const uint32_t grow = sizeof(words);
	struct kc_cwsr_v2 *cs = q_cwsr(c, CW_Q_IDLE);
	uint8_t *tail = (uint8_t *)(cs + 1), *end = c->priv +
		c->a.priv_data_size;

	memmove(tail + grow, tail, end - tail);
	obj_hdr(q_obj(c, CW_Q_IDLE))->size += grow;
	resize(c, grow);
	if (bad >= 0 && bad < CS_WORDS)
		words[bad] ^= bad == 2 ? 1u << 6 : bad >= 3 ? 1u << 17 : 1;
	memcpy(tail, words, sizeof(words));
	cs->stack_bytes = CS_WORDS * 4;
	cs->cntl_stack_offset = CW_CTL_STACK_BYTES - CS_WORDS * 4;
	cs->wg_state_offset = CW_CTL_STACK_BYTES + 2 * CS_WAVE_BYTES +
			      (bad == CS_WORDS ? 4 : 0);
}
static void s_cs_tag(struct rctx *c) { cs_forge(c, 0); }
static void s_cs_wg(struct rctx *c) { cs_forge(c, 1); }
static void s_cs_state(struct rctx *c) { cs_forge(c, 2); }
static void s_cs_last(struct rctx *c) { cs_forge(c, 3); }
static void s_cs_first(struct rctx *c) { cs_forge(c, 4); }
static void s_cs_bytes(struct rctx *c) { cs_forge(c, 5); }

static const struct bad_case cwsr_cases[] = {
	{ "context save state padding", s_cs_pad, EINVAL },
	{ "control stack offset without its bytes", s_cs_offset, EINVAL },
	{ "saved waves end below the control stack", s_cs_wg_low, EINVAL },
	{ "saved waves without a control stack", s_cs_wg_high, EINVAL },
	{ "context save state on a queue without a save area", s_cs_no_area,
	  EINVAL },
	{ "control stack: wrong tag", s_cs_tag, EINVAL },
	{ "control stack: another workgroup", s_cs_wg, EINVAL },
	{ "control stack: state word with other SGPRs", s_cs_state, EINVAL },
	{ "control stack: last wave also first", s_cs_last, EINVAL },
	{ "control stack: first wave not marked", s_cs_first, EINVAL },
	{ "control stack: saved waves do not fill wg_state_offset", s_cs_bytes,
	  EINVAL },
};

static const struct bad_case queue_cases[] = {
	{ "two queues with one id", s_q_dup_id, EINVAL },
	{ "two queues of a GPU on one doorbell", s_q_dup_doorbell, EINVAL },
	{ "queue id 1024", s_q_id_big, EINVAL },
	{ "doorbell slot 1024", s_q_db_big, EINVAL },
	{ "ring in no BO", s_q_ring_hole, EINVAL },
	{ "ring in a BO not mapped on the queue's GPU", s_q_ring_other_gpu, EINVAL },
	{ "ring runs past its BO", s_q_ring_past_bo, EINVAL },
	{ "ring size not a power of two", s_q_ring_pow2, EINVAL },
	{ "ring address 0", s_q_ring_zero, EINVAL },
	{ "read pointer in no BO", s_q_rptr_hole, EINVAL },
	{ "write pointer in no BO", s_q_wptr_hole, EINVAL },
	{ "read pointer not 8-byte aligned", s_q_rptr_unaligned, EINVAL },
	{ "queue on an unknown gpu_id", s_q_gpu, EINVAL },
	{ "queue type 7", s_q_type, EINVAL },
	{ "queue percentage 101", s_q_pct, EINVAL },
	{ "queue priority 16", s_q_prio, EINVAL },
	{ "unknown queue state flag", s_q_state_flags, EINVAL },
	{ "SDMA queue with dispatch progress", s_q_sdma_progress, EINVAL },
	{ "SDMA read pointer not dword aligned", s_q_sdma_rptr, EINVAL },
};

/* -- events -- */
static void s_ev_type(struct rctx *c) { ev_obj(c, CW_EV_AUTO)->type = 7; }
static void s_ev_type1(struct rctx *c) { ev_obj(c, CW_EV_MEM)->type = 1; }
static void s_ev_auto(struct rctx *c) { ev_obj(c, CW_EV_AUTO)->auto_reset = 2; }
static void s_ev_signaled(struct rctx *c) { ev_obj(c, CW_EV_SET)->signaled = 2; }
static void s_ev_id0(struct rctx *c) { ev_obj(c, CW_EV_AUTO)->id = 0; }
static void s_ev_id_big(struct rctx *c) { ev_obj(c, CW_EV_AUTO)->id = 4096; }
static void s_ev_mem_id(struct rctx *c) { ev_obj(c, CW_EV_MEM)->id = 5; }
/* Upstream's range ends at INT_MAX, which idr_for_each_entry cannot pass. */
static void s_ev_mem_id_max(struct rctx *c)
{
	ev_obj(c, CW_EV_MEM)->id = 0x7fffffff;
}
static void s_ev_dup(struct rctx *c)
{
	ev_obj(c, CW_EV_AUTO)->id = c->img->lay.ev[CW_EV_SET];
}

static const struct bad_case event_cases[] = {
	{ "event type 7", s_ev_type, EINVAL },
	{ "event type 1 (node change)", s_ev_type1, EINVAL },
	{ "auto_reset 2", s_ev_auto, EINVAL },
	{ "signaled 2", s_ev_signaled, EINVAL },
	{ "signal event id 0", s_ev_id0, EINVAL },
	{ "signal event id 4096", s_ev_id_big, EINVAL },
	{ "memory event with a signal event id", s_ev_mem_id, EINVAL },
	{ "memory event id INT_MAX", s_ev_mem_id_max, EINVAL },
	{ "two events with one id", s_ev_dup, EINVAL },
};

/* -- devices -- */
static void s_dev_unknown(struct rctx *c) { c->dev[0].actual_gpu_id = 0xfffe; }
static void s_dev_actual0(struct rctx *c) { c->dev[1].actual_gpu_id = 0; }
static void s_dev_same_actual(struct rctx *c)
{
	c->dev[1].actual_gpu_id = c->dev[0].actual_gpu_id;
}
static void s_dev_user0(struct rctx *c)
{
	c->dev[0].user_gpu_id = 0;
	((struct kc_dev_v1 *)obj(c, KC_OBJ_DEVICE, 0))->user_gpu_id = 0;
}
static void s_dev_user_mismatch(struct rctx *c) { c->dev[0].user_gpu_id ^= 1; }
static void s_dev_user_big(struct rctx *c)
{
	c->dev[0].user_gpu_id = 0x10000;
	((struct kc_dev_v1 *)obj(c, KC_OBJ_DEVICE, 0))->user_gpu_id =
		0x10000;
}
static void s_dev_null(struct rctx *c)
{
	c->dev[0].drm_fd = (uint32_t)open("/dev/null", O_RDWR | O_CLOEXEC);
}
static void s_dev_kfd(struct rctx *c) { c->dev[1].drm_fd = (uint32_t)c->kfd; }
static void s_dev_closed(struct rctx *c) { c->dev[0].drm_fd = 999; }
static void s_dev_minus1(struct rctx *c) { c->dev[0].drm_fd = 0xffffffff; }
static void s_dev_swapped(struct rctx *c)
{
	uint32_t fd = c->dev[0].drm_fd;

	c->dev[0].drm_fd = c->dev[1].drm_fd;
	c->dev[1].drm_fd = fd;
}
static void s_dev_same_fd(struct rctx *c) { c->dev[1].drm_fd = c->dev[0].drm_fd; }

/* The primary node (/dev/dri/cardN) of the GPU behind render fd @fd. */
static int open_card_of(int fd)
{
	char path[PATH_MAX], link[64];
	struct dirent *d;
	DIR *dp;
	int ret = -1;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ret = (int)readlink(link, path, sizeof(path) - 1);
	if (ret < 0)
		return -1;
	path[ret] = '\0';
	/* /dev/dri/renderDN -> /sys/class/drm/renderDN/device/drm/cardM */
	snprintf(link, sizeof(link), "%s", strrchr(path, '/') + 1);
	snprintf(path, sizeof(path), "/sys/class/drm/%s/device/drm", link);
	dp = opendir(path);
	if (!dp)
		return -1;
	ret = -1;
	while ((d = readdir(dp))) {
		if (strncmp(d->d_name, "card", 4))
			continue;
		snprintf(path, sizeof(path), "/dev/dri/%s", d->d_name);
		ret = open(path, O_RDWR | O_CLOEXEC);
		break;
	}
	closedir(dp);
	return ret;
}

static void s_dev_card(struct rctx *c)
{
	c->dev[0].drm_fd = (uint32_t)open_card_of((int)c->dev[0].drm_fd);
}

static const struct bad_case device_cases[] = {
	{ "actual_gpu_id not on this node", s_dev_unknown, EINVAL },
	{ "actual_gpu_id 0", s_dev_actual0, EINVAL },
	{ "two devices on one GPU", s_dev_same_actual, EINVAL },
	{ "user_gpu_id 0", s_dev_user0, EINVAL },
	{ "user_gpu_id differs from the device object", s_dev_user_mismatch, EINVAL },
	{ "user_gpu_id above 16 bits", s_dev_user_big, EINVAL },
	{ "drm_fd is /dev/null", s_dev_null, EINVAL },
	{ "drm_fd is the /dev/kfd fd", s_dev_kfd, EINVAL },
	{ "drm_fd is not open", s_dev_closed, EINVAL },
	{ "drm_fd is -1", s_dev_minus1, EINVAL },
	{ "drm_fds of the two GPUs swapped", s_dev_swapped, EINVAL },
	{ "one drm_fd for both GPUs", s_dev_same_fd, EINVAL },
	{ "drm_fd is the GPU's primary node, not its render node", s_dev_card, EINVAL },
};

struct bad_run {
	const struct cw_image *img;
	const struct bad_case *bc;
	struct kt_props base;
};

/*
 * In a fresh process: the spoiled RESTORE fails with the expected errno,
 * changes no counter and leaves no fd; then the correct RESTORE on the same
 * /dev/kfd works.
 */
/* A RESTORE of @img with copies of its buckets and data, for spoiling. */
static int rctx_open(struct rctx *c, const struct cw_image *img,
		     struct kfd_criu_device_bucket *dev, char *msg, size_t len)
{
	memset(c, 0, sizeof(*c));
	c->img = img;
	c->kfd = kt_open_kfd();
	KT_CHECK(c->kfd >= 0, "open /dev/kfd: %d", c->kfd);
	if (cw_devices(img, dev, msg, len))
		return -1;
	c->bos = calloc(img->k.num_bos + SLACK, sizeof(*c->bos));
	c->priv = calloc(1, img->k.priv_size + SLACK);
	KT_CHECK(c->bos && c->priv, "out of memory");
	memcpy(c->dev, dev, sizeof(*dev) * KT_MAX_GPUS);
	memcpy(c->bos, img->k.bos, img->k.num_bos * sizeof(*c->bos));
	memcpy(c->priv, img->k.priv, img->k.priv_size);
	c->a = (struct kfd_ioctl_criu_args){
		.devices = (uintptr_t)c->dev,
		.bos = (uintptr_t)c->bos,
		.priv_data = (uintptr_t)c->priv,
		.priv_data_size = img->k.priv_size,
		.num_devices = img->k.num_devices,
		.num_bos = img->k.num_bos,
		.num_objects = img->k.num_objects,
		.op = KFD_CRIU_OP_RESTORE,
	};
	return 0;
}

static int run_bad_case(void *arg, char *msg, size_t len)
{
	const struct bad_run *br = arg;
	const struct cw_image *img = br->img;
	struct kfd_criu_device_bucket dev[KT_MAX_GPUS];
	struct kfd_criu_bo_bucket *bos;
	struct kt_props before;
	struct rctx c;
	char err[128];
	int ret, fds;

	if (rctx_open(&c, img, dev, msg, len))
		return -1;
	bos = calloc(img->k.num_bos + 1, sizeof(*bos));
	KT_CHECK(bos, "out of memory");
	br->bc->spoil(&c);

	KT_CHECK(!kt_counters(&before, err, sizeof(err)), "%s", err);
	fds = kc_count_fds();
	ret = kc_criu(c.kfd, &c.a);
	KT_CHECK(ret == -br->bc->err, "RESTORE returned %d (%s), want -%s",
		 ret, strerror(-ret), strerrorname_np(br->bc->err));
	KT_CHECK(kc_count_fds() == fds, "the failed RESTORE left %d fds",
		 kc_count_fds() - fds);
	if (cw_counters_same(&before, "after the failed RESTORE", msg, len))
		return -1;

	ret = kc_restore(c.kfd, &img->k, dev, bos);
	KT_CHECK(!ret, "the correct RESTORE after it failed: %s",
		 strerror(-ret));
	kc_close_dmabufs(bos, img->k.num_bos);
	return 0;
}

static void run_bad_cases(struct __test_metadata *_metadata,
			  FIXTURE_DATA(criu) *self,
			  const struct bad_case *cases, size_t n)
{
	struct bad_run br = { .img = &self->img };
	size_t i;
	int ret;

	ASSERT_EQ(0, checkpoint_worker(self, 0, CW_CK_STOP))
		TH_LOG("%s", self->msg);
	ASSERT_BASELINE("after the worker died");
	for (i = 0; i < n; i++) {
		br.bc = &cases[i];
		ret = kt_run_child(run_bad_case, &br, M);
		EXPECT_EQ(0, ret) TH_LOG("%s: %s", cases[i].name, self->msg);
		EXPECT_EQ(0, cw_counters_same(&self->base, cases[i].name, M))
			TH_LOG("%s", self->msg);
	}
}

#define BAD_CASES(name, table) \
	CW_TEST(name) \
	{ \
		CW_NEEDS(); \
		run_bad_cases(_metadata, self, table, \
			      ARRAY_SIZE(table)); \
	}

/*
 * The other side of restore_rejects_bad_control_stacks: a well-formed
 * control stack in the idle queue's object is restored, and
 * GET_QUEUE_WAVE_STATE (the queue is evicted until RESUME) gives it back.
 */
static int run_forged_stack(void *arg, char *msg, size_t len)
{
	const struct cw_image *img = arg;
	struct kfd_ioctl_get_queue_wave_state_args w = { 0 };
	static uint32_t area[CW_CTL_STACK_BYTES / 4];
	struct kfd_criu_device_bucket dev[KT_MAX_GPUS];
	const uint32_t *stack;
	struct rctx c;
	int ret;

	if (rctx_open(&c, img, dev, msg, len))
		return -1;
	cs_forge(&c, -1);
	ret = kc_criu(c.kfd, &c.a);
	KT_CHECK(!ret, "RESTORE with a well-formed control stack: %s",
		 strerror(-ret));
	kc_close_dmabufs(c.bos, img->k.num_bos);

	w.ctl_stack_address = (uintptr_t)area;
	w.queue_id = img->lay.q[CW_Q_IDLE].id;
	ret = kt_ioctl(c.kfd, AMDKFD_IOC_GET_QUEUE_WAVE_STATE, &w);
	KT_CHECK(!ret, "GET_QUEUE_WAVE_STATE: %s", strerror(-ret));
	KT_CHECK(w.ctl_stack_used_size == CS_WORDS * 4 &&
		 w.save_area_used_size == 2 * CS_WAVE_BYTES,
		 "used sizes %u %u", w.ctl_stack_used_size,
		 w.save_area_used_size);
	stack = area + (CW_CTL_STACK_BYTES - CS_WORDS * 4) / 4;
	KT_CHECK(area[0] == CW_CTL_STACK_BYTES - CS_WORDS * 4 &&
		 area[1] == CS_WORDS * 4 &&
		 area[2] == CW_CTL_STACK_BYTES + 2 * CS_WAVE_BYTES &&
		 area[3] == 2 * CS_WAVE_BYTES, "header %u %u %u %u",
		 area[0], area[1], area[2], area[3]);
	KT_CHECK(stack[0] == 0x52535743u && stack[1] == 0 &&
		 stack[2] == (1u << 31 | 15 | 6u << 6) &&
		 stack[3] == (1 | 1u << 16) && stack[4] == 1u << 17,
		 "control stack %x %x %x %x %x", stack[0], stack[1],
		 stack[2], stack[3], stack[4]);
	return 0;
}

CW_TEST(restore_puts_back_a_control_stack)
{
	CW_NEEDS();
	ASSERT_EQ(0, checkpoint_worker(self, 0, CW_CK_STOP))
		TH_LOG("%s", self->msg);
	ASSERT_BASELINE("after the worker died");
	ASSERT_EQ(0, kt_run_child(run_forged_stack, &self->img, M))
		TH_LOG("%s", self->msg);
	ASSERT_BASELINE("after the restored child exited");
}

BAD_CASES(restore_rejects_bad_header_and_sizes, header_cases)
BAD_CASES(restore_rejects_bad_counts, count_cases)
BAD_CASES(restore_rejects_bad_objects, object_cases)
BAD_CASES(restore_rejects_nonzero_padding, padding_cases)
BAD_CASES(restore_rejects_bad_bos, bo_cases)
BAD_CASES(restore_rejects_bad_queues, queue_cases)
BAD_CASES(restore_rejects_bad_control_stacks, cwsr_cases)
BAD_CASES(restore_rejects_bad_events, event_cases)
BAD_CASES(restore_rejects_bad_devices, device_cases)

/*
 * A RESTORE that fails after it created events and queues undoes its work
 * while other threads of the process use that state: one waits on the
 * events being restored, one maps the events page and the doorbells and
 * writes to them. Nothing may be freed under them (the waiter fails or
 * times out, the mappings stay valid), and the process is usable after.
 */
struct race {
	const struct cw_image *img;
	int kfd;
	struct kfd_event_data ev[CW_NEVENTS];	/* the unsignaled events */
	uint32_t nev;
	atomic_bool stop;
	atomic_uint armed;	/* waits that saw the restored events */
	atomic_uint destroyed;	/* waits the failed RESTORE ended (EIO) */
	int err;		/* an unexpected errno in a thread */
};

static void *race_waiter(void *arg)
{
	struct race *r = arg;
	struct kfd_event_data ev[CW_NEVENTS];
	uint32_t result;
	int ret;

	while (!atomic_load(&r->stop)) {
		memcpy(ev, r->ev, sizeof(ev));
		/* Sleeps across the reset if it arms during the rebuild. */
		ret = kg_wait(r->kfd, ev, r->nev, false, 1000, &result);
		/* -EINVAL: not restored (yet); -EIO: destroyed mid-wait. */
		if (!ret || ret == -EIO)
			atomic_fetch_add(&r->armed, 1);
		if (ret == -EIO)
			atomic_fetch_add(&r->destroyed, 1);
		else if (ret && ret != -EINVAL && ret != -EINTR)
			r->err = ret;
	}
	return NULL;
}

static void *race_mapper(void *arg)
{
	struct race *r = arg;
	uint64_t db = KFD_MMAP_TYPE_DOORBELL |
		      KFD_MMAP_GPU_ID(r->img->lay.gpu_id[0]);
	size_t evsize = KFD_SIGNAL_EVENT_LIMIT * sizeof(uint64_t);
	volatile uint64_t *m;

	while (!atomic_load(&r->stop)) {
		m = mmap(NULL, evsize, PROT_READ | PROT_WRITE, MAP_SHARED,
			 r->kfd, (off_t)KFD_MMAP_TYPE_EVENTS);
		if (m != MAP_FAILED) {
			sched_yield();
			m[1] = m[1];
			munmap((void *)m, evsize);
		}
		m = mmap(NULL, KT_DOORBELL_SIZE, PROT_READ | PROT_WRITE,
			 MAP_SHARED, r->kfd, (off_t)db);
		if (m == MAP_FAILED) {
			r->err = -errno;
			continue;
		}
		sched_yield();
		m[KT_DOORBELL_SIZE / sizeof(*m) - 1] = 0x5a5a;
		munmap((void *)m, KT_DOORBELL_SIZE);
	}
	return NULL;
}

static int run_restore_race(void *arg, char *msg, size_t len)
{
	const struct cw_image *img = arg;
	struct kfd_criu_device_bucket dev[KT_MAX_GPUS];
	struct kfd_criu_bo_bucket *bos;
	struct race r = { .img = img };
	pthread_t waiter, mapper;
	struct kc_image bad;
	struct rctx c = { .img = img };
	struct kc_event_v1 *e;
	int i, ret = 0, fds;

	r.kfd = kt_open_kfd();
	KT_CHECK(r.kfd >= 0 && !cw_devices(img, dev, msg, len), "setup");
	bos = calloc(img->k.num_bos + 1, sizeof(*bos));
	KT_CHECK(bos && !kc_image_dup(&bad, &img->k), "out of memory");
	/* The last queue names a GPU the process has not got. */
	c.priv = bad.priv;
	c.a.priv_data_size = bad.priv_size;
	q_obj(&c, CW_Q_IDLE)->user_gpu_id = 0x77;
	for (i = 0; (e = obj(&c, KC_OBJ_EVENT, i)); i++)
		if (!e->signaled)
			r.ev[r.nev++].event_id = e->id;
	KT_CHECK(r.nev, "the image has no unsignaled event");

	fds = kc_count_fds();
	KT_CHECK(!pthread_create(&waiter, NULL, race_waiter, &r) &&
		 !pthread_create(&mapper, NULL, race_mapper, &r),
		 "pthread_create");
	/* Until the reset really ended a few waits. */
	for (i = 0; i < 3000 && atomic_load(&r.destroyed) < 5; i++) {
		ret = kc_restore(r.kfd, &bad, dev, bos);
		if (ret != -EINVAL)
			break;
	}
	atomic_store(&r.stop, true);
	pthread_join(waiter, NULL);
	pthread_join(mapper, NULL);
	KT_CHECK(ret == -EINVAL, "spoiled RESTORE %d returned %d", i, ret);
	KT_CHECK(!r.err, "a racing thread got %d (%s)", r.err,
		 strerror(-r.err));
	KT_CHECK(atomic_load(&r.destroyed) > 0,
		 "no wait was ended by the reset in %d RESTOREs (%u armed)", i,
		 atomic_load(&r.armed));
	KT_CHECK(kc_count_fds() == fds, "the failed RESTOREs left %d fds",
		 kc_count_fds() - fds);

	/* Clean and usable: the correct RESTORE works, its events too. */
	ret = kc_restore(r.kfd, &img->k, dev, bos);
	KT_CHECK(!ret, "the correct RESTORE after the race: %s",
		 strerror(-ret));
	kc_close_dmabufs(bos, img->k.num_bos);
	ret = kg_event_set(r.kfd, img->lay.ev[CW_EV_AUTO]);
	KT_CHECK(!ret, "SET_EVENT after the restore: %d", ret);
	ret = kg_wait1(r.kfd, img->lay.ev[CW_EV_AUTO], 1000);
	KT_CHECK(ret == KFD_IOC_WAIT_RESULT_COMPLETE,
		 "WAIT_EVENTS after the restore: %d", ret);
	kc_image_free(&bad);
	free(bos);
	return 0;
}

CW_TEST(failed_restore_races_waiters_and_mappings)
{
	CW_NEEDS();
	restore_in_child(_metadata, self, run_restore_race,
			 "after the raced process exited");
}

/*
 * A render fd that is another process's VM: RESTORE refuses it, and once
 * that process is gone the same fd works.
 */
static int run_bound_fd(void *arg, char *msg, size_t len)
{
	const struct cw_image *img = arg;
	struct kfd_criu_device_bucket dev[KT_MAX_GPUS];
	struct kfd_criu_bo_bucket *bos;
	struct kt_props before;
	int kfd, pipefd[2], ret, fds;
	char err[128], c;
	pid_t pid;

	bos = calloc(img->k.num_bos + 1, sizeof(*bos));
	KT_CHECK(bos, "out of memory");
	kfd = kt_open_kfd();
	KT_CHECK(kfd >= 0 && !cw_devices(img, dev, msg, len), "setup");
	KT_CHECK(!pipe2(pipefd, O_CLOEXEC), "pipe");
	pid = fork();
	if (!pid) {
		/* Another KFD process binds the render file of GPU 1. */
		int k = kt_open_kfd();

		c = k >= 0 && !kt_acquire_vm(k, (int)dev[1].drm_fd,
					     dev[1].actual_gpu_id) ? 'y' : 'n';
		if (write(pipefd[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	KT_CHECK(read(pipefd[0], &c, 1) == 1 && c == 'y',
		 "the other process could not bind the render fd");
	KT_CHECK(!kt_counters(&before, err, sizeof(err)), "%s", err);
	fds = kc_count_fds();
	ret = kc_restore(kfd, &img->k, dev, bos);
	if (!ret)
		kc_close_dmabufs(bos, img->k.num_bos);
	if (ret == -EINVAL)
		ret = cw_counters_same(&before, "after the failed RESTORE", msg,
				       len) ? -1000 : ret;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (ret == -1000)
		return -1;
	KT_CHECK(ret == -EINVAL,
		 "RESTORE with another process's VM: %d, want -EINVAL", ret);
	KT_CHECK(kc_count_fds() == fds, "fds left");
	ret = kc_restore(kfd, &img->k, dev, bos);
	KT_CHECK(!ret, "RESTORE once the fd is free again: %s", strerror(-ret));
	kc_close_dmabufs(bos, img->k.num_bos);
	return 0;
}

CW_TEST(restore_rejects_render_fd_of_another_process)
{
	CW_NEEDS();
	restore_in_child(_metadata, self, run_bound_fd,
			 "after the restored process exited");
}

/* ---- the render fd handed to RESTORE, used as AMD's CRIU plugin does ---- */

#define RV_GEM_VA	0x7e0000000000ULL	/* clear of the worker's BOs */
#define RV_CHUNK	(2u << 20)		/* the plugin's packet size */

/* A GTT GEM BO on @fd, mapped at RV_GEM_VA and for the CPU. */
static int rv_gem(int fd, uint64_t size, uint32_t *handle, void **cpu)
{
	union drm_amdgpu_gem_create gc = { 0 };
	union drm_amdgpu_gem_mmap gm = { 0 };
	struct drm_amdgpu_gem_va va = { 0 };
	int ret;

	gc.in.bo_size = size;
	gc.in.domains = AMDGPU_GEM_DOMAIN_GTT;
	ret = kt_ioctl(fd, DRM_IOCTL_AMDGPU_GEM_CREATE, &gc);
	if (ret)
		return ret;
	*handle = gc.out.handle;
	gm.in.handle = *handle;
	ret = kt_ioctl(fd, DRM_IOCTL_AMDGPU_GEM_MMAP, &gm);
	if (ret)
		return ret;
	*cpu = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    (off_t)gm.out.addr_ptr);
	if (*cpu == MAP_FAILED)
		return -errno;
	va.handle = *handle;
	va.operation = AMDGPU_VA_OP_MAP;
	va.flags = AMDGPU_VM_PAGE_READABLE | AMDGPU_VM_PAGE_WRITEABLE;
	va.va_address = RV_GEM_VA;
	va.map_size = size;
	return kt_ioctl(fd, DRM_IOCTL_AMDGPU_GEM_VA, &va);
}

/*
 * One CS on @fd: copy @size bytes from @src to @dst in plugin-style
 * packets (count = bytes, 2 MiB each) with garbage IB flags; the IB is
 * written at @ib (CPU) / @ib_va (GPU). Waits for the job to complete.
 */
static int rv_copy(int fd, uint32_t ctx, uint32_t *ib, uint64_t ib_va,
		   uint64_t dst, uint64_t src, uint64_t size)
{
	struct drm_amdgpu_cs_chunk_ib ci = { 0 };
	struct drm_amdgpu_cs_chunk chunk;
	union drm_amdgpu_cs cs = { 0 };
	uint64_t ptr = (uintptr_t)&chunk, len;
	union drm_amdgpu_wait_cs w = { 0 };
	uint32_t n = 0;
	int ret;

	for (; size; size -= len, src += len, dst += len) {
		len = size < RV_CHUNK ? size : RV_CHUNK;
		n += kg_sdma_copy_packet(ib + n, dst, src, (uint32_t)len);
	}
	n = kg_sdma_pad(ib, n);
	ci.ip_type = AMDGPU_HW_IP_DMA;
	ci.va_start = ib_va;
	ci.ib_bytes = n * 4;
	ci.flags = 0x4c001250;	/* what AMD's plugin was seen to pass */
	chunk.chunk_id = AMDGPU_CHUNK_ID_IB;
	chunk.length_dw = sizeof(ci) / 4;
	chunk.chunk_data = (uintptr_t)&ci;
	cs.in.ctx_id = ctx;
	cs.in.num_chunks = 1;
	cs.in.chunks = (uintptr_t)&ptr;
	ret = kt_ioctl(fd, DRM_IOCTL_AMDGPU_CS, &cs);
	if (ret)
		return ret;
	/* CS only queues the job: wait for it, without a time limit */
	w.in.handle = cs.out.handle;
	w.in.ip_type = AMDGPU_HW_IP_DMA;
	w.in.ctx_id = ctx;
	w.in.timeout = UINT64_MAX;
	ret = kt_ioctl(fd, DRM_IOCTL_AMDGPU_WAIT_CS, &w);
	return ret ? ret : w.out.status ? -ETIME : 0;
}

/*
 * RESTORE binds the render fds it is given; AMD's plugin then copies BO
 * contents with GEM_VA and CS on those very fds, before RESUME. The fd's
 * VM is the restored process's: an IB reads and writes the restored BOs
 * at their VAs. A render fd whose VM already had a mapping is refused.
 */
static int run_restore_fd_is_the_vm(void *arg, char *msg, size_t len)
{
	const struct cw_image *img = arg;
	struct kfd_criu_device_bucket dev[KT_MAX_GPUS];
	union drm_amdgpu_ctx ctx = { 0 };
	struct kfd_criu_bo_bucket *bos, *b = NULL;
	uint64_t size = 0, ib_off;
	uint32_t i, d, handle;
	uint8_t *cpu, *back;
	void *p;
	int kfd, ret, fd;

	bos = calloc(img->k.num_bos + 1, sizeof(*bos));
	KT_CHECK(bos, "out of memory");
	/* a render fd that has had a mapping cannot be restored into */
	kfd = kt_open_kfd();
	KT_CHECK(kfd >= 0 && !cw_devices(img, dev, msg, len), "setup");
	KT_CHECK(!rv_gem((int)dev[0].drm_fd, KT_PAGE, &handle, &p), "GEM");
	munmap(p, KT_PAGE);
	ret = kc_restore(kfd, &img->k, dev, bos);
	KT_CHECK(ret == -EINVAL, "RESTORE with a used render fd: %d", ret);
	cw_devices_close(img, dev);
	close(kfd);

	kfd = kt_open_kfd();
	KT_CHECK(kfd >= 0 && !cw_devices(img, dev, msg, len), "setup");
	ret = kc_restore(kfd, &img->k, dev, bos);
	KT_CHECK(!ret, "RESTORE: %s", strerror(-ret));
	/* the largest VRAM BO RESTORE gave a dma-buf for */
	for (i = 0; i < img->k.num_bos; i++)
		if ((bos[i].alloc_flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM) &&
		    kc_bo_has_dmabuf(&bos[i]) && bos[i].size > size) {
			b = &bos[i];
			size = b->size;
		}
	KT_CHECK(b, "the image has no VRAM BO with contents");
	for (d = 0; d < img->k.num_devices; d++)
		if (dev[d].user_gpu_id == b->gpu_id)
			break;
	KT_CHECK(d < img->k.num_devices, "no device for gpu_id %u", b->gpu_id);
	fd = (int)dev[d].drm_fd;

	/* data, one page of slack for the extra byte, then the IB */
	ib_off = size + KT_PAGE;
	ret = rv_gem(fd, ib_off + 4 * KT_PAGE, &handle, &p);
	KT_CHECK(!ret, "GEM_VA on the RESTORE fd: %s", strerror(-ret));
	cpu = p;
	ctx.in.op = AMDGPU_CTX_OP_ALLOC_CTX;
	KT_CHECK(!kt_ioctl(fd, DRM_IOCTL_AMDGPU_CTX, &ctx), "CTX");

	/* restore direction: contents into the BO, read back by dma-buf */
	kt_fill(cpu, size, 91);
	ret = rv_copy(fd, ctx.out.alloc.ctx_id, (uint32_t *)(cpu + ib_off),
		      RV_GEM_VA + ib_off, b->addr, RV_GEM_VA, size);
	KT_CHECK(!ret, "CS into the restored BO: %s", strerror(-ret));
	back = malloc(size);
	KT_CHECK(back && !kc_dmabuf_read((int)b->dmabuf_fd, back, size),
		 "reading the BO back");
	KT_CHECK(kt_check(back, size, 91), "the BO did not get the data");
	/* dump direction: the BO at its VA -> the GEM BO */
	memset(cpu, 0, size);
	ret = rv_copy(fd, ctx.out.alloc.ctx_id, (uint32_t *)(cpu + ib_off),
		      RV_GEM_VA + ib_off, RV_GEM_VA, b->addr, size);
	KT_CHECK(!ret, "CS from the restored BO: %s", strerror(-ret));
	KT_CHECK(kt_check(cpu, size, 91), "the copy of the BO differs");
	free(back);
	munmap(p, ib_off + 4 * KT_PAGE);
	kc_close_dmabufs(bos, img->k.num_bos);
	return 0;
}

CW_TEST(restore_fd_is_the_process_vm)
{
	CW_NEEDS();
	restore_in_child(_metadata, self, run_restore_fd_is_the_vm,
			 "after the restored process exited");
}

/* RESTORE needs a /dev/kfd with nothing in it. */
static int run_not_fresh(void *arg, char *msg, size_t len)
{
	const struct cw_image *img = arg;
	struct kfd_criu_device_bucket dev[KT_MAX_GPUS];
	struct kfd_criu_bo_bucket *bos;
	struct kfd_ioctl_create_event_args ev;
	struct kfd_ioctl_criu_args pi = { .op = KFD_CRIU_OP_PROCESS_INFO };
	uint64_t h;
	int kfd, ret, step;

	bos = calloc(img->k.num_bos + 1, sizeof(*bos));
	KT_CHECK(bos, "out of memory");
	for (step = 0; step < 3; step++) {
		kfd = kt_open_kfd();
		KT_CHECK(kfd >= 0 && !cw_devices(img, dev, msg, len), "setup");
		switch (step) {
		case 0:	/* a VM bound */
			ret = kt_acquire_vm(kfd, (int)dev[0].drm_fd,
					    dev[0].actual_gpu_id);
			break;
		case 1:	/* a BO */
			ret = kt_acquire_vm(kfd, (int)dev[0].drm_fd,
					    dev[0].actual_gpu_id);
			if (!ret)
				ret = kt_alloc(kfd, dev[0].actual_gpu_id,
					       KT_VA(0), KT_PAGE,
					       KT_GTT | KT_WRITABLE, &h, NULL);
			break;
		default: /* an event */
			ret = kg_event_new(kfd, KFD_IOC_EVENT_SIGNAL, false, 0,
					   &ev);
			break;
		}
		KT_CHECK(!ret, "step %d setup: %s", step, strerror(-ret));
		ret = kc_restore(kfd, &img->k, dev, bos);
		KT_CHECK(ret == -EINVAL, "step %d: RESTORE on a used process: %d",
			 step, ret);
		cw_devices_close(img, dev);
		close(kfd);
	}
	/* A restored process is not fresh either, and waits for RESUME. */
	kfd = kt_open_kfd();
	KT_CHECK(kfd >= 0 && !cw_devices(img, dev, msg, len), "setup");
	ret = kc_restore(kfd, &img->k, dev, bos);
	KT_CHECK(!ret, "RESTORE: %s", strerror(-ret));
	kc_close_dmabufs(bos, img->k.num_bos);
	ret = kc_restore(kfd, &img->k, dev, bos);
	KT_CHECK(ret == -EINVAL, "second RESTORE: %d", ret);
	ret = kc_criu(kfd, &pi);
	KT_CHECK(ret == -EBUSY, "PROCESS_INFO before RESUME: %d, want -EBUSY",
		 ret);
	return 0;
}

CW_TEST(restore_needs_a_fresh_process)
{
	CW_NEEDS();
	restore_in_child(_metadata, self, run_not_fresh,
			 "after the processes exited");
}

/* ---- 5. the private data format ---- */

static int run_version(void *arg, char *msg, size_t len)
{
	const struct cw_image *img = arg;
	struct kfd_criu_device_bucket dev[KT_MAX_GPUS];
	struct kfd_criu_bo_bucket *bos;
	struct kc_hdr *h = (void *)img->k.priv;
	int kfd, ret;

	bos = calloc(img->k.num_bos + 1, sizeof(*bos));
	kfd = kt_open_kfd();
	KT_CHECK(bos && kfd >= 0 && !cw_devices(img, dev, msg, len), "setup");
	h->version = 3;
	ret = kc_restore(kfd, &img->k, dev, bos);
	KT_CHECK(ret == -EINVAL, "version 3: %d, want -EINVAL", ret);
	/* Version 2 queue objects read as version 1 ones: wrong size. */
	h->version = 1;
	ret = kc_restore(kfd, &img->k, dev, bos);
	KT_CHECK(ret == -EINVAL, "version 1: %d, want -EINVAL", ret);
	h->version = 2;
	ret = kc_restore(kfd, &img->k, dev, bos);
	KT_CHECK(!ret, "version 2: %s", strerror(-ret));
	kc_close_dmabufs(bos, img->k.num_bos);
	return 0;
}

/*
 * CHECKPOINT writes version 2: the header, then PROCESS, the DEVICEs, BOs,
 * QUEUEs (with their context save state) and EVENTs in bucket / id order,
 * each matching the process (all checked by cw_check_priv()). RESTORE
 * takes version 2 and refuses 3.
 */
CW_TEST(private_data_is_version_2)
{
	const struct kc_hdr *h;

	CW_NEEDS();
	ASSERT_EQ(0, checkpoint_worker(self, 0, CW_CK_STOP))
		TH_LOG("%s", self->msg);
	h = (const void *)self->img.k.priv;
	ASSERT_EQ(KC_MAGIC, h->magic);
	ASSERT_EQ(2, h->version);
	ASSERT_EQ(self->img.k.priv_size, h->size);
	ASSERT_EQ(0, cw_check_priv(&self->img, &self->img.lay, M))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, kt_run_child(run_version, &self->img, M))
		TH_LOG("%s", self->msg);
	ASSERT_BASELINE("after the processes exited");
}

/* ---- 6. permissions and protocol ---- */

static int run_eacces(int kfd, char *msg, size_t len)
{
	struct kfd_ioctl_get_version_args v = { 0 };
	static const uint32_t ops[] = {
		KFD_CRIU_OP_PROCESS_INFO, KFD_CRIU_OP_CHECKPOINT,
		KFD_CRIU_OP_UNPAUSE, KFD_CRIU_OP_RESTORE, KFD_CRIU_OP_RESUME,
	};
	struct kfd_ioctl_criu_args a;
	size_t i;
	int ret;

	KT_CHECK(!kt_ioctl(kfd, AMDKFD_IOC_GET_VERSION, &v),
		 "GET_VERSION fails on the process's own fd");
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		a = (struct kfd_ioctl_criu_args){ .op = ops[i],
						  .pid = (uint32_t)getpid() };
		ret = kc_criu(kfd, &a);
		KT_CHECK(ret == -EACCES, "op %u: %d, want -EACCES", ops[i], ret);
	}
	return 0;
}

static int run_nonroot(void *arg, char *msg, size_t len)
{
	int kfd;

	(void)arg;
	KT_CHECK(!setresgid(65534, 65534, 65534) &&
		 !setresuid(65534, 65534, 65534), "setresuid: %s",
		 strerror(errno));
	kfd = kt_open_kfd();
	KT_CHECK(kfd >= 0, "open /dev/kfd as nobody: %s", strerror(-kfd));
	return run_eacces(kfd, msg, len);
}

CW_TEST(non_root_gets_eacces)
{
	CW_NEEDS();
	ASSERT_EQ(0, kt_run_child(run_nonroot, NULL, M)) TH_LOG("%s", self->msg);
	ASSERT_BASELINE("after the process exited");
}

static int run_userns(void *arg, char *msg, size_t len)
{
	int kfd, root;

	(void)arg;
	kfd = kt_open_kfd();
	KT_CHECK(kfd >= 0, "open /dev/kfd: %s", strerror(-kfd));
	if (unshare(CLONE_NEWUSER) && errno == EPERM) {
		/*
		 * A chroot (as in the test VM) may not create user
		 * namespaces; leave it for the real root first.
		 */
		root = open("/proc/1/root", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		KT_CHECK(root >= 0 && !fchdir(root) && !chroot("."),
			 "leaving the chroot: %s", strerror(errno));
		KT_CHECK(!unshare(CLONE_NEWUSER), "unshare(CLONE_NEWUSER): %s",
			 strerror(errno));
	}
	return run_eacces(kfd, msg, len);
}

CW_TEST(user_namespace_gets_eacces)
{
	CW_NEEDS();
	ASSERT_EQ(0, kt_run_child(run_userns, NULL, M)) TH_LOG("%s", self->msg);
	ASSERT_BASELINE("after the process exited");
}

struct getfd_arg {
	pid_t pid;
	int fd;
};

/* In a root process that does not trace the target: -EBADF. */
static int run_not_tracer(void *arg, char *msg, size_t len)
{
	const struct getfd_arg *g = arg;
	struct kfd_ioctl_get_version_args v = { 0 };
	struct kfd_ioctl_criu_args a = { .op = KFD_CRIU_OP_PROCESS_INFO };
	int fd, ret;

	fd = kc_getfd(g->pid, g->fd);
	KT_CHECK(fd >= 0, "pidfd_getfd: %s", strerror(-fd));
	ret = kc_criu(fd, &a);
	KT_CHECK(ret == -EBADF, "PROCESS_INFO by a non-tracer: %d", ret);
	ret = kc_unpause(fd);
	KT_CHECK(ret == -EBADF, "UNPAUSE by a non-tracer: %d", ret);
	ret = kt_ioctl(fd, AMDKFD_IOC_GET_VERSION, &v);
	KT_CHECK(ret == -EBADF, "GET_VERSION by another process: %d", ret);
	close(fd);
	return 0;
}

CW_TEST(root_but_not_tracer_gets_ebadf)
{
	struct getfd_arg g;
	struct kc_image k = { 0 };

	CW_NEEDS();
	ASSERT_EQ(0, cw_start_worker(&self->w, self->sh, 0, M))
		TH_LOG("%s", self->msg);
	g = (struct getfd_arg){ self->w.pid, self->sh->lay.kfd_fd };
	/* Not traced by anyone. */
	ASSERT_EQ(0, kt_run_child(run_not_tracer, &g, M)) TH_LOG("%s", self->msg);
	self->tfd = kc_getfd(self->w.pid, self->sh->lay.kfd_fd);
	ASSERT_LE(0, self->tfd);
	ASSERT_EQ(-EBADF, kc_process_info(self->tfd, &k));
	/* Traced by us: we may, a sibling still may not. */
	ASSERT_EQ(0, kc_seize(self->w.pid, false));
	ASSERT_EQ(0, kc_process_info(self->tfd, &k));
	ASSERT_EQ(0, kt_run_child(run_not_tracer, &g, M)) TH_LOG("%s", self->msg);
	ASSERT_EQ(0, kc_unpause(self->tfd));
	/* Not any more once detached. */
	ASSERT_EQ(0, kc_detach(self->w.pid));
	ASSERT_EQ(-EBADF, kc_process_info(self->tfd, &k));
	close(self->tfd);
	self->tfd = -1;
	finish_and_quit(_metadata, self, &self->w);
	ASSERT_BASELINE("after the worker exited");
}

/* RESUME: -ESRCH for what is not a KFD process, -EINVAL if not restored. */
CW_TEST(resume_errors)
{
	pid_t plain, gone;
	int kfd;

	CW_NEEDS();
	ASSERT_EQ(0, cw_start_worker(&self->w, self->sh, 0, M))
		TH_LOG("%s", self->msg);
	plain = fork();
	ASSERT_LE(0, plain);
	if (!plain) {
		pause();
		_exit(0);
	}
	gone = fork();
	ASSERT_LE(0, gone);
	if (!gone)
		_exit(0);
	waitpid(gone, NULL, 0);
	kfd = kt_open_kfd();
	ASSERT_LE(0, kfd);
	EXPECT_EQ(-ESRCH, kc_resume(kfd, plain));
	EXPECT_EQ(-ESRCH, kc_resume(kfd, gone));
	EXPECT_EQ(-ESRCH, kc_resume(kfd, 0));
	EXPECT_EQ(-ESRCH, kc_resume(kfd, -1));
	EXPECT_EQ(-EINVAL, kc_resume(kfd, self->w.pid));
	/* The caller itself is a KFD process, not a restored one. */
	EXPECT_EQ(-EINVAL, kc_resume(kfd, getpid()));
	close(kfd);
	kill(plain, SIGKILL);
	waitpid(plain, NULL, 0);
	ASSERT_EQ(0, cw_quit(&self->w, M)) TH_LOG("%s", self->msg);
	ASSERT_BASELINE("after the worker exited");
}

/* CHECKPOINT needs PROCESS_INFO first and its exact counts. */
CW_TEST(checkpoint_protocol_errors)
{
	static const struct {
		int bos, devices, objects, size;
	} off[] = {
		{ .bos = 1 }, { .bos = -1 }, { .devices = -1 },
		{ .objects = 1 }, { .size = 8 }, { .size = -8 },
	};
	struct kfd_ioctl_criu_args a;
	struct kc_image k = { 0 }, bad;
	struct kg_qinfo qi;
	int fds, i;

	CW_NEEDS();
	start_and_seize(_metadata, self, 0, true);
	fds = kc_count_fds();

	/* Before PROCESS_INFO: counts taken from nowhere. */
	k = (struct kc_image){ .num_devices = 2, .num_bos = CW_NBOS,
			       .num_objects = CW_NQUEUES + CW_NEVENTS,
			       .priv_size = 4096 };
	EXPECT_EQ(-EINVAL, kc_checkpoint(self->tfd, &k));
	EXPECT_EQ(-EINVAL, kc_unpause(self->tfd));
	a = (struct kfd_ioctl_criu_args){ .op = 5 };
	EXPECT_EQ(-EINVAL, kc_criu(self->tfd, &a));
	a = (struct kfd_ioctl_criu_args){ .op = 0xffffffff };
	EXPECT_EQ(-EINVAL, kc_criu(self->tfd, &a));

	ASSERT_EQ(0, kc_process_info(self->tfd, &k));
	/* A second PROCESS_INFO of the same pause recounts. */
	bad = k;
	ASSERT_EQ(0, kc_process_info(self->tfd, &bad));
	EXPECT_EQ(k.priv_size, bad.priv_size);
	/* Wrong counts: refused, and a failed CHECKPOINT unpauses. */
	for (i = 0; i < (int)ARRAY_SIZE(off); i++) {
		bad = k;
		bad.num_bos += off[i].bos;
		bad.num_devices += off[i].devices;
		bad.num_objects += off[i].objects;
		bad.priv_size += off[i].size;
		EXPECT_EQ(-EINVAL, kc_checkpoint(self->tfd, &bad))
			TH_LOG("case %d", i);
		EXPECT_EQ(0, cw_qinfo(self->w.pid, &self->sh->lay, CW_Q_LOOP,
				      &qi));
		EXPECT_EQ(0, qi.evicted) TH_LOG("case %d: still paused", i);
		EXPECT_EQ(-EINVAL, kc_unpause(self->tfd)) TH_LOG("case %d", i);
		ASSERT_EQ(0, kc_process_info(self->tfd, &bad));
	}
	EXPECT_EQ(fds, kc_count_fds());
	/* RESTORE on the target's (used) /dev/kfd. */
	a = (struct kfd_ioctl_criu_args){ .op = KFD_CRIU_OP_RESTORE };
	EXPECT_EQ(-EINVAL, kc_criu(self->tfd, &a));

	ASSERT_EQ(0, kc_checkpoint(self->tfd, &k));
	EXPECT_EQ(fds + (int)kc_count_dmabufs(&k), kc_count_fds());
	kc_close_dmabufs(k.bos, k.num_bos);
	kc_image_free(&k);
	EXPECT_EQ(fds, kc_count_fds());
	ASSERT_EQ(0, kc_unpause(self->tfd));
	EXPECT_EQ(-EINVAL, kc_unpause(self->tfd));
	ASSERT_EQ(0, kc_detach(self->w.pid));
	close(self->tfd);
	self->tfd = -1;
	finish_and_quit(_metadata, self, &self->w);
	ASSERT_BASELINE("after the worker exited");
}

/* The target allocates between PROCESS_INFO and CHECKPOINT: refused. */
CW_TEST(checkpoint_refuses_a_process_changed_since_process_info)
{
	struct kc_image k = { 0 }, k2 = { 0 };
	struct kg_qinfo qi;
	int fds;

	CW_NEEDS();
	start_and_seize(_metadata, self, 0, false);
	ASSERT_EQ(0, kc_process_info(self->tfd, &k));
	ASSERT_EQ(0, cw_command(&self->w, CW_CMD_ALLOC, M))
		TH_LOG("%s", self->msg);
	fds = kc_count_fds();
	EXPECT_EQ(-EINVAL, kc_checkpoint(self->tfd, &k));
	EXPECT_EQ(fds, kc_count_fds());
	ASSERT_EQ(0, cw_qinfo(self->w.pid, &self->sh->lay, CW_Q_LOOP, &qi));
	EXPECT_EQ(0, qi.evicted);
	EXPECT_EQ(-EINVAL, kc_unpause(self->tfd));
	ASSERT_EQ(0, kc_process_info(self->tfd, &k2));
	EXPECT_EQ(k.num_bos + 1, k2.num_bos);
	EXPECT_EQ(k.priv_size + 24, k2.priv_size);
	ASSERT_EQ(0, kc_checkpoint(self->tfd, &k2));
	kc_close_dmabufs(k2.bos, k2.num_bos);
	kc_image_free(&k2);
	EXPECT_EQ(fds, kc_count_fds());
	ASSERT_EQ(0, kc_unpause(self->tfd));
	ASSERT_EQ(0, kc_detach(self->w.pid));
	close(self->tfd);
	self->tfd = -1;
	ASSERT_EQ(0, cw_quit(&self->w, M)) TH_LOG("%s", self->msg);
	ASSERT_BASELINE("after the worker exited");
}

/* PROCESS_INFO's pid is the target's pid in its own pid namespace. */
CW_TEST(process_info_pid_is_the_targets_own)
{
	int pipefd[2], hold[2], kfd;
	struct kc_image k = { 0 };
	pid_t h, w, gpid;
	char c;

	CW_NEEDS();
	ASSERT_EQ(0, pipe2(pipefd, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(hold, O_CLOEXEC));
	fflush(stdout);
	h = fork();
	ASSERT_LE(0, h);
	if (!h) {
		close(hold[1]);
		if (unshare(CLONE_NEWPID))
			_exit(2);
		w = fork();
		if (!w) {
			/* pid 1 of the new namespace */
			kfd = kt_open_kfd();
			if (kfd < 0 || kg_event_new(kfd, KFD_IOC_EVENT_SIGNAL,
						    false, 0, NULL))
				_exit(3);
			c = (char)kfd;
			if (write(pipefd[1], &c, 1) != 1)
				_exit(4);
			while (read(hold[0], &c, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
		if (w < 0 || write(pipefd[1], &w, sizeof(w)) != sizeof(w))
			_exit(5);
		waitpid(w, NULL, 0);
		_exit(0);
	}
	close(pipefd[1]);
	close(hold[0]);
	ASSERT_EQ(sizeof(gpid), read(pipefd[0], &gpid, sizeof(gpid)));
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	close(pipefd[0]);
	ASSERT_EQ(0, kc_seize(gpid, false));
	self->tfd = kc_getfd(gpid, c);
	ASSERT_LE(0, self->tfd);
	ASSERT_EQ(0, kc_process_info(self->tfd, &k));
	EXPECT_EQ(1, k.pid) TH_LOG("global pid %d", gpid);
	EXPECT_EQ(0, k.num_devices);
	EXPECT_EQ(1, k.num_objects);
	ASSERT_EQ(0, kc_checkpoint(self->tfd, &k));
	kc_image_free(&k);
	ASSERT_EQ(0, kc_unpause(self->tfd));
	/* RESUME takes the pid as the caller sees it. */
	kfd = kt_open_kfd();
	ASSERT_LE(0, kfd);
	EXPECT_EQ(-EINVAL, kc_resume(kfd, gpid));
	close(kfd);
	ASSERT_EQ(0, kc_detach(gpid));
	close(self->tfd);
	self->tfd = -1;
	close(hold[1]);
	waitpid(h, NULL, 0);
	ASSERT_BASELINE("after the processes exited");
}

/* ---- the gpu_ids a restored process sees ---- */

struct small_arg {
	int ngpus;		/* 0 or 1: GPUs the process binds */
	int gpu;		/* which one */
	int pipe_w;
	int hold_r;
};

/* A process that binds @ngpus GPUs, has one BO (if any GPU) and one event. */
static int small_worker(void *arg, char *msg, size_t len)
{
	const struct small_arg *s = arg;
	struct kfd_ioctl_create_event_args ev;
	struct kt_gpu gpus[KT_MAX_GPUS];
	uint64_t h, off;
	int kfd, fd, ret, n;
	void *p;
	char c;

	n = kt_gpus(gpus, KT_MAX_GPUS);
	kfd = kt_open_kfd();
	KT_CHECK(n > s->gpu && kfd >= 0, "setup");
	if (s->ngpus) {
		fd = kt_open_render(gpus[s->gpu].render_minor);
		KT_CHECK(fd >= 0, "render");
		ret = kt_acquire_vm(kfd, fd, gpus[s->gpu].gpu_id);
		KT_CHECK(!ret, "ACQUIRE_VM: %d", ret);
		off = 0;
		ret = kt_alloc(kfd, gpus[s->gpu].gpu_id, KT_VA(3), KT_PAGE,
			       KT_GTT | KT_WRITABLE, &h, &off);
		KT_CHECK(!ret, "ALLOC: %d", ret);
		ret = kt_map(kfd, h, &gpus[s->gpu].gpu_id, 1);
		KT_CHECK(!ret, "MAP: %d", ret);
		p = mmap(NULL, KT_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 (off_t)off);
		KT_CHECK(p != MAP_FAILED, "mmap");
		kt_fill(p, KT_PAGE, 77);
	}
	ret = kg_event_new(kfd, KFD_IOC_EVENT_SIGNAL, true, 0, &ev);
	KT_CHECK(!ret, "CREATE_EVENT: %d", ret);
	/* Event types other than signal and memory come back too. */
	ret = kg_event_new(kfd, KFD_IOC_EVENT_DEBUG_EVENT, false, 0, &ev);
	KT_CHECK(!ret && ev.event_id == 2, "CREATE_EVENT debug: %d", ret);
	ret = kg_event_new(kfd, KFD_IOC_EVENT_HW_EXCEPTION, false, 0, &ev);
	KT_CHECK(!ret, "CREATE_EVENT hw exception: %d", ret);
	c = (char)kfd;
	KT_CHECK(write(s->pipe_w, &c, 1) == 1, "pipe");
	/* Wait to be killed. */
	while (read(s->hold_r, &c, 1) < 0 && errno == EINTR)
		;
	return 0;
}

struct small_restore {
	const struct kc_image *k;
	uint32_t old_ids[KT_MAX_GPUS];
	int gpu;		/* GPU the process used, or -1 */
};

static int small_restored(void *arg, char *msg, size_t len)
{
	const struct small_restore *s = arg;
	struct kfd_process_device_apertures ap[KT_MAX_GPUS];
	struct kfd_ioctl_get_process_apertures_new_args aa = {
		.kfd_process_device_apertures_ptr = (uintptr_t)ap,
		.num_of_nodes = KT_MAX_GPUS,
	};
	struct kfd_criu_device_bucket dev[1] = { 0 };
	struct kfd_criu_bo_bucket bos[2] = { 0 };
	struct kt_gpu gpus[KT_MAX_GPUS];
	uint64_t avail, h;
	int kfd, fd0 = -1, ret, n, i;
	void *p;

	n = kt_gpus(gpus, KT_MAX_GPUS);
	kfd = kt_open_kfd();
	KT_CHECK(n >= 2 && kfd >= 0, "setup");
	if (s->gpu >= 0) {
		fd0 = kt_open_render(gpus[s->gpu].render_minor);
		dev[0] = (struct kfd_criu_device_bucket){
			.user_gpu_id = s->k->devices[0].user_gpu_id,
			.actual_gpu_id = gpus[s->gpu].gpu_id,
			.drm_fd = (uint32_t)fd0,
		};
	}
	ret = kc_restore(kfd, s->k, dev, bos);
	KT_CHECK(!ret, "RESTORE: %s", strerror(-ret));
	ret = kt_ioctl(kfd, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &aa);
	KT_CHECK(!ret, "apertures: %d", ret);
	KT_CHECK(aa.num_of_nodes == s->k->num_devices,
		 "%u apertures, the process used %u GPUs", aa.num_of_nodes,
		 s->k->num_devices);
	if (s->gpu < 0) {
		/* The driver's events page is back; its event works. */
		p = mmap(NULL, 32768, PROT_READ | PROT_WRITE, MAP_SHARED, kfd,
			 (off_t)KFD_MMAP_TYPE_EVENTS);
		KT_CHECK(p != MAP_FAILED, "mmap of the events page: %s",
			 strerror(errno));
		ret = kg_event_set(kfd, 1);
		KT_CHECK(!ret, "SET_EVENT 1: %d", ret);
		ret = kg_wait1(kfd, 1, 0);
		KT_CHECK(ret == KFD_IOC_WAIT_RESULT_COMPLETE, "WAIT 1: %d", ret);
		/* The debug event is one still: SET_EVENT refuses it. */
		ret = kg_event_set(kfd, 2);
		KT_CHECK(ret == -EINVAL, "SET_EVENT of the debug event: %d", ret);
		ret = kg_wait1(kfd, 2, 0);
		KT_CHECK(ret == KFD_IOC_WAIT_RESULT_TIMEOUT, "WAIT 2: %d", ret);
		ret = kg_wait1(kfd, 0x40000000, 0);
		KT_CHECK(ret == KFD_IOC_WAIT_RESULT_TIMEOUT,
			 "WAIT on the hw exception event: %d", ret);
		return 0;
	}
	KT_CHECK(ap[0].gpu_id == s->k->devices[0].user_gpu_id,
		 "aperture gpu_id %u", ap[0].gpu_id);
	/* The BO is back with its handle, contents written by us. */
	KT_CHECK(!kc_dmabuf_write((int)bos[0].dmabuf_fd, s->k->data ?
				  s->k->data[0] : NULL, KT_PAGE),
		 "dma-buf write");
	p = mmap(NULL, KT_PAGE, PROT_READ, MAP_SHARED, fd0,
		 (off_t)bos[0].restored_offset);
	KT_CHECK(p != MAP_FAILED && kt_check(p, KT_PAGE, 77), "contents");
	/* Every other GPU is invisible, by its gpu_id here or on the old node. */
	for (i = 0; i < n; i++) {
		int fd;

		if (i == s->gpu)
			continue;
		fd = kt_open_render(gpus[i].render_minor);
		ret = kt_acquire_vm(kfd, fd, gpus[i].gpu_id);
		KT_CHECK(ret == -EINVAL, "ACQUIRE_VM of unused GPU %u: %d",
			 gpus[i].gpu_id, ret);
		ret = kt_available(kfd, gpus[i].gpu_id, &avail);
		KT_CHECK(ret == -EINVAL, "AVAILABLE_MEMORY of unused GPU: %d",
			 ret);
		ret = kt_alloc(kfd, gpus[i].gpu_id, KT_VA(5), KT_PAGE,
			       KT_GTT, &h, NULL);
		KT_CHECK(ret == -EINVAL, "ALLOC on unused GPU: %d", ret);
		close(fd);
	}
	return 0;
}

/*
 * Fork a small_worker() that binds @ngpus GPUs (GPU 1, if one), seize it
 * and checkpoint it into self->img; the worker dies. With @counts, the
 * counts PROCESS_INFO reports are checked too.
 */
static void checkpoint_small(struct __test_metadata *_metadata,
			     FIXTURE_DATA(criu) *self, int ngpus, bool counts)
{
	int pipefd[2], hold[2];
	struct small_arg sa;
	char c, msg2[256];
	pid_t pid;

	ASSERT_EQ(0, pipe2(pipefd, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(hold, O_CLOEXEC));
	sa = (struct small_arg){ .ngpus = ngpus, .gpu = 1, .pipe_w = pipefd[1],
				 .hold_r = hold[0] };
	fflush(stdout);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(hold[1]);
		_exit(small_worker(&sa, msg2, sizeof(msg2)) ? 1 : 0);
	}
	close(pipefd[1]);
	close(hold[0]);
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	close(pipefd[0]);
	ASSERT_EQ(0, kc_seize(pid, true));
	self->tfd = kc_getfd(pid, c);
	ASSERT_LE(0, self->tfd);
	ASSERT_EQ(0, kc_process_info(self->tfd, &self->img.k));
	if (counts) {
		ASSERT_EQ(sa.ngpus, self->img.k.num_devices);
		ASSERT_EQ(sa.ngpus, self->img.k.num_bos);
		ASSERT_EQ(3, self->img.k.num_objects);
	}
	ASSERT_EQ(0, kc_checkpoint(self->tfd, &self->img.k));
	ASSERT_EQ(0, kc_read_contents(&self->img.k, pid));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, __WALL);
	close(hold[1]);
	close(self->tfd);
	self->tfd = -1;
	ASSERT_BASELINE("after the worker died");
}

/*
 * A process that used one GPU (or none) is restored with one device
 * bucket (or none): it sees that GPU under its old gpu_id, no other.
 */
CW_TEST(restore_hides_gpus_the_process_did_not_use)
{
	struct small_restore sr;
	int pass;

	CW_NEEDS();
	for (pass = 0; pass < 2; pass++) {
		checkpoint_small(_metadata, self, !pass, true);

		sr = (struct small_restore){ .k = &self->img.k,
					     .gpu = pass ? -1 : 1 };
		ASSERT_EQ(0, kt_run_child(small_restored, &sr, M))
			TH_LOG("%s GPUs: %s", pass ? "no" : "one", self->msg);
		cw_image_free(&self->img);
		ASSERT_BASELINE("after the restored process exited");
	}
}

/*
 * In a process restored onto another device (its GPU 1 now runs on GPU 0),
 * /dev/kfd offsets name the device, as upstream's kfd_mmap() resolves
 * them: a new queue's doorbell offset and a doorbell BO's offset carry
 * GPU 0's gpu_id, and the queue runs when rung through that mapping. An
 * offset naming no device fails with ENODEV.
 */
static int moved_restored(void *arg, char *msg, size_t len)
{
	const struct small_restore *s = arg;
	uint32_t user_id = s->k->devices[0].user_gpu_id, bad = 1, i;
	struct kfd_criu_device_bucket dev[1] = { 0 };
	struct kfd_criu_bo_bucket bos[2] = { 0 };
	struct kt_gpu gpus[KT_MAX_GPUS];
	struct kg_queue q;
	struct kg_bo bo;
	struct kg_rt rt;
	uint64_t h, off;
	int kfd, fd0, ret, n;
	void *p;

	n = kt_gpus(gpus, KT_MAX_GPUS);
	kfd = kt_open_kfd();
	KT_CHECK(n >= 2 && kfd >= 0, "setup");
	fd0 = kt_open_render(gpus[0].render_minor);
	KT_CHECK(fd0 >= 0 && user_id == gpus[1].gpu_id, "render / user id");
	dev[0] = (struct kfd_criu_device_bucket){
		.user_gpu_id = user_id,
		.actual_gpu_id = gpus[0].gpu_id,
		.drm_fd = (uint32_t)fd0,
	};
	ret = kc_restore(kfd, s->k, dev, bos);
	KT_CHECK(!ret, "RESTORE: %s", strerror(-ret));
	kc_close_dmabufs(bos, s->k->num_bos);
	/* The memory is back: let the queues run (CRIU sends RESUME). */
	ret = kc_resume(kfd, getpid());
	KT_CHECK(!ret, "RESUME: %s", strerror(-ret));

	/* The process's runtime: GPU 1's gpu_id, GPU 0's render node. */
	memset(&rt, 0, sizeof(rt));
	rt.e.kfd = kfd;
	rt.e.ngpus = 1;
	rt.e.gpu[0] = gpus[0];
	rt.e.render[0] = fd0;
	rt.ids[0] = user_id;
	rt.next_va = KG_VA_BASE;
	ret = kg_queue_new(&rt, 0, KFD_IOC_QUEUE_TYPE_SDMA, 4096, &q);
	KT_CHECK(!ret, "CREATE_QUEUE and doorbell mmap: %s", strerror(-ret));
	KT_CHECK((q.doorbell_offset & KFD_MMAP_TYPE_MASK) ==
		 KFD_MMAP_TYPE_DOORBELL &&
		 KFD_MMAP_GET_GPU_ID(q.doorbell_offset) == gpus[0].gpu_id,
		 "doorbell offset 0x%llx, want gpu_id %u (the device), not %u",
		 (unsigned long long)q.doorbell_offset, gpus[0].gpu_id,
		 user_id);
	ret = kg_bo_new(&rt, 0, KT_PAGE, KT_GTT | KT_WRITABLE, KG_MAP_OWN,
			&bo);
	KT_CHECK(!ret, "BO: %s", strerror(-ret));
	ret = kg_sdma_fill(&q, bo.va, 0x5eed, KT_PAGE);
	if (!ret)
		ret = kg_queue_wait_idle(&q, KG_TIMEOUT_MS);
	KT_CHECK(!ret, "SDMA fill rung through the doorbell: %s",
		 strerror(-ret));
	for (i = 0; i < KT_PAGE / 4; i++)
		KT_CHECK(((uint32_t *)bo.cpu)[i] == 0x5eed,
			 "dword %u of the filled BO: 0x%x", i,
			 ((uint32_t *)bo.cpu)[i]);

	/* A doorbell BO's mmap offset names the device too. */
	off = 0;
	ret = kt_alloc(kfd, user_id, kg_va_hole(&rt), KT_DOORBELL_SIZE,
		       KT_DOORBELL | KT_WRITABLE, &h, &off);
	KT_CHECK(!ret, "ALLOC of a doorbell BO: %s", strerror(-ret));
	KT_CHECK(off == (KFD_MMAP_TYPE_DOORBELL |
			 KFD_MMAP_GPU_ID(gpus[0].gpu_id)),
		 "doorbell BO offset 0x%llx", (unsigned long long)off);

	/* No device has gpu_id @bad: ENODEV, as upstream. */
	for (i = 0; i < (uint32_t)n; i++)
		if (gpus[i].gpu_id == bad) {
			bad++;
			i = (uint32_t)-1;
		}
	p = mmap(NULL, KT_DOORBELL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 kfd, (off_t)(KFD_MMAP_TYPE_DOORBELL | KFD_MMAP_GPU_ID(bad)));
	KT_CHECK(p == MAP_FAILED && errno == ENODEV,
		 "mmap of the doorbells of gpu_id %u: %s", bad,
		 p == MAP_FAILED ? strerror(errno) : "mapped");
	p = mmap(NULL, KT_DOORBELL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 kfd, (off_t)KFD_MMAP_TYPE_DOORBELL);
	KT_CHECK(p == MAP_FAILED && errno == ENODEV,
		 "mmap of the doorbells of gpu_id 0: %s",
		 p == MAP_FAILED ? strerror(errno) : "mapped");
	ret = kg_queue_free(&q);
	KT_CHECK(!ret, "DESTROY_QUEUE: %s", strerror(-ret));
	kg_bo_free(&rt, &bo);
	kg_close(&rt);
	return 0;
}

CW_TEST(restored_doorbells_name_the_device)
{
	struct small_restore sr;

	CW_NEEDS();
	checkpoint_small(_metadata, self, 1, false);

	sr = (struct small_restore){ .k = &self->img.k, .gpu = 1 };
	ASSERT_EQ(0, kt_run_child(moved_restored, &sr, M))
		TH_LOG("%s", self->msg);
	cw_image_free(&self->img);
	ASSERT_BASELINE("after the restored process exited");
}

/* ---- 7. lifetimes ---- */

/*
 * The checkpointer dies between PROCESS_INFO and UNPAUSE: the target's
 * queues run again and its loop completes. So do they when the
 * checkpointer closes its last descriptor of the target's file; closing
 * one of two (CRIU closes its copy while its plugin holds a dup until the
 * whole dump is done) keeps the target paused.
 */
CW_TEST(checkpointer_gone_target_resumes)
{
	struct kc_image k = { 0 };
	struct kg_qinfo a, b;
	int pipefd[2], fd;
	pid_t ck;
	char c;

	CW_NEEDS();
	ASSERT_EQ(0, cw_start_worker(&self->w, self->sh, STEPS_LONG, M))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, pipe2(pipefd, O_CLOEXEC));
	fflush(stdout);
	ck = fork();
	ASSERT_LE(0, ck);
	if (!ck) {
		/* A checkpointer of its own: tracer, fd, PROCESS_INFO. */
		c = 'n';
		if (!kc_seize(self->w.pid, false)) {
			fd = kc_getfd(self->w.pid, self->sh->lay.kfd_fd);
			if (fd >= 0 && !kc_process_info(fd, &k))
				c = 'y';
		}
		if (write(pipefd[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	close(pipefd[0]);
	ASSERT_EQ('y', c);
	ASSERT_EQ(0, cw_qinfo(self->w.pid, &self->sh->lay, CW_Q_LOOP, &a));
	ASSERT_EQ(1, a.evicted);
	kg_sleep_ms(50);
	ASSERT_EQ(0, cw_qinfo(self->w.pid, &self->sh->lay, CW_Q_LOOP, &b));
	ASSERT_EQ(a.iteration, b.iteration);
	ASSERT_EQ(a.next_wg, b.next_wg);
	kill(ck, SIGKILL);
	waitpid(ck, NULL, 0);
	ASSERT_EQ(0, cw_qinfo(self->w.pid, &self->sh->lay, CW_Q_LOOP, &a));
	ASSERT_EQ(0, a.evicted) TH_LOG("the target stays paused after its checkpointer died");

	/* Closing the last descriptor ends the pause, not closing one of two. */
	ASSERT_EQ(0, kc_seize(self->w.pid, false));
	self->tfd = kc_getfd(self->w.pid, self->sh->lay.kfd_fd);
	ASSERT_LE(0, self->tfd);
	ASSERT_EQ(0, kc_process_info(self->tfd, &k));
	ASSERT_EQ(0, cw_qinfo(self->w.pid, &self->sh->lay, CW_Q_LOOP, &a));
	ASSERT_EQ(1, a.evicted);
	fd = dup(self->tfd);
	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(0, cw_qinfo(self->w.pid, &self->sh->lay, CW_Q_LOOP, &a));
	ASSERT_EQ(1, a.evicted) TH_LOG("closing a dup unpaused");
	fd = dup(self->tfd);
	ASSERT_LE(0, fd);
	close(self->tfd);
	self->tfd = fd;
	ASSERT_EQ(0, cw_qinfo(self->w.pid, &self->sh->lay, CW_Q_LOOP, &a));
	ASSERT_EQ(1, a.evicted) TH_LOG("closing the original while a dup is open unpaused");
	close(self->tfd);
	self->tfd = -1;
	ASSERT_EQ(0, cw_qinfo(self->w.pid, &self->sh->lay, CW_Q_LOOP, &a));
	ASSERT_EQ(0, a.evicted) TH_LOG("closing the last descriptor did not unpause");
	/* An explicit UNPAUSE, then the close, leave it running. */
	self->tfd = kc_getfd(self->w.pid, self->sh->lay.kfd_fd);
	ASSERT_LE(0, self->tfd);
	ASSERT_EQ(0, kc_process_info(self->tfd, &k));
	ASSERT_EQ(0, kc_unpause(self->tfd));
	ASSERT_EQ(-EINVAL, kc_unpause(self->tfd));
	close(self->tfd);
	self->tfd = -1;
	ASSERT_EQ(0, cw_qinfo(self->w.pid, &self->sh->lay, CW_Q_LOOP, &a));
	ASSERT_EQ(0, a.evicted);
	ASSERT_EQ(0, kc_detach(self->w.pid));

	finish_and_quit(_metadata, self, &self->w);
	ASSERT_BASELINE("after the worker exited");
}

/*
 * The target dies after PROCESS_INFO: CHECKPOINT of the zombie works (we
 * still trace it) or fails cleanly; once reaped, its fd is no longer ours.
 * The dma-bufs outlive the KFD state, and nothing is left once every fd
 * is closed.
 */
CW_TEST(target_exits_during_checkpoint)
{
	struct kc_image k = { 0 };
	struct kt_props mid;
	siginfo_t si;
	char err[128];
	int fds, ret;

	CW_NEEDS();
	start_and_seize(_metadata, self, STEPS_LONG, false);
	ASSERT_EQ(0, kc_process_info(self->tfd, &k));
	kill(self->w.pid, SIGKILL);
	ASSERT_EQ(0, waitid(P_PID, self->w.pid, &si, WEXITED | WNOWAIT));

	ASSERT_EQ(0, kc_process_info(self->tfd, &k));
	fds = kc_count_fds();
	ret = kc_checkpoint(self->tfd, &k);
	if (ret) {
		TH_LOG("CHECKPOINT of a zombie target: %s", strerror(-ret));
		EXPECT_EQ(fds, kc_count_fds());
	} else {
		EXPECT_EQ(fds + (int)kc_count_dmabufs(&k), kc_count_fds());
	}
	cw_kill(&self->w);
	EXPECT_EQ(-EBADF, kc_process_info(self->tfd, &k));
	close(self->tfd);
	self->tfd = -1;
	if (!ret) {
		/* The KFD state is gone; the dma-bufs still read. */
		fds = kc_count_fds() - (int)kc_count_dmabufs(&k);
		ASSERT_EQ(0, kt_counters(&mid, err, sizeof(err)));
		EXPECT_EQ(kt_counter(&self->base, "processes"),
			  kt_counter(&mid, "processes"));
		ASSERT_EQ(0, kc_read_contents(&k, 0));
		kc_image_free(&k);
		EXPECT_EQ(fds, kc_count_fds());
	}
	ASSERT_BASELINE("after the last fd closed");
}

/* The restored process exits before RESUME: RESUME says -ESRCH. */
CW_TEST(restored_process_exits_before_resume)
{
	siginfo_t si;
	int kfd;

	CW_NEEDS();
	ASSERT_EQ(0, checkpoint_worker(self, STEPS_LONG,
				       CW_CK_MIDLOOP | CW_CK_STOP))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, cw_start_restored(&self->r, self->sh, &self->img,
				       CW_R_EXIT, M))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, waitid(P_PID, self->r.pid, &si, WEXITED | WNOWAIT));
	ASSERT_EQ(CLD_EXITED, si.si_code);
	ASSERT_EQ(0, si.si_status);
	kfd = kt_open_kfd();
	ASSERT_LE(0, kfd);
	EXPECT_EQ(-ESRCH, kc_resume(kfd, self->r.pid));
	cw_kill(&self->r);
	EXPECT_EQ(-ESRCH, kc_resume(kfd, self->sh->lay.pid));
	close(kfd);
	ASSERT_BASELINE("after the restored process exited");
}

/* ---- 8. fault injection ---- */

/*
 * The fault-injection points each op passes for the worker of criu_work.h
 * (16 BOs: 13 VRAM or GTT, 2 USERPTR, 1 DOORBELL; 3 queues; 5 events, 4
 * of them in the events page BO). A sweep fails each point in turn and
 * must reach exactly these many: a point added or lost in the driver, or
 * a sweep that reaches none, fails the test.
 *
 * PROCESS_INFO: the eviction (a queue that does not preempt in time).
 * CHECKPOINT: 4 buffers; per VRAM/GTT BO the export and its fd (2 * 13);
 * 3 copies out.
 * UNPAUSE: restarting the queues.
 * RESTORE: 8 buffers and the copy in; per BO its struct and handle in
 * kfd_bo_create() (2 * 16), per BO but the 2 USERPTR ones its mapping
 * (14); the events page; per event its struct (5); per queue its struct
 * and id in kfd_queue_create() (2 * 3), and the control stack of the one
 * with a save area (1); per VRAM/GTT BO the export and its fd (2 * 13);
 * the copy out.
 * RESUME: per USERPTR BO pinning its pages (2), per GPU-mapped one its
 * mapping (1).
 */
#define CW_CONTENT_BOS		13
#define CW_USERPTR_BOS		2
#define PROCESS_INFO_POINTS	1
#define CHECKPOINT_POINTS	(4 + 2 * CW_CONTENT_BOS + 3)
#define UNPAUSE_POINTS		1
#define RESTORE_POINTS		(9 + 2 * CW_NBOS + (CW_NBOS - CW_USERPTR_BOS) + \
				 1 + CW_NEVENTS + 2 * CW_NQUEUES + 1 + \
				 2 * CW_CONTENT_BOS + 1)
#define RESUME_POINTS		(CW_USERPTR_BOS + 1)

/* Is the worker's loop queue evicted (1) or running (0)? */
static int loop_evicted(FIXTURE_DATA(criu) *self, struct cw_target *t)
{
	struct kg_qinfo qi;

	if (cw_qinfo(t->pid, &self->sh->lay, CW_Q_LOOP, &qi))
		return -1;
	return qi.evicted;
}

/*
 * Fail the dump side's injection points one after the other: PROCESS_INFO
 * (the target keeps running), then CHECKPOINT until it succeeds (each
 * failure leaves no fd and no object and the target running: a failed
 * CHECKPOINT unpauses), then UNPAUSE (the target stays paused until an
 * UNPAUSE succeeds). Each op reaches exactly the points it is documented
 * to; the target finishes its work exactly.
 */
CW_TEST(checkpoint_fault_injection_sweep)
{
	struct kt_props before;
	struct kc_image k = { 0 };
	char err[128];
	int n, ret, left, points, fds;

	CW_NEEDS();
	start_and_seize(_metadata, self, STEPS_LONG, false);

	for (n = 1;; n++) {
		ASSERT_GT(100, n) TH_LOG("PROCESS_INFO never succeeds");
		ASSERT_EQ(0, kc_fail_nth_set(n));
		ret = kc_process_info(self->tfd, &k);
		ASSERT_EQ(0, kc_fail_nth_done(&left, &points));
		if (!ret)
			break;
		ASSERT_EQ(0, left) TH_LOG("PROCESS_INFO: %s", strerror(-ret));
		ASSERT_EQ(n, points);
		ASSERT_EQ(-ETIME, ret);
		ASSERT_EQ(0, loop_evicted(self, &self->w))
			TH_LOG("point %d: the target stays paused", n);
		ASSERT_EQ(-EINVAL, kc_unpause(self->tfd));
	}
	ASSERT_NE(0, left);
	ASSERT_EQ(n - 1, points);
	ASSERT_EQ(PROCESS_INFO_POINTS, n - 1);
	ASSERT_EQ(0, kc_unpause(self->tfd));
	printf("# PROCESS_INFO has %d fault-injection points (expected %d)\n",
	       n - 1, PROCESS_INFO_POINTS);

	for (n = 1;; n++) {
		ASSERT_GT(1000, n) TH_LOG("CHECKPOINT never succeeds");
		ASSERT_EQ(0, kc_process_info(self->tfd, &k));
		ASSERT_EQ(0, kt_counters(&before, err, sizeof(err)));
		fds = kc_count_fds();
		ASSERT_EQ(0, kc_fail_nth_set(n));
		ret = kc_checkpoint(self->tfd, &k);
		ASSERT_EQ(0, kc_fail_nth_done(&left, &points));
		if (!ret) {
			ASSERT_NE(0, left)
				TH_LOG("CHECKPOINT succeeded although injection point %d failed",
				       n);
			ASSERT_EQ(n - 1, points);
			kc_close_dmabufs(k.bos, k.num_bos);
			kc_image_free(&k);
			ASSERT_EQ(fds, kc_count_fds());
			break;
		}
		ASSERT_EQ(0, left)
			TH_LOG("CHECKPOINT failed (%s) with no injected failure",
			       strerror(-ret));
		ASSERT_EQ(n, points)
			TH_LOG("CHECKPOINT went on after its point %d failed", n);
		EXPECT_EQ(fds, kc_count_fds())
			TH_LOG("point %d (%s) left fds", n, strerror(-ret));
		EXPECT_EQ(0, cw_counters_same(&before, "failed CHECKPOINT", M))
			TH_LOG("point %d: %s", n, self->msg);
		/* A failed CHECKPOINT leaves the target running. */
		ASSERT_EQ(0, loop_evicted(self, &self->w))
			TH_LOG("point %d: the target stays paused", n);
		ASSERT_EQ(-EINVAL, kc_unpause(self->tfd))
			TH_LOG("point %d: UNPAUSE after the failure", n);
	}
	printf("# CHECKPOINT has %d fault-injection points (expected %d)\n",
	       n - 1, CHECKPOINT_POINTS);
	ASSERT_EQ(CHECKPOINT_POINTS, n - 1);

	for (n = 1;; n++) {
		ASSERT_GT(100, n) TH_LOG("UNPAUSE never succeeds");
		ASSERT_EQ(0, kc_fail_nth_set(n));
		ret = kc_unpause(self->tfd);
		ASSERT_EQ(0, kc_fail_nth_done(&left, &points));
		if (!ret)
			break;
		ASSERT_EQ(0, left) TH_LOG("UNPAUSE: %s", strerror(-ret));
		ASSERT_EQ(n, points);
		ASSERT_EQ(-ETIME, ret);
		ASSERT_EQ(1, loop_evicted(self, &self->w))
			TH_LOG("point %d: a failed UNPAUSE resumed the target",
			       n);
	}
	ASSERT_NE(0, left);
	ASSERT_EQ(n - 1, points);
	ASSERT_EQ(0, loop_evicted(self, &self->w));
	printf("# UNPAUSE has %d fault-injection points (expected %d)\n",
	       n - 1, UNPAUSE_POINTS);
	ASSERT_EQ(UNPAUSE_POINTS, n - 1);

	ASSERT_EQ(0, kc_detach(self->w.pid));
	close(self->tfd);
	self->tfd = -1;
	finish_and_quit(_metadata, self, &self->w);
	ASSERT_BASELINE("after the worker exited");
}

/*
 * The same for RESTORE in a fresh process (every failure leaves the
 * counters and the fds as before), then for RESUME: a failed RESUME keeps
 * the queues stopped and what it did so far, so after its first failure
 * each retry passes the point that failed and fails the next one. The
 * restored process then works to the end.
 */
CW_TEST(restore_fault_injection_sweep)
{
	int kfd, n, ret, left, points, fails;

	CW_NEEDS();
	ASSERT_EQ(0, checkpoint_worker(self, STEPS_LONG,
				       CW_CK_MIDLOOP | CW_CK_STOP))
		TH_LOG("%s", self->msg);
	ASSERT_EQ(0, cw_start_restored(&self->r, self->sh, &self->img,
				       CW_R_SWEEP, M))
		TH_LOG("%s", self->msg);
	printf("# RESTORE has %u fault-injection points (expected %d)\n",
	       self->sh->points, RESTORE_POINTS);
	ASSERT_EQ(RESTORE_POINTS, self->sh->points);

	kfd = kt_open_kfd();
	ASSERT_LE(0, kfd);
	for (fails = 0, n = 1;; n = 2) {
		ASSERT_GT(100, fails) TH_LOG("RESUME never succeeds");
		ASSERT_EQ(0, kc_fail_nth_set(n));
		ret = kc_resume(kfd, self->r.pid);
		ASSERT_EQ(0, kc_fail_nth_done(&left, &points));
		if (!ret)
			break;
		fails++;
		ASSERT_EQ(0, left) TH_LOG("RESUME: %s", strerror(-ret));
		ASSERT_EQ(n, points);
		ASSERT_EQ(-ENOMEM, ret);
		ASSERT_EQ(1, loop_evicted(self, &self->r))
			TH_LOG("the queues run after a failed RESUME");
	}
	ASSERT_EQ(n, left + points);
	EXPECT_EQ(-EINVAL, kc_resume(kfd, self->r.pid));
	close(kfd);
	printf("# RESUME has %d fault-injection points (expected %d)\n", fails,
	       RESUME_POINTS);
	ASSERT_EQ(RESUME_POINTS, fails);
	ASSERT_EQ(0, cw_resumed(&self->r, M)) TH_LOG("%s", self->msg);
	finish_and_quit(_metadata, self, &self->r);
	ASSERT_BASELINE("after the restored process exited");
}

/* ---- 2. the two halves of a restore on another node ---- */

static int mode_checkpoint(const char *dir)
{
	struct cw_shared *sh = cw_shared_new();
	struct cw_target w;
	struct cw_image img;
	struct kt_props base;
	char msg[4096];
	int tfd = -1, ret;
	pid_t pid;

	if (!sh || kt_counters(&base, msg, sizeof(msg))) {
		printf("# setup failed\n");
		return 1;
	}
	ret = cw_start_worker(&w, sh, STEPS_LONG, msg, sizeof(msg));
	if (!ret)
		ret = cw_checkpoint(w.pid, &sh->lay, NULL,
				    CW_CK_MIDLOOP | CW_CK_STOP, &img, &tfd,
				    msg, sizeof(msg));
	pid = w.pid;
	cw_kill(&w);
	if (tfd >= 0)
		close(tfd);
	if (!ret) {
		printf("# checkpointed pid %d at loop step %u, workgroup %u, gpu_ids %u %u\n",
		       pid, img.qs[CW_Q_LOOP].iteration,
		       img.qs[CW_Q_LOOP].next_wg, img.lay.gpu_id[0],
		       img.lay.gpu_id[1]);
		ret = cw_image_save(&img, dir);
		if (ret)
			snprintf(msg, sizeof(msg), "saving to %s: %s", dir,
				 strerror(-ret));
	}
	if (!ret)
		ret = cw_counters_same(&base, "after the worker died", msg,
				       sizeof(msg));
	if (ret)
		printf("# checkpoint failed: %s\n", msg);
	return ret ? 1 : 0;
}

static int mode_restore(const char *dir)
{
	struct cw_shared *sh = cw_shared_new();
	struct kt_gpu gpus[KT_MAX_GPUS];
	struct cw_target r = { .sock = -1 };
	struct cw_image img;
	struct kt_props base;
	char msg[4096];
	int ret, n, i;
	uint32_t j;

	if (!sh || kt_counters(&base, msg, sizeof(msg))) {
		printf("# setup failed\n");
		return 1;
	}
	ret = cw_image_load(&img, dir);
	if (ret) {
		printf("# loading %s: %s\n", dir, strerror(-ret));
		return 1;
	}
	n = kt_gpus(gpus, KT_MAX_GPUS);
	for (i = 0; i < n; i++)
		for (j = 0; j < img.lay.ngpus; j++)
			if (gpus[i].gpu_id == img.lay.gpu_id[j]) {
				printf("# gpu_id %u exists on both nodes: not another node\n",
				       gpus[i].gpu_id);
				return 1;
			}
	printf("# restoring gpu_ids %u %u onto GPUs %u %u\n",
	       img.lay.gpu_id[0], img.lay.gpu_id[1], gpus[0].gpu_id,
	       gpus[1].gpu_id);
	ret = cw_start_restored(&r, sh, &img, 0, msg, sizeof(msg));
	if (!ret)
		ret = cw_send_resume(r.pid, msg, sizeof(msg));
	if (!ret)
		ret = cw_resumed(&r, msg, sizeof(msg));
	if (!ret)
		ret = cw_command(&r, CW_CMD_FINISH, msg, sizeof(msg));
	if (!ret)
		ret = cw_quit(&r, msg, sizeof(msg));
	cw_kill(&r);
	if (!ret)
		ret = cw_counters_same(&base, "after the restored process exited",
				       msg, sizeof(msg));
	if (ret)
		printf("# restore failed: %s\n", msg);
	cw_image_free(&img);
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--checkpoint-to"))
		return mode_checkpoint(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "--restore-from"))
		return mode_restore(argv[2]);
	return test_harness_run(argc, argv);
}
