// SPDX-License-Identifier: GPL-2.0
/*
 * usemem: anonymous-memory workloads that make the kernel swap, modelled on
 * vm-scalability's usemem (written here, not copied).  N processes each map
 * SIZE bytes of anonymous memory and then, by mode:
 *
 *   seq      write every page in order (swap-w-seq: pressure swaps out)
 *   rand     as many one-word writes as the region has pages, each at a
 *            random word, with replacement (vm-scalability's usemem
 *            --random; swap-w-rand)
 *   pageout  write every page and MADV_PAGEOUT it all (verification reads
 *            it back)
 *   cow      write every page, MADV_PAGEOUT it, then in chunks: swap a chunk
 *            in on CPU 0 while a child still maps it, let the child exit,
 *            COW-write the chunk on CPU 1 (anon-cow-swap: the case the
 *            post-COW free changes; see selftests/cow_free.c for why)
 *
 * The timed phases run together and nothing else runs inside them.  Each
 * worker maps its region and prepares what it needs (rand: its PRNG and its
 * bitmap of words written), says it is ready and waits; the parent samples
 * the counters and releases them all at once.  Each worker times its own
 * phase, reports it and waits again; once all are done the parent samples
 * the counters again (the window) and only then lets them verify, so that
 * one worker's verification swap-ins never land in another's timed phase
 * and the counters cover the timed phases, not set-up or verification.
 *
 * Every word written names its address, and every word is verified after
 * the window (rand: every word left unwritten must still be 0).  A worker
 * that dies, say to the OOM killer, fails the run instead of hanging it.
 *
 * Usage: usemem [-m seq|rand|pageout|cow] [-n nproc] [-s size[KMG]]
 *               [-c name=path[:key[:field]]]... [-w ctl-fifo,ack-fifo]...
 * -c samples one more counter around the window, up to 16: a file holding
 * one unsigned integer, e.g. /sys/kernel/mm/swapcache_ab/stats/wb_tagged;
 * or, with a key, the field-th number (1 by default) of the line whose
 * first word is the key, e.g. /proc/stat:ctxt, /proc/stat:cpu:4 (idle).
 * The path may be a glob: the counter is the sum over the files it
 * matches: e.g. the entries: line of every CPU's stats file under
 * /sys/kernel/tracing/per_cpu.
 * -w gates a tool on the window, up to 4, in perf's --control protocol
 * (perf stat/record -D -1 --control fifo:CTL,ACK): "enable" is written to
 * CTL after the counters are sampled at the window's start, "disable"
 * (in the reverse order) right after the last worker stops, each waiting
 * for "ack" on ACK, so that the tool counts the window and nothing else.
 * The tool must hold both fifos open when usemem starts.
 *
 * Prints one line per process, then:
 *   usemem: <mode> <nproc> x <MB> MB: <KB/s> KB/s total, <bad> bad words
 *   usemem: window <seconds> s
 *   usemem: work <pages> pages	pages the timed phases wrote, all workers
 *   usemem: counter <name> <delta>	pswpout, pswpin, then each -c
 *   usemem: swapout <KB/s> KB/s	pswpout over the window
 * where KB/s total sums each process's SIZE over its own timed phase, and
 * the window is CLOCK_MONOTONIC: guest time in a VM (under QEMU's -icount
 * shift=0, one nanosecond per guest instruction while the guest runs).
 * Exits 1 on bad words or any failure, 2 on bad arguments.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

#define CHUNK_PAGES	16
#define MAX_COUNTERS	(2 + 16)	/* pswpout, pswpin, then -c */
/* How often the parent looks for a worker gone without closing its pipe */
#define POLL_MS		100
#define BITS_PER_LONG	(8 * sizeof(unsigned long))

enum mode { SEQ, RAND, PAGEOUT, COW };
static const char *const mode_names[] = { "seq", "rand", "pageout", "cow" };

/* What a worker tells the parent, in this order */
enum msg_kind { READY, DONE, VERIFIED };
static const char *const before_msg[] = {
	[READY] = "it was ready",
	[DONE] = "it ended its timed phase",
	[VERIFIED] = "it verified",
};

