#include "hvdd_fixture.h"

#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* In the child: fd[k] at target[k], whatever their numbers were (out of
 * the way first: one may be another's target). */
static void
put_at(int *fd, const int *target, int n)
{
    for (int k = 0; k < n; k++)
        if ((fd[k] = fcntl(fd[k], F_DUPFD, 10)) < 0)
            _exit(127);
    for (int k = 0; k < n; k++)
        if (dup2(fd[k], target[k]) < 0)
            _exit(127);
}

void
hvdd_fixture_start(hvdd_fixture *f)
{
    hvdd_fixture_start_hosts(f, "h:3");
}

void
hvdd_fixture_start_hosts(hvdd_fixture *f, const char *hosts)
{
    int in[2], out[2], ch[2];
    char line[64] = {0};
    FILE *rd;

    ck_assert_int_eq(pipe2(in, O_CLOEXEC), 0);
    ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ch), 0);
    if ((f->pid = fork()) == 0) {
        signal(SIGTERM, SIG_DFL);
        int fd[3] = {ch[1], in[0], out[1]}, target[3] = {4, 0, 1};
        put_at(fd, target, 3);
        alarm(60);
        execl(HVD_BIN_DIR "/hvdd", "hvdd", "--size", "3", "--hosts", hosts,
              "--listen", "127.0.0.1:0", "--token-stdin", "--channel-fd", "4",
              (char *)NULL);
        _exit(127);
    }
    ck_assert_int_gt(f->pid, 0);
    close(in[0]);
    close(out[1]);
    close(ch[1]);
    ck_assert_int_eq(
        write(in[1], HVDD_FIXTURE_TOKEN "\n", strlen(HVDD_FIXTURE_TOKEN) + 1),
        strlen(HVDD_FIXTURE_TOKEN) + 1);
    rd = fdopen(out[0], "r");
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), rd));
    fclose(rd);
    ck_assert_int_eq(sscanf(line, "listening %d", &f->port), 1);
    f->lifeline = in[1];
    f->chan = ch[0];
}

void
hvdd_fixture_stop(hvdd_fixture *f)
{
    if (f->pid <= 0)
        return;
    close(f->lifeline);
    waitpid(f->pid, NULL, 0);
    f->pid = 0;
}
