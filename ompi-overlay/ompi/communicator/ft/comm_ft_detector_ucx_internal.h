/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * What the three files of the detector's own UCX transport share: its
 * state, and the few calls between them. comm_ft_detector_ucx.c makes the
 * context, makes endpoints and runs the lifecycle;
 * comm_ft_detector_ucx_addresses.c publishes and reads addresses;
 * comm_ft_detector_ucx_path.c carries heartbeats and messages. Nothing
 * else includes this header.
 */

#ifndef OMPI_COMM_FT_DETECTOR_UCX_INTERNAL_H
#define OMPI_COMM_FT_DETECTOR_UCX_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <ucp/api/ucp.h>

#include "ompi/communicator/ft/comm_ft_detector.h"

#define AM_ID 0           /* the core's messages, on the message worker */
#define HEARTBEAT_AM_ID 1 /* heartbeat words, on the heartbeat worker */
#define HELLO_AM_ID 2     /* wires an endpoint up at MPI_Init; ignored */

#define WORD_SOURCE_SLOTS 16

/* What a process publishes: its workers' addresses, and its flag file's
 * path (NUL-terminated; empty when it has none) */
enum { PART_AM_FULL, PART_AM_NET, PART_HB_FULL, PART_HB_NET, PART_FLAG_PATH, PARTS };

typedef struct peer_t {
    opal_process_name_t name; /* whose addresses, in the runtime's names */
    unsigned char *blob; /* NULL: not read */
    ucp_ep_h am_ep;
    ucp_ep_h hb_ep;
    volatile uint64_t *mapped_flag; /* its flag, mapped into this process */
    bool heartbeat_path_known;
    bool unreachable; /* a peer error, or a node-mate whose flag is gone: nothing more is sent */
} peer_t;

typedef struct ucx_counters_t {
    uint64_t heartbeats_stored; /* into a mapped flag */
    uint64_t heartbeats_sent;   /* to the observer's heartbeat worker */
    uint64_t heartbeats_sent_completed;
    uint64_t heartbeats_as_messages;
    uint64_t heartbeats_to_unreachable; /* of those, to an observer unreachable (left or died) */
    uint64_t heartbeats_skipped; /* sends still in flight */
    uint64_t heartbeats_received; /* on this heartbeat worker */
    uint64_t messages_sent;
    uint64_t messages_dropped;
    uint64_t messages_received;
    uint64_t frames_malformed;
    uint64_t other_epoch_dropped; /* messages and words of another union */
    uint64_t flag_words_seen;
    uint64_t peer_errors;
} ucx_counters_t;

typedef struct ucx_transport_t {
    ucp_context_h context;
    ucp_worker_h am_worker;
    ucp_worker_h hb_worker;
    volatile uint64_t *flag;
    char *flag_path; /* NULL: own_flag_word, which node-mates cannot map */
    uint64_t own_flag_word;
    int wait_fd;

    uint32_t self; /* in the union */
    uint32_t size;
    /* the union's: a message or word of another is dropped (but a JOIN,
     * which names its union in full). A message carries its identity
     * whole: 8 bits of it once matched between a union and the one merged
     * from it (1 job family in 128), and a LEAVE of the first was read by the
     * second. A word has room for 8 bits of epoch and identity. */
    uint64_t frame_tag;
    uint8_t word_tag;
    bool rdma_heartbeat;
    uint32_t *node_of_rank; /* NULL: one node */
    peer_t *peers;
    ompi_comm_ft_deliver_fn_t deliver;
    size_t max_message_bytes;
    int hellos_in_flight;

    uint64_t word_source[WORD_SOURCE_SLOTS];
    unsigned word_source_next;
    int words_in_flight;
    int sends_in_flight;
    uint64_t last_flag_word;
    uint64_t last_epoch_word; /* the last word of this epoch the flag held */
    ucx_counters_t counters;
} ucx_transport_t;

/* The one transport of this process, used under the core lock. */
extern ucx_transport_t ompi_comm_ft_ucx_state;

/* The union's tag rides in a heartbeat word's top byte, above an emitter
 * rank below 2^24 (the core's word: rank << 32 | sequence), so that a word
 * an emitter of the last union stored is not taken for one of this union. */
#define EPOCH_TAG_SHIFT 56
#define EPOCH_TAGGED_SIZE_MAX (1u << 24)

/* comm_ft_detector_ucx_addresses.c */
/* Publishes this process's blob; on failure, says why in *reason. */
int ompi_comm_ft_ucx_send_addresses(const char **reason);
/* Reads rank's blob into its peer, once; false if it has none valid. */
bool ompi_comm_ft_ucx_read_addresses(uint32_t rank);
/* The bytes of one part of a peer's blob (read), checked against its length. */
const void *ompi_comm_ft_ucx_address_part(const peer_t *peer, int part, size_t *length);
/* rank's flag file, NULL if it has none (or no blob). */
const char *ompi_comm_ft_ucx_flag_path_of(uint32_t rank);

/* comm_ft_detector_ucx.c */
bool ompi_comm_ft_ucx_same_node(uint32_t rank);
ucp_ep_h ompi_comm_ft_ucx_endpoint(ucp_worker_h worker, uint32_t rank, int full_part, int net_part);

/* comm_ft_detector_ucx_path.c */
void ompi_comm_ft_ucx_find_heartbeat_path(uint32_t observer);
int ompi_comm_ft_ucx_set_handlers(void);

#endif /* OMPI_COMM_FT_DETECTOR_UCX_INTERNAL_H */