struct msg {
	enum msg_kind kind;
	double seconds;		/* its own timed phase, from DONE on */
	unsigned long bad;	/* words that did not match, in VERIFIED */
};

struct worker {
	pid_t pid;
	int fd;			/* read end of the pipe only this worker holds */
	unsigned int msgs;	/* messages received */
	bool reaped;
	int status;
	double seconds;
	unsigned long bad;
};

struct counter {
	const char *name;
	const char *path;	/* NULL: the line of that name in /proc/vmstat */
	const char *key;	/* NULL: the file is one integer */
	unsigned int field;	/* with key: which number of its line */
	unsigned long long v[2];	/* before and after the window */
};

static unsigned long page_sz;
/* A worker's end of its pipe: its cow children must not hold it open */
static int report_fd = -1;

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
	case 'G':
	case 'g':
		v <<= 10;
		/* fall through */
	case 'M':
	case 'm':
		v <<= 10;
		/* fall through */
	case 'K':
	case 'k':
		v <<= 10;
		break;
	case '\0':
		break;
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

/* xorshift64*, as in pmbench.c: cheap next to a page fault */
static inline uint64_t next_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static void write_page(char *page, uint64_t seed)
{
	uint64_t *w = (uint64_t *)page, *end = (uint64_t *)(page + page_sz);

	for (; w < end; w++)
		*w = pattern(w, seed);
}

/* @n writes of one word each at a uniformly random index, with replacement */
static void write_rand(uint64_t *buf, unsigned long words, unsigned long n,
		       uint64_t seed, uint64_t *rnd, unsigned long *written)
{
	unsigned long i, k;

	for (i = 0; i < n; i++) {
		/* Multiply-high, not modulo: no bias toward low indices */
		k = ((__uint128_t)next_rand(rnd) * words) >> 64;
		buf[k] = pattern(&buf[k], seed);
		written[k / BITS_PER_LONG] |= 1UL << (k % BITS_PER_LONG);
	}
}

/* With @written (rand), a word not written must still be 0 */
static unsigned long verify(const uint64_t *buf, unsigned long words,
			    uint64_t seed, const unsigned long *written)
{
	unsigned long bad = 0, i;

	for (i = 0; i < words; i++) {
		uint64_t want = pattern(&buf[i], seed);

		if (written &&
		    !(written[i / BITS_PER_LONG] >> (i % BITS_PER_LONG) & 1))
			want = 0;
		bad += buf[i] != want;
	}
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
	pid_t self = getpid(), child;
	unsigned long off, end;
	volatile char *p;

	for (off = 0; off < len; off = end) {
		end = off + CHUNK_PAGES * page_sz;
		if (end > len)
			end = len;
		child = fork();
		if (child < 0)
			die("fork");
		if (child == 0) {
			/*
			 * The parent sees this worker die by EOF on this pipe;
			 * and a child outliving a killed worker would hold
			 * memory for nothing.
			 */
			close(report_fd);
			if (prctl(PR_SET_PDEATHSIG, SIGKILL) ||
			    getppid() != self)
				_exit(1);
			run_on_cpu(1);
			pause();
			_exit(0);
		}
		run_on_cpu(0);
		for (p = buf + off; p < buf + end; p += page_sz)
			(void)*p;
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		run_on_cpu(1);
		for (p = buf + off; p < buf + end; p += page_sz)
			*(volatile uint64_t *)p = *(volatile uint64_t *)p;
	}
}

static void report(const struct msg *m)
{
	if (write(report_fd, m, sizeof(*m)) != sizeof(*m))
		die("write");
}

/* The parent never writes @go: closing it releases every worker at once */
static void wait_go(int go)
{
	ssize_t r;
	char c;

	do
		r = read(go, &c, 1);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		die("read");
	if (r > 0) {
		fprintf(stderr, "usemem: unexpected data on a barrier pipe\n");
		exit(1);
	}
}

