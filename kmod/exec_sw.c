// SPDX-License-Identifier: GPL-2.0
/*
 * The software executor: the engines of a modelled IAA device are kernel
 * threads, one per CPU of the device's node (engines=, at most 8 by
 * default), that run descriptors with the software codecs (codec.c) and
 * write their completion records, as IAA engines would.
 *
 * Per batch, not per request: the core posts one slice per helper engine
 * to a WQ and wakes one idle engine per slice, skipping the engine on the
 * submitter's CPU (it would only compete with the submitter for that CPU).
 * An engine takes a whole slice with one WQ lock round trip, claims its
 * descriptors with one atomic increment each, then steals what is left of
 * the job's other slices, and releases the job once. The same drain runs
 * the submitter's own share (zbatch_sw_drain()). An engine that finished
 * polls briefly for the next slice before it sleeps (engine_spin()).
 *
 * A stalled WQ (debugfs fault injection) models a hung device: its slices
 * are neither taken by engines nor stolen; the core's timeout takes them
 * back. A WQ's fault (debugfs devN/wqM/fault) makes its engines write
 * error or corrupt records, or the WQ refuse slices (wq.h).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/cpuhotplug.h>
#include <linux/kthread.h>
#include <linux/sched/isolation.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/stat.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <linux/zbatch.h>
#include <linux/zbatch_exec.h>
#include <uapi/linux/sched/types.h>

#include "clock.h"
#include "codec.h"
#include "cost.h"
#include "exec_sw.h"
#include "stats.h"
#include "wq.h"

static bool sw_stealable(struct zbatch_wq *wq)
{
	return !READ_ONCE(to_sw_wq(wq)->stalled);
}

static bool slice_stealable(struct zbatch_slice *s)
{
	/* the submitter may take a hung WQ's slice back meanwhile */
	struct zbatch_wq *wq = READ_ONCE(s->wq);

	return !wq || wq->ops->stealable(wq);
}

bool zbatch_fault_hit(struct zbatch_fault *f)
{
	unsigned int every = READ_ONCE(f->every);

	return every <= 1 || !((unsigned int)atomic_inc_return(&f->seq) % every);
}

/* An injected fault for @d on @wq's engine: true when it replaced the run. */
static bool run_fault(struct zbatch_sw_wq *wq, struct iax_hw_desc *d,
		      struct zbatch_ctx *ctx, struct zbatch_job *job)
{
	struct iax_completion_record *cr = zbatch_desc_cr(d);
	unsigned int kind = READ_ONCE(wq->fault.kind);

	if ((kind != ZBATCH_FAULT_STATUS && kind != ZBATCH_FAULT_CORRUPT) ||
	    !zbatch_fault_hit(&wq->fault))
		return false;
	if (kind == ZBATCH_FAULT_STATUS) {
		zbatch_cr_finish(cr, READ_ONCE(wq->fault.status),
				 READ_ONCE(wq->fault.error_code), 0, 0);
		return true;
	}
	/* a record that cannot be true: more output than room, or no status */
	zbatch_sw_run(ctx, d, job->codec, job->level, job->verify);
	if (atomic_read(&wq->fault.seq) & 1)
		zbatch_cr_finish(cr, IAX_COMP_SUCCESS, 0, d->max_dst_size + 1,
				 d->src1_size);
	else
		zbatch_cr_finish(cr, 0x7e, 0x7e, 0, 0);
	return true;
}

static void run_one(struct zbatch_ctx *ctx, struct zbatch_job *job,
		    struct zbatch_sw_wq *wq, struct iax_hw_desc *d)
{
	enum zbatch_op op = d->opcode == IAX_OPCODE_DECOMPRESS ?
			    ZBATCH_OP_DECOMPRESS : ZBATCH_OP_COMPRESS;
	bool sample = zbatch_stats_sample();
	u64 t0 = sample ? zbatch_clock() : 0;

