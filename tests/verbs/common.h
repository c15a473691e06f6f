/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the verbs test programs: the CHECK macro (prints "# ok:" or "# FAIL" lines and
 * counts failures) and opening a device by name.
 */
#ifndef RRXE_VERBS_COMMON_H
#define RRXE_VERBS_COMMON_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>

static int failures __attribute__((unused));

#define CHECK(cond, ...)                                                                   \
	do {                                                                               \
		if (cond) {                                                                \
			printf("# ok: " __VA_ARGS__);                                      \
		} else {                                                                   \
			printf("# FAIL (%s:%d, errno %d): ", __FILE__, __LINE__, errno);   \
			printf(__VA_ARGS__);                                               \
			failures++;                                                        \
		}                                                                          \
		printf("\n");                                                              \
	} while (0)

/* Opens the RDMA device called NAME, or returns NULL. */
static inline struct ibv_context *open_device(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

#endif /* RRXE_VERBS_COMMON_H */
