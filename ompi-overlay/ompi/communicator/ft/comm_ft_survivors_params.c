/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * The survivor allreduce's MCA parameters: registered with the detector's,
 * checked at MPI_Init (an invalid value stops it with a message naming the
 * parameter), and what a communicator's first call reads of them.
 */
#include "ompi_config.h"

#include <stdio.h>

#include "btl_ft/btl_ft_survivors.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/util/show_help.h"

#include "ompi/communicator/ft/comm_ft_detector.h" /* OMPI_FT_DETECTOR_HELP_FILE */
#include "ompi/communicator/ft/comm_ft_param_text.h"
#include "ompi/communicator/ft/comm_ft_survivors.h"
#include "ompi/communicator/ft/comm_ft_survivors_params.h"
#include "ompi/runtime/params.h"

#if OPAL_ENABLE_FT_MPI

/* mpi_ft_survivors_radix, _latency_ratio and _fast_max_bytes, their
 * defaults the core's (btl_ft_survivors.h), and _preconnect. */
static unsigned int survivors_radix = BTL_FT_SURVIVORS_DEFAULT_RADIX;
static double survivors_latency_ratio = BTL_FT_SURVIVORS_DEFAULT_LATENCY_RATIO;
/* -1: the default's (fast_path_bytes) */
static long survivors_fast_max_bytes = -1;
static bool survivors_preconnect = true;
/* the first variable whose value Open MPI itself refused (a bool it cannot
 * read), keeping the default: MPI_Init stops at the check */
static const char *rejected_variable = NULL;

/* Registers mpi_ft_<name>, noting a value Open MPI refused. */
static void register_variable(const char *name, const char *help, mca_base_var_type_t type, void *storage)
{
    int ret = mca_base_var_register("ompi", "mpi", "ft", name, help, type, NULL, 0, 0, OPAL_INFO_LVL_5,
                                    MCA_BASE_VAR_SCOPE_READONLY, storage);

    if (0 > ret && OPAL_ERR_NOT_FOUND != ret && NULL == rejected_variable) {
        rejected_variable = name;
    }
}

int ompi_comm_survivors_register_params(void)
{
    register_variable(
        "survivors_radix",
        "Radix k of the k-nomial tree of MPIX_Comm_allreduce_survivors: a "
        "process has up to k-1 children per level of the tree, so a call "
        "takes about log_k(n) levels up and as many down, and a parent sends "
        "up to k-1 messages in a row. 0 (the default): each communicator "
        "chooses it at its first call, as seed 001 does, as the radix of "
        "lowest latency for its size in a LogP model with "
        "mpi_ft_survivors_latency_ratio (a flat tree up to 8 processes at "
        "the default ratio, 8 at 64, 11 at 1024; ftsim allreduce simulates "
        "the same). Otherwise 2 to 65536. Must be the same in every process",
        MCA_BASE_VAR_TYPE_UNSIGNED_INT, &survivors_radix);
    register_variable(
        "survivors_latency_ratio",
        "The network's ratio of a message's latency to its overhead at each "
        "end (L/o), by which a communicator chooses the radix of "
        "MPIX_Comm_allreduce_survivors when mpi_ft_survivors_radix is 0: the "
        "larger, the wider and shallower the tree. 10 (the default) is seed "
        "001's setting: on one host of 2 cores it chose a flat tree up to 8 "
        "processes, the fastest measured, and radix 14 at 16, within 8 % of "
        "the flat tree. From 0.01 to 10000; must be the same in every "
        "process",
        MCA_BASE_VAR_TYPE_DOUBLE, &survivors_latency_ratio);
    register_variable(
        "survivors_fast_max_bytes",
        "Values of MPIX_Comm_allreduce_survivors up to this many bytes, on "
        "communicators of up to 64 processes, first take a fast path while "
        "no failure is known: recursive doubling, log2(n) exchanges between "
        "pairs, as MPI_Allreduce does for small values, and the k-nomial "
        "tree once a failure meets the call. -1 (the default): 512 where "
        "it beats the tree, else 0: where the LogP model of "
        "mpi_ft_survivors_latency_ratio says so, or, where processes yield "
        "the CPU while they wait (mpi_yield_when_idle, which Open MPI sets "
        "on an oversubscribed node, where each of its log2(n) rounds waits "
        "for a process to be scheduled), at 2 and 4 processes only, where "
        "it takes fewer rounds than the flat tree's three steps. 0: always "
        "the tree. A communicator's first call agrees on the smallest "
        "bound its processes allow, since they must take the fast path all "
        "or none",
        MCA_BASE_VAR_TYPE_LONG, &survivors_fast_max_bytes);
    register_variable(
        "survivors_preconnect",
        "Whether a communicator's first MPIX_Comm_allreduce_survivors opens "
        "the connections its repairs would use first, by one small message "
        "on each: from every process to its parent and its grandparent in "
        "the tree, and from the root's children and grandchildren to the "
        "root's successor (at most 3 per process). A transport that connects "
        "at the first message (TCP) otherwise opens them after a failure, on "
        "the repair's path: across 2 emulated nodes 2 serial crashes then "
        "cost about 1.5 times one crash, against 1.1 with them open. True by "
        "default",
        MCA_BASE_VAR_TYPE_BOOL, &survivors_preconnect);
    return OMPI_SUCCESS;
}

