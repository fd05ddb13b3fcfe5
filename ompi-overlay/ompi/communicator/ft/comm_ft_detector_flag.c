/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * The heartbeat flag of the detector's own transport: a word in a small
 * file of the job's session directory, <dir>/btl_ft.<rank>.flag, mapped
 * shared by its owner, which reads it, and by the node-mates that emit to
 * it, which store each heartbeat word into it. A heartbeat between
 * node-mates is then one store, with no call and no wakeup on either side.
 * The owner publishes the file's path with its addresses, so a node-mate
 * of another job (spawned, connected) maps it as well. Every file
 * operation is local and never waits for a peer: mapping the flag of a
 * process that has died maps a file nobody reads.
 *
 * Rejected: a flag allocated by UCX (ucp_mem_map) and mapped through its
 * rkey (ucp_rkey_ptr). UCX 1.13 crashed the emitter in
 * ucp_ep_rkey_unpack's error path when the new observer's shared memory
 * was already gone (uct_rkey_release, mpi.finalize_race_tcp_np16), and a
 * flag mapped at MPI_Init for every node-mate instead would attach every
 * node-mate's segment in every process.
 */

#include "ompi_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ompi/communicator/ft/comm_ft_detector.h"

/* one cache line: the word and nothing that shares its line */
#define FLAG_BYTES 64

static volatile uint64_t *map_file(int fd)
{
    void *map = mmap(NULL, FLAG_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

    close(fd);
    return MAP_FAILED == map ? NULL : map;
}

volatile uint64_t *ompi_comm_ft_flag_create(uint32_t self, char **path)
{
    volatile uint64_t *flag = NULL;
    int fd;

    *path = ompi_comm_ft_session_file(self, "flag");
    fd = NULL == *path ? -1 : open(*path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (0 <= fd && 0 != ftruncate(fd, FLAG_BYTES)) {
        close(fd);
        fd = -1;
    }
    if (0 <= fd) {
        flag = map_file(fd);
    }
    if (NULL == flag) {
        free(*path);
        *path = NULL;
    }
    return flag;
}

volatile uint64_t *ompi_comm_ft_flag_map(const char *path, bool *gone)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat info;

    *gone = 0 > fd && ENOENT == errno;
    if (0 > fd) {
        return NULL;
    }
    if (0 != fstat(fd, &info) || FLAG_BYTES > info.st_size) {
        close(fd);
        return NULL; /* not yet sized by its owner */
    }
    return map_file(fd);
}

void ompi_comm_ft_flag_unmap(volatile uint64_t *flag)
{
    if (NULL != flag) {
        (void) munmap((void *) flag, FLAG_BYTES);
    }
}

void ompi_comm_ft_flag_remove(char *path, volatile uint64_t *flag)
{
    ompi_comm_ft_flag_unmap(flag);
    (void) unlink(path);
    free(path);
}
