/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * MCA variables of the btl_ft failure detector (mpi_ft_detector_* and
 * mpi_ft_propagator): their registration with the defaults of btl_ft.h,
 * their parsing at MPI_Init, and the core's verdict on their values shown
 * under their names. The ranges are the core's alone (btl_ft_config_problem):
 * this file only checks that a value is of the right kind.
 *
 * Period and timeout are DOUBLE variables, but mca_base_var turns "abc" into
 * 0.0 without a word (strtod(src, NULL)); when the value came through the
 * environment (mpirun -mca, OMPI_MCA_*), the original text is parsed again here
 * so the message names what the user wrote. The ring order and propagator
 * words are parsed by the core, which owns their names.
 * Bool variables keep Open MPI's own parsing: it already names the variable and
 * the accepted words; we only turn its registration error into a failed
 * MPI_Init instead of a silently ignored setting.
 */

#include "ompi_config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/util/printf.h"
#include "opal/util/show_help.h"

#include "ompi/constants.h"
#include "ompi/communicator/ft/comm_ft_detector.h"

/* beyond this a number of seconds has no int64 nanosecond value */
#define SECONDS_REPRESENTABLE 9.0e9
#define SECONDS_RULE "must be a positive number of seconds"

/* The variables' storage, with the defaults of btl_ft.h. */
typedef struct ompi_comm_ft_detector_vars_t {
    bool enable;
    bool use_thread;
    bool rdma_heartbeat;
    bool fence;
    double period_s;
    double timeout_s;
    char *ring_order;
    char *propagator;
    uint64_t seed;
    unsigned int probe_width;
    bool quorum;
    bool witness;
    bool watch_node;
    double node_grace_s;
    char *transport;
} ompi_comm_ft_detector_vars_t;

/* mpi_ft_detector_transport's words, in OMPI_COMM_FT_TRANSPORT_* order */
static const char *const transport_words[] = {"ucx", "btl"};
#define TRANSPORT_WORDS "ucx|btl"

static ompi_comm_ft_detector_vars_t vars = {
    .enable = true,
    .use_thread = true,
    .rdma_heartbeat = true,
    .fence = true,
    .period_s = BTL_FT_DEFAULT_PERIOD_NS / 1e9,
    .timeout_s = BTL_FT_DEFAULT_TIMEOUT_NS / 1e9,
    .seed = 0x62746c5f6674ULL, /* "btl_ft" */
    .probe_width = BTL_FT_DEFAULT_PROBE_WIDTH,
    .quorum = BTL_FT_DEFAULT_QUORUM,
    .witness = BTL_FT_DEFAULT_WITNESS,
    .watch_node = true,
    .node_grace_s = BTL_FT_DEFAULT_NODE_GRACE_NS / 1e9,
    .transport = "ucx",
};

/* first variable whose value Open MPI itself rejected at registration */
static const char *rejected_variable = NULL;

static void register_variable(const char *name, const char *description,
                              mca_base_var_type_t type, mca_base_var_info_lvl_t level,
                              void *storage)
{
    int ret = mca_base_var_register("ompi", "mpi", "ft", name, description, type, NULL, 0, 0,
                                    level, MCA_BASE_VAR_SCOPE_READONLY, storage);
    if (0 > ret && OPAL_ERR_NOT_FOUND != ret && NULL == rejected_variable) {
        rejected_variable = name;
    }
}

