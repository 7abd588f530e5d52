// SPDX-License-Identifier: GPL-2.0
/*
 * GPUs hidden by the device cgroup, as containers hide them: a process
 * whose device cgroup does not allow read and write access to a GPU's
 * render node gets -EPERM from every topology file describing that GPU
 * (upstream amdkfd's kfd_devcgroup_check_permission()), and a /dev/kfd it
 * opens does not have that GPU at all: it is missing from the process
 * apertures and every ioctl naming its gpu_id fails with -EINVAL, as when
 * amdkfd's kfd_init_apertures() skips it. The other GPU and the CPU node
 * (whose io_links describe the CPU side) stay readable and usable.
 *
 * The cgroup is built two ways, each a variant:
 * - bpf: cgroup v2 with a BPF_PROG_TYPE_CGROUP_DEVICE program refusing the
 *   render node, what systemd, crun and runc install on Debian 12;
 * - legacy: the cgroup v1 devices controller with a devices.deny entry.
 * The checks run in a child that moves itself into the cgroup.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kt_harness.h"
#include "kfdsim_test.h"

#define DEVCG_ROOT	"/tmp/kfdsim-devcg"

/* The cgroup a child joins, hiding render node @minor. */
struct devcg {
	char mnt[128];		/* hierarchy mount point (we mounted it) */
	char dir[160];		/* the test's cgroup */
	char procs[192];	/* file a task writes its pid into to join */
	int dir_fd;
	int prog_fd;
	bool mounted;
};

/* One BPF instruction. */
static struct bpf_insn ins(__u8 code, __u8 dst, __u8 src, __s16 off, __s32 imm)
{
	struct bpf_insn i = {
		.code = code, .dst_reg = dst, .src_reg = src,
		.off = off, .imm = imm,
	};

	return i;
}

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return (int)syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/*
 * A device program allowing everything but char device 226:@minor. Its
 * context is struct bpf_cgroup_dev_ctx: access_type, major, minor (u32).
 */
