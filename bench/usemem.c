// SPDX-License-Identifier: GPL-2.0
/*
 * usemem: anonymous-memory workloads that make the kernel swap, modelled on
 * vm-scalability's usemem (written here, not copied).  N processes each map
 * SIZE bytes of anonymous memory and then, by mode:
 *
 *   seq      write every page in order (swap-w-seq: pressure swaps out)
 *   rand     write every page in a random order (swap-w-rand)
 *   pageout  write every page, MADV_PAGEOUT it all, read it back
 *   cow      write every page, MADV_PAGEOUT it, then in chunks: swap a chunk
 *            in on CPU 0 while a child still maps it, let the child exit,
 *            COW-write the chunk on CPU 1 (anon-cow-swap: the case the
 *            post-COW free changes; see selftests/cow_free.c for why)
 *
 * Every word written names its address, and every page is verified at the
 * end.  Prints one line per process and a total:
 *   usemem: <mode> <nproc> x <size>: <KB/s> KB/s total, <bad> bad words
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

#define PAGE_SZ		4096UL
#define CHUNK_PAGES	16

enum mode { SEQ, RAND, PAGEOUT, COW };
static const char *const mode_names[] = { "seq", "rand", "pageout", "cow" };

struct result {
	unsigned int id;
	double seconds;
	unsigned long bad;
};

static void die(const char *what)
{
	fprintf(stderr, "usemem: %s: %s\n", what, strerror(errno));
	exit(1);
}

static unsigned long parse_size(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	switch (*end) {
	case 'G': case 'g': v <<= 10; /* fall through */
	case 'M': case 'm': v <<= 10; /* fall through */
	case 'K': case 'k': v <<= 10; break;
	case '\0': break;
	default:
		fprintf(stderr, "usemem: bad size '%s'\n", s);
		exit(2);
	}
	return v;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline uint64_t pattern(const void *word, uint64_t seed)
{
	return ((uintptr_t)word * 0x9e3779b97f4a7c15ULL) ^ seed;
}

static void write_page(char *page, uint64_t seed)
{
	uint64_t *w = (uint64_t *)page, *end = (uint64_t *)(page + PAGE_SZ);

	for (; w < end; w++)
		*w = pattern(w, seed);
}

static unsigned long verify(char *buf, unsigned long len, uint64_t seed)
{
	uint64_t *w = (uint64_t *)buf, *end = (uint64_t *)(buf + len);
	unsigned long bad = 0;

	for (; w < end; w++)
		bad += *w != pattern(w, seed);
	return bad;
}

static void run_on_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu % sysconf(_SC_NPROCESSORS_ONLN), &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

static void cow_chunks(char *buf, unsigned long len)
{
	volatile char *p;
	unsigned long off, end;
	pid_t child;

	for (off = 0; off < len; off = end) {
		end = off + CHUNK_PAGES * PAGE_SZ;
		if (end > len)
			end = len;
		child = fork();
		if (child < 0)
			die("fork");
		if (child == 0) {
			run_on_cpu(1);
			pause();
			_exit(0);
		}
		run_on_cpu(0);
		for (p = buf + off; p < buf + end; p += PAGE_SZ)
			(void)*p;
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		run_on_cpu(1);
		for (p = buf + off; p < buf + end; p += PAGE_SZ)
			*(volatile uint64_t *)p = *(volatile uint64_t *)p;
	}
}

static struct result run(enum mode mode, unsigned long size, unsigned int id)
{
	unsigned long pages = size / PAGE_SZ, i, j;
	uint64_t seed = 0x5eed0000 + id;
	struct result r = { .id = id };
	unsigned long *order = NULL;
	double start;
	char *buf;

	buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		die("mmap");
	if (mode == RAND) {
		order = malloc(pages * sizeof(*order));
		if (!order)
			die("malloc");
		for (i = 0; i < pages; i++)
			order[i] = i;
		srandom(seed);
		for (i = pages - 1; i > 0; i--) {
			unsigned long t;

			j = random() % (i + 1);
			t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
	}

	start = now();
	for (i = 0; i < pages; i++)
		write_page(buf + (order ? order[i] : i) * PAGE_SZ, seed);
	if (mode == PAGEOUT || mode == COW) {
		if (madvise(buf, size, MADV_PAGEOUT))
			die("MADV_PAGEOUT");
	}
	if (mode == COW)
		cow_chunks(buf, size);
	r.seconds = now() - start;
	r.bad = verify(buf, size, seed);
	munmap(buf, size);
	free(order);
	return r;
}

int main(int argc, char **argv)
{
	unsigned long size = 64UL << 20, bad = 0;
	unsigned int nproc = 1, i;
	enum mode mode = SEQ;
	double kbps = 0;
	int opt, fds[2];

	while ((opt = getopt(argc, argv, "m:n:s:")) != -1) {
		switch (opt) {
		case 'm':
			for (i = 0; i < 4 && strcmp(optarg, mode_names[i]); i++)
				;
			if (i == 4) {
				fprintf(stderr, "usemem: unknown mode '%s'\n", optarg);
				return 2;
			}
			mode = i;
			break;
		case 'n':
			nproc = strtoul(optarg, NULL, 0);
			break;
		case 's':
			size = parse_size(optarg) & ~(PAGE_SZ - 1);
			break;
		default:
			fprintf(stderr, "usage: usemem [-m seq|rand|pageout|cow] [-n nproc] [-s size[KMG]]\n");
			return 2;
		}
	}
	if (!nproc || !size) {
		fprintf(stderr, "usemem: nproc and size must be positive\n");
		return 2;
	}

	if (pipe(fds))
		die("pipe");
	for (i = 0; i < nproc; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			struct result r = run(mode, size, i);

			if (write(fds[1], &r, sizeof(r)) != sizeof(r))
				die("write");
			_exit(0);
		}
	}
	close(fds[1]);
	for (i = 0; i < nproc; i++) {
		struct result r;
		int status;

		if (read(fds[0], &r, sizeof(r)) != sizeof(r)) {
			fprintf(stderr, "usemem: a worker died\n");
			return 1;
		}
		printf("usemem: worker %u: %.0f KB/s, %lu bad words\n", r.id,
		       size / 1024 / r.seconds, r.bad);
		kbps += size / 1024 / r.seconds;
		bad += r.bad;
		wait(&status);
	}
	printf("usemem: %s %u x %lu MB: %.0f KB/s total, %lu bad words\n",
	       mode_names[mode], nproc, size >> 20, kbps, bad);
	return bad ? 1 : 0;
}
