// SPDX-License-Identifier: GPL-2.0
/*
 * The GPU page table of one process on one GPU.
 *
 * A sparse radix tree (xarray) indexed by GPU page frame number. Each entry
 * is a value entry packing the backing page frame and the KFDSIM_PTE_* bits,
 * the simulator's equivalent of a gfx9 PTE. The command processor resolves
 * every GPU virtual address through kfdsim_pt_translate(); an address with no
 * valid entry, or a write to a read-only entry, is a GPU page fault.
 *
 * The table (struct kfdsim_page_table) belongs to a render-node file, as
 * amdgpu's VM belongs to its drm file. A KFD process that binds the file
 * (ACQUIRE_VM, or a CRIU restore) shares it: its pdd's struct kfdsim_vm
 * points at the file's table, so KFD BOs and the file's GEM_VA mappings live
 * in one page table, as after amdgpu_vm_make_compute(). The process holds a
 * reference on the file while bound, so the table outlives the sharing.
 */
#include <linux/highmem.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "kfdsim.h"

#define KFDSIM_PTE_PFN_SHIFT	3

/* Source of kfdsim_page_table.unmap_gen values, unique across tables. */
static atomic64_t kfdsim_vm_gen_seq = ATOMIC64_INIT(0);

static void *kfdsim_pte_make(struct page *page, u32 flags)
{
	return xa_mk_value((page_to_pfn(page) << KFDSIM_PTE_PFN_SHIFT) |
			   (flags & KFDSIM_PTE_FLAGS) | KFDSIM_PTE_VALID);
}

/*
 * Entries one page table may hold: every page of the RAM mapped twice. The
 * simulated VRAM is RAM too, so this never bites a sane user, while
 * mapping one BO at ever new addresses cannot grow the table (kernel
 * memory) without bound.
 */
static unsigned long kfdsim_vm_max_ptes(void)
{
	return 2 * totalram_pages();
}

/**
 * kfdsim_vm_create - give @vm a page table of its own
 * @vm: the VM handle of a render-node file
 *
 * Return: 0 or -ENOMEM.
 */
int kfdsim_vm_create(struct kfdsim_vm *vm)
{
	struct kfdsim_page_table *pt;

	pt = kzalloc(sizeof(*pt), GFP_KERNEL_ACCOUNT);
	if (!pt)
		return -ENOMEM;
	xa_init(&pt->ptes);
	init_rwsem(&pt->lock);
	mutex_init(&pt->exec_lock);
	init_waitqueue_head(&pt->evict_wq);
	pt->memcg = get_mem_cgroup_from_mm(current->mm);
	pt->unmap_gen = atomic64_inc_return(&kfdsim_vm_gen_seq);
	vm->pt = pt;
	return 0;
}

/* The owner unmaps everything first; anything left is a driver bug. */
void kfdsim_vm_destroy(struct kfdsim_vm *vm)
{
	struct kfdsim_page_table *pt = vm->pt;

	if (!pt)
		return;
	WARN_ON(!xa_empty(&pt->ptes));
	xa_destroy(&pt->ptes);
	mutex_destroy(&pt->exec_lock);
	mem_cgroup_put(pt->memcg);
	kfree(pt);
	vm->pt = NULL;
}

/**
 * kfdsim_vm_share - make @vm use the page table of @owner
 * @vm: a VM handle without a table of its own (a pdd's)
 * @owner: the handle that owns the table; it must outlive the sharing
 */
void kfdsim_vm_share(struct kfdsim_vm *vm, struct kfdsim_vm *owner)
{
	WRITE_ONCE(vm->pt, owner->pt);
}

/*
 * Stop sharing; the user removed its own mappings first. A process that
 * goes away evicted no longer holds the render node's work.
 */
void kfdsim_vm_unshare(struct kfdsim_vm *vm)
{
	kfdsim_vm_unevict(vm);
	WRITE_ONCE(vm->pt, NULL);
}

