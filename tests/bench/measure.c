/* measure: run a command once, print its wall time and peak RSS.
 *
 *   measure [-o FILE] -- COMMAND [ARG...]
 *
 * Prints one line on stdout: `<wall seconds> <peak RSS KiB> <exit status>` (exit status
 * is 128+N when killed by signal N). The command's stdout goes to FILE (default
 * /dev/null); its stderr is kept. Wall time spans fork to reap; peak RSS is the child's
 * ru_maxrss from wait4().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *out = "/dev/null";
	int i = 1;
	if (i + 1 < argc && strcmp(argv[i], "-o") == 0) {
		out = argv[i + 1];
		i += 2;
	}
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	if (i >= argc) {
		fprintf(stderr, "usage: measure [-o FILE] -- COMMAND [ARG...]\n");
		return 2;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t pid = fork();
	if (pid < 0) {
		perror("measure: fork");
		return 2;
	}
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) {
			perror("measure: stdout");
			_exit(127);
		}
		execvp(argv[i], argv + i);
		fprintf(stderr, "measure: %s: %s\n", argv[i], strerror(errno));
		_exit(127);
	}
	int status;
	struct rusage ru;
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("measure: wait4");
			return 2;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	printf("%.6f %ld %d\n", (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, ru.ru_maxrss, code);
	return 0;
}
