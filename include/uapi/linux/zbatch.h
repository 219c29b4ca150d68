/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * zbatch userspace ABI: shared verbatim by the kernel module and the C++
 * tools. Every structure starts with its own size so it can grow.
 */
#ifndef _UAPI_LINUX_ZBATCH_H
#define _UAPI_LINUX_ZBATCH_H

#include <linux/types.h>

/* Module and tools release; both must agree for the ioctl ABI. */
#define ZBATCH_VERSION		"0.1.0"
#define ZBATCH_ABI_VERSION	1

#endif /* _UAPI_LINUX_ZBATCH_H */
