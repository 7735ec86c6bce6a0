/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "probe/probe.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <liburing.h>
#include <numa.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "base/cpuset.h"
#include "read/irq.h"
#include "base/number.h"
#include "read/rates.h"
#include "read/root.h"
#include "model/system.h"

int ns_probe_open(const char *path, const char *devnum, struct ns_probe_dev *dev)
{
	long long maj, min;
	const char *colon = devnum ? strchr(devnum, ':') : NULL;
	char majs[16];
	struct stat st;
	int ssz = 0;

	memset(dev, 0, sizeof(*dev));
	dev->fd = -1;
	if (!colon || (size_t)(colon - devnum) >= sizeof(majs))
		return -EINVAL;
	snprintf(majs, sizeof(majs), "%.*s", (int)(colon - devnum), devnum);
	if (ns_parse_dec(majs, 0, 0xfff, &maj) < 0 || ns_parse_dec(colon + 1, 0, 0xfffff, &min) < 0)
		return -EINVAL;
	/* O_RDONLY: the probe never writes; O_DIRECT: the device, not the page cache */
	dev->fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (dev->fd < 0)
		return errno == ENOENT || errno == ENXIO ? -ENODEV : -errno;
	if (fstat(dev->fd, &st) < 0 || !S_ISBLK(st.st_mode) || major(st.st_rdev) != (unsigned)maj ||
	    minor(st.st_rdev) != (unsigned)min) {
		ns_probe_close(dev);
		return -ENODEV;
	}
	/* blocking reads from here (O_NONBLOCK only kept open() from waiting on a tape-like node) */
	fcntl(dev->fd, F_SETFL, O_RDONLY | O_DIRECT);
	if (ioctl(dev->fd, BLKGETSIZE64, &dev->size) < 0 || ioctl(dev->fd, BLKSSZGET, &ssz) < 0 || ssz <= 0) {
		int r = -errno;
		ns_probe_close(dev);
		return r ? r : -EIO;
	}
	dev->logical_bs = (unsigned)ssz;
	return 0;
}

void ns_probe_close(struct ns_probe_dev *dev)
{
	if (dev->fd >= 0)
		close(dev->fd);
	dev->fd = -1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct worker {
	const struct ns_probe_dev *dev;
	const struct ns_probe_job *job;
	_Atomic int *go; /* 0 wait, 1 run, -1 give up (a thread could not be started) */
	uint64_t rng;
	struct ns_hist hist;
	_Atomic uint64_t ios;
	uint64_t bytes;
	uint64_t t0, t_last;
	int err;
	bool stopped;
	_Atomic bool done;
};

static uint64_t next_rand(uint64_t *s)
{
	/* xorshift64*: plenty for spreading offsets */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1Dull;
}

static int prep_read(struct worker *w, struct io_uring *ring, char *bufs, uint64_t *submitted, unsigned k,
		     uint64_t nblocks, uint64_t now)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	unsigned bs = w->job->block_size;

	if (!sqe)
		return -EBUSY;
	io_uring_prep_read(sqe, w->dev->fd, bufs + (size_t)k * bs, bs, (next_rand(&w->rng) % nblocks) * bs);
	io_uring_sqe_set_data64(sqe, k);
	submitted[k] = now;
	return 0;
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	const struct ns_probe_job *job = w->job;
	unsigned bs = job->block_size, depth = job->iodepth, inflight = 0;
	uint64_t nblocks = w->dev->size / bs, deadline, *submitted = calloc(depth, sizeof(*submitted));
	size_t len = (size_t)depth * bs;
	bool numa = numa_available() >= 0, onnode = false;
	char *bufs = NULL;
	struct io_uring ring;
	bool ring_ok = false;
	int r;

	/* on the node's CPUs, with buffers in its memory */
	if (numa && numa_run_on_node(job->node) < 0)
		w->err = -errno;
	if (numa && !w->err) {
		bufs = numa_alloc_onnode(len, job->node);
		onnode = bufs != NULL;
	}
	if (!bufs && posix_memalign((void **)&bufs, 4096, len) != 0)
		bufs = NULL;
	if (!w->err && (!bufs || !submitted))
		w->err = -ENOMEM;
	if (!w->err) {
		r = io_uring_queue_init(depth, &ring, 0);
		if (r < 0)
			w->err = r;
		else
			ring_ok = true;
	}
	while (atomic_load(w->go) == 0)
		usleep(1000);
	if (atomic_load(w->go) < 0 && !w->err)
		w->err = -ECANCELED;
	w->t0 = w->t_last = now_ns();
	deadline = w->t0 + (uint64_t)(job->seconds * 1e9);
	for (unsigned k = 0; !w->err && k < depth; k++) {
		if (prep_read(w, &ring, bufs, submitted, k, nblocks, now_ns()) == 0)
			inflight++;
	}
	while (inflight) {
		struct io_uring_cqe *cqe;
		unsigned head, seen = 0, done = 0;
		uint64_t now;
		/* submit what the last batch requeued and wait for a completion: one system call */
		r = io_uring_submit_and_wait(&ring, 1);
		if (r == -EINTR)
			continue;
		if (r < 0) {
			if (!w->err)
				w->err = r;
			break;
		}
		now = now_ns();
		io_uring_for_each_cqe(&ring, head, cqe)
		{
			unsigned k = (unsigned)io_uring_cqe_get_data64(cqe);
			int res = cqe->res;
			seen++;
			inflight--;
			if (res < 0 && !w->err)
				w->err = res;
			else if (res >= 0 && (unsigned)res != bs && !w->err)
				w->err = -EIO; /* a short read of an aligned block inside the device */
			if (res > 0) {
				ns_hist_add(&w->hist, now - submitted[k]);
				done++;
				w->bytes += (uint64_t)res;
				w->t_last = now;
			}
			if (job->stop && *job->stop)
				w->stopped = true;
			if (!w->err && !w->stopped && now < deadline &&
			    prep_read(w, &ring, bufs, submitted, k, nblocks, now) == 0)
				inflight++; /* submitted by the next io_uring_submit_and_wait */
		}
		io_uring_cq_advance(&ring, seen);
		/* for the progress line: once a batch, not a locked add per read */
		atomic_fetch_add_explicit(&w->ios, done, memory_order_relaxed);
	}
	if (ring_ok)
		io_uring_queue_exit(&ring);
	if (onnode)
		numa_free(bufs, len);
	else
		free(bufs);
	free(submitted);
	atomic_store(&w->done, true);
	return NULL;
}

