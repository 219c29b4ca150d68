/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module's locks and their order: documentation only, nothing to
 * include. Every header that declares a lock points here.
 *
 * Locks, outermost first. A lock nests only inside the ones named as its
 * outer locks here; lockdep in the debug kernel (make check-debug) checks
 * this. No spinlock is held while a codec runs, but a swap device's slot
 * locks when a read decompresses one object straight from zsmalloc
 * (swapdev.c, read_mapped(): at most a 16 KiB unit, as zram does a page).
 * Functions documented as running under a lock assert it
 * (lockdep_assert_held(); slot bit locks: slot_assert_locked()).
 *   selftest_lock (mutex, selftest.c): one self-test run. Inside: the whole
 *     batch path, zbatch_cfg_lock (settings), acx.lock is never taken.
 *   acx.lock (mutex, exec_acomp.c): the device executor's attach/detach
 *     and its driver name. Inside: its probe runs batches (ctx_pool_lock, a job's waitq.lock,
 *     an instance's free_lock), detach takes acx.grave_lock.
 *   zb_lock (mutex, swapdev.c): the swap device table; inside it (a
 *     device's removal) or alone (recomp_budget), zb_recomp.lock.
 *   zb_recomp.lock (mutex, swapdev_recomp.c): a swap device's
 *     recompression thread and budget; stops the thread (kthread_stop())
 *     holding it, so outside the device's init_lock (the thread tries
 *     init_lock (read), then zb_recomp.run). Then, as under zb_lock, a device's
 *     init_lock (rw_semaphore): configuration and teardown, inside which
 *     the CPU hotplug lock (the device's streams come and go with CPUs).
 *     Inside them: allocations, zbatch_ctx_prepare() and a stream's lock.
 *   zb_backing.lock (mutex, swapdev_wb.c): one writeback of a swap
 *     device, inside its init_lock (read); inside: synchronize_srcu() on
 *     the device's bd.srcu (holding no stream), then a stream's lock.
 *   zb_recomp.run (mutex, swapdev_recomp.c): one recompression batch of
 *     a swap device, inside its init_lock (read); inside: the batch path
 *     (on the run's own I/O context: no stream), slot locks.
 *   zb_stream.lock (mutex, swapdev.c): one CPU's I/O stream of a swap
 *     device, held for a bio's I/O (the whole batch path runs inside) or
 *     by the hotplug callbacks that fill and empty it. A read of a
 *     written-back page claims its block under the slot's bit lock
 *     (srcu_down_read() on bd.srcu, never waited for under a stream);
 *     a read through the bounce page waits, holding the stream, for the
 *     zbatch_bd worker (flush_work()), which takes none of zbatch's locks.
 *   zbatch_cfg_lock (mutex): writers of the tunables, of the WQ fault
 *     settings (zbatch_fault) and of WQ 'enabled' put back in service
 *     (the core takes a WQ out of service without it, WRITE_ONCE(); the
 *     single-word debugfs faults, fault_nomem and the like, are written
 *     with WRITE_ONCE() alone). Innermost of the mutexes: nothing nests
 *     inside it.
 *   engines_lock (mutex, exec_sw.c): engine placement; taken inside the
 *     CPU hotplug lock (the hotplug callbacks) and alone (module init).
 *     Inside: the scheduler's own locks (set_cpus_allowed_ptr()), engine
 *     creation and zbatch_ctx_prepare().
 *   ctx_pool_lock (mutex, codec.c): innermost; nothing nests inside it.
 *   zbatch_sw_wq.lock (spinlock, irqsave): one software WQ's queue of
 *     posted slices and its descriptor count; one round trip per slice. Inside: only
 *     a job's waitq.lock, when an engine gives a slice back
 *     (sw_repost(): the wake-up must come while the slice holds the job).
 *   zbatch_job.waitq.lock: the release of a job's pending count
 *     (zbatch_job_release()); innermost (wake_up_locked() takes only the
 *     scheduler's own locks).
 *   acx_inst.free_lock, acx.grave_lock, zb_backing.limit_lock
 *     (spinlocks): innermost.
 *   An engine's slice (exec_sw.c, run_slice()): preemption off from
 *     taking the slice to letting it go; inside: codecs on the engine's
 *     prepared context (no allocation), zbatch_sw_wq.lock, the job's waitq.
 *   swap slots' bit locks: several at once only in index order (a unit's
 *     writer, a region's reader: swapdev_store.c); inside: zsmalloc's
 *     own locks (zs_map_object(), zs_free()) and, for a read straight
 *     from zsmalloc, the codec and the statistics' per-CPU counters.
 */
#ifndef _ZBATCH_LOCKS_H
#define _ZBATCH_LOCKS_H
#endif /* _ZBATCH_LOCKS_H */
