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
 * mpi_ft_propagator), all from one table: each row is a variable's name,
 * kind, level, help text and default (those of btl_ft.h), the member of
 * ompi_comm_ft_detector_params_t it sets (most of them in the core's own
 * btl_ft_config_t) and the core's id for that member. The rows are
 * registered at start-up and parsed at MPI_Init; the core's verdict on the
 * values (btl_ft_config_problem, a field id) is shown under the name of the
 * row with that id. The ranges are the core's alone: this file only checks
 * that a value is of the right kind. The ring order and propagator words
 * are parsed by the core, which owns their names.
 */

#include "ompi_config.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/util/printf.h"
#include "opal/util/show_help.h"

#include "ompi/constants.h"
#include "ompi/communicator/ft/comm_ft_detector.h"
#include "ompi/communicator/ft/comm_ft_param_text.h"

/* beyond this a number of seconds has no int64 nanosecond value */
#define SECONDS_REPRESENTABLE 9.0e9
#define SECONDS_RULE "must be a positive number of seconds"
#define PARAM(member) offsetof(ompi_comm_ft_detector_params_t, member), \
    sizeof(((ompi_comm_ft_detector_params_t *) 0)->member)

typedef enum {
    VAR_BOOL,    /* MCA bool, into a bool or the core's int */
    VAR_SECONDS, /* MCA double, in seconds, into int64 nanoseconds */
    VAR_WORD,    /* MCA string, one of `words`, into an int */
    VAR_UINT,    /* MCA unsigned int, into a uint32_t */
    VAR_UINT64,  /* MCA uint64, into a uint64_t */
} var_kind_t;

typedef struct var_row_t {
    const char *name; /* after mpi_ft_ */
    var_kind_t kind;
    mca_base_var_info_lvl_t level;
    size_t offset; /* of the member the variable sets */
    size_t size;   /* of that member */
    int field;     /* the core's id of that member; BTL_FT_FIELD_NONE: the shim's own */
    const char *help; /* for VAR_WORD, with one %s: the accepted words */
    /* VAR_WORD: the accepted words, their parser and namer, and the default */
    const char *words;
    int (*parse)(const char *word, int *out);
    const char *(*name_of)(int choice);
    int default_choice;
    /* the variable's storage, which Open MPI fills; holds the default until then */
    union {
        bool flag;
        double seconds;
        char *word;
        unsigned int count;
        uint64_t u64;
    } value;
} var_row_t;

/* mpi_ft_detector_transport's words, in OMPI_COMM_FT_TRANSPORT_* order */
static const char *const transport_words[] = {"ucx", "btl"};

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

static const char *transport_name(int transport)
{
    return transport_words[transport];
}

/* Rows by index, for the few lookups before MPI_Init (want_ucx). */
enum {
    ROW_ENABLE,
    ROW_PERIOD,
    ROW_TIMEOUT,
    ROW_THREAD,
    ROW_RDMA_HEARTBEAT,
    ROW_FENCE,
    ROW_QUORUM,
    ROW_WITNESS,
    ROW_WATCH_NODE,
    ROW_WATCH_LIFELINE,
    ROW_NODE_GRACE,
    ROW_WITNESS_PATIENCE,
    ROW_TRANSPORT,
    ROW_SEED,
    ROW_PROBE_WIDTH,
    ROW_RING_ORDER,
    ROW_PROPAGATOR,
    ROW_HIERARCHY,
    ROW_COUNTERS,
    ROW_COUNT
};