static void worker(enum mode mode, unsigned long size, unsigned int id,
		   int go_start, int go_verify)
{
	unsigned long pages = size / page_sz, words = size / 8, i;
	unsigned long *written = NULL;
	uint64_t seed = 0x5eed0000 + id;
	/* Odd multiplier: never 0, which xorshift would never leave */
	uint64_t rnd = 0x9e3779b97f4a7c15ULL * (id + 1);
	struct msg m = { .kind = READY };
	double start;
	char *buf;

	buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		die("mmap");
	if (mode == RAND) {
		/* Populated now, so that its faults are not timed */
		written = mmap(NULL, (words + 7) / 8, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
			       -1, 0);
		if (written == MAP_FAILED)
			die("mmap");
	}
	report(&m);
	wait_go(go_start);

	start = now();
	if (mode == RAND)
		write_rand((uint64_t *)buf, words, pages, seed, &rnd, written);
	else
		for (i = 0; i < pages; i++)
			write_page(buf + i * page_sz, seed);
	if (mode == PAGEOUT || mode == COW) {
		if (madvise(buf, size, MADV_PAGEOUT))
			die("MADV_PAGEOUT");
	}
	if (mode == COW)
		cow_chunks(buf, size);
	m.seconds = now() - start;
	m.kind = DONE;
	report(&m);
	wait_go(go_verify);

	m.bad = verify((uint64_t *)buf, words, seed, written);
	m.kind = VERIFIED;
	report(&m);
}

static void say_died(unsigned int k, int status, const char *when)
{
	if (WIFSIGNALED(status))
		fprintf(stderr, "usemem: worker %u died (killed by signal %d) %s\n",
			k, WTERMSIG(status), when);
	else
		fprintf(stderr, "usemem: worker %u died (exit status %d) %s\n",
			k, WEXITSTATUS(status), when);
}

/* Kill and reap every worker still there; a failed run leaves none behind */
static void kill_all(struct worker *w, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (w[i].pid > 0 && !w[i].reaped)
			kill(w[i].pid, SIGKILL);
	for (i = 0; i < n; i++) {
		if (w[i].pid <= 0 || w[i].reaped)
			continue;
		while (waitpid(w[i].pid, &w[i].status, 0) < 0 && errno == EINTR)
			;
		w[i].reaped = true;
	}
}

/* Take worker @wk's next message if it is in its pipe */
static bool take(struct worker *wk)
{
	struct msg m;

	if (read(wk->fd, &m, sizeof(m)) != sizeof(m) || m.kind != wk->msgs)
		return false;
	if (m.kind == DONE)
		wk->seconds = m.seconds;
	if (m.kind == VERIFIED)
		wk->bad = m.bad;
	wk->msgs++;
	return true;
}

/*
 * Wait for message @kind from every worker.  A worker that dies first, even
 * one already waiting at the barrier, fails the run at once: EOF on its pipe
 * says so, since only it holds the write end, and waitpid() says so too in
 * case something else still does.
 */
static bool gather(struct worker *w, unsigned int n, enum msg_kind kind,
		   struct pollfd *pfd, unsigned int *idx)
{
	char when[64];

	for (;;) {
		unsigned int nfds = 0, pending = 0, i, k;

		for (i = 0; i < n; i++) {
			if (w[i].msgs > VERIFIED)
				continue;	/* done, and exiting */
			pending += w[i].msgs <= kind;
			pfd[nfds].fd = w[i].fd;
			pfd[nfds].events = POLLIN;
			idx[nfds++] = i;
		}
		if (!pending)
			return true;
		if (poll(pfd, nfds, POLL_MS) < 0) {
			if (errno == EINTR)
				continue;
			perror("usemem: poll");
			kill_all(w, n);
			return false;
		}
		for (k = 0; k < nfds; k++) {
			struct worker *wk = &w[idx[k]];

			if (!pfd[k].revents && !wk->reaped) {
				if (waitpid(wk->pid, &wk->status, WNOHANG) != wk->pid)
					continue;
				/* What it sent before it exited is still there */
				wk->reaped = true;
			}
			if (take(wk))
				continue;
			kill_all(w, n);
			snprintf(when, sizeof(when), "before %s",
				 before_msg[wk->msgs]);
			say_died(idx[k], wk->status, when);
			return false;
		}
	}
}

