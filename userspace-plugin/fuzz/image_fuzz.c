// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for everything the plugin reads from a checkpoint:
 * the record framing, protobuf-c unpacking, the header and process checks
 * (images.c), GPU matching (topology.c), restore.c's RESTORE_EXT_FILE and
 * UPDATE_VMA_MAP paths with the contents copy engine (bo_copy.c, against
 * fake_kfd.c), and kfd-inspect --verify (inspect.c).
 *
 * Each input is a bundle of image files (bundle.h) written into a private
 * directory on /dev/shm and its subdirectory "parent" (several kfd
 * images, aliases of each other, incremental images and their parents). After every input the harness checks that no file
 * descriptor was left open; ASan, UBSan and LeakSanitizer do the rest.
 *
 *   make -C userspace-plugin fuzz      build/plugin/fuzz/kfd-image-fuzz
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "images.h"
#include "kfd_dev.h"
#include "plugin.h"
#include "util.h"

int kp_inspect_main(int argc, char **argv);

struct kp_config kp_config;
static char kf_dir[64];
static int kf_dirfd = -1;
static int kf_lowest_fd;

static int kf_lowest_free_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (fd >= 0)
		close(fd);
	return fd;
}

static void kf_rmdir_files(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", kf_dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", kf_dir);
}

static void kf_init(void)
{
	snprintf(kf_dir, sizeof(kf_dir), "/dev/shm/kfd-image-fuzz.XXXXXX");
	if (!mkdtemp(kf_dir)) {
		perror("mkdtemp");
		abort();
	}
	atexit(kf_rmdir_files);
	kf_dirfd = open(kf_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* Where an input's parent images go (bundle.h). */
	if (kf_dirfd < 0 || mkdirat(kf_dirfd, "parent", 0700))
		abort();
	kp_set_image_dir(kf_dirfd);
	kp_log_set_stderr_level(getenv("KFD_FUZZ_VERBOSE") ? CRIU_LOG_DEBUG :
				0);
	kp_config.max_buffer = 1 << 20;
	kp_config.copy_mode = KP_COPY_CPU;
	kp_match_opts_default(&kp_config.match);
	/* kfd-inspect's report is not what is tested. */
	if (!getenv("KFD_FUZZ_VERBOSE") && !freopen("/dev/null", "w", stdout))
		abort();
	kf_lowest_fd = kf_lowest_free_fd();
}

static void kf_write(const struct kf_file *f)
{
	char name[KP_NAME_LEN + 8];
	int fd;

	kf_name(f, name);
	fd = openat(kf_dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		    0600);
	if (fd < 0)
		abort();
	if (f->len && write(fd, f->data, f->len) != (ssize_t)f->len)
		abort();
	close(fd);
}

static void kf_remove(const struct kf_file *f)
{
	char name[KP_NAME_LEN + 8];

	kf_name(f, name);
	unlinkat(kf_dirfd, name, 0);
}

/* UPDATE_VMA_MAP for every BO the kfd image names (at most 16). */
static void kf_update_vmas(void)
{
	uint64_t new_off;
	KfdProcess *p = NULL;
	KfdHeader *h;
	size_t i;
	int fd, pfd;

	kp_update_vma_map("/dev/kfd", 0x1000, 0, &new_off, &pfd);
	fd = kp_img_open("kfd-1.img");
	if (fd < 0)
		return;
	h = kp_read_header(fd, "kfd-1.img");
	if (h && h->kind == KFD_IMAGE_KIND__KFD_IMAGE_PROCESS)
		p = kp_read_process(fd, "kfd-1.img", h);
	for (i = 0; p && i < p->n_bos && i < 16; i++) {
		char path[64];

		snprintf(path, sizeof(path), KP_RENDER_PATH_FMT,
			 KP_RENDER_MINOR_FIRST + (unsigned int)(i & 1));
		kp_update_vma_map(path, p->bos[i]->addr, p->bos[i]->offset,
				  &new_off, &pfd);
		kp_update_vma_map(path, p->bos[i]->addr,
				  p->bos[i]->offset + p->bos[i]->size - 1,
				  &new_off, &pfd);
	}
	if (p)
		kfd_process__free_unpacked(p, NULL);
	if (h)
		kfd_header__free_unpacked(h, NULL);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kf_file files[KF_MAX_FILES];
	char *argv[] = { "kfd-inspect", "--verify", kf_dir, NULL };
	unsigned int n, i;
	int fd;

	if (kf_dirfd < 0)
		kf_init();
	/* kfd-inspect points the plugin at its own (closed) fd: undo. */
	kp_set_image_dir(kf_dirfd);
	n = kf_split(data, size, files);
	for (i = 0; i < n; i++)
		kf_write(&files[i]);

	/* What criu restore does: the kfd file, then its render node. */
	fd = kp_restore_file(1);
	if (fd >= 0)
		close(fd);
	fd = kp_restore_file(2);
	if (fd >= 0)
		close(fd);
	kf_update_vmas();
	kp_restore_reset();

	kp_inspect_main(3, argv);

	for (i = 0; i < n; i++)
		kf_remove(&files[i]);
	if (kf_lowest_free_fd() != kf_lowest_fd) {
		fprintf(stderr, "kfd-image-fuzz: a file descriptor leaked\n");
		abort();
	}
	return 0;
}
