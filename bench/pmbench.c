// SPDX-License-Identifier: GPL-2.0
/*
 * pmbench: page accesses with a uniform random pattern and a read/write
 * mix over an anonymous map larger than the memory it may use, modelled on
 * pmbench (written here, not copied).  With -f, the map is first shared
 * with a forked child that exits, so that swapped pages come back through
 * the swap cache and writes to them COW: the case cow_free changes.
 *
 * Usage: pmbench [-s MB] [-d seconds] [-r read percent] [-f]
 * Prints accesses/s and access latency percentiles:
 *   pmbench: <size> MB, <read>% reads, <n> accesses in <s> s: <rate> accesses/s,
 *            latency p50 <ns> p90 <ns> p99 <ns> p99.9 <ns>
 * Latencies go into buckets 2^(1/32) (about 2.2%) wide from 64 ns to
 * 64 ns * 2^26 (about 4.3 s; the first bucket takes anything faster, the
 * last anything slower), and a percentile is reported as the geometric
 * midpoint of its bucket, not its floor: so it moves by 2.2%, not 19%, and
 * is at most 1.1% off the latencies that bucket holds.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE_SZ		4096UL
/* Latency histogram: buckets of 2^(1/32) from 64 ns to 64 ns * 2^26 */
#define BUCKET_STEPS	32
#define NR_BUCKETS	(BUCKET_STEPS * 26 + 1)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Floors not rounded, so that the fine buckets near 64 ns keep their width */
static double bucket_floor[NR_BUCKETS];
static uint64_t bucket_mid[NR_BUCKETS];

static void init_buckets(void)
{
	unsigned int b;

	for (b = 0; b < NR_BUCKETS; b++) {
		bucket_floor[b] = 64 * exp2((double)b / BUCKET_STEPS);
		bucket_mid[b] = llround(64 * exp2((b + 0.5) / BUCKET_STEPS));
	}
}

static unsigned int bucket_of(uint64_t ns)
{
	unsigned int lo = 0, hi = NR_BUCKETS - 1;

	while (lo < hi) {
		unsigned int mid = (lo + hi + 1) / 2;

		if (ns >= bucket_floor[mid])
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

static uint64_t percentile(const unsigned long *hist, unsigned long n, double p)
{
	unsigned long want = n * p, seen = 0;
	unsigned int b;

	for (b = 0; b < NR_BUCKETS; b++) {
		seen += hist[b];
		if (seen > want)
			return bucket_mid[b];
	}
	return bucket_mid[NR_BUCKETS - 1];
}

/* xorshift64*: cheap enough not to dominate an access */
static inline uint64_t next_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

int main(int argc, char **argv)
{
	unsigned long size = 256UL << 20, pages, n = 0, bad = 0, i;
	unsigned long hist[NR_BUCKETS] = { 0 };
	unsigned int read_pct = 50, seconds = 10;
	uint64_t rnd = 0x9e3779b97f4a7c15ULL, start, end;
	bool fork_first = false;
	uint64_t *map;
	int opt;

	while ((opt = getopt(argc, argv, "s:d:r:f")) != -1) {
		switch (opt) {
		case 's':
			size = strtoul(optarg, NULL, 0) << 20;
			break;
		case 'd':
			seconds = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			read_pct = strtoul(optarg, NULL, 0);
			break;
		case 'f':
			fork_first = true;
			break;
		default:
			fprintf(stderr, "usage: pmbench [-s MB] [-d seconds] [-r read%%] [-f]\n");
			return 2;
		}
	}
	if (!size || !seconds || read_pct > 100) {
		fprintf(stderr, "pmbench: bad arguments\n");
		return 2;
	}
	pages = size / PAGE_SZ;
	init_buckets();
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		perror("pmbench: mmap");
		return 1;
	}
	/* Each page's first word names the page, so a lost page shows */
	for (i = 0; i < pages; i++)
		map[i * (PAGE_SZ / 8)] = i;
	if (fork_first) {
		pid_t child = fork();

		if (child == 0)
			_exit(0);
		waitpid(child, NULL, 0);
	}

	start = now_ns();
	end = start + seconds * 1000000000ULL;
	for (;;) {
		uint64_t r = next_rand(&rnd), t0, t1;
		unsigned long page = r % pages;
		volatile uint64_t *w = &map[page * (PAGE_SZ / 8)];

		t0 = now_ns();
		if ((r >> 40) % 100 < read_pct)
			bad += *w != page;
		else
			*w = page;
		t1 = now_ns();
		hist[bucket_of(t1 - t0)]++;
		if (++n % 1024 == 0 && t1 >= end)
			break;
	}
	end = now_ns();

	printf("pmbench: %lu MB, %u%% reads, %lu accesses in %.2f s: %.0f accesses/s, latency p50 %lu p90 %lu p99 %lu p99.9 %lu ns, %lu bad pages\n",
	       size >> 20, read_pct, n, (end - start) / 1e9, n * 1e9 / (end - start),
	       percentile(hist, n, 0.5), percentile(hist, n, 0.9),
	       percentile(hist, n, 0.99), percentile(hist, n, 0.999), bad);
	return bad ? 1 : 0;
}
