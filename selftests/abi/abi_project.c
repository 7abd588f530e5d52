// SPDX-License-Identifier: GPL-2.0
/*
 * Facts about the project's include/uapi/linux/kfd_ioctl.h, which the
 * Makefile puts ahead of the system headers.
 */
#include <linux/kfd_ioctl.h>

#ifndef KFD_MMAP_TYPE_SHIFT
#error "this is not the project's kfd_ioctl.h"
#endif

#define ABI_TABLE	abi_project_facts
#define ABI_TABLE_COUNT	abi_project_count
#include "abi_table.h"