/**
 * kfdsim_vm_evict - the KFD process sharing @vm's table is being evicted
 * @vm: a pdd's VM handle; nothing happens if it shares no table
 *
 * Render-node work submitted through the table before now stops at its next
 * stop point (a packet or a dispatch slice boundary); on return none of it
 * is executing. Work submitted while the process stays evicted runs: the
 * CRIU plugin restores BO contents through the restored process's own
 * render node before RESUME.
 */
void kfdsim_vm_evict(struct kfdsim_vm *vm)
{
	struct kfdsim_page_table *pt = READ_ONCE(vm->pt);

	if (!pt)
		return;
	mutex_lock(&pt->exec_lock);
	WRITE_ONCE(pt->evict_epoch, pt->evict_epoch + 1);
	WRITE_ONCE(pt->evicted, true);
	mutex_unlock(&pt->exec_lock);
}

/* The process is running again: let the held work go on. */
void kfdsim_vm_unevict(struct kfdsim_vm *vm)
{
	struct kfdsim_page_table *pt = READ_ONCE(vm->pt);

	if (!pt || !READ_ONCE(pt->evicted))
		return;
	mutex_lock(&pt->exec_lock);
	WRITE_ONCE(pt->evicted, false);
	mutex_unlock(&pt->exec_lock);
	wake_up_all(&pt->evict_wq);
}

/* The eviction epoch work submitted now belongs to. */
u64 kfdsim_vm_epoch(struct kfdsim_vm *vm)
{
	return READ_ONCE(vm->pt->evict_epoch);
}

/* Must render-node work submitted in @epoch wait for the process? */
bool kfdsim_vm_held(struct kfdsim_vm *vm, u64 epoch)
{
	struct kfdsim_page_table *pt = vm->pt;

	return READ_ONCE(pt->evicted) && READ_ONCE(pt->evict_epoch) != epoch;
}

/**
 * kfdsim_vm_clean - has the owner of @vm's table never mapped anything?
 * @vm: a VM handle with a table
 *
 * amdgpu_vm_make_compute() refuses a VM whose page tables were already
 * populated by its drm file; a table its owner (the render node file) has
 * mapped something into is the simulator's equivalent. Mappings a KFD
 * process made while it shared the table do not count, so a failed CRIU
 * restore can be retried on the same files.
 */
bool kfdsim_vm_clean(struct kfdsim_vm *vm)
{
	struct kfdsim_page_table *pt = READ_ONCE(vm->pt);

	return pt && !READ_ONCE(pt->used);
}

/* The owner of @vm's table has mapped into it (see kfdsim_vm_clean()). */
void kfdsim_vm_mark_used(struct kfdsim_vm *vm)
{
	WRITE_ONCE(vm->pt->used, true);
}

/**
 * kfdsim_vm_memcg - the memory cgroup to charge for work on @vm
 * @vm: a VM handle, with a table while its user can submit work
 *
 * What the command processor allocates for a queue of the table's users
 * (dispatch state, wave registers) is charged here, as if that user had
 * allocated it: see set_active_memcg().
 * Return: the cgroup, or NULL (charge the current task's).
 */
struct mem_cgroup *kfdsim_vm_memcg(struct kfdsim_vm *vm)
{
	struct kfdsim_page_table *pt = READ_ONCE(vm->pt);

	return pt ? pt->memcg : NULL;
}

/*
 * Map and unmap change at most this many entries per hold of the table's
 * write lock, then let go of it and of the CPU, so that the command
 * processor (which waits for the lock holding its own) and the table's
 * other users are not held up for the whole of a multi-GiB BO.
 */
#define KFDSIM_VM_BATCH		512

atomic64_t kfdsim_vm_lock_drops;
atomic64_t kfdsim_vm_maps_interrupted;

