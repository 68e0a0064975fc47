/* The processes below this one, found through /proc: what a job's
 * workers left behind when they setsid() away from their process group
 * (hvdrun and the agents are child subreapers, so such processes stay
 * below them). */
#ifndef HVD_DESCENDANTS_H
#define HVD_DESCENDANTS_H

#include <stddef.h>
#include <sys/types.h>

typedef struct pid_set {
    pid_t *v;
    size_t n, cap;
} pid_set;

void pid_set_release(pid_set *s);
/* Adds pid; 0, or -1 when out of memory. */
int pid_set_add(pid_set *s, pid_t pid);
int pid_set_has(const pid_set *s, pid_t pid);

/* 1 when this process has a child that is not in keep (or a zombie not
 * yet reaped), 0 when it has none, -1 when the kernel cannot tell cheaply
 * (then ask descendants_find). */
int descendants_any(const pid_t *keep, int nkeep);

/* Every descendant of this process but the processes in keep and theirs,
 * and but those that have ended (zombies), into out (which the caller
 * releases). Returns 0, or -1 when /proc
 * cannot be read or memory runs out. */
int descendants_find(const pid_t *keep, int nkeep, pid_set *out);

/* pid's command line, its words joined by spaces and cut to size; "?"
 * once it is gone. */
void proc_command(pid_t pid, char *buf, size_t size);

/* 1 when pid has a descriptor open on the file or pipe whose inode is
 * ino. */
int proc_holds(pid_t pid, ino_t ino);

/* The HOROVOD_RANK in pid's environment, or -1. */
int proc_rank(pid_t pid);

#endif
