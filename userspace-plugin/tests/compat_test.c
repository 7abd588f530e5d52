// SPDX-License-Identifier: GPL-2.0
/*
 * Host test of how kfd_plugin.so fits its descriptor to the CRIU that
 * loads it (criu_compat.c): this program plays a criu binary with HOOKS
 * hooks (0: one that exports no cr_plugin_ctl) by exporting what such a
 * criu exports, dlopen()s the plugin like CRIU does and checks
 * CR_PLUGIN_DESC. Built four times: HOOKS=0 (as criu 3.17 without the
 * symbol), 13 (criu 4.2), 14 (criu-dev between RESTORE_INIT and
 * DUMP_DEVICES_LATE, which already passes the retry argument), 15
 * (criu-dev).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "criu_plugin.h"

#ifndef HOOKS
#error "build with -DHOOKS=N"
#endif

#if HOOKS
/* What criu's cr_plugin_ctl is: a list head, then one per hook. */
struct list_head_like {
	void *next, *prev;
};

__attribute__((visibility("default")))
struct list_head_like cr_plugin_ctl[1 + HOOKS];
#endif

static int failed;

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "HOOKS=%d: %s:%d: %s\n", HOOKS,	\
				__FILE__, __LINE__, #cond);		\
			failed++;					\
		}							\
	} while (0)

int main(int argc, char **argv)
{
	unsigned int want = HOOKS ? HOOKS : CRIU_HOOK_COUNT_OLDEST;
	struct plugin_desc *d;
	bool canary;
	void *h;

	if (argc != 2) {
		fprintf(stderr, "usage: %s kfd_plugin.so\n", argv[0]);
		return 2;
	}
	h = dlopen(argv[1], RTLD_LAZY);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	d = dlsym(h, "CR_PLUGIN_DESC");
	CHECK(d);
	if (!d)
		return 1;
	CHECK(d->version == CRIU_PLUGIN_VERSION(0, 2, 0));
	CHECK(d->max_hooks == want);
	CHECK(d->hooks[CRIU_HOOK_DUMP_EXT_FILE]);
	CHECK(d->hooks[CRIU_HOOK_RESTORE_EXT_FILE]);
	CHECK(d->hooks[CRIU_HOOK_UPDATE_VMA_MAP]);
	CHECK(d->hooks[CRIU_HOOK_RESUME_DEVICES_LATE]);
	CHECK(d->hooks[CRIU_HOOK_DUMP_DEVICES_LATE]);
	/*
	 * Before RESTORE_INIT, whatever the hook count: the (int id) hook,
	 * which writes through no second argument. No /dev/kfd image with
	 * id 1 here: "not mine".
	 */
	canary = true;
	((criu_restore_ext_file_retry_fn)d->hooks[CRIU_HOOK_RESTORE_EXT_FILE])(
		1, &canary);
	CHECK(canary);
	/*
	 * A criu with RESTORE_INIT calls it (in its master, before forking):
	 * from then on RESTORE_EXT_FILE takes (id, &retry_needed) and sets
	 * it. A criu without it never calls it.
	 */
	if (d->max_hooks > CRIU_HOOK_RESTORE_INIT) {
		CHECK(d->hooks[CRIU_HOOK_RESTORE_INIT]);
		if (!d->hooks[CRIU_HOOK_RESTORE_INIT])
			return 1;
		CHECK(((criu_restore_init_fn)d->hooks[CRIU_HOOK_RESTORE_INIT])() ==
		      -ENOTSUP);
		((criu_restore_ext_file_retry_fn)
			d->hooks[CRIU_HOOK_RESTORE_EXT_FILE])(1, &canary);
		CHECK(!canary);
	}
	printf("kfd plugin descriptor in a criu with %u hooks: max_hooks %u, %s\n",
	       want, d->max_hooks, failed ? "FAILED" : "ok");
	dlclose(h);
	return failed ? 1 : 0;
}
