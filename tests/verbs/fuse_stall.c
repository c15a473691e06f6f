// SPDX-License-Identifier: GPL-2.0
/*
 * fuse_stall: a FUSE file system whose server never answers a READ, speaking the raw /dev/fuse
 * protocol (no libfuse). It mounts itself on MOUNTPOINT (root only: mount(2) with fd=N), holding
 * one regular file, MOUNTPOINT/file, of SIZE_MIB MiB, mode 0666. LOOKUP, GETATTR, OPEN, FLUSH,
 * RELEASE and the like get fixed answers; every READ is logged ("READ offset length") and left
 * unanswered, so a task reading a page of the file waits until the server dies (closing
 * /dev/fuse aborts the connection and fails the waiting requests) or the connection is aborted
 * through /sys/fs/fuse/connections. INIT asks for asynchronous reads (FUSE_ASYNC_READ, as
 * libfuse does): a page fault then sends the READ as readahead and waits on the page, killably.
 *
 * Usage: fuse_stall MOUNTPOINT SIZE_MIB
 * Prints "ready" once mounted, then serves until killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/fuse.h>

#define FILE_INO 2
#define FILE_NAME "file"
/* At least FUSE_MIN_READ_BUFFER, and room for a WRITE of max_write bytes. */
#define BUF_SIZE (1 << 20)

static int fd;
static uint64_t file_size;

static void reply(uint64_t unique, int error, const void *arg, size_t len)
{
	struct fuse_out_header h = { .len = sizeof(h) + len, .error = error, .unique = unique };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)arg, len } };

	if (writev(fd, iov, arg ? 2 : 1) < 0 && errno != ENOENT)
		fprintf(stderr, "fuse_stall: reply %llu: %s\n", (unsigned long long)unique,
			strerror(errno));
}

static void attr_of(uint64_t ino, struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = ino;
	a->nlink = 1;
	a->blksize = 4096;
	if (ino == FUSE_ROOT_ID) {
		a->mode = S_IFDIR | 0755;
		a->nlink = 2;
	} else {
		a->mode = S_IFREG | 0666;
		a->size = file_size;
		a->blocks = file_size / 512;
	}
}

static void handle(const struct fuse_in_header *in, const void *arg)
{
	switch (in->opcode) {
	case FUSE_INIT: {
		const struct fuse_init_in *i = arg;
		struct fuse_init_out o = {
			.major = FUSE_KERNEL_VERSION,
			.minor = FUSE_KERNEL_MINOR_VERSION,
			.max_readahead = i->max_readahead,
			.flags = FUSE_ASYNC_READ,
			.max_background = 16,
			.congestion_threshold = 12,
			.max_write = 65536,
			.time_gran = 1,
		};

		reply(in->unique, 0, &o, sizeof(o));
		return;
	}
	case FUSE_LOOKUP: {
		struct fuse_entry_out e = { .nodeid = FILE_INO, .generation = 1,
					    .entry_valid = 3600, .attr_valid = 3600 };

		if (in->nodeid != FUSE_ROOT_ID || strcmp(arg, FILE_NAME)) {
			reply(in->unique, -ENOENT, NULL, 0);
			return;
		}
		attr_of(FILE_INO, &e.attr);
		reply(in->unique, 0, &e, sizeof(e));
		return;
	}
	case FUSE_GETATTR: {
		struct fuse_attr_out a = { .attr_valid = 3600 };

		attr_of(in->nodeid, &a.attr);
		reply(in->unique, 0, &a, sizeof(a));
		return;
	}
	case FUSE_OPEN:
	case FUSE_OPENDIR: {
		/*
		 * Keep the page cache: without it an open invalidates the file's pages, and waits
		 * for those whose READ is pending.
		 */
		struct fuse_open_out o = { .fh = 1, .open_flags = FOPEN_KEEP_CACHE };

		reply(in->unique, 0, &o, sizeof(o));
		return;
	}
	case FUSE_READ: {
		const struct fuse_read_in *r = arg;

		/* Never answered. */
		printf("READ %llu %u\n", (unsigned long long)r->offset, r->size);
		fflush(stdout);
		return;
	}
	case FUSE_FLUSH:
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:
	case FUSE_FSYNC:
		reply(in->unique, 0, NULL, 0);
		return;
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT:
		/* No reply. An interrupted READ stays unanswered too. */
		return;
	case FUSE_DESTROY:
		reply(in->unique, 0, NULL, 0);
		return;
	default:
		reply(in->unique, -ENOSYS, NULL, 0);
	}
}

int main(int argc, char **argv)
{
	static char buf[BUF_SIZE];
	char opts[128];

	if (argc < 3) {
		fprintf(stderr, "usage: %s MOUNTPOINT SIZE_MIB\n", argv[0]);
		return 2;
	}
	file_size = strtoull(argv[2], NULL, 0) << 20;
	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror("fuse_stall: /dev/fuse");
		return 1;
	}
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other", fd);
	if (mount("fuse_stall", argv[1], "fuse.fuse_stall", MS_NOSUID | MS_NODEV, opts)) {
		perror("fuse_stall: mount");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		const struct fuse_in_header *in = (const void *)buf;

		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == ENOENT)
				continue;
			/* ENODEV: unmounted. */
			return errno == ENODEV ? 0 : 1;
		}
		if ((size_t)n < sizeof(*in) || in->len != (size_t)n)
			continue;
		handle(in, in + 1);
	}
}