int ompi_comm_survivors_check_params(void)
{
    const char *rule = btl_ft_survivors_radix_problem(survivors_radix);
    char value[32];
    int ret;

    if (NULL != rejected_variable) {
        opal_show_help(OMPI_FT_DETECTOR_HELP_FILE, "rejected-by-mca", true, rejected_variable);
        return OMPI_ERR_BAD_PARAM;
    }
    /* Open MPI reads "abc" as 0 (here the radix's and the bound's defaults)
     * and "2x" as 2 without a word */
    if (OMPI_SUCCESS != (ret = ompi_comm_ft_param_text_check_number("mpi_ft_survivors_radix", true))
        || OMPI_SUCCESS != (ret = ompi_comm_ft_param_text_check_number("mpi_ft_survivors_latency_ratio", false))
        || OMPI_SUCCESS != (ret = ompi_comm_ft_param_text_check_number("mpi_ft_survivors_fast_max_bytes", true))) {
        return ret;
    }
    if (NULL != rule) {
        snprintf(value, sizeof(value), "%u", survivors_radix);
        return ompi_comm_ft_param_text_invalid("mpi_ft_survivors_radix", value, rule);
    }
    rule = btl_ft_survivors_latency_ratio_problem(survivors_latency_ratio);
    if (NULL != rule) {
        snprintf(value, sizeof(value), "%g", survivors_latency_ratio);
        return ompi_comm_ft_param_text_invalid("mpi_ft_survivors_latency_ratio", value, rule);
    }
    if (-1 > survivors_fast_max_bytes) {
        snprintf(value, sizeof(value), "%ld", survivors_fast_max_bytes);
        return ompi_comm_ft_param_text_invalid("mpi_ft_survivors_fast_max_bytes", value,
                                 "must be -1 (chosen for each communicator), 0 or a number of bytes");
    }
    return OMPI_SUCCESS;
}

uint32_t ompi_comm_survivors_radix_for(uint32_t size)
{
    return BTL_FT_SURVIVORS_RADIX_AUTO != survivors_radix
               ? survivors_radix
               : btl_ft_survivors_best_radix(size, survivors_latency_ratio);
}

size_t ompi_comm_survivors_fast_path_bytes(uint32_t size, uint32_t radix)
{
    if (0 <= survivors_fast_max_bytes) {
        return (size_t) survivors_fast_max_bytes;
    }
    return (ompi_mpi_yield_when_idle ? btl_ft_survivors_fast_path_pays_yielding(size)
                                     : btl_ft_survivors_fast_path_pays(size, radix, survivors_latency_ratio))
               ? BTL_FT_SURVIVORS_DEFAULT_FAST_MAX_BYTES
               : 0;
}

bool ompi_comm_survivors_preconnect(void)
{
    return survivors_preconnect;
}

#endif /* OPAL_ENABLE_FT_MPI */