static bool start_worker(struct worker *w, unsigned int i, enum mode mode,
			 unsigned long size, const int *go_start,
			 const int *go_verify)
{
	pid_t parent = getpid();
	unsigned int j;
	int fds[2];

	if (pipe(fds)) {
		perror("usemem: pipe");
		return false;
	}
	w[i].pid = fork();
	if (w[i].pid < 0) {
		perror("usemem: fork");
		close(fds[0]);
		close(fds[1]);
		return false;
	}
	if (w[i].pid == 0) {
		/*
		 * Hold no write end that the parent or a worker waits on for
		 * EOF, and go with the parent rather than run unwatched.
		 */
		close(go_start[1]);
		close(go_verify[1]);
		close(fds[0]);
		for (j = 0; j < i; j++)
			close(w[j].fd);
		report_fd = fds[1];
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(1);
		worker(mode, size, i, go_start[0], go_verify[0]);
		_exit(0);
	}
	close(fds[1]);
	w[i].fd = fds[0];
	/* A reaped worker's pipe is read without waiting */
	if (fcntl(fds[0], F_SETFL, O_NONBLOCK)) {
		perror("usemem: fcntl");
		return false;
	}
	return true;
}

/* The @field-th number after @key, the first word of a line of @f */
static bool read_keyed(FILE *f, const char *key, unsigned int field,
		       unsigned long long *v)
{
	char line[512], *word, *save, *end;
	unsigned int n;

	while (fgets(line, sizeof(line), f)) {
		word = strtok_r(line, " \t\n", &save);
		if (!word || strcmp(word, key))
			continue;
		n = 0;
		while ((word = strtok_r(NULL, " \t\n", &save))) {
			errno = 0;
			*v = strtoull(word, &end, 10);
			if (end == word || *end || errno)
				continue;	/* a word, not a number */
			if (++n == field)
				return true;
		}
		break;
	}
	return false;
}

/*
 * One unsigned integer, alone on the first line of @path; with @key, the
 * @field-th number of the line that @key starts.  A glob sums its files.
 */
static bool read_file_counter(const struct counter *c, unsigned long long *v)
{
	unsigned long long x, sum = 0;
	char line[64], *end;
	bool ok = true;
	glob_t g;
	size_t i;
	FILE *f;

	if (glob(c->path, 0, NULL, &g)) {
		errno = ENOENT;
		return false;
	}
	for (i = 0; ok && i < g.gl_pathc; i++) {
		f = fopen(g.gl_pathv[i], "r");
		if (!f) {
			ok = false;
			break;
		}
		errno = 0;
		if (c->key) {
			ok = read_keyed(f, c->key, c->field, &x);
		} else {
			ok = false;
			if (fgets(line, sizeof(line), f)) {
				x = strtoull(line, &end, 10);
				ok = end != line && !errno && (*end == '\n' || !*end);
			}
		}
		fclose(f);
		sum += ok ? x : 0;
	}
	globfree(&g);
	if (!ok && !errno)
		errno = EINVAL;
	*v = sum;
	return ok;
}

/* Sample every counter into v[@when]; says what went wrong if one fails */
static bool sample(struct counter *c, unsigned int n, int when)
{
	unsigned int i, want = 0, found = 0;
	unsigned long long v;
	char name[64];
	FILE *f;

	for (i = 0; i < n; i++)
		want += !c[i].path;
	f = fopen("/proc/vmstat", "r");
	if (!f) {
		perror("usemem: /proc/vmstat");
		return false;
	}
	while (fscanf(f, "%63s %llu", name, &v) == 2) {
		for (i = 0; i < n; i++) {
			if (!c[i].path && !strcmp(name, c[i].name)) {
				c[i].v[when] = v;
				found++;
			}
		}
	}
	fclose(f);
	if (found != want) {
		fprintf(stderr, "usemem: /proc/vmstat lacks pswpout or pswpin\n");
		return false;
	}
	for (i = 0; i < n; i++) {
		if (c[i].path && !read_file_counter(&c[i], &c[i].v[when])) {
			fprintf(stderr, "usemem: counter %s: cannot read an unsigned integer from %s: %s\n",
				c[i].name, c[i].path, strerror(errno));
			return false;
		}
	}
	return true;
}