int ompi_comm_ft_detector_params_register(void)
{
    char *ring_order_help = NULL, *propagator_help = NULL;

    /* the words of the core's defaults; Open MPI copies a string default */
    vars.ring_order = (char *) btl_ft_ring_order_name(BTL_FT_DEFAULT_RING_ORDER);
    vars.propagator = (char *) btl_ft_propagator_name(BTL_FT_DEFAULT_PROPAGATOR);

    register_variable("detector",
                      "Run the btl_ft failure detector (observation ring with RDMA heartbeats "
                      "and failure-notice broadcast) when ULFM fault tolerance is enabled "
                      "(mpi_ft_enable); if false, failures are only learnt from the runtime "
                      "and in-band transport errors",
                      MCA_BASE_VAR_TYPE_BOOL, OPAL_INFO_LVL_4, &vars.enable);
    register_variable("detector_period",
                      "Heartbeat period eta, in seconds (a positive number, e.g. 0.01)",
                      MCA_BASE_VAR_TYPE_DOUBLE, OPAL_INFO_LVL_4, &vars.period_s);
    register_variable("detector_timeout",
                      "Suspicion timeout delta, in seconds: an observer suspects its emitter "
                      "when no heartbeat arrived for this long (a number larger than "
                      "mpi_ft_detector_period; 3 to 10 periods is typical)",
                      MCA_BASE_VAR_TYPE_DOUBLE, OPAL_INFO_LVL_4, &vars.timeout_s);
    register_variable("detector_thread",
                      "Emit heartbeats and run the detector from a library-internal thread, "
                      "so a computing application cannot starve them (over its own UCX "
                      "transport the application's MPI calls pay nothing for it; over the "
                      "BTLs it enables thread safety in them); if false, the detector runs "
                      "only when the application calls into MPI",
                      MCA_BASE_VAR_TYPE_BOOL, OPAL_INFO_LVL_5, &vars.use_thread);
    register_variable("detector_rdma_heartbeat",
                      "Deposit heartbeats into the observer's flag word one-sidedly (a store "
                      "through shared memory or an RDMA put); if false, or where the transport "
                      "has no put, heartbeats are active "
                      "messages",
                      MCA_BASE_VAR_TYPE_BOOL, OPAL_INFO_LVL_5, &vars.rdma_heartbeat);
    register_variable("detector_fence",
                      "Ask the runtime (PMIx job control) to kill a process this process "
                      "declared failed, so a hung process cannot come back",
                      MCA_BASE_VAR_TYPE_BOOL, OPAL_INFO_LVL_5, &vars.fence);
    register_variable("detector_quorum",
                      "A process that loses contact with at least half of the processes at "
                      "once (exactly half: without the lowest rank among them) stops instead "
                      "of going on, so that a node cut off from the network never carries on "
                      "as a second set of survivors. Only unconfirmed silence counts: a "
                      "process the runtime saw end (a crash, or a hang the detector fenced) "
                      "does not, nor do failures a shrink of every live process has settled; "
                      "before stopping, a process waits up to 0.5 s, holding the failures back "
                      "from the application, for the runtime to confirm them. The price: half "
                      "of the job or more hanging at once, unconfirmed, stops the rest. Turn "
                      "off only for applications that must survive that",
                      MCA_BASE_VAR_TYPE_BOOL, OPAL_INFO_LVL_5, &vars.quorum);
    register_variable("detector_witness",
                      "Before declaring a silent process of another node failed, ask a "
                      "process of that node whether the operating system still runs it (its "
                      "/proc entry); for a process of this node, look directly. A process "
                      "that is only starved of CPU (an oversubscribed or loaded node) then "
                      "gets another timeout, until it has been silent for 4 timeouts or 1 s, "
                      "whichever is longer; one that is stopped "
                      "(SIGSTOP) or gone is declared at once. If false, only the silent "
                      "process's own answer to a probe counts",
                      MCA_BASE_VAR_TYPE_BOOL, OPAL_INFO_LVL_5, &vars.witness);
    register_variable("detector_watch_node",
                      "Watch the next process of this node, by rank, through the kernel (one "
                      "Linux pidfd, in the detector thread's wait, so nothing polls; when it "
                      "ends, the watch passes to the one after it): when it ends without "
                      "having entered MPI_Finalize, its watcher knows at once that it crashed "
                      "and starts the failure notice, without waiting for the runtime's "
                      "report. Needs the detector thread (mpi_ft_detector_thread) and Linux; "
                      "elsewhere it is off",
                      MCA_BASE_VAR_TYPE_BOOL, OPAL_INFO_LVL_5, &vars.watch_node);
    register_variable("detector_node_grace",
                      "How long, in seconds after the timeout, a silent process of another "
                      "node is given when the witness asked on its node does not answer "
                      "either (never less than half of mpi_ft_detector_timeout). A node whose "
                      "processes are all silent is lost, cut off, or starved of CPU as a "
                      "whole (an overloaded node: 90 to 230 ms measured); only this grace "
                      "keeps the last from being declared failed. The price: a lost or cut "
                      "node is declared this long after the timeout. 0: half the timeout",
                      MCA_BASE_VAR_TYPE_DOUBLE, OPAL_INFO_LVL_5, &vars.node_grace_s);
    register_variable("detector_transport",
                      "What carries the detector's heartbeats and messages, one of "
                      TRANSPORT_WORDS ": ucx = a UCX context of the detector's own (heartbeats "
                      "stored straight into a node-mate's flag through shared memory, put over "
                      "the network otherwise; configured by BTL_FT_UCX_* environment variables, "
                      "which override UCX_*), so that the application's MPI calls pay nothing "
                      "for the detector thread; btl = the application's BTLs, which makes OPAL's "
                      "locks real in every MPI call. Where UCX cannot start in some process, "
                      "every process uses btl, saying so at mpi_ft_verbose 1; without the "
                      "detector thread (mpi_ft_detector_thread false) btl is used, and costs no "
                      "locks",
                      MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_5, &vars.transport);
    register_variable("detector_seed",
                      "Seed of the observation ring permutation (mpi_ft_detector_ring_order "
                      "shuffle); must be the same in every process",
                      MCA_BASE_VAR_TYPE_UINT64_T, OPAL_INFO_LVL_9, &vars.seed);
    register_variable("detector_probe_width",
                      "Predecessors checked at once when the ring is mended after a failure "
                      "(1 = one at a time, as in seed 002; up to " BTL_FT_STRINGIFY(BTL_FT_PROBE_WIDTH_MAX)
                      ", and never more than "
                      "log2 of the job size): a row of up to k stopped neighbours is found in "
                      "about 3 timeouts instead of 2k+1",
                      MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_9, &vars.probe_width);

    opal_asprintf(&ring_order_help,
                  "Order of the observation ring, one of %s: rank = each rank observes "
                  "its predecessor (upstream's order); node = neighbours on the ring never "
                  "share a node, so the loss of a node is detected in one timeout; shuffle = "
                  "seeded random permutation",
                  btl_ft_ring_order_words);
    register_variable("detector_ring_order", ring_order_help, MCA_BASE_VAR_TYPE_STRING,
                      OPAL_INFO_LVL_5, &vars.ring_order);
    free(ring_order_help);

    opal_asprintf(&propagator_help,
                  "Overlay that broadcasts failure notices, one of %s: hba = two hypercube "
                  "broadcasts; bmg = binomial graph; chord = forward-only binomial graph",
                  btl_ft_propagator_words);
    register_variable("propagator", propagator_help, MCA_BASE_VAR_TYPE_STRING,
                      OPAL_INFO_LVL_5, &vars.propagator);
    free(propagator_help);

    return OMPI_SUCCESS;
}