static var_row_t rows[ROW_COUNT] = {
    [ROW_ENABLE] = {
        "detector", VAR_BOOL, OPAL_INFO_LVL_4, PARAM(enable), BTL_FT_FIELD_NONE,
        "Run the btl_ft failure detector (observation ring with RDMA heartbeats "
        "and failure-notice broadcast) when ULFM fault tolerance is enabled "
        "(mpi_ft_enable); if false, failures are only learnt from the runtime "
        "and in-band transport errors",
        .value.flag = true},
    [ROW_PERIOD] = {
        "detector_period", VAR_SECONDS, OPAL_INFO_LVL_4, PARAM(detector.period_ns),
        BTL_FT_FIELD_PERIOD_NS,
        "Heartbeat period eta, in seconds (a positive number, e.g. 0.01)",
        .value.seconds = BTL_FT_DEFAULT_PERIOD_NS / 1e9},
    [ROW_TIMEOUT] = {
        "detector_timeout", VAR_SECONDS, OPAL_INFO_LVL_4, PARAM(detector.timeout_ns),
        BTL_FT_FIELD_TIMEOUT_NS,
        "Suspicion timeout delta, in seconds: an observer suspects its emitter "
        "when no heartbeat arrived for this long (a number larger than "
        "mpi_ft_detector_period; 3 to 10 periods is typical)",
        .value.seconds = BTL_FT_DEFAULT_TIMEOUT_NS / 1e9},
    [ROW_THREAD] = {
        "detector_thread", VAR_BOOL, OPAL_INFO_LVL_5, PARAM(use_thread), BTL_FT_FIELD_NONE,
        "Emit heartbeats and run the detector from a library-internal thread, "
        "so a computing application cannot starve them (over its own UCX "
        "transport the application's MPI calls pay nothing for it; over the "
        "BTLs it enables thread safety in them); if false, the detector runs "
        "only when the application calls into MPI",
        .value.flag = true},
    [ROW_RDMA_HEARTBEAT] = {
        "detector_rdma_heartbeat", VAR_BOOL, OPAL_INFO_LVL_5, PARAM(rdma_heartbeat),
        BTL_FT_FIELD_NONE,
        "Deposit heartbeats into the observer's flag word one-sidedly (a store "
        "through shared memory or an RDMA put); if false, or where the transport "
        "has no put, heartbeats are active messages",
        .value.flag = true},
    [ROW_FENCE] = {
        "detector_fence", VAR_BOOL, OPAL_INFO_LVL_5, PARAM(fence), BTL_FT_FIELD_NONE,
        "Ask the runtime (PMIx job control) to kill a process this process "
        "declared failed, so a hung process cannot come back",
        .value.flag = true},
    [ROW_QUORUM] = {
        "detector_quorum", VAR_BOOL, OPAL_INFO_LVL_5, PARAM(detector.quorum), BTL_FT_FIELD_NONE,
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
        .value.flag = BTL_FT_DEFAULT_QUORUM},
    [ROW_WITNESS] = {
        "detector_witness", VAR_BOOL, OPAL_INFO_LVL_5, PARAM(detector.witness), BTL_FT_FIELD_NONE,
        "Before declaring a silent process of another node failed, ask a "
        "process of that node whether the operating system still runs it (its "
        "/proc entry); for a process of this node, look directly. A process "
        "that is only starved of CPU (an oversubscribed or loaded node) then "
        "gets another timeout, until it has been silent for "
        "mpi_ft_detector_witness_patience (silence while its detector thread was "
        "denied the CPU not counted); one that is stopped (SIGSTOP) or gone is declared "
        "at the timeout without waiting for its answer to a probe. If false, "
        "only the silent process's own answer to a probe counts",
        .value.flag = BTL_FT_DEFAULT_WITNESS},
    [ROW_WATCH_NODE] = {
        "detector_watch_node", VAR_BOOL, OPAL_INFO_LVL_5, PARAM(watch_node), BTL_FT_FIELD_NONE,
        "Watch the next process of this node, by rank, through the kernel (one "
        "Linux pidfd, in the detector thread's wait, so nothing polls; when it "
        "ends, the watch passes to the one after it): when it ends without "
        "having entered MPI_Finalize, its watcher knows at once that it crashed "
        "and starts the failure notice, without waiting for the runtime's "
        "report. Needs the detector thread (mpi_ft_detector_thread) and Linux; "
        "elsewhere it is off",
        .value.flag = true},
    [ROW_WATCH_LIFELINE] = {
        "detector_watch_lifeline", VAR_BOOL, OPAL_INFO_LVL_5, PARAM(watch_lifeline), BTL_FT_FIELD_NONE,
        "With mpi_ft_detector_watch_node: each process also holds a lifeline, a "
        "robust lock in its marker file that the kernel releases the moment the "
        "thread that initialized MPI exits, and its watcher follows it from a "
        "thread that sleeps until then. A process killed by a signal, or ending "
        "by exit(), is then known when that thread dies, before the kernel has "
        "freed the process's memory, which the pidfd and the runtime wait for "
        "(tens of milliseconds per GiB); any other end of that thread (a return, "
        "an exec) is left to the pidfd. A process whose lifeline is followed "
        "keeps one more thread, asleep at SCHED_IDLE until the process ends: "
        "the last to exit, it frees the process's memory on idle CPU, and the "
        "dying process's remaining threads move to SCHED_IDLE too, so that on a "
        "node with more processes than cores its teardown no longer takes the "
        "CPU the survivors need. Needs Linux 5.16 (futex_waitv) and glibc; "
        "elsewhere it is off",
        .value.flag = true},
    [ROW_NODE_GRACE] = {
        "detector_node_grace", VAR_SECONDS, OPAL_INFO_LVL_5, PARAM(detector.node_grace_ns),
        BTL_FT_FIELD_NODE_GRACE_NS,
        "How long, in seconds after the timeout, a silent process of another "
        "node is given when the witness asked on its node does not answer "
        "either, or when no other process of its node is left to ask (never "
        "less than half of mpi_ft_detector_timeout). A node whose "
        "processes are all silent is lost, cut off, or starved of CPU as a "
        "whole (an overloaded node: 90 to 230 ms measured); only this grace "
        "keeps the last from being declared failed. The price: a lost or cut "
        "node is declared this long after the timeout. 0: half the timeout",
        .value.seconds = BTL_FT_DEFAULT_NODE_GRACE_NS / 1e9},
    [ROW_WITNESS_PATIENCE] = {
        "detector_witness_patience", VAR_SECONDS, OPAL_INFO_LVL_5, PARAM(detector.witness_patience_ns),
        BTL_FT_FIELD_WITNESS_PATIENCE_NS,
        "How long, in seconds, a silent process that the witness of its node "
        "sees running is kept before it is declared failed all the same (never "
        "less than 4 times mpi_ft_detector_timeout; 0: 4 timeouts). Silence "
        "while the witness saw its detector thread starved (runnable, and given "
        "no CPU by the kernel), or not started yet, is not counted: only a "
        "process whose detector is wedged (asleep, or running and sending "
        "nothing) reaches it. The price of a larger value: such a process is "
        "found this late",
        .value.seconds = BTL_FT_DEFAULT_WITNESS_PATIENCE_NS / 1e9},
    [ROW_TRANSPORT] = {
        "detector_transport", VAR_WORD, OPAL_INFO_LVL_5, PARAM(transport), BTL_FT_FIELD_NONE,
        "What carries the detector's heartbeats and messages, one of %s: ucx = a "
        "UCX context of the detector's own (heartbeats stored straight into a "
        "node-mate's flag through shared memory, put over the network otherwise; "
        "configured by BTL_FT_UCX_* environment variables, which override UCX_*), "
        "so that the application's MPI calls pay nothing for the detector thread; "
        "btl = the application's BTLs, which makes OPAL's locks real in every MPI "
        "call. Where UCX cannot start in some process, every process uses btl, "
        "saying so at mpi_ft_verbose 1; without the detector thread "
        "(mpi_ft_detector_thread false) btl is used, and costs no locks",
        "ucx|btl", parse_transport, transport_name, OMPI_COMM_FT_TRANSPORT_UCX},
    [ROW_SEED] = {
        "detector_seed", VAR_UINT64, OPAL_INFO_LVL_9, PARAM(detector.seed), BTL_FT_FIELD_NONE,
        "Seed of the observation ring permutation (mpi_ft_detector_ring_order "
        "shuffle); must be the same in every process",
        .value.u64 = 0x62746c5f6674ULL /* "btl_ft" */},
    [ROW_PROBE_WIDTH] = {
        "detector_probe_width", VAR_UINT, OPAL_INFO_LVL_9, PARAM(detector.probe_width),
        BTL_FT_FIELD_PROBE_WIDTH,
        "Predecessors checked at once when the ring is mended after a failure "
        "(1 = one at a time, as in seed 002; up to " BTL_FT_STRINGIFY(BTL_FT_PROBE_WIDTH_MAX)
        ", and never more than log2 of the job size): a row of up to k stopped "
        "neighbours is found in about 3 timeouts instead of 2k+1",
        .value.count = BTL_FT_DEFAULT_PROBE_WIDTH},
    [ROW_RING_ORDER] = {
        "detector_ring_order", VAR_WORD, OPAL_INFO_LVL_5, PARAM(detector.ring_order),
        BTL_FT_FIELD_RING_ORDER,
        "Order of the observation ring, one of %s: rank = each rank observes "
        "its predecessor (upstream's order); node = neighbours on the ring never "
        "share a node, so the loss of a node is detected in one timeout; shuffle = "
        "seeded random permutation",
        btl_ft_ring_order_words, btl_ft_parse_ring_order, btl_ft_ring_order_name,
        BTL_FT_DEFAULT_RING_ORDER},
    [ROW_PROPAGATOR] = {
        "propagator", VAR_WORD, OPAL_INFO_LVL_5, PARAM(detector.propagator),
        BTL_FT_FIELD_PROPAGATOR,
        "Overlay that broadcasts failure notices, one of %s: hba = two hypercube "
        "broadcasts; bmg = binomial graph; chord = forward-only binomial graph",
        btl_ft_propagator_words, btl_ft_parse_propagator, btl_ft_propagator_name,
        BTL_FT_DEFAULT_PROPAGATOR},
    [ROW_HIERARCHY] = {
        "detector_hierarchy", VAR_WORD, OPAL_INFO_LVL_5, PARAM(detector.hierarchy),
        BTL_FT_FIELD_HIERARCHY,
        "Who observes whom, one of %s: flat = one ring and one notice overlay "
        "over every process (seed 002); node = processes are observed by a "
        "node-mate, the ring crosses to another node once per node, a node whose "
        "processes all fall silent is declared whole in one notice, and notices "
        "cross between nodes once per node and then go to node-mates, so "
        "heartbeats and notices on the network follow the number of nodes, not "
        "of processes (seed 000). Must be the same in every process",
        btl_ft_hierarchy_words, btl_ft_parse_hierarchy, btl_ft_hierarchy_name,
        BTL_FT_DEFAULT_HIERARCHY},
    [ROW_COUNTERS] = {
        "detector_counters", VAR_BOOL, OPAL_INFO_LVL_9, PARAM(counters), BTL_FT_FIELD_NONE,
        "Print this process's detector counters on one line at MPI_Finalize "
        "(heartbeats; failure notices started, sent and received; NEWOBSERVER "
        "messages, confirmations, witnesses), as mpi_ft_verbose 10 does, without "
        "the rest of that verbose output: for counting the detector's messages "
        "in a job, as the simulator (ftsim) counts them",
        .value.flag = false},
};