#define MAX_GATES 4
/* A tool gated on the window: perf's --control fifos (-w) */
struct gate {
	const char *ctl_path, *ack_path;
	int ctl, ack;
};

/*
 * Open every gate's fifos, which its tool has open already (perf opens
 * both read-write at its start): a gate no tool holds fails at once
 * rather than hang the run
 */
static bool gates_open(struct gate *g, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		g[i].ctl = open(g[i].ctl_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		g[i].ack = g[i].ctl < 0 ? -1 :
			   open(g[i].ack_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (g[i].ctl < 0 || g[i].ack < 0 ||
		    fcntl(g[i].ctl, F_SETFL, 0) || fcntl(g[i].ack, F_SETFL, 0)) {
			fprintf(stderr, "usemem: -w %s,%s: %s\n", g[i].ctl_path,
				g[i].ack_path, strerror(errno));
			return false;
		}
	}
	return true;
}

/*
 * Send @cmd to one gate and wait for its "ack" line (perf writes "ack\n"
 * with its terminating NUL: NULs between lines are skipped)
 */
static bool gate_send(struct gate *g, const char *cmd)
{
	char buf[8], c;
	size_t len = strlen(cmd), got = 0;
	ssize_t r;

	if (write(g->ctl, cmd, len) != (ssize_t)len) {
		fprintf(stderr, "usemem: -w %s: writing '%s' failed\n", g->ctl_path, cmd);
		return false;
	}
	for (;;) {
		r = read(g->ack, &c, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			fprintf(stderr, "usemem: -w %s: no ack for '%s'\n", g->ack_path, cmd);
			return false;
		}
		if (c == '\n')
			break;
		if (c && got < sizeof(buf) - 1)
			buf[got++] = c;
	}
	buf[got] = '\0';
	if (strcmp(buf, "ack")) {
		fprintf(stderr, "usemem: -w %s: '%s' instead of ack\n", g->ack_path, buf);
		return false;
	}
	return true;
}

/* "enable" in the order given, "disable" in the reverse one */
static bool gates_send(struct gate *g, unsigned int n, bool enable)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!gate_send(&g[enable ? i : n - 1 - i], enable ? "enable\n" : "disable\n"))
			return false;
	return true;
}