static int devcg_load_prog(int minor, char *log, size_t loglen)
{
	struct bpf_insn prog[] = {
		ins(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1),
		/* r2 = ctx->major, r3 = ctx->minor */
		ins(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_2, BPF_REG_1, 4, 0),
		ins(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_3, BPF_REG_1, 8, 0),
		ins(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_2, 0, 2, KT_DRM_MAJOR),
		ins(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_3, 0, 1, minor),
		ins(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
		ins(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
	a.insns = (__u64)(unsigned long)prog;
	a.insn_cnt = sizeof(prog) / sizeof(prog[0]);
	a.license = (__u64)(unsigned long)"GPL";
	a.log_buf = (__u64)(unsigned long)log;
	a.log_size = (__u32)loglen;
	a.log_level = 1;
	log[0] = '\0';
	return sys_bpf(BPF_PROG_LOAD, &a);
}

static int write_str(const char *path, const char *s)
{
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n < 0)
		err = -errno;
	else if ((size_t)n != strlen(s))
		err = -EIO;
	close(fd);
	return err;
}

/* Is a file system of type @fstype mounted at @path? */
static bool mounted_at(const char *path, const char *fstype)
{
	char line[512], dev[128], mnt[256], type[64];
	bool found = false;
	FILE *f;

	f = fopen("/proc/self/mounts", "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %255s %63s", dev, mnt, type) == 3 &&
		    !strcmp(mnt, path) && !strcmp(type, fstype))
			found = true;
	fclose(f);
	return found;
}

/* Mount @fstype (with @opts) at DEVCG_ROOT-@tag unless one is there. */
static int devcg_mount(struct devcg *cg, const char *tag, const char *fstype,
		       const char *opts)
{
	snprintf(cg->mnt, sizeof(cg->mnt), "%s-%s", DEVCG_ROOT, tag);
	if (mkdir(cg->mnt, 0700) && errno != EEXIST)
		return -errno;
	if (mounted_at(cg->mnt, fstype))
		return 0;
	if (mount("none", cg->mnt, fstype, 0, opts))
		return -errno;
	cg->mounted = true;
	return 0;
}

static int devcg_mkdir(struct devcg *cg, const char *procs)
{
	snprintf(cg->dir, sizeof(cg->dir), "%s/test-%d", cg->mnt, getpid());
	snprintf(cg->procs, sizeof(cg->procs), "%s/%s", cg->dir, procs);
	if (mkdir(cg->dir, 0755))
		return -errno;
	cg->dir_fd = open(cg->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return cg->dir_fd < 0 ? -errno : 0;
}

/* cgroup v2 with a device program refusing 226:@minor. */
static int devcg_setup_bpf(struct devcg *cg, int minor, char *msg, size_t len)
{
	char log[4096];
	union bpf_attr a;
	int ret;

	ret = devcg_mount(cg, "v2", "cgroup2", NULL);
	if (ret) {
		snprintf(msg, len, "mount cgroup2: %s", strerror(-ret));
		return ret;
	}
	ret = devcg_mkdir(cg, "cgroup.procs");
	if (ret) {
		snprintf(msg, len, "mkdir %s: %s", cg->dir, strerror(-ret));
		return ret;
	}
	cg->prog_fd = devcg_load_prog(minor, log, sizeof(log));
	if (cg->prog_fd < 0) {
		ret = -errno;
		snprintf(msg, len, "BPF_PROG_LOAD: %s %s", strerror(-ret), log);
		return ret;
	}
	memset(&a, 0, sizeof(a));
	a.target_fd = (__u32)cg->dir_fd;
	a.attach_bpf_fd = (__u32)cg->prog_fd;
	a.attach_type = BPF_CGROUP_DEVICE;
	if (sys_bpf(BPF_PROG_ATTACH, &a)) {
		ret = -errno;
		snprintf(msg, len, "BPF_PROG_ATTACH: %s", strerror(-ret));
		return ret;
	}
	return 0;
}

/* cgroup v1 devices controller denying 226:@minor. */
static int devcg_setup_legacy(struct devcg *cg, int minor, char *msg,
			      size_t len)
{
	char path[256], rule[64];
	int ret;

	ret = devcg_mount(cg, "v1", "cgroup", "devices");
	if (ret) {
		snprintf(msg, len, "mount cgroup devices: %s", strerror(-ret));
		return ret;
	}
	ret = devcg_mkdir(cg, "tasks");
	if (ret) {
		snprintf(msg, len, "mkdir %s: %s", cg->dir, strerror(-ret));
		return ret;
	}
	snprintf(path, sizeof(path), "%s/devices.deny", cg->dir);
	snprintf(rule, sizeof(rule), "c %d:%d rw", KT_DRM_MAJOR, minor);
	ret = write_str(path, rule);
	if (ret)
		snprintf(msg, len, "%s: %s", path, strerror(-ret));
	return ret;
}

static void devcg_remove(struct devcg *cg)
{
	if (cg->prog_fd >= 0)
		close(cg->prog_fd);
	if (cg->dir_fd >= 0)
		close(cg->dir_fd);
	if (cg->dir[0])
		rmdir(cg->dir);
	if (cg->mounted)
		umount(cg->mnt);
	if (cg->mnt[0])
		rmdir(cg->mnt);
}

FIXTURE(devcg) {
	struct kt_gpu gpu[KT_MAX_GPUS];
	int ngpus;
	struct devcg cg;
	bool skipped;
	char msg[4096];
};

FIXTURE_VARIANT(devcg) {
	bool bpf;
};

FIXTURE_VARIANT_ADD(devcg, bpf) {
	.bpf = true,
};

FIXTURE_VARIANT_ADD(devcg, legacy) {
	.bpf = false,
};

/* GPU 1 (the second in topology order) is the hidden one. */
#define HIDDEN	1
#define SHOWN	0

FIXTURE_SETUP(devcg)
{
	int minor, ret;

	memset(&self->cg, 0, sizeof(self->cg));
	self->cg.dir_fd = -1;
	self->cg.prog_fd = -1;
	self->ngpus = kt_gpus(self->gpu, KT_MAX_GPUS);
	ASSERT_LE(2, self->ngpus)
		TH_LOG("needs two GPUs (num_gpus=2), found %d", self->ngpus);
	minor = self->gpu[HIDDEN].render_minor;
	/* The 6.1 harness runs the test after a SKIP here: see skipped. */
	if (variant->bpf && syscall(__NR_bpf, -1, NULL, 0) < 0 &&
	    errno == ENOSYS) {
		self->skipped = true;
		SKIP(return, "kernel without CONFIG_BPF_SYSCALL: no BPF device programs");
	}
	if (variant->bpf)
		ret = devcg_setup_bpf(&self->cg, minor, self->msg,
				      sizeof(self->msg));
	else
		ret = devcg_setup_legacy(&self->cg, minor, self->msg,
					 sizeof(self->msg));
	ASSERT_EQ(0, ret) TH_LOG("%s", self->msg);
}

FIXTURE_TEARDOWN(devcg)
{
	devcg_remove(&self->cg);
}

struct child_arg {
	FIXTURE_DATA(devcg) *self;
	bool join;		/* move into the cgroup first */
	bool open_before;	/* open /dev/kfd before joining */
};

static int join(struct child_arg *a, char *msg, size_t len)
{
	char pid[32];
	int ret;

	if (!a->join)
		return 0;
	snprintf(pid, sizeof(pid), "%d", getpid());
	ret = write_str(a->self->cg.procs, pid);
	KT_CHECK(!ret, "join %s: %s", a->self->cg.procs, strerror(-ret));
	return 0;
}

/* Topology files of a GPU node, relative to the node's directory. */
static const char * const gpu_files[] = {
	"gpu_id", "name", "properties", "mem_banks/0/properties",
	"caches/0/properties", "io_links/0/properties",
};

/* Read every file of @node; expect -@err from each (0: readable). */
static int read_node(int node, int err, char *msg, size_t len)
{
	char path[256], buf[8192];
	unsigned int i;
	int ret;

	for (i = 0; i < sizeof(gpu_files) / sizeof(gpu_files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%d/%s", KT_NODES, node,
			 gpu_files[i]);
		ret = kt_read_file(path, buf, sizeof(buf));
		if (err)
			KT_CHECK(ret == -err, "%s: got %d (%s), want -%s",
				 path, ret, ret < 0 ? strerror(-ret) : "read",
				 strerror(err));
		else
			KT_CHECK(ret > 0, "%s: got %d (%s)", path, ret,
				 ret < 0 ? strerror(-ret) : "empty");
	}
	return 0;
}

static int child_topology(void *arg, char *msg, size_t len)
{
	struct child_arg *a = arg;
	FIXTURE_DATA(devcg) *self = a->self;
	char path[256], buf[8192];
	unsigned long long id;
	struct kt_props props;
	char err[128];
	int i, ret, links;

	ret = join(a, msg, len);
	if (ret)
		return ret;
	ret = read_node((int)self->gpu[HIDDEN].node, a->join ? EPERM : 0,
			msg, len);
	if (ret)
		return ret;
	ret = read_node((int)self->gpu[SHOWN].node, 0, msg, len);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "%s/%u/gpu_id", KT_NODES,
		 self->gpu[SHOWN].node);
	KT_CHECK(!kt_read_ull(path, &id) && id == self->gpu[SHOWN].gpu_id,
		 "%s: not gpu_id %u", path, self->gpu[SHOWN].gpu_id);

	/* The CPU node, its links to every GPU included, stays readable. */
	snprintf(path, sizeof(path), "%s/0/properties", KT_NODES);
	KT_CHECK(!kt_props_read(path, false, &props, err, sizeof(err)),
		 "%s: %s", path, err);
	snprintf(path, sizeof(path), "%s/0/io_links", KT_NODES);
	links = kt_count_subdirs(path);
	KT_CHECK(links == self->ngpus, "%s: %d links", path, links);
	for (i = 0; i < links; i++) {
		snprintf(path, sizeof(path), "%s/0/io_links/%d/properties",
			 KT_NODES, i);
		ret = kt_read_file(path, buf, sizeof(buf));
		KT_CHECK(ret > 0, "%s: %d", path, ret);
	}
	/* Generation and system properties are the system's, not a GPU's. */
	KT_CHECK(kt_read_file(KT_TOPOLOGY "/generation_id", buf,
			      sizeof(buf)) > 0, "generation_id unreadable");
	KT_CHECK(kt_read_file(KT_TOPOLOGY "/system_properties", buf,
			      sizeof(buf)) > 0, "system_properties unreadable");
	return 0;
}

/* The parent, outside the cgroup, reads everything (so the test can fail). */
TEST_F(devcg, topology_outside_readable)
{
	struct child_arg a = { .self = self, .join = false };

	if (self->skipped)
		return;
	ASSERT_EQ(0, kt_run_child(child_topology, &a, self->msg,
				  sizeof(self->msg))) TH_LOG("%s", self->msg);
}

TEST_F(devcg, topology_hidden_eperm)
{
	struct child_arg a = { .self = self, .join = true };

	if (self->skipped)
		return;
	ASSERT_EQ(0, kt_run_child(child_topology, &a, self->msg,
				  sizeof(self->msg))) TH_LOG("%s", self->msg);
}

static int child_render(void *arg, char *msg, size_t len)
{
	struct child_arg *a = arg;
	FIXTURE_DATA(devcg) *self = a->self;
	int fd, ret;

	ret = join(a, msg, len);
	if (ret)
		return ret;
	fd = kt_open_render(self->gpu[HIDDEN].render_minor);
	if (fd >= 0)
		close(fd);
	KT_CHECK(fd == -EPERM, "renderD%d: got %d, want -EPERM",
		 self->gpu[HIDDEN].render_minor, fd);
	fd = kt_open_render(self->gpu[SHOWN].render_minor);
	KT_CHECK(fd >= 0, "renderD%d: %s", self->gpu[SHOWN].render_minor,
		 strerror(-fd));
	close(fd);
	return 0;
}

TEST_F(devcg, render_node_refused)
{
	struct child_arg a = { .self = self, .join = true };

	if (self->skipped)
		return;
	ASSERT_EQ(0, kt_run_child(child_render, &a, self->msg,
				  sizeof(self->msg))) TH_LOG("%s", self->msg);
}

/* The gpu_ids in @kfd's process apertures; count or -errno. */
static int aperture_ids(int kfd, uint32_t *ids, int max)
{
	struct kfd_process_device_apertures ap[KT_MAX_GPUS];
	struct kfd_ioctl_get_process_apertures_new_args a = {
		.kfd_process_device_apertures_ptr = (uint64_t)(unsigned long)ap,
		.num_of_nodes = KT_MAX_GPUS,
	};
	int ret, i;

	ret = kt_ioctl(kfd, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &a);
	if (ret)
		return ret;
	for (i = 0; i < (int)a.num_of_nodes && i < max; i++)
		ids[i] = ap[i].gpu_id;
	return (int)a.num_of_nodes;
}

/*
 * In the cgroup, a fresh /dev/kfd has only the shown GPU; with
 * @a->open_before both GPUs stay, as upstream decides at open.
 */
static int child_kfd(void *arg, char *msg, size_t len)
{
	struct child_arg *a = arg;
	FIXTURE_DATA(devcg) *self = a->self;
	uint32_t hid = self->gpu[HIDDEN].gpu_id, shown = self->gpu[SHOWN].gpu_id;
	uint32_t ids[KT_MAX_GPUS];
	uint64_t avail, handle;
	int kfd = -1, rfd, n, i, ret;
	void *map;

	if (a->open_before)
		kfd = kt_open_kfd();
	ret = join(a, msg, len);
	if (ret)
		return ret;
	if (!a->open_before)
		kfd = kt_open_kfd();
	KT_CHECK(kfd >= 0, "open /dev/kfd: %s", strerror(-kfd));
	n = aperture_ids(kfd, ids, KT_MAX_GPUS);
	if (a->open_before) {
		KT_CHECK(n == self->ngpus, "opened before: %d GPUs, want %d",
			 n, self->ngpus);
		close(kfd);
		return 0;
	}
	KT_CHECK(n == self->ngpus - 1, "apertures: %d GPUs, want %d", n,
		 self->ngpus - 1);
	for (i = 0; i < n; i++)
		KT_CHECK(ids[i] != hid, "apertures list hidden gpu_id %u", hid);

	rfd = kt_open_render(self->gpu[SHOWN].render_minor);
	KT_CHECK(rfd >= 0, "renderD%d: %s", self->gpu[SHOWN].render_minor,
		 strerror(-rfd));
	/* The hidden gpu_id names no GPU of this process. */
	ret = kt_acquire_vm(kfd, rfd, hid);
	KT_CHECK(ret == -EINVAL, "ACQUIRE_VM hidden: %d, want -EINVAL", ret);
	ret = kt_available(kfd, hid, &avail);
	KT_CHECK(ret == -EINVAL, "AVAILABLE_MEMORY hidden: %d", ret);
	ret = kt_alloc(kfd, hid, KT_VA(0), KT_MIB, KT_GTT | KT_WRITABLE,
		       &handle, NULL);
	KT_CHECK(ret == -EINVAL, "ALLOC hidden: %d, want -EINVAL", ret);
	/* Its doorbells: the device exists, the process has no state on it. */
	map = mmap(NULL, KT_DOORBELL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		   kfd, (off_t)(KFD_MMAP_TYPE_DOORBELL | KFD_MMAP_GPU_ID(hid)));
	KT_CHECK(map == MAP_FAILED && errno == EINVAL,
		 "doorbell mmap of the hidden GPU: %s",
		 map == MAP_FAILED ? strerror(errno) : "mapped");
	/* The shown GPU works, its doorbells map. */
	ret = kt_acquire_vm(kfd, rfd, shown);
	KT_CHECK(!ret, "ACQUIRE_VM shown: %s", strerror(-ret));
	map = mmap(NULL, KT_DOORBELL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		   kfd, (off_t)(KFD_MMAP_TYPE_DOORBELL | KFD_MMAP_GPU_ID(shown)));
	KT_CHECK(map != MAP_FAILED, "doorbell mmap of the shown GPU: %s",
		 strerror(errno));
	munmap(map, KT_DOORBELL_SIZE);
	ret = kt_alloc(kfd, shown, KT_VA(0), KT_MIB, KT_VRAM | KT_WRITABLE,
		       &handle, NULL);
	KT_CHECK(!ret, "ALLOC shown: %s", strerror(-ret));
	KT_CHECK(!kt_free(kfd, handle), "FREE shown");
	close(rfd);
	close(kfd);
	return 0;
}

TEST_F(devcg, kfd_hidden_gpu_absent)
{
	struct child_arg a = { .self = self, .join = true };

	if (self->skipped)
		return;
	ASSERT_EQ(0, kt_run_child(child_kfd, &a, self->msg,
				  sizeof(self->msg))) TH_LOG("%s", self->msg);
}

TEST_F(devcg, kfd_opened_before_keeps_gpus)
{
	struct child_arg a = { .self = self, .join = true,
			       .open_before = true };

	if (self->skipped)
		return;
	ASSERT_EQ(0, kt_run_child(child_kfd, &a, self->msg,
				  sizeof(self->msg))) TH_LOG("%s", self->msg);
}

TEST_HARNESS_MAIN
