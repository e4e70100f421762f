// SPDX-License-Identifier: GPL-2.0
/*
 * readtwice: lru-file-readtwice's readers, modelled on vm-scalability's
 * case (written here, not copied): two processes read each file given,
 * sequentially in 64 KiB reads, at the same time.  Meant for sparse files
 * larger than memory, so the file LRU turns over.  Prints the total rate:
 *   readtwice: <n> files x 2 readers, <MB> MB: <KB/s> KB/s total
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void read_all(const char *path)
{
	static char buf[64 << 10];
	int fd = open(path, O_RDONLY);

	if (fd < 0) {
		perror(path);
		_exit(1);
	}
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	_exit(0);
}

int main(int argc, char **argv)
{
	unsigned long long bytes = 0;
	int i, r, status, failed = 0;
	double start, secs;

	if (argc < 2) {
		fprintf(stderr, "usage: readtwice FILE...\n");
		return 2;
	}
	start = now();
	for (i = 1; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY);

		if (fd < 0) {
			perror(argv[i]);
			return 1;
		}
		bytes += 2 * (unsigned long long)lseek(fd, 0, SEEK_END);
		close(fd);
		for (r = 0; r < 2; r++)
			if (fork() == 0)
				read_all(argv[i]);
	}
	while (wait(&status) > 0)
		failed |= !WIFEXITED(status) || WEXITSTATUS(status);
	secs = now() - start;
	printf("readtwice: %d files x 2 readers, %llu MB: %.0f KB/s total\n",
	       argc - 1, bytes >> 20, bytes / 1024 / secs);
	return failed;
}