	if (!ctx) {
		/* the submitter got no context: failed, batch_redo() decides */
		zbatch_cr_finish(zbatch_desc_cr(d), IAX_COMP_ANALYTICS_ERROR,
				 ZBATCH_CR_ERR_NOMEM, 0, 0);
		if (d == job->sample)
			job->sample_done_ns = zbatch_clock();
		return;
	}
	if (wq && run_fault(wq, d, ctx, job)) {
		if (d == job->sample)
			job->sample_done_ns = zbatch_clock();
		return;
	}
	zbatch_sw_run(ctx, d, job->codec, job->level, job->verify);
	if (sample) {
		u64 ns = zbatch_ns_since(t0);
		const struct iax_completion_record *cr = zbatch_desc_cr(d);

		zbatch_stats_hist(op == ZBATCH_OP_COMPRESS ? ZH_EXEC_COMP :
							     ZH_EXEC_DECOMP, ns);
		/* per uncompressed byte, successful runs only */
		if (cr->status == IAX_COMP_SUCCESS &&
		    zbatch_cost_counts(job->level, op))
			zbatch_cost_exec(job->codec, op, op == ZBATCH_OP_COMPRESS ?
					 d->src1_size : cr->output_size, ns);
	}
	if (d == job->sample)
		job->sample_done_ns = zbatch_clock();
}

static bool drain_yield(unsigned int flags)
{
	return (flags & ZBATCH_DRAIN_YIELD) && need_resched();
}

unsigned int zbatch_sw_drain(struct zbatch_ctx *ctx, struct zbatch_job *job,
			     struct zbatch_slice *own, struct zbatch_wq *wq,
			     unsigned int flags, unsigned int max,
			     unsigned int *stolen)
{
	/* an engine's WQ, whose injected faults apply; NULL: the submitter */
	struct zbatch_sw_wq *swq = wq ? to_sw_wq(wq) : NULL;
	bool steal = flags & ZBATCH_DRAIN_STEAL;
	struct iax_hw_desc *d;
	unsigned int i, n = 0;

	*stolen = 0;
	while (own && n < max && !drain_yield(flags) && (d = zbatch_slice_claim(own))) {
		run_one(ctx, job, swq, d);
		n++;
	}
	for (i = 0; i < job->nr_slices && n < max; i++) {
		struct zbatch_slice *s = &job->slice[i];

		/*
		 * without @steal, not from the engines' slices: only from
		 * slices no WQ holds (refused, taken back) or a device left
		 */
		if (s == own || !slice_stealable(s) ||
		    (!steal && READ_ONCE(s->wq) && READ_ONCE(s->wq)->ops->helpers))
			continue;
		while (n < max && !drain_yield(flags) && (d = zbatch_slice_claim(s))) {
			run_one(ctx, job, swq, d);
			n++;
			(*stolen)++;
		}
	}
	return n;
}

/*
 * Wake one idle engine of @dev for a slice posted from @cpu: one on
 * another CPU (one on @cpu would only take that CPU from the submitter).
 * Returns whether an engine is coming: woken, or awake on another CPU
 * (it finds the slice when it is done).
 */
static bool sw_wake_other(struct zbatch_dev *dev, int cpu)
{
	bool awake = false;
	unsigned int i;

	for (i = 0; i < dev->nr_engines; i++) {
		struct zbatch_engine *e = &dev->engines[i];

		if (READ_ONCE(e->cpu) == cpu)
			continue;
		if (!READ_ONCE(e->idle)) {
			awake = true;
			continue;
		}
		if (xchg(&e->idle, false)) {
			wake_up_process(e->task);
			return true;
		}
		awake = true;	/* another poster just woke it: it is coming */
	}
	return awake;
}

/*
 * None coming from another CPU (every engine may share the submitter's
 * CPU once CPUs went offline): an idle one on the submitter's CPU, since
 * a posted slice must always have an engine coming.
 */
static void sw_wake_here(struct zbatch_dev *dev)
{
	unsigned int i;

	for (i = 0; i < dev->nr_engines; i++) {
		struct zbatch_engine *e = &dev->engines[i];

		if (READ_ONCE(e->idle) && xchg(&e->idle, false)) {
			wake_up_process(e->task);
			return;
		}
	}
}