static const mca_base_var_type_t mca_type_of[] = {
    [VAR_BOOL] = MCA_BASE_VAR_TYPE_BOOL,
    [VAR_SECONDS] = MCA_BASE_VAR_TYPE_DOUBLE,
    [VAR_WORD] = MCA_BASE_VAR_TYPE_STRING,
    [VAR_UINT] = MCA_BASE_VAR_TYPE_UNSIGNED_INT,
    [VAR_UINT64] = MCA_BASE_VAR_TYPE_UINT64_T,
};

/* first variable whose value Open MPI itself rejected at registration */
static const char *rejected_variable = NULL;

int ompi_comm_ft_detector_params_register(void)
{
    for (int i = 0; i < ROW_COUNT; ++i) {
        var_row_t *row = &rows[i];
        char *help = NULL;
        int ret;

        if (VAR_WORD == row->kind) {
            /* the word of the default; Open MPI copies a string default */
            row->value.word = (char *) row->name_of(row->default_choice);
            opal_asprintf(&help, row->help, row->words);
        }
        ret = mca_base_var_register("ompi", "mpi", "ft", row->name, NULL == help ? row->help : help,
                                    mca_type_of[row->kind], NULL, 0, 0, row->level,
                                    MCA_BASE_VAR_SCOPE_READONLY, &row->value);
        free(help);
        if (0 > ret && OPAL_ERR_NOT_FOUND != ret && NULL == rejected_variable) {
            rejected_variable = row->name;
        }
    }
    return OMPI_SUCCESS;
}

