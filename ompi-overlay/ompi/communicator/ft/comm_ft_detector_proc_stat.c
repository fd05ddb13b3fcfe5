/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/* Fields of /proc stat files (comm_ft_detector_proc_stat.h; proc(5)). */

#include "comm_ft_detector_proc_stat.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIELD_STATE 3 /* numbered from 1, as proc(5) does */
#define FIELD_FLAGS 9
#define FIELD_THREADS 20
#define FIELD_PENDING 31
#define FIELD_START_TIME 22
#define FIELD_EXIT_CODE 52

/* The file at `path` into text (of `size` bytes), terminated. */
static ompi_comm_ft_proc_stat_result_t read_text(const char *path, char *text, size_t size)
{
    ssize_t length;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (0 > fd) {
        return ENOENT == errno || ESRCH == errno ? OMPI_COMM_FT_PROC_STAT_GONE
                                                : OMPI_COMM_FT_PROC_STAT_UNREADABLE;
    }
    length = read(fd, text, size - 1);
    close(fd);
    if (0 >= length) {
        return OMPI_COMM_FT_PROC_STAT_UNREADABLE;
    }
    text[length] = '\0';
    return OMPI_COMM_FT_PROC_STAT_READ;
}

ompi_comm_ft_proc_stat_result_t ompi_comm_ft_proc_stat_read(const char *path,
                                                            ompi_comm_ft_proc_stat_t *stat)
{
    char text[1024], *field, *end;
    int number = FIELD_STATE;
    ompi_comm_ft_proc_stat_result_t result = read_text(path, text, sizeof(text));

    if (OMPI_COMM_FT_PROC_STAT_READ != result) {
        return result;
    }
    *stat = (ompi_comm_ft_proc_stat_t){0};
    /* the command name may hold spaces and parentheses: fields follow the last ')' */
    if (NULL == (field = strrchr(text, ')'))) {
        return OMPI_COMM_FT_PROC_STAT_UNREADABLE;
    }
    for (field = strtok_r(field + 1, " \n", &end); NULL != field;
         field = strtok_r(NULL, " \n", &end), ++number) {
        if (FIELD_STATE == number) {
            stat->state = field[0];
        } else if (FIELD_FLAGS == number) {
            stat->flags = strtoull(field, NULL, 10);
        } else if (FIELD_THREADS == number) {
            stat->threads = strtoull(field, NULL, 10);
        } else if (FIELD_PENDING == number) {
            stat->pending = strtoull(field, NULL, 10);
        } else if (FIELD_START_TIME == number) {
            stat->start_time = strtoull(field, NULL, 10);
        } else if (FIELD_EXIT_CODE == number) {
            stat->exit_code = strtoull(field, NULL, 10);
        }
    }
    return number > FIELD_START_TIME ? OMPI_COMM_FT_PROC_STAT_READ : OMPI_COMM_FT_PROC_STAT_UNREADABLE;
}

bool ompi_comm_ft_proc_stat_ended(const ompi_comm_ft_proc_stat_t *stat)
{
    return 'X' == stat->state || 'x' == stat->state || ('Z' == stat->state && stat->threads <= 1);
}

bool ompi_comm_ft_proc_stat_killed(uint64_t pid)
{
    char path[64], text[4096], *line;
    unsigned long long shared;

    snprintf(path, sizeof(path), "/proc/%" PRIu64 "/status", pid);
    if (OMPI_COMM_FT_PROC_STAT_READ != read_text(path, text, sizeof(text))
        || NULL == (line = strstr(text, "\nShdPnd:"))
        || 1 != sscanf(line + strlen("\nShdPnd:"), "%llx", &shared)) {
        return false;
    }
    return 0 != (shared & (1ull << (SIGKILL - 1)));
}

ompi_comm_ft_proc_stat_result_t ompi_comm_ft_proc_stat_run_time(const char *schedstat_path, uint64_t *run_ns)
{
    char text[128], *end;
    ompi_comm_ft_proc_stat_result_t result = read_text(schedstat_path, text, sizeof(text));

    if (OMPI_COMM_FT_PROC_STAT_READ != result) {
        return result;
    }
    errno = 0;
    *run_ns = strtoull(text, &end, 10);
    return end == text || 0 != errno ? OMPI_COMM_FT_PROC_STAT_UNREADABLE : OMPI_COMM_FT_PROC_STAT_READ;
}

bool ompi_comm_ft_proc_stat_find_thread(uint64_t pid, const char *name, int32_t *tid)
{
    char path[320], comm[32]; /* a task directory name: up to NAME_MAX bytes */
    struct dirent *entry;
    bool found = false;
    DIR *tasks;

    snprintf(path, sizeof(path), "/proc/%" PRIu64 "/task", pid);
    if (NULL == (tasks = opendir(path))) {
        return false;
    }
    while (!found && NULL != (entry = readdir(tasks))) {
        if ('.' == entry->d_name[0]) {
            continue;
        }
        snprintf(path, sizeof(path), "/proc/%" PRIu64 "/task/%s/comm", pid, entry->d_name);
        if (OMPI_COMM_FT_PROC_STAT_READ == read_text(path, comm, sizeof(comm))) {
            comm[strcspn(comm, "\n")] = '\0';
            found = 0 == strcmp(comm, name);
            *tid = found ? (int32_t) strtol(entry->d_name, NULL, 10) : 0;
        }
    }
    closedir(tasks);
    return found;
}

ompi_comm_ft_thread_seen_t ompi_comm_ft_proc_stat_look_at_thread(uint64_t pid, const char *name,
                                                                 ompi_comm_ft_thread_look_t *look)
{
    ompi_comm_ft_proc_stat_t fields;
    ompi_comm_ft_proc_stat_result_t result;
    uint64_t run_ns;
    char path[96];
    bool starved;

    if (0 == look->tid && !ompi_comm_ft_proc_stat_find_thread(pid, name, &look->tid)) {
        return OMPI_COMM_FT_THREAD_MISSING;
    }
    snprintf(path, sizeof(path), "/proc/%" PRIu64 "/task/%" PRId32 "/stat", pid, look->tid);
    result = ompi_comm_ft_proc_stat_read(path, &fields);
    if (OMPI_COMM_FT_PROC_STAT_READ == result) {
        snprintf(path, sizeof(path), "/proc/%" PRIu64 "/task/%" PRId32 "/schedstat", pid, look->tid);
        result = ompi_comm_ft_proc_stat_run_time(path, &run_ns);
    }
    if (OMPI_COMM_FT_PROC_STAT_READ != result) {
        *look = (ompi_comm_ft_thread_look_t){0}; /* looked for again next time */
        return OMPI_COMM_FT_PROC_STAT_GONE == result ? OMPI_COMM_FT_THREAD_MISSING
                                                    : OMPI_COMM_FT_THREAD_UNREADABLE;
    }
    /* a thread that never ran has 0 ns: starved since it was made */
    starved = 'R' == fields.state && (look->looked ? run_ns == look->run_ns : 0 == run_ns);
    look->looked = true;
    look->run_ns = run_ns;
    return starved ? OMPI_COMM_FT_THREAD_STARVED : OMPI_COMM_FT_THREAD_RAN;
}
