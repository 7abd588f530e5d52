// SPDX-License-Identifier: GPL-2.0
/*
 * reaper: run a command as a child subreaper.
 *
 *   reaper LOG CMD [ARGS...]
 *
 * `criu restore -d` leaves the restored process tree behind when it exits;
 * the tree's root is then re-parented to the nearest subreaper. Running the
 * test script under this program makes that us: every such orphan is
 * reaped as soon as it exits (so its pid is free again for the next
 * restore of the same images) and a line "<pid> exit <code>" or
 * "<pid> signal <number>" is appended to LOG for the test to read. The exit
 * status is CMD's; orphans still running when CMD exits go to init.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static void record(const char *log, pid_t pid, int status)
{
	char line[64];
	int fd, len;

	if (WIFEXITED(status))
		len = snprintf(line, sizeof(line), "%d exit %d\n", (int)pid,
			       WEXITSTATUS(status));
	else
		len = snprintf(line, sizeof(line), "%d signal %d\n", (int)pid,
			       WTERMSIG(status));
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, len) != len)
		perror("reaper: write");
	close(fd);
}

int main(int argc, char **argv)
{
	pid_t cmd, pid;
	int status, cmd_status = 0;

	if (argc < 3) {
		fprintf(stderr, "Usage: reaper LOG CMD [ARGS...]\n");
		return 2;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) {
		perror("reaper: PR_SET_CHILD_SUBREAPER");
		return 2;
	}
	cmd = fork();
	if (cmd < 0) {
		perror("reaper: fork");
		return 2;
	}
	if (!cmd) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "reaper: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	/* Reap until CMD exits; orphans still running then go to init. */
	for (;;) {
		pid = waitpid(-1, &status, __WALL);
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0) {
			perror("reaper: waitpid");
			return 2;
		}
		if (pid == cmd) {
			cmd_status = status;
			break;
		}
		record(argv[1], pid, status);
	}
	if (WIFSIGNALED(cmd_status))
		return 128 + WTERMSIG(cmd_status);
	return WEXITSTATUS(cmd_status);
}