static int sw_post(struct zbatch_wq *w, struct zbatch_slice *s)
{
	struct zbatch_sw_wq *wq = to_sw_wq(w);
	struct zbatch_dev *dev = w->dev;
	unsigned long flags;

	if (READ_ONCE(wq->fault.kind) == ZBATCH_FAULT_FULL)
		return -EAGAIN;		/* fault injection: a full WQ */
	spin_lock_irqsave(&wq->lock, flags);
	if (wq->count + s->nr > w->size) {
		spin_unlock_irqrestore(&wq->lock, flags);
		return -EAGAIN;
	}
	list_add_tail(&s->node, &wq->slices);
	WRITE_ONCE(s->posted, true);
	WRITE_ONCE(wq->count, wq->count + s->nr);
	spin_unlock_irqrestore(&wq->lock, flags);

	/*
	 * Pairs with the barrier in engine_sleep(): either the engine sees
	 * the slice before sleeping, or we see it idle and wake it.
	 */
	smp_mb();
	if (!sw_wake_other(dev, s->job->cpu))
		sw_wake_here(dev);
	return 0;
}

static bool sw_unpost(struct zbatch_wq *w, struct zbatch_slice *s)
{
	struct zbatch_sw_wq *wq = to_sw_wq(w);
	unsigned long flags;
	bool ok = false;

	spin_lock_irqsave(&wq->lock, flags);
	if (s->posted) {
		list_del_init(&s->node);
		WRITE_ONCE(s->posted, false);
		WRITE_ONCE(wq->count, wq->count - s->nr);
		ok = true;
	}
	spin_unlock_irqrestore(&wq->lock, flags);
	return ok;
}

/*
 * An engine that yielded gives back what is left of slice @s: queued
 * again at the head (it is the oldest), without the size check (it was
 * counted in before). The submitter may then steal or take it back, or an
 * engine take it; this one comes back to it once it has a CPU again.
 */
static void sw_repost(struct zbatch_wq *w, struct zbatch_slice *s)
{
	struct zbatch_sw_wq *wq = to_sw_wq(w);
	/*
	 * Once the lock is dropped the slice may be taken back and the job
	 * end (its memory is the caller's): nothing of it is read after.
	 */
	int cpu = s->job->cpu;
	unsigned long flags;

	spin_lock_irqsave(&wq->lock, flags);
	s->given_back = true;
	list_add(&s->node, &wq->slices);
	WRITE_ONCE(s->posted, true);
	WRITE_ONCE(wq->count, wq->count + s->nr);
	/* the waiter may sleep: wake it, under the lock, to steal the rest */
	WRITE_ONCE(s->job->kicked, true);
	wake_up(&s->job->waitq);
	spin_unlock_irqrestore(&wq->lock, flags);
	/* pairs with engine_sleep(), as in sw_post() */
	smp_mb();
	if (!sw_wake_other(w->dev, cpu))
		sw_wake_here(w->dev);
}

const struct zbatch_exec_ops zbatch_exec_sw = {
	.name = "software",
	.post = sw_post,
	.unpost = sw_unpost,
	.stealable = sw_stealable,
	.device_error = zbatch_wq_device_error,
	.helpers = true,
};

/* Whether another engine of @e's device runs on another CPU than @e. */
static bool engines_elsewhere(struct zbatch_engine *e)
{
	int cpu = READ_ONCE(e->cpu);
	unsigned int i;

	for (i = 0; i < e->dev->nr_engines; i++)
		if (READ_ONCE(e->dev->engines[i].cpu) != cpu)
			return true;
	return false;
}

/*
 * The oldest slice of the device's highest-priority WQ that @e may run
 * (not stalled, not from a submitter on @e's CPU unless no engine is
 * elsewhere); taken off the queue when @take.
 */
static struct zbatch_slice *find_slice(struct zbatch_engine *e, bool take)
{
	struct zbatch_dev *dev = e->dev;
	struct zbatch_slice *s, *found = NULL;
	int elsewhere = -1;	/* engines_elsewhere(), asked at most once */
	unsigned int i;