/* `rule`: what the value must be, as the core words it ("must be positive") */
static int show_invalid(const char *name, const char *value, const char *rule)
{
    opal_show_help(OMPI_FT_DETECTOR_HELP_FILE, "invalid-value", true, name,
                   NULL == value ? "(empty)" : value, rule);
    return OMPI_ERR_BAD_PARAM;
}

/* Only that it is a number of seconds with a nanosecond value; whether it
 * is positive, or larger than the period, is the core's to say. */
static int check_seconds(const char *name, double seconds, const char *text, int64_t *out_ns)
{
    char shown[64];

    if (NULL == text) {
        snprintf(shown, sizeof(shown), "%g", seconds);
        text = shown;
    }
    if (!isfinite(seconds) || fabs(seconds) > SECONDS_REPRESENTABLE) {
        return show_invalid(name, text, SECONDS_RULE);
    }
    *out_ns = (int64_t) llround(seconds * 1e9);
    return OMPI_SUCCESS;
}

/* The value as the user wrote it (mpirun -mca, OMPI_MCA_*), or NULL; `name`
 * is the full variable name, e.g. "mpi_ft_detector_period". */
static const char *environment_text(const char *name)
{
    char env_name[128];

    snprintf(env_name, sizeof(env_name), "%s%s", OPAL_MCA_PREFIX, name);
    return getenv(env_name);
}

static int parse_seconds(const char *name, double value, int64_t *out_ns)
{
    const char *text = environment_text(name);
    char *end = NULL;

    if (NULL == text) {
        return check_seconds(name, value, NULL, out_ns);
    }
    errno = 0;
    value = strtod(text, &end);
    while (' ' == *end || '\t' == *end) {
        ++end;
    }
    if (end == text || '\0' != *end || 0 != errno) {
        return show_invalid(name, text, SECONDS_RULE);
    }
    return check_seconds(name, value, text, out_ns);
}

static int parse_transport(const char *word, int *out)
{
    for (int i = 0; i < (int) (sizeof(transport_words) / sizeof(transport_words[0])); ++i) {
        if (0 == strcmp(word, transport_words[i])) {
            *out = i;
            return 0;
        }
    }
    return -1;
}

static int parse_word(const char *name, const char *text, int (*parse)(const char *, int *),
                      const char *words, int *out)
{
    char rule[128];

    if (NULL == text || 0 != parse(text, out)) {
        snprintf(rule, sizeof(rule), "must be one of %s", words);
        return show_invalid(name, text, rule);
    }
    return OMPI_SUCCESS;
}

