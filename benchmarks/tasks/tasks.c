/*
 * A bag of independent tasks that survives crashes, hangs and lost nodes
 * (ULFM; the scheme of AllScale D5.7, sections 3.1 and 3.2).
 *
 * Rank 0 of the current communicator is the coordinator: it hands one task
 * at a time to each idle worker and collects the results. Before it sends a
 * task it records the delegation and sends the record to one backup process
 * (the first one on another node, else rank 1); results are recorded and
 * backed up the same way, and the workers keep the results they computed.
 * So losing any one process, the coordinator or the backup included, loses
 * no task: what it knew is also known by someone else.
 *
 * A process that sees a failure revokes the communicator; every process
 * ends up in MPIX_Comm_agree, then in recover(): shrink, pool what every
 * survivor knows of the bag (an allreduce, validated by MPIX_Comm_agree so
 * all agree on what is done), and go on: the new coordinator reschedules
 * every task not done. A task runs for up to seconds without any MPI call;
 * only the failure detector's own thread keeps its process from being
 * declared failed meanwhile.
 *
 * The coordinator that finishes prints one JSON line: correct, tasks_done,
 * tasks_lost, tasks_redone (delegated more than once), time_s, and for
 * each failed rank the recovery time: from its failure (the time it wrote
 * to --inject-dir) to the first task delegated after the recovery (or the
 * end, when none was left). The recovery waits for every survivor: a
 * worker in the middle of a task joins the shrink when its task is done.
 * Rejected: checking for failures between slices of a task, which would
 * make tasks call MPI, the very thing the detector's thread makes needless.
 *
 *   tasks [--tasks 48] [--short-ms 20] [--long-ms 1000] [--long-every 8] [--seed 1]
 *         [--iters-per-ms R] [--fail KIND:RANK:WHEN]... [--inject-dir D] [--deadline-s 60]
 *   (--fail: see inject.h; without --iters-per-ms, the ranks measure it)
 */
#include <mpi.h>
#include <mpi-ext.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bag.h"
#include "inject.h"

enum { TAG_TASK = 1, TAG_STOP, TAG_RECORD, TAG_RESULT, TAG_BAG };
enum { REC_DELEGATED = 1, REC_DONE, REC_RECOVERED };
#define MAX_FAILS 16

struct options {
    struct bag_shape shape;
    double iters_per_ms;
    const char *fails[MAX_FAILS];
    int fail_count;
    const char *inject_dir;
    int deadline_s;
};

/* What this process knows of the bag, one buffer so that pooling is one
 * MPI_MAX allreduce: knowledge only grows (done 0 -> 1, a value or a size
 * once known is the same everywhere), so a maximum merges it. */
struct knowledge {
    uint64_t *buf;
    int len;
    uint64_t *iters, *done, *value, *delegations;   /* per task; iters 0: unknown */
    uint64_t *recovered_ns;                          /* per world rank */
};

struct ctx {
    struct options o;
    struct knowledge k;
    MPI_Comm comm;
    int rank, size, world_rank, world_size;
    int *world_of;          /* comm rank -> world rank */
    int *node_of;           /* world rank -> node (lowest world rank on it) */
    bool *failed;           /* world rank -> removed by a shrink */
    int backup;             /* comm rank of the backup, -1 when alone */
    int64_t start_ns;
    bool recovery_pending;  /* the next delegation times the last recovery */
    int recoveries;
};

static int deadline_rank = -1;

static void on_deadline(int sig)
{
    char line[96];
    int n = snprintf(line, sizeof line, "{\"rank\":%d,\"error\":\"deadline passed\"}\n", deadline_rank);
    (void)sig;
    if (n > 0) {
        ssize_t ignored = write(STDOUT_FILENO, line, (size_t)n);
        (void)ignored;
    }
    _exit(3);
}