	for (i = 0; i < dev->nr_wqs && !found; i++) {
		struct zbatch_sw_wq *wq = to_sw_wq(dev->wqs[i]);

		if (READ_ONCE(wq->stalled) || !READ_ONCE(wq->count))
			continue;
		spin_lock_irq(&wq->lock);
		list_for_each_entry(s, &wq->slices, node) {
			/*
			 * A slice from a submitter on this CPU is left to an
			 * engine on another CPU, if there is one (asked only
			 * then: this runs while polling); with every engine on
			 * the submitter's CPU (CPUs offline), one here takes it.
			 */
			if (s->job->cpu == READ_ONCE(e->cpu)) {
				if (elsewhere < 0)
					elsewhere = engines_elsewhere(e);
				if (elsewhere)
					continue;
			}
			found = s;
			if (take) {
				list_del_init(&s->node);
				WRITE_ONCE(s->posted, false);
				WRITE_ONCE(wq->count, wq->count - s->nr);
			}
			break;
		}
		spin_unlock_irq(&wq->lock);
	}
	return found;
}

/*
 * How an engine came to the slice it takes, and what the slice's queue
 * wait then measures (cost.c): a wake-up's latency (it slept), a polling
 * engine's (it polled on an idle CPU), or nothing of a hand-off (it was
 * running another slice meanwhile, or found this one just before it
 * would have slept: the wait is the queue's, the other slice's time).
 */
enum engine_came { CAME_BUSY, CAME_POLLING, CAME_WOKEN };

/*
 * @came: how the engine came to @s (enum engine_came).
 *
 * With @yield, called with preemption off, from taking @s to giving it
 * up: engines run at SCHED_IDLE, so a task that wakes on this CPU
 * preempts the engine at once, and a preempted engine would hold the job
 * (the descriptor it claimed, its slice reference) until its CPU is idle
 * again. Instead it finishes the descriptor it claimed, stops claiming
 * (drain_yield()) and gives the rest of @s back to the WQ, where the
 * submitter steals it. Preemption stays off for one descriptor past a
 * wake-up at most. (The module refuses PREEMPT_RT, swapdev.h: the WQ and
 * waitq spinlocks taken here do not sleep.)
 */
static void run_slice(struct zbatch_engine *e, struct zbatch_slice *s,
		      enum engine_came came, bool yield)
{
	struct zbatch_job *job = s->job;
	struct zbatch_wq *wq = s->wq;
	unsigned int n, stolen, flags = ZBATCH_DRAIN_STEAL;
	/* post to take: the hand-off's latency */
	u64 q = job->post_ns ? zbatch_ns_since(job->post_ns) : 0;
	bool rest;

	if (yield) {
		lockdep_assert_preemption_disabled();
		flags |= ZBATCH_DRAIN_YIELD;
	}
	n = zbatch_sw_drain(&e->ctx, job, s, wq, flags, UINT_MAX, &stolen);
	WRITE_ONCE(e->slices, e->slices + 1);
	WRITE_ONCE(e->descs, e->descs + n);
	WRITE_ONCE(e->stolen, e->stolen + stolen);
	if (stolen)
		zbatch_stat_add(&zbatch_gstats, ZST_STOLEN, stolen);
	/*
	 * A helper came in time if it ran half its slice or more: worth
	 * measuring, and worth asking again. Later than that its CPU was
	 * busy (it got its SCHED_IDLE share, or a moment between tasks): a
	 * miss, and no measure of what a hand-off to an idle CPU costs. A
	 * slice another engine gave back measures neither.
	 */
	if (s->given_back) {
		/* nothing to learn */
	} else if ((n - stolen) * 2 >= s->nr) {
		/* forced hand-offs ("always") wait for a CPU: not a measure */
		if (job->post_ns && (flags & ZBATCH_DRAIN_YIELD)) {
			if (job->sampled)
				zbatch_stats_hist(ZH_QUEUE, q);
			if (came != CAME_BUSY)
				zbatch_cost_handoff(q, came == CAME_WOKEN);
		}
		zbatch_wq_helper_came(wq);
	} else {
		zbatch_wq_helper_missed(wq);
	}
	rest = !zbatch_slice_empty(s);
	if (rest) {
		zbatch_stat_add(&zbatch_gstats, ZST_YIELDS, 1);
		sw_repost(wq, s);
	}
	/* the descriptors run and the slice unless given back; the job is gone after */
	zbatch_job_release(job, n + !rest);
}