/* Between two batches: account the break and give way. */
static void kfdsim_vm_batch_break(void)
{
	atomic64_inc(&kfdsim_vm_lock_drops);
	cond_resched();
}

/*
 * Remove @npages entries from @first on, a batch per hold of the write
 * lock. Each entry goes from its page to nothing, never to another page;
 * a reader of the table holds the read lock while it uses a page, so once
 * the batch holding an entry has taken the write lock, nobody uses that
 * entry's page any more, and on return the pages may be freed.
 */
static void kfdsim_vm_erase(struct kfdsim_page_table *pt, unsigned long first,
			    unsigned long npages)
{
	unsigned long done, n, i, removed = 0;

	for (done = 0; done < npages; done += n) {
		if (done)
			kfdsim_vm_batch_break();
		n = min_t(unsigned long, npages - done, KFDSIM_VM_BATCH);
		down_write(&pt->lock);
		/* Before the first entry goes: see kfdsim_vm_unmap_gen(). */
		WRITE_ONCE(pt->unmap_gen, atomic64_inc_return(&kfdsim_vm_gen_seq));
		for (i = 0; i < n; i++)
			if (xa_erase(&pt->ptes, first + done + i))
				removed++;
		pt->nr_ptes -= removed;
		up_write(&pt->lock);
		atomic_sub(removed, &kfdsim_counters.vm_ptes);
		WARN_ON(removed != n);
		removed = 0;
	}
}

/**
 * kfdsim_vm_map - map @npages pages at GPU virtual address @va
 * @vm: the page table
 * @va: page-aligned GPU virtual address
 * @pages: backing pages, one per GPU page
 * @npages: number of pages
 * @pte_flags: KFDSIM_PTE_WRITABLE and/or KFDSIM_PTE_EXECUTABLE
 *
 * Entries are written a batch of KFDSIM_VM_BATCH per hold of the table's
 * write lock, so other users of the table (the GPU) see each page of the
 * range either unmapped or mapped to its new page while the call runs, as
 * on a GPU whose page tables are updated piece by piece. A fatal signal
 * ends a long map between two batches. All or nothing: on failure the
 * entries this call wrote, and only those, are removed again.
 * Return: 0, -EEXIST if part of the range is already mapped (by anyone
 * sharing the table), -ENODEV if @vm has no table, -EINTR on a fatal
 * signal, or -ENOMEM.
 */
int kfdsim_vm_map(struct kfdsim_vm *vm, u64 va, struct page **pages,
		  unsigned long npages, u32 pte_flags)
{
	struct kfdsim_page_table *pt = READ_ONCE(vm->pt);
	unsigned long first = va >> PAGE_SHIFT;
	unsigned long done = 0, n, end;
	int ret = 0;

	if (WARN_ON(!pt))
		return -ENODEV;
	while (done < npages) {
		if (done) {
			kfdsim_vm_batch_break();
			if (fatal_signal_pending(current)) {
				atomic64_inc(&kfdsim_vm_maps_interrupted);
				pr_info_ratelimited("pid %d: GPU map of %lu pages at 0x%llx ended by a fatal signal after %lu\n",
						    task_tgid_nr(current),
						    npages, va, done);
				ret = -EINTR;
				break;
			}
		}
		n = min_t(unsigned long, npages - done, KFDSIM_VM_BATCH);
		down_write(&pt->lock);
		if (npages - done > kfdsim_vm_max_ptes() - pt->nr_ptes) {
			up_write(&pt->lock);
			pr_info_ratelimited("pid %d: GPU page table full: %lu entries, %lu more asked\n",
					    task_tgid_nr(current), pt->nr_ptes,
					    npages - done);
			ret = -ENOMEM;
			break;
		}
		for (end = done + n; done < end; done++) {
			ret = xa_insert(&pt->ptes, first + done,
					kfdsim_pte_make(pages[done], pte_flags),
					GFP_KERNEL_ACCOUNT);
			if (ret)
				break;
			pt->nr_ptes++;
			atomic_inc(&kfdsim_counters.vm_ptes);
		}
		up_write(&pt->lock);
		if (ret)
			break;
	}
	if (ret) {
		/* Entries first .. first + done - 1 are this call's own. */
		kfdsim_vm_erase(pt, first, done);
		ret = ret == -EBUSY ? -EEXIST : ret;
	}
	return ret;
}

