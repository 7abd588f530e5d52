/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which CRIU loaded the plugin, and what that means for the plugin ABI.
 *
 * The plugin ABI has no version call. The criu binary exports all its
 * global symbols (plugins link against print_on_level and friends), so the
 * plugin reads what it needs from them when it is loaded (criu_compat.c).
 */
#ifndef KFD_PLUGIN_CRIU_COMPAT_H
#define KFD_PLUGIN_CRIU_COMPAT_H

#include <stdbool.h>
#include <stddef.h>

struct kp_criu {
	/* CRIU's number of hooks (CR_PLUGIN_HOOK__MAX); 10 if unknown. */
	unsigned int hooks;
	/* How hooks was learnt, for the log. */
	const char *how;
	/* criu >= 3.19 closes the fd UPDATE_VMA_MAP returns. */
	bool vma_fd_owned;
	/*
	 * RESTORE_EXT_FILE has the bool *retry_needed argument (criu-dev):
	 * set when criu calls RESTORE_INIT (criu_compat.c).
	 */
	bool restore_retry_arg;
	/* criu >= 4.1: the inventory's list of plugins a dump needs. */
	int (*add_inventory_plugin)(const char *name);
	bool (*check_and_remove_inventory_plugin)(const char *name, size_t n);
};

extern struct kp_criu kp_criu;

/* Fill kp_criu from the process the plugin was loaded into. */
void kp_criu_detect(void);

#endif /* KFD_PLUGIN_CRIU_COMPAT_H */