/*
 * Batches often come in streams (a folio after a folio, a benchmark, a
 * reclaim pass): the next slice tends to arrive within a wake-up's
 * latency of the last one. An engine that just finished therefore polls
 * for up to one measured wake-up latency before it sleeps; a slice found
 * then costs no wake-up at all, in latency or CPU. Polling that finds
 * nothing backs off: after n misses in a row, the next 2^n - 1 idle
 * periods (at most 63) sleep at once. The polling time is engine CPU
 * time and counted as such (debugfs engines, zbatch_engines_runtime_ns()).
 */
#define SPIN_MAX_NS	(200 * NSEC_PER_USEC)
#define SPIN_MISS_MAX	6

static bool engine_spin(struct zbatch_engine *e)
{
	u64 t0, limit = min_t(u64, zbatch_cost_handoff_ns(), SPIN_MAX_NS);
	unsigned int i;

	if (!limit)
		return false;
	if (e->spin_skip) {
		e->spin_skip--;
		return false;
	}
	/*
	 * Not preemptible while it says it polls: a preempted engine would
	 * stay "polling" on a CPU that is no longer idle, offered slices
	 * while its WQ backs off (wq.c). Bounded by the limit, and
	 * need_resched() ends it.
	 */
	preempt_disable();
	t0 = zbatch_clock();
	WRITE_ONCE(e->polling, true);
	do {
		for (i = 0; i < e->dev->nr_wqs; i++)
			if (READ_ONCE(to_sw_wq(e->dev->wqs[i])->count) &&
			    find_slice(e, false)) {
				WRITE_ONCE(e->polling, false);
				preempt_enable();
				e->spin_miss = 0;
				return true;
			}
		cpu_relax();
		/*
		 * single_task_running(): another engine woken on this CPU
		 * (for another device's slice) waits for us, since one
		 * SCHED_IDLE task does not preempt another.
		 */
	} while (!need_resched() && single_task_running() &&
		 !kthread_should_stop() && zbatch_ns_since(t0) < limit);
	WRITE_ONCE(e->polling, false);
	preempt_enable();
	e->spin_miss = min(e->spin_miss + 1, SPIN_MISS_MAX);
	e->spin_skip = (1U << e->spin_miss) - 1;
	return false;
}

/* Returns true when the engine slept (and was woken). */
static bool engine_sleep(struct zbatch_engine *e)
{
	set_current_state(TASK_INTERRUPTIBLE);
	WRITE_ONCE(e->idle, true);
	/* pairs with sw_post(): see its slice or be seen idle */
	smp_mb();
	if (find_slice(e, false) || kthread_should_stop()) {
		WRITE_ONCE(e->idle, false);
		__set_current_state(TASK_RUNNING);
		return false;
	}
	schedule();
	WRITE_ONCE(e->idle, false);
	return true;
}

static int engine_fn(void *data)
{
	struct zbatch_engine *e = data;
	enum engine_came came = CAME_BUSY;
	struct zbatch_slice *s;

	while (!kthread_should_stop()) {
		/*
		 * handoff "always" (tests): the submitter steals nothing, so
		 * an engine gives nothing back; it keeps its slice, and
		 * runs it preemptible, however long it takes.
		 */
		bool yield = READ_ONCE(zbatch_handoff) != ZBATCH_HANDOFF_ALWAYS;

		if (yield)
			preempt_disable();
		s = find_slice(e, true);
		if (s)
			run_slice(e, s, came, yield);
		if (yield)
			preempt_enable();
		if (!s) {
			if (engine_spin(e))
				came = CAME_POLLING;
			else
				came = engine_sleep(e) ? CAME_WOKEN : CAME_BUSY;
			continue;
		}
		came = CAME_BUSY;
		cond_resched();
	}
	return 0;
}

/* Stop every engine of @dev and free their workspaces. */
void zbatch_sw_stop(struct zbatch_dev *dev)
{
	unsigned int i;

	for (i = 0; i < dev->nr_engines; i++) {
		if (dev->engines[i].task)
			kthread_stop(dev->engines[i].task);
		dev->engines[i].task = NULL;
		zbatch_ctx_free(&dev->engines[i].ctx);
	}
}