int ompi_comm_ft_detector_params_get(ompi_comm_ft_detector_params_t *params)
{
    int ret;

    if (NULL != rejected_variable) {
        opal_show_help(OMPI_FT_DETECTOR_HELP_FILE, "rejected-by-mca", true, rejected_variable);
        return OMPI_ERR_BAD_PARAM;
    }
    params->enable = vars.enable;
    params->use_thread = vars.use_thread;
    params->rdma_heartbeat = vars.rdma_heartbeat;
    params->fence = vars.fence;
    params->seed = vars.seed;
    params->probe_width = vars.probe_width;
    params->quorum = vars.quorum;
    params->witness = vars.witness;
    params->watch_node = vars.watch_node;

    if (OMPI_SUCCESS != (ret = parse_seconds("mpi_ft_detector_period", vars.period_s,
                                             &params->period_ns))
        || OMPI_SUCCESS != (ret = parse_seconds("mpi_ft_detector_timeout", vars.timeout_s,
                                                &params->timeout_ns))
        || OMPI_SUCCESS != (ret = parse_seconds("mpi_ft_detector_node_grace", vars.node_grace_s,
                                                &params->node_grace_ns))
        || OMPI_SUCCESS != (ret = parse_word("mpi_ft_detector_ring_order", vars.ring_order,
                                             btl_ft_parse_ring_order, btl_ft_ring_order_words,
                                             &params->ring_order))
        || OMPI_SUCCESS != (ret = parse_word("mpi_ft_propagator", vars.propagator,
                                             btl_ft_parse_propagator, btl_ft_propagator_words,
                                             &params->propagator))
        || OMPI_SUCCESS != (ret = parse_word("mpi_ft_detector_transport", vars.transport,
                                             parse_transport, TRANSPORT_WORDS,
                                             &params->transport))) {
        return ret;
    }
    return OMPI_SUCCESS;
}

bool ompi_comm_ft_detector_params_want_ucx(void)
{
    int transport;

    return NULL == rejected_variable && vars.enable && vars.use_thread && NULL != vars.transport
           && 0 == parse_transport(vars.transport, &transport)
           && OMPI_COMM_FT_TRANSPORT_UCX == transport;
}

/* The value as the user wrote it, when the environment has it. */
static const char *value_text(const char *name, char *buffer, size_t length, const char *format,
                              double value)
{
    const char *text = environment_text(name);

    if (NULL != text) {
        return text;
    }
    snprintf(buffer, length, format, value);
    return buffer;
}

/* The value in seconds of a btl_ft_config_t member given in nanoseconds. */
static double seconds_of_member(const ompi_comm_ft_detector_params_t *params, const char *member)
{
    if (0 == strcmp(member, "period_ns")) {
        return params->period_ns / 1e9;
    }
    if (0 == strcmp(member, "node_grace_ns")) {
        return params->node_grace_ns / 1e9;
    }
    return params->timeout_ns / 1e9;
}

int ompi_comm_ft_detector_params_check(const ompi_comm_ft_detector_params_t *params,
                                       const btl_ft_config_t *config)
{
    static const struct {
        const char *member; /* of btl_ft_config_t */
        const char *variable;
    } variable_of[] = {
        {"period_ns", "mpi_ft_detector_period"},
        {"timeout_ns", "mpi_ft_detector_timeout"},
        {"node_grace_ns", "mpi_ft_detector_node_grace"},
        {"probe_width", "mpi_ft_detector_probe_width"},
    };
    char rule[128], shown[64], core_text[256];
    const char *member = btl_ft_config_problem(config, rule, sizeof(rule));

    if (NULL == member) {
        return OMPI_SUCCESS;
    }
    for (size_t i = 0; i < sizeof(variable_of) / sizeof(variable_of[0]); ++i) {
        const char *name = variable_of[i].variable;
        if (0 != strcmp(member, variable_of[i].member)) {
            continue;
        }
        if (0 == strcmp(member, "probe_width")) {
            snprintf(shown, sizeof(shown), "%u", params->probe_width);
            return show_invalid(name, shown, rule);
        }
        return show_invalid(name,
                            value_text(name, shown, sizeof(shown), "%g",
                                       seconds_of_member(params, member)),
                            rule);
    }
    /* a member no variable sets: the shim's own mistake */
    snprintf(core_text, sizeof(core_text), "%s %s", member, rule);
    opal_show_help(OMPI_FT_DETECTOR_HELP_FILE, "core-rejected", true, core_text);
    return OMPI_ERR_BAD_PARAM;
}
