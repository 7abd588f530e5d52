// SPDX-License-Identifier: GPL-2.0
/*
 * Telling the CRIU versions apart from inside the plugin.
 *
 * What differs between the CRIU versions users run, for this plugin:
 *
 *   version     hooks  UPDATE_VMA_MAP fd   RESTORE_EXT_FILE  inventory list
 *   3.17-3.18   10     CRIU dup()s it      (int id)          -
 *   3.19        10     CRIU owns, closes   (int id)          -
 *   4.0         12     CRIU owns, closes   (int id)          -
 *   4.1         12     CRIU owns, closes   (int id)          yes
 *   4.2         13     CRIU owns, closes   (int id)          yes
 *   criu-dev    15     CRIU owns, closes   (id, &retry)      yes
 *
 * CRIU refuses a plugin whose descriptor declares more hooks than it has,
 * and has no call that says which version it is. But the criu binary is
 * linked with its symbols exported (plugins call print_on_level()), so:
 *
 *  - the number of hooks is read from the size of CRIU's exported
 *    cr_plugin_ctl, its table of hook chains: one list head for all
 *    plugins, then one per hook (its ELF symbol size, through dladdr1());
 *  - "CRIU owns the UPDATE_VMA_MAP fd" (3.19) is more than 10 hooks, or
 *    the presence of rpc_query_external_files(), which 3.19 added;
 *  - the inventory's plugin list (4.1) is add_inventory_plugin() and
 *    check_and_remove_inventory_plugin(), called through dlsym() pointers;
 *  - the retry argument of RESTORE_EXT_FILE: criu exports no symbol that
 *    tells (its commit, "files-ext: Allow plugin files to retry", only
 *    changed a static function and the header). It came into criu-dev
 *    after 4.2 in the same series as the RESTORE_INIT hook (13), which
 *    criu calls in its master at restore right after the plugins' init,
 *    before it forks any task; no criu has one without the other. So
 *    the plugin registers RESTORE_INIT, and only when criu calls it does
 *    it switch its RESTORE_EXT_FILE to the (id, &retry_needed) variant
 *    (plugin.c), which the restored tasks, forked later, inherit. A criu
 *    that never calls hook 13 (however many hooks its cr_plugin_ctl
 *    seems to have) gets the (int id) hook, which writes through nothing.
 *
 * When cr_plugin_ctl cannot be found (not inside criu: kfd-inspect, the
 * unit tests), everything stays at what criu 3.17 offers.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include "criu_compat.h"
#include "criu_plugin.h"

struct kp_criu kp_criu = {
	.hooks = CRIU_HOOK_COUNT_OLDEST,
	.how = "not found, assuming criu 3.17",
};

/* struct list_head: two pointers. */
#define KP_LIST_HEAD_SIZE	(2 * sizeof(void *))

static unsigned int kp_criu_hook_count(void)
{
	const ElfW(Sym) *sym = NULL;
	Dl_info info;
	void *ctl;
	size_t n;

	ctl = dlsym(RTLD_DEFAULT, "cr_plugin_ctl");
	if (!ctl || !dladdr1(ctl, &info, (void **)&sym, RTLD_DL_SYMENT) ||
	    !sym || sym->st_size % KP_LIST_HEAD_SIZE)
		return 0;
	n = sym->st_size / KP_LIST_HEAD_SIZE;
	/* Sanity: no CRIU has fewer than 10 hooks; 64 is far beyond any. */
	if (n < 1 + CRIU_HOOK_COUNT_OLDEST || n > 64)
		return 0;
	return (unsigned int)(n - 1);
}

void kp_criu_detect(void)
{
	unsigned int hooks = kp_criu_hook_count();

	if (hooks) {
		kp_criu.hooks = hooks;
		kp_criu.how = "size of cr_plugin_ctl";
	}
	kp_criu.vma_fd_owned = kp_criu.hooks > CRIU_HOOK_COUNT_OLDEST ||
		dlsym(RTLD_DEFAULT, "rpc_query_external_files");
	kp_criu.restore_retry_arg = false;	/* until RESTORE_INIT */
	*(void **)&kp_criu.add_inventory_plugin =
		dlsym(RTLD_DEFAULT, "add_inventory_plugin");
	*(void **)&kp_criu.check_and_remove_inventory_plugin =
		dlsym(RTLD_DEFAULT, "check_and_remove_inventory_plugin");
}