/*
 * Engine placement. An engine runs on one CPU (affinity, not
 * kthread_bind(): hotplug must not strand it). CPUs it may use: online,
 * of its device's node, and housekeeping ones (not isolcpus= or
 * nohz_full= CPUs: those are the user's). When its CPU goes down it is
 * pinned to another of them (the scheduler may already have moved it off
 * the dying CPU, its affinity widened to any CPU: this narrows it again);
 * when its CPU comes back it goes home. engines_lock (mutex)
 * serialises placement: start and the hotplug callbacks; engine_mask is
 * scratch under it. Lock order: the CPU hotplug lock, then engines_lock.
 */
static DEFINE_MUTEX(engines_lock);
static struct cpumask engine_mask;
static int engines_hp = -1;	/* the dynamic hotplug state, once set up */

/* engine_mask: where engines of @node may run, never on @except. */
static void engine_cpus(int node, int except)
{
	int pass;

	lockdep_assert_held(&engines_lock);
	for (pass = 0; pass < 3; pass++) {
		cpumask_copy(&engine_mask, cpu_online_mask);
		if (pass == 0)
			cpumask_and(&engine_mask, &engine_mask, cpumask_of_node(node));
		if (pass < 2) {
			cpumask_and(&engine_mask, &engine_mask,
				    housekeeping_cpumask(HK_TYPE_DOMAIN));
			cpumask_and(&engine_mask, &engine_mask,
				    housekeeping_cpumask(HK_TYPE_KTHREAD));
		}
		if (except >= 0)
			cpumask_clear_cpu(except, &engine_mask);
		if (!cpumask_empty(&engine_mask))
			return;
	}
}

static void engine_place(struct zbatch_engine *e, int cpu)
{
	lockdep_assert_held(&engines_lock);
	if (!set_cpus_allowed_ptr(e->task, cpumask_of(cpu)))
		WRITE_ONCE(e->cpu, cpu);
}

/* After engines moved: each idle one looks at the WQs again. */
static void engines_kick(void)
{
	unsigned int d, i;

	for (d = 0; d < zbatch_nr_devs; d++)
		for (i = 0; i < zbatch_devs[d]->nr_engines; i++) {
			struct zbatch_engine *e = &zbatch_devs[d]->engines[i];

			if (e->task && READ_ONCE(e->idle) && xchg(&e->idle, false))
				wake_up_process(e->task);
		}
}

/*
 * @cpu is going down (still online, no longer active): its engines move
 * to the other allowed CPUs, spread round robin after it.
 */
static int engines_cpu_down(unsigned int cpu)
{
	unsigned int d, i;

	mutex_lock(&engines_lock);
	for (d = 0; d < zbatch_nr_devs; d++) {
		struct zbatch_dev *dev = zbatch_devs[d];
		unsigned int to = cpu;

		engine_cpus(dev->node, cpu);
		for (i = 0; i < dev->nr_engines; i++) {
			struct zbatch_engine *e = &dev->engines[i];

			if (!e->task || e->cpu != cpu)
				continue;
			/*
			 * The next allowed CPU after the last one used,
			 * wrapping: two engines may share the one CPU left
			 * (cpumask_next_wrap() with start = @to would stop
			 * there and leave the second to the scheduler,
			 * unpinned and its ->cpu stale).
			 */
			to = cpumask_next(to, &engine_mask);
			if (to >= nr_cpu_ids)
				to = cpumask_first(&engine_mask);
			if (to >= nr_cpu_ids)
				break;		/* nowhere else: the scheduler decides */
			engine_place(e, to);
		}
	}
	engines_kick();
	mutex_unlock(&engines_lock);
	return 0;
}

/* @cpu is online again: the engines placed there go home. */
static int engines_cpu_up(unsigned int cpu)
{
	unsigned int d, i;

	mutex_lock(&engines_lock);
	for (d = 0; d < zbatch_nr_devs; d++) {
		struct zbatch_dev *dev = zbatch_devs[d];

		for (i = 0; i < dev->nr_engines; i++) {
			struct zbatch_engine *e = &dev->engines[i];

			if (e->task && e->home == cpu)
				engine_place(e, cpu);
		}
	}
	engines_kick();
	mutex_unlock(&engines_lock);
	return 0;
}

/**
 * zbatch_sw_hotplug_start() - follow CPU hotplug with every engine
 *
 * Once all devices and their engines exist; zbatch_sw_hotplug_stop()
 * before any is stopped. Every engine is placed again at once: its CPU
 * may have gone down, or down and up, since it was started (the
 * callbacks are not run for the current state).
 *
 * Return: 0 or a negative errno.
 */