int ns_probe_run(const struct ns_probe_dev *dev, const struct ns_probe_job *job, struct ns_probe_result *res)
{
	struct worker *w;
	pthread_t *tid;
	_Atomic int go = 0;
	size_t started = 0;
	uint64_t t0, seed = job->seed ? job->seed : now_ns();
	int r = 0;

	memset(res, 0, sizeof(*res));
	ns_hist_init(&res->latency_ns);
	if (!job->block_size || !job->iodepth || !job->jobs || job->seconds <= 0 || !dev->logical_bs ||
	    job->block_size % dev->logical_bs || job->block_size > dev->size || job->iodepth > 4096 || job->jobs > 1024)
		return -EINVAL;
	if (numa_available() >= 0 ? job->node < 0 || job->node > numa_max_node() : job->node != 0)
		return -EINVAL;
	w = calloc(job->jobs, sizeof(*w));
	tid = calloc(job->jobs, sizeof(*tid));
	if (!w || !tid) {
		free(w);
		free(tid);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < job->jobs; i++) {
		w[i].dev = dev;
		w[i].job = job;
		w[i].go = &go;
		w[i].rng = seed + 0x9E3779B97F4A7C15ull * (i + 1);
		ns_hist_init(&w[i].hist);
		if (pthread_create(&tid[i], NULL, worker_run, &w[i]) != 0) {
			r = -EAGAIN;
			break;
		}
		started++;
	}
	/* every thread set up (bound, buffers, ring) before any reads: they start together */
	atomic_store(&go, started == job->jobs ? 1 : -1);
	if (started == job->jobs) {
		t0 = now_ns();
		for (;;) {
			bool all = true;
			uint64_t ios = 0;
			for (size_t i = 0; i < started; i++) {
				all &= atomic_load(&w[i].done);
				ios += atomic_load_explicit(&w[i].ios, memory_order_relaxed);
			}
			if (all)
				break;
			if (job->progress)
				job->progress(job->data, (double)(now_ns() - t0) / 1e9, ios);
			usleep(200000);
		}
	}
	for (size_t i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	if (started == job->jobs) {
		uint64_t first = UINT64_MAX, last = 0;
		for (size_t i = 0; i < started; i++) {
			ns_hist_merge(&res->latency_ns, &w[i].hist);
			res->ios += atomic_load(&w[i].ios);
			res->bytes += w[i].bytes;
			res->stopped |= w[i].stopped;
			if (w[i].t0 < first)
				first = w[i].t0;
			if (w[i].t_last > last)
				last = w[i].t_last;
			if (!r && w[i].err)
				r = w[i].err;
		}
		res->seconds = last > first ? (double)(last - first) / 1e9 : 0;
	}
	free(w);
	free(tid);
	return r;
}

bool ns_probe_node_gap(double worst_iops, double best_iops)
{
	return best_iops > 0 && worst_iops < best_iops * (1.0 - NS_PROBE_GAP);
}

int ns_probe_under_hypervisor(struct ns_root *root)
{
	char *text = NULL;
	int r = ns_read_text(root, "proc/cpuinfo", &text);
	bool found = false;

	if (r < 0)
		return -1;
	for (char *line = text; line && *line;) {
		char *end = strchr(line, '\n');
		if (end)
			*end = '\0';
		if (strncmp(line, "flags", 5) == 0) {
			char *colon = strchr(line, ':');
			for (char *tok = colon ? strtok(colon + 1, " \t") : NULL; tok; tok = strtok(NULL, " \t"))
				found |= strcmp(tok, "hypervisor") == 0;
			break;
		}
		line = end ? end + 1 : NULL;
	}
	free(text);
	return found;
}

/* The interrupts of a disk: every vector of every path's PCI function. */
static size_t disk_irqs(const struct ns_disk *d, struct ns_irq **out, size_t max)
{
	size_t n = 0;
	for (size_t p = 0; p < d->npaths; p++) {
		struct ns_pci *pci = d->paths[p].pci;
		if (!pci)
			continue;
		for (size_t i = 0; i < pci->nirqs && n < max; i++) {
			bool dup = false;
			for (size_t k = 0; k < n; k++)
				dup |= out[k]->irq == pci->irqs[i].irq;
			if (!dup)
				out[n++] = &pci->irqs[i];
		}
	}
	return n;
}

static void free_samples(struct ns_counts *c, size_t n)
{
	for (size_t i = 0; c && i < n; i++)
		ns_counts_free(&c[i]);
	free(c);
}

/* Each vector's per_cpu_count now (lib/read/rates.h: n == 0 for one that could not be read or now
 * belongs to another action); NULL out of memory. */
static struct ns_counts *sample(struct ns_root *root, struct ns_irq *const *irqs, size_t n)
{
	struct ns_counts *c = calloc(n ? n : 1, sizeof(*c));
	if (c && ns_rates_sample(root, irqs, n, c) < 0) {
		free_samples(c, n);
		c = NULL;
	}
	return c;
}

/* Per node: what fired between the two samples, summed over the disk's vectors. */
static void fold_delta(const struct ns_machine *m, const struct ns_counts *a, const struct ns_counts *b, size_t n,
		       struct ns_probe_node_run *nr, size_t nids)
{
	nr->irq_by_node = calloc(nids ? nids : 1, sizeof(*nr->irq_by_node));
	nr->nirq_by_node = nids;
	if (!nr->irq_by_node)
		return;
	nr->irq_known = n > 0;
	for (size_t i = 0; i < n; i++) {
		struct ns_counts d = {0};
		unsigned long long *per = NULL, total = 0;
		size_t nper = 0;
		if (!a[i].n || !b[i].n || ns_counts_delta(&a[i], &b[i], true, &d) < 0 ||
		    ns_counts_fold(m, &d, &per, &nper, &total) < 0) {
			nr->irq_known = false;
			ns_counts_free(&d);
			continue;
		}
		for (size_t k = 0; k < nper && k < nids; k++)
			nr->irq_by_node[k] += per[k];
		nr->irq_total += total;
		free(per);
		ns_counts_free(&d);
	}
}

double ns_probe_iops(const struct ns_probe_node_run *r)
{
	return r->res.seconds > 0 ? (double)r->res.ios / r->res.seconds : 0;
}

struct progress_relay {
	const struct ns_probe_params *p;
	const char *disk;
	int node;
};

static void relay_progress(void *data, double elapsed, uint64_t ios)
{
	struct progress_relay *x = data;
	x->p->progress(x->p->data, x->disk, x->node, elapsed, ios);
}

int ns_probe_disk_measure(struct ns_root *root, const struct ns_system *sys, const struct ns_cpuset *nodes,
			  const struct ns_probe_params *p, struct ns_probe_disk *d)
{
	struct ns_probe_dev dev;
	struct ns_irq *irqs[256];
	size_t nirqs = disk_irqs(d->disk, irqs, 256), nids = 0;
	char path[300];
	int r;

	d->failed_node = -1;
	for (size_t n = 0; n < sys->machine.nnodes; n++)
		if ((size_t)sys->machine.nodes[n].id + 1 > nids)
			nids = (size_t)sys->machine.nodes[n].id + 1;
	snprintf(path, sizeof(path), "/dev/%s", d->disk->name);
	r = ns_probe_open(path, d->disk->devnum, &dev);
	if (r < 0)
		return r;
	d->runs = calloc(sys->machine.nnodes ? sys->machine.nnodes : 1, sizeof(*d->runs));
	if (!d->runs) {
		ns_probe_close(&dev);
		return -ENOMEM;
	}
	for (size_t n = 0; n < sys->machine.nnodes && !(p->stop && *p->stop); n++) {
		const struct ns_node *node = &sys->machine.nodes[n];
		struct ns_probe_node_run *nr = &d->runs[d->nruns];
		struct progress_relay relay = {p, d->disk->name, node->id};
		struct ns_probe_job job = {.node = node->id,
					   .block_size = p->block_size,
					   .iodepth = p->iodepth,
					   .jobs = p->jobs,
					   .seconds = p->seconds,
					   .progress = p->progress ? relay_progress : NULL,
					   .data = &relay,
					   .stop = p->stop};
		struct ns_counts *before, *after;
		if (!ns_cpuset_count(&node->cpus) || (nodes && !ns_cpuset_test(nodes, (unsigned)node->id)))
			continue;
		nr->node = node->id;
		ns_cpuset_format(&node->cpus, &nr->cpus);
		before = sample(root, irqs, nirqs);
		r = ns_probe_run(&dev, &job, &nr->res);
		after = sample(root, irqs, nirqs);
		if (before && after)
			fold_delta(&sys->machine, before, after, nirqs, nr, nids);
		free_samples(before, nirqs);
		free_samples(after, nirqs);
		d->nruns++;
		if (r < 0) {
			d->failed_node = node->id;
			break;
		}
	}
	ns_probe_close(&dev);
	for (size_t k = 0; k < d->nruns; k++) {
		if (ns_probe_iops(&d->runs[k]) < ns_probe_iops(&d->runs[d->worst]))
			d->worst = k;
		if (ns_probe_iops(&d->runs[k]) > ns_probe_iops(&d->runs[d->best]))
			d->best = k;
	}
	d->gap = d->nruns > 1 && ns_probe_node_gap(ns_probe_iops(&d->runs[d->worst]), ns_probe_iops(&d->runs[d->best]));
	return r < 0 ? r : 0;
}

void ns_probe_disk_free(struct ns_probe_disk *d)
{
	for (size_t k = 0; d->runs && k < d->nruns; k++) {
		free(d->runs[k].cpus);
		free(d->runs[k].irq_by_node);
	}
	free(d->runs);
	d->runs = NULL;
	d->nruns = 0;
}

int ns_probe_pick_nodes(const struct ns_system *sys, const char *list, struct ns_cpuset *nodes, int *missing)
{
	if (!list) {
		for (size_t k = 0; k < sys->machine.nnodes; k++)
			if (ns_cpuset_count(&sys->machine.nodes[k].cpus) > 0 &&
			    ns_cpuset_set(nodes, (unsigned)sys->machine.nodes[k].id) < 0)
				return -ENOMEM;
		return 0;
	}
	if (ns_cpuset_parse_list_max(nodes, list, 1024) < 0 || !ns_cpuset_count(nodes))
		return -EINVAL;
	for (int n = ns_cpuset_first(nodes); n >= 0; n = ns_cpuset_next(nodes, n)) {
		bool found = false;
		for (size_t k = 0; k < sys->machine.nnodes; k++)
			found |= sys->machine.nodes[k].id == n && ns_cpuset_count(&sys->machine.nodes[k].cpus) > 0;
		if (!found) {
			*missing = n;
			return -ENOENT;
		}
	}
	return 0;
}
