/*
 * Runs a program as on an older kernel: the system calls named fail with
 * ENOSYS, as they do where they do not exist yet (epoll_pwait2 before Linux
 * 5.11, pidfd_open before 5.3). A seccomp filter, kept across exec and by
 * every thread and child of the program.
 *
 *   without_syscalls NR[,NR...] PROGRAM [ARGS...]
 *
 * x86-64 only; elsewhere it refuses to run (exit 77: the test is skipped).
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define MAX_CALLS 8

int main(int argc, char **argv)
{
    struct sock_filter filter[4 + 2 * MAX_CALLS];
    struct sock_fprog program;
    unsigned count = 0, at = 0;
    long numbers[MAX_CALLS];

#if !defined(__x86_64__)
    fprintf(stderr, "without_syscalls: x86-64 only\n");
    return 77;
#endif
    if (argc < 3) {
        fprintf(stderr, "usage: without_syscalls NR[,NR...] PROGRAM [ARGS...]\n");
        return 2;
    }
    for (char *part = strtok(argv[1], ","); part != NULL && count < MAX_CALLS; part = strtok(NULL, ",")) {
        numbers[count++] = strtol(part, NULL, 10);
    }
    /* another architecture's calls pass untouched; a listed number fails */
    filter[at++] = (struct sock_filter) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    filter[at++] = (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 2 * count + 1);
    filter[at++] = (struct sock_filter) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    for (unsigned i = 0; i < count; ++i) {
        filter[at++] = (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned) numbers[i], 0, 1);
        filter[at++] = (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA));
    }
    filter[at++] = (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    program.len = (unsigned short) at;
    program.filter = filter;
    if (0 != prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || 0 != prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program)) {
        perror("without_syscalls: seccomp");
        return 77;
    }
    execvp(argv[2], argv + 2);
    perror("without_syscalls: exec");
    return 127;
}