/* Only that it is a number of seconds with a nanosecond value; whether it
 * is positive, or larger than the period, is the core's to say. The text
 * the user wrote, when the environment has it, is read again: Open MPI
 * turns "abc" into 0.0 without a word. */
static int parse_seconds(const char *name, double seconds, int64_t *out_ns)
{
    const char *text = ompi_comm_ft_param_text(name);
    char shown[64];

    if (NULL != text) {
        if (!ompi_comm_ft_param_text_is_real(text, &seconds)) {
            return ompi_comm_ft_param_text_invalid(name, text, SECONDS_RULE);
        }
    } else {
        snprintf(shown, sizeof(shown), "%g", seconds);
        text = shown;
    }
    if (!isfinite(seconds) || fabs(seconds) > SECONDS_REPRESENTABLE) {
        return ompi_comm_ft_param_text_invalid(name, text, SECONDS_RULE);
    }
    *out_ns = (int64_t) llround(seconds * 1e9);
    return OMPI_SUCCESS;
}

/* Bool variables keep Open MPI's own parsing: it already names the
 * variable and the accepted words; a value it rejected at registration
 * fails MPI_Init (rejected_variable) instead of being silently ignored. */
static int parse_row(const var_row_t *row, ompi_comm_ft_detector_params_t *params)
{
    char name[96], rule[128];
    void *member = (char *) params + row->offset;

    snprintf(name, sizeof(name), "mpi_ft_%s", row->name);
    switch (row->kind) {
    case VAR_BOOL:
        if (sizeof(bool) == row->size) {
            *(bool *) member = row->value.flag;
        } else {
            *(int *) member = row->value.flag;
        }
        return OMPI_SUCCESS;
    case VAR_SECONDS:
        return parse_seconds(name, row->value.seconds, (int64_t *) member);
    case VAR_WORD:
        if (NULL == row->value.word || 0 != row->parse(row->value.word, (int *) member)) {
            snprintf(rule, sizeof(rule), "must be one of %s", row->words);
            return ompi_comm_ft_param_text_invalid(name, row->value.word, rule);
        }
        return OMPI_SUCCESS;
    case VAR_UINT:
        *(uint32_t *) member = row->value.count;
        return ompi_comm_ft_param_text_check_number(name, true); /* its range is the core's */
    case VAR_UINT64:
        *(uint64_t *) member = row->value.u64;
        return ompi_comm_ft_param_text_check_number(name, true); /* its range is the core's */
    }
    return OMPI_ERR_BAD_PARAM;
}

