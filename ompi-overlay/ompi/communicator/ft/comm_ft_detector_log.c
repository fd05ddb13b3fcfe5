/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Verbose output of the btl_ft shim that may run on the detector thread.
 *
 * opal_output formats every line into one buffer shared by the process
 * and guards it only when OPAL's locks are on. The detector's own
 * transport exists so that they can stay off (mpi_ft_detector_transport
 * ucx): a line printed by the detector thread while the application
 * prints would then corrupt both. This prints what opal_output_verbose
 * would on ompi_ftmpi_output_handle, at the same levels and with the
 * same prefix, formatted on the caller's stack and written with one
 * write(2), which the kernel keeps whole on a pipe up to PIPE_BUF bytes.
 *
 * Rejected: handing lines to the application's threads for printing. A
 * process whose application computes, or hangs, would then never say
 * what its detector saw.
 */

#include "ompi_config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "opal/util/output.h"
#include "opal/runtime/opal.h"

#include "ompi/communicator/ft/comm_ft_detector.h"
#include "ompi/runtime/ompi_rte.h"
#include "ompi/runtime/params.h"

#define LINE_MAX_BYTES 1024

/* "[host:pid] [[job,vpid],rank] ", as opal_output and OMPI_NAME_PRINT
 * would print it; set once, on the application's thread */
static char prefix[256] = "";

void ompi_comm_ft_log_init(void)
{
    snprintf(prefix, sizeof(prefix), "[%s:%05d] %s ", opal_gethostname(), (int) getpid(),
             OMPI_NAME_PRINT(OMPI_PROC_MY_NAME));
}

void ompi_comm_ft_log(int level, const char *format, ...)
{
    char line[LINE_MAX_BYTES];
    size_t length;
    int written;
    va_list args;

    if (opal_output_get_verbosity(ompi_ftmpi_output_handle) < level) {
        return;
    }
    length = strlen(prefix);
    memcpy(line, prefix, length);
    va_start(args, format);
    written = vsnprintf(line + length, sizeof(line) - length - 1, format, args);
    va_end(args);
    if (written < 0) {
        return;
    }
    length += (size_t) written < sizeof(line) - length - 1 ? (size_t) written
                                                            : sizeof(line) - length - 2;
    line[length++] = '\n';
    (void) !write(STDERR_FILENO, line, length);
}