/**
 * kfdsim_vm_unmap - remove the entries for @npages pages at @va
 * @vm: the page table
 * @va: page-aligned GPU virtual address
 * @npages: number of pages; all of them must be mapped
 *
 * A batch per hold of the write lock, like kfdsim_vm_map(); not
 * interruptible. On return no GPU access uses the pages any more, so they
 * may be freed.
 */
void kfdsim_vm_unmap(struct kfdsim_vm *vm, u64 va, unsigned long npages)
{
	struct kfdsim_page_table *pt = READ_ONCE(vm->pt);

	if (WARN_ON(!pt))
		return;
	kfdsim_vm_erase(pt, va >> PAGE_SHIFT, npages);
}

/**
 * kfdsim_pt_translate - resolve a GPU virtual address
 * @pt: the page table, or NULL (nothing mapped)
 * @va: any GPU virtual address
 * @write: the access is a write
 *
 * The caller holds the table's lock for reading for as long as it uses the
 * page. Return: the backing page, or NULL on a GPU page fault (not present,
 * or a write to a read-only page).
 */
static struct page *kfdsim_pt_translate(struct kfdsim_page_table *pt, u64 va,
					bool write)
{
	unsigned long pte;
	void *entry;

	if (!pt)
		return NULL;
	entry = xa_load(&pt->ptes, va >> PAGE_SHIFT);
	if (!xa_is_value(entry))
		return NULL;
	pte = xa_to_value(entry);
	if (!(pte & KFDSIM_PTE_VALID))
		return NULL;
	if (write && !(pte & KFDSIM_PTE_WRITABLE))
		return NULL;
	return pfn_to_page(pte >> KFDSIM_PTE_PFN_SHIFT);
}

/**
 * kfdsim_vm_is_mapped - check that a whole range is accessible
 * @vm: the page table
 * @va: start of the range
 * @len: bytes, non-zero
 * @write: every page must also be writable
 */
bool kfdsim_vm_is_mapped(struct kfdsim_vm *vm, u64 va, u64 len, bool write)
{
	struct kfdsim_page_table *pt = READ_ONCE(vm->pt);
	u64 end = va + len;
	bool ok = end > va && pt;

	if (!ok)
		return false;
	down_read(&pt->lock);
	for (va &= PAGE_MASK; ok && va < end; va += PAGE_SIZE)
		ok = kfdsim_pt_translate(pt, va, write);
	up_read(&pt->lock);
	return ok;
}

static void kfdsim_fault_set(struct kfdsim_page_table *pt,
			     struct kfdsim_fault *fault, u64 va, bool write)
{
	fault->va = va;
	fault->write = write;
	fault->read_only = write && kfdsim_pt_translate(pt, va, false);
}

int kfdsim_vm_access(struct kfdsim_vm *vm, u64 va, u64 len, bool write,
		     kfdsim_vm_access_fn fn, void *ctx,
		     struct kfdsim_fault *fault)
{
	struct kfdsim_page_table *pt = READ_ONCE(vm->pt);
	struct page *page;
	size_t off, chunk;
	void *ptr;
	int ret = 0;