int ompi_comm_ft_detector_params_get(ompi_comm_ft_detector_params_t *params)
{
    int ret;

    if (NULL != rejected_variable) {
        opal_show_help(OMPI_FT_DETECTOR_HELP_FILE, "rejected-by-mca", true, rejected_variable);
        return OMPI_ERR_BAD_PARAM;
    }
    memset(params, 0, sizeof(*params));
    for (int i = 0; i < ROW_COUNT; ++i) {
        if (OMPI_SUCCESS != (ret = parse_row(&rows[i], params))) {
            return ret;
        }
    }
    return OMPI_SUCCESS;
}

bool ompi_comm_ft_detector_params_want_ucx(void)
{
    const char *transport = rows[ROW_TRANSPORT].value.word;
    int choice;

    return NULL == rejected_variable && rows[ROW_ENABLE].value.flag && rows[ROW_THREAD].value.flag
           && NULL != transport && 0 == parse_transport(transport, &choice)
           && OMPI_COMM_FT_TRANSPORT_UCX == choice;
}

/* A row's value as the user wrote it, when the environment has it. */
static const char *row_text(const var_row_t *row, const char *name, char *buffer, size_t length)
{
    const char *text = ompi_comm_ft_param_text(name);

    if (NULL != text) {
        return text;
    }
    switch (row->kind) {
    case VAR_SECONDS:
        snprintf(buffer, length, "%g", row->value.seconds);
        break;
    case VAR_UINT:
        snprintf(buffer, length, "%u", row->value.count);
        break;
    case VAR_UINT64:
        snprintf(buffer, length, "%" PRIu64, row->value.u64);
        break;
    case VAR_BOOL:
        snprintf(buffer, length, "%s", row->value.flag ? "true" : "false");
        break;
    case VAR_WORD:
        snprintf(buffer, length, "%s", NULL == row->value.word ? "(empty)" : row->value.word);
        break;
    }
    return buffer;
}

int ompi_comm_ft_detector_params_check(const btl_ft_config_t *config)
{
    char rule[128], shown[64], name[96], core_text[256];
    const int field = btl_ft_config_problem(config, rule, sizeof(rule));
    const char *member;

    if (BTL_FT_FIELD_NONE == field) {
        return OMPI_SUCCESS;
    }
    for (int i = 0; i < ROW_COUNT; ++i) {
        if (rows[i].field == field) {
            snprintf(name, sizeof(name), "mpi_ft_%s", rows[i].name);
            return ompi_comm_ft_param_text_invalid(name, row_text(&rows[i], name, shown, sizeof(shown)), rule);
        }
    }
    /* a member no variable sets: the shim's own mistake */
    member = btl_ft_config_field_name(field);
    snprintf(core_text, sizeof(core_text), "%s %s", NULL == member ? "?" : member, rule);
    opal_show_help(OMPI_FT_DETECTOR_HELP_FILE, "core-rejected", true, core_text);
    return OMPI_ERR_BAD_PARAM;
}
