// SPDX-License-Identifier: GPL-2.0
/*
 * umad_probe: sends one PerfMgt MAD through QP1 from a umad agent and prints every MAD the
 * agent receives in the next moments, one line each, for tests/selftests/mad.sh:
 *
 *   umad_probe DEVICE SGID_INDEX DGID METHOD ATTR_ID [WAIT_MS]
 *
 * DGID is the destination GID as an IPv6 address (fe80:0000:...:3456 as sysfs shows it); the
 * MAD goes to QP1 there with the GSI QKey and a GRH (RoCE needs one). METHOD and ATTR_ID are
 * numbers (0x01 Get, 0x81 GetResp; 0x0001 ClassPortInfo, 0x0012 PortCounters). A Get or Set
 * is sent with a timeout of WAIT_MS (default 1000), so ib_core hands the agent its response,
 * or a "timeout" if none came; any other method is sent as it is, and the agent waits WAIT_MS
 * for whatever comes back. Lines printed:
 *
 *   recv method=0x81 status=0x0000 attr=0x0001 tid=0x... word=0x...   a MAD arrived (word: the
 *                                                 first 32 bits of the attribute after the
 *                                                 PerfMgt header: ClassPortInfo's versions and
 *                                                 capability mask, PortCounters' PortSelect)
 *   timeout                                       ib_core gave up waiting for the response
 *   done N                                        N MADs arrived
 *
 * Exit status: 0 when the MAD was sent (whatever came back), 1 otherwise.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/umad.h>

#define MAD_SIZE 256
#define CLASS_PERF_MGMT 0x04
#define GSI_QKEY 0x80010000
#define METHOD_GET 0x01
#define METHOD_SET 0x02
/* The attribute starts after the 24-byte common header and 40 reserved bytes of PerfMgt. */
#define ATTR_AT (24 + 40)

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint32_t be32_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int main(int argc, char **argv)
{
	long mask[16 / sizeof(long)] = { 0 };
	struct ib_user_mad *hdr;
	uint8_t gid[16];
	int port, agent, method, asks, attr, wait_ms = 1000, n = 0, len;
	uint8_t *mad;
	void *umad;
	uint64_t tid;
	long end;

	if (argc < 6) {
		fprintf(stderr, "usage: %s DEVICE SGID_INDEX DGID METHOD ATTR_ID [WAIT_MS]\n",
			argv[0]);
		return 1;
	}
	method = strtol(argv[4], NULL, 0);
	asks = method == METHOD_GET || method == METHOD_SET;
	attr = strtol(argv[5], NULL, 0);
	if (argc > 6)
		wait_ms = atoi(argv[6]);
	if (inet_pton(AF_INET6, argv[3], gid) != 1) {
		fprintf(stderr, "bad GID %s\n", argv[3]);
		return 1;
	}
	if (umad_init() < 0) {
		fprintf(stderr, "umad_init failed\n");
		return 1;
	}
	port = umad_open_port(argv[1], 1);
	if (port < 0) {
		fprintf(stderr, "umad_open_port %s: %s\n", argv[1], strerror(-port));
		return 1;
	}
	/* PerfMgt, no method: the agent gets only the responses to its own requests. */
	agent = umad_register(port, CLASS_PERF_MGMT, 1, 0, mask);
	if (agent < 0) {
		fprintf(stderr, "umad_register: %s\n", strerror(-agent));
		return 1;
	}
	umad = calloc(1, umad_size() + MAD_SIZE);
	if (!umad)
		return 1;
	mad = umad_get_mad(umad);
	srand(time(NULL) ^ getpid());
	tid = (uint64_t)rand() << 16 ^ rand();
	mad[0] = 1;			/* base version */
	mad[1] = CLASS_PERF_MGMT;
	mad[2] = 1;			/* class version */
	mad[3] = method;
	for (int i = 0; i < 8; i++)
		mad[8 + i] = tid >> (56 - 8 * i);
	mad[16] = attr >> 8;
	mad[17] = attr;
	mad[ATTR_AT + 1] = 1;		/* PortSelect */

	umad_set_addr(umad, 0, 1, 0, GSI_QKEY);
	/* The GRH, written here whole: umad_set_grh() leaves the SGID index out. */
	hdr = umad;
	memcpy(hdr->addr.gid, gid, sizeof(gid));
	hdr->addr.grh_present = 1;
	hdr->addr.gid_index = atoi(argv[2]);
	hdr->addr.hop_limit = 64;
	if (umad_send(port, agent, umad, MAD_SIZE, asks ? wait_ms : 0, 0) < 0) {
		fprintf(stderr, "umad_send: %s\n", strerror(errno));
		return 1;
	}

	end = now_ms() + wait_ms + 500;
	for (long left; (left = end - now_ms()) > 0;) {
		len = MAD_SIZE;
		if (umad_recv(port, umad, &len, left) < 0)
			break;
		if (umad_status(umad)) {
			printf("timeout\n");
			continue;
		}
		n++;
		printf("recv method=0x%02x status=0x%04x attr=0x%04x tid=0x%016llx word=0x%08x\n",
		       mad[3], mad[4] << 8 | mad[5], mad[16] << 8 | mad[17],
		       (unsigned long long)be32_at(mad + 8) << 32 | be32_at(mad + 12),
		       be32_at(mad + ATTR_AT));
	}
	printf("done %d\n", n);
	umad_unregister(port, agent);
	umad_close_port(port);
	return 0;
}