static void usage_error(const char *what)
{
    fprintf(stderr, "tasks: %s (see the comment at the top of tasks.c)\n", what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static void parse(int argc, char **argv, struct options *o)
{
    *o = (struct options){.shape = {.tasks = 48, .short_ms = 20, .long_ms = 1000, .long_every = 8,
                                    .seed = 1},
                          .deadline_s = 60};
    for (int i = 1; i < argc; i += 2) {
        const char *name = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!value) usage_error("every option takes a value");
        if (!strcmp(name, "--tasks")) o->shape.tasks = atoi(value);
        else if (!strcmp(name, "--short-ms")) o->shape.short_ms = atof(value);
        else if (!strcmp(name, "--long-ms")) o->shape.long_ms = atof(value);
        else if (!strcmp(name, "--long-every")) o->shape.long_every = atoi(value);
        else if (!strcmp(name, "--seed")) o->shape.seed = strtoull(value, NULL, 10);
        else if (!strcmp(name, "--iters-per-ms")) o->iters_per_ms = atof(value);
        else if (!strcmp(name, "--inject-dir")) o->inject_dir = value;
        else if (!strcmp(name, "--deadline-s")) o->deadline_s = atoi(value);
        else if (!strcmp(name, "--fail") && o->fail_count < MAX_FAILS) o->fails[o->fail_count++] = value;
        else usage_error("unknown option or too many --fail");
    }
    if (o->shape.tasks < 1) usage_error("--tasks must be at least 1");
}

static void knowledge_init(struct knowledge *k, int tasks, int world_size)
{
    k->len = 4 * tasks + world_size;
    k->buf = calloc((size_t)k->len, sizeof *k->buf);
    k->iters = k->buf;
    k->done = k->iters + tasks;
    k->value = k->done + tasks;
    k->delegations = k->value + tasks;
    k->recovered_ns = k->delegations + tasks;
}

/* The backup lives on another node than the coordinator where there is one,
 * so that losing a node never takes both. */
static void set_roles(struct ctx *c)
{
    MPI_Group group, world;
    MPI_Comm_rank(c->comm, &c->rank);
    MPI_Comm_size(c->comm, &c->size);
    MPI_Comm_group(c->comm, &group);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int *ranks = malloc(sizeof *ranks * (size_t)c->size);
    for (int r = 0; r < c->size; r++) ranks[r] = r;
    free(c->world_of);
    c->world_of = malloc(sizeof *c->world_of * (size_t)c->size);
    MPI_Group_translate_ranks(group, c->size, ranks, world, c->world_of);
    free(ranks);
    MPI_Group_free(&group);
    MPI_Group_free(&world);
    c->backup = c->size > 1 ? 1 : -1;
    for (int r = 1; r < c->size; r++)
        if (c->node_of[c->world_of[r]] != c->node_of[c->world_of[0]]) {
            c->backup = r;
            break;
        }
}

static int send_record(struct ctx *c, uint64_t kind, uint64_t a, uint64_t b)
{
    uint64_t msg[4] = {kind, a, b, 0};
    if (c->backup < 0) return MPI_SUCCESS;
    return MPI_Send(msg, 4, MPI_UINT64_T, c->backup, TAG_RECORD, c->comm);
}

static void apply_record(struct knowledge *k, const uint64_t *msg)
{
    if (msg[0] == REC_DELEGATED) k->delegations[msg[1]]++;
    else if (msg[0] == REC_DONE) k->done[msg[1]] = 1, k->value[msg[1]] = msg[2];
    else if (msg[0] == REC_RECOVERED) k->recovered_ns[msg[1]] = msg[2];
}

/* The first delegation after a recovery is when the failures it handled
 * stop costing: recorded (and backed up) for each of them. */
static int note_recovered(struct ctx *c)
{
    int rc = MPI_SUCCESS;
    for (int r = 0; r < c->world_size && rc == MPI_SUCCESS; r++)
        if (c->failed[r] && !c->k.recovered_ns[r]) {
            c->k.recovered_ns[r] = (uint64_t)bag_now_ns();
            rc = send_record(c, REC_RECOVERED, (uint64_t)r, c->k.recovered_ns[r]);
        }
    c->recovery_pending = false;
    return rc;
}

/* Record, back up, then send: the order of AllScale's remotely_scheduled_tasks. */
static int delegate(struct ctx *c, int t, int worker)
{
    int rc = c->recovery_pending ? note_recovered(c) : MPI_SUCCESS;
    c->k.delegations[t]++;
    if (rc == MPI_SUCCESS) rc = send_record(c, REC_DELEGATED, (uint64_t)t, (uint64_t)c->world_of[worker]);
    uint64_t msg[4] = {(uint64_t)t, c->k.iters[t], 0, 0};
    return rc == MPI_SUCCESS ? MPI_Send(msg, 4, MPI_UINT64_T, worker, TAG_TASK, c->comm) : rc;
}

static int next_todo(const struct ctx *c, const bool *outstanding)
{
    for (int t = 0; t < c->o.shape.tasks; t++)
        if (!c->k.done[t] && !outstanding[t] && c->k.iters[t]) return t;
    return -1;
}

static uint64_t run_task(const struct ctx *c, int t, uint64_t iters)
{
    const uint64_t slice = 1 << 18;
    int64_t began = bag_now_ns();
    bool is_long = iters >= (uint64_t)(c->o.shape.long_ms * c->o.iters_per_ms) && c->o.shape.long_every;
    uint64_t acc = 0;
    for (uint64_t k = 0; k < iters; k += slice) {
        acc = bag_run_slice((uint64_t)t, k, k + slice < iters ? k + slice : iters, acc);
        inject_check(c->start_ns, began, is_long, (double)(k + slice) / (double)iters);
    }
    return acc;
}

/* Alone: the coordinator runs what is left itself. */
static int coordinate_alone(struct ctx *c)
{
    bool *none = calloc((size_t)c->o.shape.tasks, sizeof *none);
    if (c->recovery_pending) note_recovered(c);
    for (int t; (t = next_todo(c, none)) >= 0;) {
        c->k.delegations[t]++;
        c->k.value[t] = run_task(c, t, c->k.iters[t]);
        c->k.done[t] = 1;
    }
    free(none);
    return MPI_SUCCESS;
}

static int coordinate(struct ctx *c)
{
    if (c->size == 1) return coordinate_alone(c);
    bool *outstanding = calloc((size_t)c->o.shape.tasks, sizeof *outstanding);
    int *task_of = malloc(sizeof *task_of * (size_t)c->size);
    int busy = 0, rc = MPI_SUCCESS;
    for (int w = 0; w < c->size; w++) task_of[w] = -1;
    for (;;) {
        for (int w = 1, t; w < c->size && rc == MPI_SUCCESS; w++) {
            if (task_of[w] >= 0 || (t = next_todo(c, outstanding)) < 0) continue;
            rc = delegate(c, t, w);
            task_of[w] = t, outstanding[t] = true, busy++;
        }
        if (rc != MPI_SUCCESS || busy == 0) break;
        uint64_t msg[4];
        MPI_Status status;
        rc = MPI_Recv(msg, 4, MPI_UINT64_T, MPI_ANY_SOURCE, TAG_RESULT, c->comm, &status);
        if (rc != MPI_SUCCESS) break;
        c->k.done[msg[0]] = 1, c->k.value[msg[0]] = msg[1];
        task_of[status.MPI_SOURCE] = -1, busy--;
        rc = send_record(c, REC_DONE, msg[0], msg[1]);
    }
    /* a recovery that found nothing left to reschedule ends here */
    if (rc == MPI_SUCCESS && c->recovery_pending) rc = note_recovered(c);
    for (int w = 1; w < c->size && rc == MPI_SUCCESS; w++)
        rc = MPI_Send(NULL, 0, MPI_UINT64_T, w, TAG_STOP, c->comm);
    free(outstanding);
    free(task_of);
    return rc;
}

static int work(struct ctx *c)
{
    for (;;) {
        uint64_t msg[4];
        MPI_Status status;
        int rc = MPI_Recv(msg, 4, MPI_UINT64_T, 0, MPI_ANY_TAG, c->comm, &status);
        if (rc != MPI_SUCCESS || status.MPI_TAG == TAG_STOP) return rc;
        if (status.MPI_TAG == TAG_RECORD) {
            apply_record(&c->k, msg);
            continue;
        }
        int t = (int)msg[0];
        c->k.iters[t] = msg[1];
        uint64_t value = run_task(c, t, msg[1]);
        /* kept here too: if the coordinator dies before backing it up,
         * this copy is what saves the task */
        c->k.done[t] = 1, c->k.value[t] = value;
        uint64_t result[4] = {(uint64_t)t, value, 0, 0};
        rc = MPI_Send(result, 4, MPI_UINT64_T, 0, TAG_RESULT, c->comm);
        if (rc != MPI_SUCCESS) return rc;
    }
}

/* World ranks of the old communicator missing from the shrunk one. */
static void note_failures(struct ctx *c, MPI_Comm shrunk)
{
    MPI_Group group, world;
    MPI_Comm_group(shrunk, &group);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    for (int r = 0; r < c->size; r++) {
        int there;
        MPI_Group_translate_ranks(world, 1, &c->world_of[r], group, &there);
        if (there == MPI_UNDEFINED) c->failed[c->world_of[r]] = true;
    }
    MPI_Group_free(&group);
    MPI_Group_free(&world);
}

/* Shrink, then pool what every survivor knows; an agreement tells whether
 * every survivor holds the same pooled record of what is done. A failure
 * during this starts it over on the shrunk communicator. */
static void recover(struct ctx *c)
{
    for (;;) {
        MPI_Comm shrunk;
        MPIX_Comm_revoke(c->comm);
        if (MPIX_Comm_shrink(c->comm, &shrunk) != MPI_SUCCESS) continue;
        note_failures(c, shrunk);
        MPI_Comm_free(&c->comm);
        c->comm = shrunk;
        MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
        set_roles(c);
        int rc = MPI_Allreduce(MPI_IN_PLACE, c->k.buf, c->k.len, MPI_UINT64_T, MPI_MAX, c->comm);
        int flag = rc == MPI_SUCCESS;
        rc = MPIX_Comm_agree(c->comm, &flag);
        if (rc == MPI_SUCCESS && flag) break;
    }
    c->recovery_pending = true;
    c->recoveries++;
}

/* Node of every world rank: the lowest world rank sharing its memory. */
static void find_nodes(struct ctx *c)
{
    MPI_Comm local;
    int node = c->world_rank;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    MPI_Bcast(&node, 1, MPI_INT, 0, local);
    MPI_Comm_free(&local);
    c->node_of = malloc(sizeof *c->node_of * (size_t)c->world_size);
    MPI_Allgather(&node, 1, MPI_INT, c->node_of, 1, MPI_INT, MPI_COMM_WORLD);
}

/* Every rank measures its speed at once, so the machine is as loaded as in
 * the run (ranks waiting in MPI leave cores idle), and their mean sets the
 * size of the tasks; then rank 0 generates the bag and hands the backup
 * its copy. */
static void setup(struct ctx *c)
{
    MPI_Comm_dup(MPI_COMM_WORLD, &c->comm);
    MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
    find_nodes(c);
    set_roles(c);
    if (c->o.iters_per_ms <= 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        c->o.iters_per_ms = bag_calibrate(200);
        MPI_Allreduce(MPI_IN_PLACE, &c->o.iters_per_ms, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        c->o.iters_per_ms /= c->world_size;
    }
    if (c->rank == 0)
        for (int t = 0; t < c->o.shape.tasks; t++)
            c->k.iters[t] = bag_task_iters(&c->o.shape, t, c->o.iters_per_ms);
    if (c->rank == 0 && c->backup > 0)
        MPI_Send(c->k.iters, c->o.shape.tasks, MPI_UINT64_T, c->backup, TAG_BAG, MPI_COMM_WORLD);
    else if (c->rank == c->backup)
        MPI_Recv(c->k.iters, c->o.shape.tasks, MPI_UINT64_T, 0, TAG_BAG, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    c->start_ns = bag_now_ns();
}

static void print_failures(const struct ctx *c)
{
    printf("\"failures\":[");
    for (int r = 0, first = 1; r < c->world_size; r++) {
        if (!c->failed[r]) continue;
        int64_t at = inject_time_of(c->o.inject_dir, r), back = (int64_t)c->k.recovered_ns[r];
        printf("%s{\"rank\":%d,\"failed_at_s\":", first ? "" : ",", r);
        printf(at ? "%.3f" : "null", (double)(at - c->start_ns) / 1e9);
        printf(",\"recovery_ms\":");
        printf(at && back ? "%.1f" : "null", (double)(back - at) / 1e6);
        printf("}");
        first = 0;
    }
    printf("]");
}

static void report(const struct ctx *c, int64_t end_ns)
{
    const struct bag_shape *s = &c->o.shape;
    uint64_t total = 0, expected = 0;
    int done = 0, redone = 0;
    for (int t = 0; t < s->tasks; t++) {
        expected += bag_expected_value((uint64_t)t, bag_task_iters(s, t, c->o.iters_per_ms));
        if (c->k.done[t]) total += c->k.value[t], done++;
        redone += c->k.delegations[t] > 1;
    }
    MPI_Group failed;
    int still_failed = 0;
    MPIX_Comm_get_failed(c->comm, &failed);
    MPI_Group_size(failed, &still_failed);
    MPI_Group_free(&failed);
    printf("{\"correct\":%s,\"total\":\"%llu\",\"expected\":\"%llu\",\"tasks\":%d,\"tasks_done\":%d,"
           "\"tasks_lost\":%d,\"tasks_redone\":%d,\"time_s\":%.3f,\"np\":%d,\"survivors\":%d,"
           "\"recoveries\":%d,\"unrecovered_failures\":%d,\"iters_per_ms\":%.17g,",
           total == expected && done == s->tasks ? "true" : "false", (unsigned long long)total,
           (unsigned long long)expected, s->tasks, done, s->tasks - done, redone,
           (double)(end_ns - c->start_ns) / 1e9, c->world_size, c->size, c->recoveries,
           still_failed, c->o.iters_per_ms);
    print_failures(c);
    printf("}\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    struct ctx c = {0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &c.world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.world_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    parse(argc, argv, &c.o);
    for (int i = 0; i < c.o.fail_count; i++)
        if (!inject_parse(c.o.fails[i], c.world_rank, c.o.inject_dir)) usage_error("bad --fail");
    deadline_rank = c.world_rank;
    signal(SIGALRM, on_deadline);
    alarm((unsigned)c.o.deadline_s);
    knowledge_init(&c.k, c.o.shape.tasks, c.world_size);
    c.failed = calloc((size_t)c.world_size, sizeof *c.failed);
    setup(&c);
    inject_start(c.start_ns);
    if (c.world_rank == 0) inject_mark_start(c.o.inject_dir, c.start_ns);

    for (;;) {
        int rc = c.rank == 0 ? coordinate(&c) : work(&c);
        if (rc != MPI_SUCCESS) MPIX_Comm_revoke(c.comm);
        int flag = rc == MPI_SUCCESS;
        /* every process gets here: the revoke interrupts those in MPI, and
         * those computing arrive when their task is done */
        rc = MPIX_Comm_agree(c.comm, &flag);
        if (rc == MPI_SUCCESS && flag) break;
        recover(&c);
    }
    int64_t end_ns = bag_now_ns();
    if (c.rank == 0) report(&c, end_ns);
    alarm(0);
    MPI_Comm_free(&c.comm);
    MPI_Finalize();
    return 0;
}