static void usage_exit(void)
{
	fprintf(stderr, "usage: usemem [-m seq|rand|pageout|cow] [-n nproc] [-s size[KMG]]\n"
		"              [-c name=path[:key[:field]]]... [-w ctl-fifo,ack-fifo]...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct counter ctr[MAX_COUNTERS] = { { .name = "pswpout" },
					     { .name = "pswpin" } };
	unsigned long size = 64UL << 20, bad = 0;
	unsigned int nproc = 1, nctr = 2, ngate = 0, i, *idx;
	struct gate gate[MAX_GATES];
	int opt, go_start[2], go_verify[2], ret;
	double kbps = 0, t0, window;
	enum mode mode = SEQ;
	struct pollfd *pfd;
	struct worker *w;
	char *eq, *colon, *comma;

	page_sz = sysconf(_SC_PAGESIZE);
	while ((opt = getopt(argc, argv, "m:n:s:c:w:")) != -1) {
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
			size = parse_size(optarg) & ~(page_sz - 1);
			break;
		case 'c':
			eq = strchr(optarg, '=');
			if (!eq || eq == optarg || !eq[1]) {
				fprintf(stderr, "usemem: -c wants name=path, not '%s'\n",
					optarg);
				return 2;
			}
			if (nctr == MAX_COUNTERS) {
				fprintf(stderr, "usemem: at most %d -c counters\n",
					MAX_COUNTERS - 2);
				return 2;
			}
			*eq = '\0';
			ctr[nctr].name = optarg;
			ctr[nctr].path = eq + 1;
			colon = strchr(eq + 1, ':');
			if (colon) {
				*colon = '\0';
				ctr[nctr].key = colon + 1;
				ctr[nctr].field = 1;
				colon = strchr(colon + 1, ':');
				/* a key may end in ':' ("entries:"): a field follows a second one */
				if (colon && colon[1]) {
					*colon = '\0';
					ctr[nctr].field = strtoul(colon + 1, NULL, 10);
				}
				if (!*ctr[nctr].key || !ctr[nctr].field) {
					fprintf(stderr, "usemem: -c %s: bad key or field\n", optarg);
					return 2;
				}
			}
			nctr++;
			break;
		case 'w':
			comma = strchr(optarg, ',');
			if (!comma || comma == optarg || !comma[1]) {
				fprintf(stderr, "usemem: -w wants ctl-fifo,ack-fifo, not '%s'\n",
					optarg);
				return 2;
			}
			if (ngate == MAX_GATES) {
				fprintf(stderr, "usemem: at most %d -w gates\n", MAX_GATES);
				return 2;
			}
			*comma = '\0';
			gate[ngate].ctl_path = optarg;
			gate[ngate].ack_path = comma + 1;
			ngate++;
			break;
		default:
			usage_exit();
		}
	}
	if (optind != argc)
		usage_exit();
	if (!nproc || !size) {
		fprintf(stderr, "usemem: nproc and size must be positive\n");
		return 2;
	}
	/* A counter that cannot be read now is a mistake on the command line */
	if (!sample(ctr, nctr, 0))
		return 2;

	w = calloc(nproc, sizeof(*w));
	pfd = calloc(nproc, sizeof(*pfd));
	idx = calloc(nproc, sizeof(*idx));
	if (!w || !pfd || !idx)
		die("calloc");
	if (pipe(go_start) || pipe(go_verify))
		die("pipe");
	for (i = 0; i < nproc; i++) {
		if (!start_worker(w, i, mode, size, go_start, go_verify)) {
			kill_all(w, i + 1);
			return 1;
		}
	}
	close(go_start[0]);
	close(go_verify[0]);

	if (!gather(w, nproc, READY, pfd, idx))
		return 1;
	if (!sample(ctr, nctr, 0) || !gates_open(gate, ngate) ||
	    !gates_send(gate, ngate, true)) {
		kill_all(w, nproc);
		return 1;
	}
	t0 = now();
	close(go_start[1]);
	if (!gather(w, nproc, DONE, pfd, idx))
		return 1;
	window = now() - t0;
	if (!gates_send(gate, ngate, false) || !sample(ctr, nctr, 1)) {
		kill_all(w, nproc);
		return 1;
	}
	close(go_verify[1]);
	if (!gather(w, nproc, VERIFIED, pfd, idx))
		return 1;

	ret = 0;
	for (i = 0; i < nproc; i++) {
		if (!w[i].reaped) {
			while (waitpid(w[i].pid, &w[i].status, 0) < 0 &&
			       errno == EINTR)
				;
			w[i].reaped = true;
		}
		if (!WIFEXITED(w[i].status) || WEXITSTATUS(w[i].status)) {
			say_died(i, w[i].status, "after it verified");
			ret = 1;
		}
		printf("usemem: worker %u: %.0f KB/s, %lu bad words\n", i,
		       size / 1024 / w[i].seconds, w[i].bad);
		kbps += size / 1024 / w[i].seconds;
		bad += w[i].bad;
	}
	printf("usemem: %s %u x %lu MB: %.0f KB/s total, %lu bad words\n",
	       mode_names[mode], nproc, size >> 20, kbps, bad);
	printf("usemem: window %.6f s\n", window);
	printf("usemem: work %lu pages\n", nproc * (size / page_sz));
	for (i = 0; i < nctr; i++)
		printf("usemem: counter %s %lld\n", ctr[i].name,
		       (long long)(ctr[i].v[1] - ctr[i].v[0]));
	printf("usemem: swapout %.0f KB/s\n",
	       (ctr[0].v[1] - ctr[0].v[0]) * (page_sz / 1024.0) / window);
	return bad || ret ? 1 : 0;
}
