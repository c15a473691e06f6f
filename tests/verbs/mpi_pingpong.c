// SPDX-License-Identifier: GPL-2.0
/*
 * mpi_pingpong: a two-rank MPI job of the kind users run to check a fabric: a ping-pong of
 * messages from 1 B to 4 MiB whose every byte is checked (a pattern of the size, the
 * iteration and the sender), the latency of 8-byte messages, the bandwidth of a window of 16
 * non-blocking 1 MiB sends, an MPI_Allreduce and MPI_Bcast with known results. Prints
 * "mpi: ..." lines; exits non-zero (and aborts the job) on any wrong byte or result.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX (4 << 20)
#define WINDOW 16

static int rank;

static void die(const char *what)
{
	fprintf(stderr, "mpi: FAIL (rank %d): %s\n", rank, what);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

static uint8_t pattern(size_t i, int size, int iter, int from)
{
	return (uint8_t)(i * 131 + (size_t)size * 7 + (size_t)iter * 13 + (size_t)from * 101);
}

static void fill(uint8_t *b, int size, int iter, int from)
{
	for (int i = 0; i < size; i++)
		b[i] = pattern(i, size, iter, from);
}

static int check(const uint8_t *b, int size, int iter, int from)
{
	for (int i = 0; i < size; i++)
		if (b[i] != pattern(i, size, iter, from))
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	int nranks, peer, sum, root_val;
	uint8_t *sbuf, *rbuf;
	double t0, lat, bw;
	char name[MPI_MAX_PROCESSOR_NAME];
	int nlen;
	long checked = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	MPI_Get_processor_name(name, &nlen);
	if (nranks != 2)
		die("needs exactly two ranks");
	peer = 1 - rank;
	printf("mpi: rank %d of %d on %s\n", rank, nranks, name);
	sbuf = malloc(MAX);
	rbuf = malloc((size_t)MAX * WINDOW);
	if (!sbuf || !rbuf)
		die("no memory");

	/* Ping-pong with every byte checked, both directions, sizes 1 B to 4 MiB. */
	for (int size = 1; size <= MAX; size *= 4) {
		for (int iter = 0; iter < 4; iter++) {
			if (rank == 0) {
				fill(sbuf, size, iter, 0);
				MPI_Send(sbuf, size, MPI_BYTE, peer, iter, MPI_COMM_WORLD);
				MPI_Recv(rbuf, size, MPI_BYTE, peer, iter, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				if (!check(rbuf, size, iter, 1))
					die("a ping-pong reply differs");
			} else {
				MPI_Recv(rbuf, size, MPI_BYTE, peer, iter, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				if (!check(rbuf, size, iter, 0))
					die("a ping-pong message differs");
				fill(sbuf, size, iter, 1);
				MPI_Send(sbuf, size, MPI_BYTE, peer, iter, MPI_COMM_WORLD);
			}
			checked += size;
		}
	}
	if (rank == 0)
		printf("mpi: ping-pong of 1 B to 4 MiB, %ld bytes each way checked\n", checked);

	/* Latency: 1000 round trips of 8 bytes. */
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int i = 0; i < 1000; i++) {
		if (rank == 0) {
			MPI_Send(sbuf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
			MPI_Recv(rbuf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(rbuf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(sbuf, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
		}
	}
	lat = (MPI_Wtime() - t0) / 1000 / 2 * 1e6;

	/* Bandwidth: 8 windows of 16 non-blocking 1 MiB sends, rank 0 to rank 1. */
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int w = 0; w < 8; w++) {
		MPI_Request req[WINDOW];

		for (int i = 0; i < WINDOW; i++) {
			if (rank == 0)
				MPI_Isend(sbuf, 1 << 20, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &req[i]);
			else
				MPI_Irecv(rbuf + ((size_t)i << 20), 1 << 20, MPI_BYTE, peer, 2,
					  MPI_COMM_WORLD, &req[i]);
		}
		MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	bw = 8.0 * WINDOW / (MPI_Wtime() - t0);
	if (rank == 0)
		printf("mpi: latency %.1f us (8 B, half a round trip), bandwidth %.1f MiB/s "
		       "(windows of %d x 1 MiB)\n", lat, bw, WINDOW);

	/* Collectives with known results. */
	MPI_Allreduce(&(int){ rank + 1 }, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (sum != 3)
		die("MPI_Allreduce gave a wrong sum");
	root_val = rank == 0 ? 0x5eed : 0;
	MPI_Bcast(&root_val, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (root_val != 0x5eed)
		die("MPI_Bcast gave a wrong value");
	if (rank == 0)
		printf("mpi: MPI_Allreduce and MPI_Bcast right\n");
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	if (rank == 0)
		printf("mpi: ok\n");
	return 0;
}