int zbatch_sw_hotplug_start(void)
{
	unsigned int cpu;
	int ret;

	cpus_read_lock();
	ret = cpuhp_setup_state_nocalls_cpuslocked(CPUHP_AP_ONLINE_DYN, "zbatch/engines:online",
						   engines_cpu_up, engines_cpu_down);
	if (ret >= 0) {
		engines_hp = ret;
		ret = 0;
		for_each_online_cpu(cpu)
			engines_cpu_up(cpu);
		for_each_possible_cpu(cpu)
			if (!cpu_online(cpu))
				engines_cpu_down(cpu);
	}
	cpus_read_unlock();
	return ret;
}

void zbatch_sw_hotplug_stop(void)
{
	if (engines_hp >= 0)
		cpuhp_remove_state_nocalls(engines_hp);
	engines_hp = -1;
}

/*
 * Start @dev's engines on the CPUs where engines may run (engine_cpus())
 * after *@next_cpu, round robin. On failure the caller runs
 * zbatch_sw_stop().
 */
int zbatch_sw_start(struct zbatch_dev *dev, unsigned int *next_cpu)
{
	static const struct sched_attr idle_attr = {
		.size = sizeof(idle_attr),
		.sched_policy = SCHED_IDLE,
	};
	unsigned int i, cpu;
	int ret = 0;

	mutex_lock(&engines_lock);
	engine_cpus(dev->node, -1);
	for (i = 0; i < dev->nr_engines; i++) {
		struct zbatch_engine *e = &dev->engines[i];
		struct task_struct *t;
		unsigned int c;

		/*
		 * Every workspace now: an engine must never allocate. Under
		 * swap pressure a GFP_NOIO allocation can retry forever
		 * while the zswap caller it serves waits for it.
		 */
		for (c = ZBATCH_CODEC_DEFAULT + 1; c < ZBATCH_CODEC_NR; c++) {
			ret = zbatch_ctx_prepare(&e->ctx, c);
			if (ret)
				goto out;
		}
		cpu = cpumask_next(*next_cpu, &engine_mask);
		if (cpu >= nr_cpu_ids)
			cpu = cpumask_first(&engine_mask);
		*next_cpu = cpu;
		e->dev = dev;
		e->id = i;
		e->home = cpu;
		t = kthread_create_on_node(engine_fn, e, dev->node,
					   "zbatch/%u.%u", dev->id, i);
		if (IS_ERR(t)) {
			ret = PTR_ERR(t);
			goto out;
		}
		e->task = t;
		e->cpu = cpu;
		engine_place(e, cpu);
		/* a helper only where the CPU would idle: never a task's share */
		ret = sched_setattr_nocheck(t, &idle_attr);
		if (ret)
			goto out;
		wake_up_process(t);
	}
out:
	mutex_unlock(&engines_lock);
	return ret;
}

/**
 * zbatch_engines_runtime_ns() - CPU time used by every engine thread
 *
 * For honest accounting of work moved to other CPUs: a benchmark adds
 * this to its own CPU time. Exact for engines that are asleep; a running
 * engine's time is as of its last tick.
 *
 * Return: the sum of the engines' sum_exec_runtime, in ns.
 */
u64 zbatch_engines_runtime_ns(void)
{
	unsigned int d, i;
	u64 ns = 0;

	for (d = 0; d < zbatch_nr_devs; d++) {
		for (i = 0; i < zbatch_devs[d]->nr_engines; i++) {
			struct task_struct *t = zbatch_devs[d]->engines[i].task;

			if (t)
				ns += READ_ONCE(t->se.sum_exec_runtime);
		}
	}
	return ns;
}
EXPORT_SYMBOL_GPL(zbatch_engines_runtime_ns);

/* Descriptors run by every engine so far (self-tests, debugfs). */
u64 zbatch_engines_descs(void)
{
	unsigned int d, i;
	u64 n = 0;

	for (d = 0; d < zbatch_nr_devs; d++)
		for (i = 0; i < zbatch_devs[d]->nr_engines; i++)
			n += READ_ONCE(zbatch_devs[d]->engines[i].descs);
	return n;
}