	/* A VM without a table (a pdd before ACQUIRE_VM) maps nothing. */
	if (!pt) {
		if (len) {
			fault->va = va;
			fault->write = write;
			fault->read_only = false;
			return -EFAULT;
		}
		return 0;
	}
	down_read(&pt->lock);
	while (len) {
		page = kfdsim_pt_translate(pt, va, write);
		if (!page) {
			kfdsim_fault_set(pt, fault, va, write);
			ret = -EFAULT;
			break;
		}
		off = offset_in_page(va);
		chunk = min_t(u64, len, PAGE_SIZE - off);
		ptr = kmap_local_page(page);
		ret = fn(ctx, ptr + off, chunk, va);
		kunmap_local(ptr);
		if (ret)
			break;
		va += chunk;
		len -= chunk;
	}
	up_read(&pt->lock);
	return ret;
}

struct kfdsim_copy_ctx {
	u8 *buf;
	bool to_gpu;
};

static int kfdsim_copy_piece(void *ctx, void *ptr, size_t len, u64 va)
{
	struct kfdsim_copy_ctx *c = ctx;

	if (c->to_gpu)
		memcpy(ptr, c->buf, len);
	else
		memcpy(c->buf, ptr, len);
	c->buf += len;
	return 0;
}

int kfdsim_vm_read(struct kfdsim_vm *vm, u64 va, void *buf, size_t len,
		   struct kfdsim_fault *fault)
{
	struct kfdsim_copy_ctx c = { .buf = buf, .to_gpu = false };

	return kfdsim_vm_access(vm, va, len, false, kfdsim_copy_piece, &c,
				fault);
}

int kfdsim_vm_write(struct kfdsim_vm *vm, u64 va, const void *buf,
		    size_t len, struct kfdsim_fault *fault)
{
	struct kfdsim_copy_ctx c = { .buf = (u8 *)buf, .to_gpu = true };

	return kfdsim_vm_access(vm, va, len, true, kfdsim_copy_piece, &c,
				fault);
}

int kfdsim_vm_copy_in_page(struct kfdsim_vm *vm, u64 src, u64 dst,
			   size_t len)
{
	struct kfdsim_page_table *pt = READ_ONCE(vm->pt);
	struct page *from, *to;
	void *s, *d;
	int ret = -EFAULT;

	if (!pt || !len || offset_in_page(src) + len > PAGE_SIZE ||
	    offset_in_page(dst) + len > PAGE_SIZE)
		return -EFAULT;
	down_read(&pt->lock);
	from = kfdsim_pt_translate(pt, src, false);
	to = kfdsim_pt_translate(pt, dst, true);
	if (from && to) {
		s = kmap_local_page(from);
		d = kmap_local_page(to);
		memmove(d + offset_in_page(dst), s + offset_in_page(src), len);
		kunmap_local(d);
		kunmap_local(s);
		ret = 0;
	}
	up_read(&pt->lock);
	return ret;
}

struct kfdsim_atomic_ctx {
	s64 delta;
	s64 old;
};

static int kfdsim_atomic_piece(void *ctx, void *ptr, size_t len, u64 va)
{
	struct kfdsim_atomic_ctx *c = ctx;

	c->old = atomic64_fetch_add(c->delta, (atomic64_t *)ptr);
	return 0;
}

/**
 * kfdsim_vm_atomic_add64 - atomically add to a 64-bit value in GPU memory
 * @vm: the page table
 * @va: 8-byte aligned GPU virtual address
 * @delta: value to add
 * @old: receives the previous value
 * @fault: filled on -EFAULT
 *
 * Atomic against CPU accesses to the same memory, as HSA signals require.
 * Return: 0, -EINVAL for a misaligned address, or -EFAULT.
 */
int kfdsim_vm_atomic_add64(struct kfdsim_vm *vm, u64 va, s64 delta,
			   s64 *old, struct kfdsim_fault *fault)
{
	struct kfdsim_atomic_ctx c = { .delta = delta };
	int ret;

	if (!IS_ALIGNED(va, sizeof(u64)))
		return -EINVAL;
	ret = kfdsim_vm_access(vm, va, sizeof(u64), true, kfdsim_atomic_piece,
			       &c, fault);
	if (!ret)
		*old = c.old;
	return ret;
}
