// SPDX-License-Identifier: GPL-2.0
/*
 * The GPU page table of one process on one GPU.
 *
 * A sparse radix tree (xarray) indexed by GPU page frame number. Each entry
 * is a value entry packing the backing page frame and the KFDSIM_PTE_* bits,
 * the simulator's equivalent of a gfx9 PTE. The command processor resolves
 * every GPU virtual address through kfdsim_vm_translate(); an address with no
 * valid entry, or a write to a read-only entry, is a GPU page fault.
 */
#include <linux/mm.h>
#include <linux/xarray.h>

#include "kfdsim.h"

#define KFDSIM_PTE_PFN_SHIFT	3

static void *kfdsim_pte_make(struct page *page, u32 flags)
{
	return xa_mk_value((page_to_pfn(page) << KFDSIM_PTE_PFN_SHIFT) |
			   (flags & KFDSIM_PTE_FLAGS) | KFDSIM_PTE_VALID);
}

void kfdsim_vm_init(struct kfdsim_vm *vm)
{
	xa_init(&vm->ptes);
}

/* The owner unmaps every BO first; anything left is a driver bug. */
void kfdsim_vm_fini(struct kfdsim_vm *vm)
{
	WARN_ON(!xa_empty(&vm->ptes));
	xa_destroy(&vm->ptes);
}

/**
 * kfdsim_vm_map - map @npages pages at GPU virtual address @va
 * @vm: the page table
 * @va: page-aligned GPU virtual address
 * @pages: backing pages, one per GPU page
 * @npages: number of pages
 * @pte_flags: KFDSIM_PTE_WRITABLE and/or KFDSIM_PTE_EXECUTABLE
 *
 * All or nothing: on failure no entry of the range is left behind.
 * Return: 0, -EEXIST if part of the range is already mapped, or -ENOMEM.
 */
int kfdsim_vm_map(struct kfdsim_vm *vm, u64 va, struct page **pages,
		  unsigned long npages, u32 pte_flags)
{
	unsigned long first = va >> PAGE_SHIFT;
	unsigned long i;
	int ret;

	for (i = 0; i < npages; i++) {
		ret = xa_insert(&vm->ptes, first + i,
				kfdsim_pte_make(pages[i], pte_flags),
				GFP_KERNEL);
		if (ret) {
			kfdsim_vm_unmap(vm, va, i);
			return ret == -EBUSY ? -EEXIST : ret;
		}
	}
	atomic_add(npages, &kfdsim_counters.vm_ptes);
	return 0;
}

/**
 * kfdsim_vm_unmap - remove the entries for @npages pages at @va
 * @vm: the page table
 * @va: page-aligned GPU virtual address
 * @npages: number of pages; all of them must be mapped
 */
void kfdsim_vm_unmap(struct kfdsim_vm *vm, u64 va, unsigned long npages)
{
	unsigned long first = va >> PAGE_SHIFT;
	unsigned long i, removed = 0;

	for (i = 0; i < npages; i++)
		if (xa_erase(&vm->ptes, first + i))
			removed++;
	WARN_ON(removed != npages);
	atomic_sub(removed, &kfdsim_counters.vm_ptes);
}

/**
 * kfdsim_vm_translate - resolve a GPU virtual address
 * @vm: the page table
 * @va: any GPU virtual address
 * @write: the access is a write
 *
 * Return: the backing page, or NULL on a GPU page fault (not present, or a
 * write to a read-only page).
 */
struct page *kfdsim_vm_translate(struct kfdsim_vm *vm, u64 va, bool write)
{
	unsigned long pte;
	void *entry;

	entry = xa_load(&vm->ptes, va >> PAGE_SHIFT);
	if (!xa_is_value(entry))
		return NULL;
	pte = xa_to_value(entry);
	if (!(pte & KFDSIM_PTE_VALID))
		return NULL;
	if (write && !(pte & KFDSIM_PTE_WRITABLE))
		return NULL;
	return pfn_to_page(pte >> KFDSIM_PTE_PFN_SHIFT);
}
