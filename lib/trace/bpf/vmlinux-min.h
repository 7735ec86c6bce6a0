/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel types trace.bpf.c reads, as CO-RE declarations: only the fields it touches, each
 * relocated by name against the running kernel's BTF when the program loads (libbpf), so their
 * order and offsets here mean nothing. Kept by hand in the tree rather than a 100,000-line
 * vmlinux.h dumped from one machine's BTF: the build then needs no /sys/kernel/btf (a package
 * build root has none), gives the same object on every build machine, and a reader sees exactly
 * what the program depends on. A field a kernel renamed is a flavour (___suffix) tested with
 * bpf_core_field_exists.
 */
#ifndef NUMASTOR_VMLINUX_MIN_H
#define NUMASTOR_VMLINUX_MIN_H

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct gendisk {
	int major;
	int first_minor;
};

struct request_queue {
	struct gendisk *disk; /* 5.15 on */
};

struct blk_mq_ctx {
	unsigned int cpu;
};

struct blk_mq_hw_ctx {
	unsigned int queue_num;
};

struct request {
	struct request_queue *q;
	struct blk_mq_ctx *mq_ctx; /* the submitting CPU's software queue */
	struct blk_mq_hw_ctx *mq_hctx;
	unsigned int __data_len;
};

/* before 5.16 (f3fa33acca9f): the disk was the request's own */
struct request___rq_disk {
	struct gendisk *rq_disk;
};

#pragma clang attribute pop

#endif
