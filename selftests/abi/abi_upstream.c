// SPDX-License-Identifier: GPL-2.0
/*
 * Facts about upstream's kfd_ioctl.h: the one installed by linux-libc-dev,
 * or the file the Makefile names in ABI_UPSTREAM_HEADER. The Makefile also
 * puts a directory resolving <drm/drm.h> on the include path, since
 * upstream's header needs it and Debian does not ship it there.
 */
#ifdef ABI_UPSTREAM_HEADER
#include ABI_UPSTREAM_HEADER
#else
#include <linux/kfd_ioctl.h>
#endif

#ifdef KFD_MMAP_TYPE_SHIFT
#error "the project's kfd_ioctl.h shadows upstream's here"
#endif
#if KFD_IOCTL_MAJOR_VERSION != 1 || KFD_IOCTL_MINOR_VERSION < 11
#error "upstream kfd_ioctl.h older than KFD 1.11"
#endif

#define ABI_TABLE	abi_upstream_facts
#define ABI_TABLE_COUNT	abi_upstream_count
#include "abi_table.h"
