/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * What each process of the detector's UCX transport publishes for the
 * others, and reading it back: one blob in the modex, a header of part
 * lengths, then its workers' addresses (whole, and their network part
 * alone, for peers on other nodes) and its flag file's path. Every process
 * publishes before MPI_Init's modex (patch 0040), so reading a peer's is a
 * local lookup (a connected job's came with the connect). A blob of
 * another version, or whose lengths do not add up, is not used.
 */

#include "ompi_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/pmix/pmix-internal.h"

#include "ompi/communicator/ft/comm_ft_detector_ucx_internal.h"
#include "ompi/constants.h"

#define MODEX_KEY "btl_ft.ucx"
#define BLOB_VERSION 3

/* What each process publishes, followed by its parts in order. */
typedef struct blob_header_t {
    uint32_t version;
    uint32_t lengths[PARTS];
} blob_header_t;

static ucx_transport_t *const ucx = &ompi_comm_ft_ucx_state;

/* A worker's address, all of it or its network part only; release with
 * ucp_worker_release_address. */
static ucs_status_t worker_address(ucp_worker_h worker, bool network_only, ucp_address_t **address,
                                   size_t *length)
{
    ucp_worker_attr_t attr = {
        .field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS | UCP_WORKER_ATTR_FIELD_ADDRESS_FLAGS,
        .address_flags = network_only ? UCP_WORKER_ADDRESS_FLAG_NET_ONLY : 0,
    };
    ucs_status_t status = ucp_worker_query(worker, &attr);

    *address = UCS_OK == status ? attr.address : NULL;
    *length = UCS_OK == status ? attr.address_length : 0;
    return status;
}

/* The worker whose address a part of the blob is. */
static ucp_worker_h worker_of(int part)
{
    return part < PART_HB_FULL ? ucx->am_worker : ucx->hb_worker;
}

/* The header and the parts, in one allocation (free it). */
static ucs_status_t pack_blob(unsigned char **blob, size_t *blob_length)
{
    void *parts[PARTS] = {NULL};
    size_t lengths[PARTS] = {0}, total = sizeof(blob_header_t);
    blob_header_t header = {.version = BLOB_VERSION};
    ucs_status_t status = UCS_OK;
    unsigned char *at;

    for (int i = 0; i < PART_FLAG_PATH && UCS_OK == status; ++i) {
        if (NULL != worker_of(i)) { /* else no heartbeat worker: an empty part */
            status = worker_address(worker_of(i), PART_AM_NET == i || PART_HB_NET == i,
                                    (ucp_address_t **) &parts[i], &lengths[i]);
        }
    }
    if (NULL != ucx->flag_path) {
        lengths[PART_FLAG_PATH] = strlen(ucx->flag_path) + 1;
    }
    for (int i = 0; i < PARTS; ++i) {
        header.lengths[i] = (uint32_t) lengths[i];
        total += lengths[i];
    }
    if (UCS_OK == status && NULL == (*blob = malloc(total))) {
        status = UCS_ERR_NO_MEMORY;
    }
    if (UCS_OK == status) {
        memcpy(*blob, &header, sizeof(header));
        at = *blob + sizeof(header);
        for (int i = 0; i < PARTS; ++i) {
            memcpy(at, PART_FLAG_PATH == i ? (void *) ucx->flag_path : parts[i], lengths[i]);
            at += lengths[i];
        }
        *blob_length = total;
    }
    for (int i = 0; i < PART_FLAG_PATH; ++i) {
        if (NULL != parts[i]) {
            ucp_worker_release_address(worker_of(i), parts[i]);
        }
    }
    return status;
}

int ompi_comm_ft_ucx_send_addresses(const char **reason)
{
    unsigned char *blob = NULL;
    size_t blob_length = 0;
    ucs_status_t status = pack_blob(&blob, &blob_length);
    int rc;

    if (UCS_OK != status) {
        *reason = ucs_status_string(status);
        return OMPI_ERROR;
    }
    OPAL_MODEX_SEND_STRING(rc, PMIX_GLOBAL, MODEX_KEY, blob, blob_length);
    free(blob); /* the runtime keeps its copy */
    if (PMIX_SUCCESS == rc) {
        rc = PMIx_Commit(); /* the components' data went before: ours must join it */
    }
    if (PMIX_SUCCESS != rc) {
        *reason = "the runtime did not take its addresses";
        return OMPI_ERROR;
    }
    return OMPI_SUCCESS;
}

/* The bytes of one part of a peer's blob, checked against its length. */
const void *ompi_comm_ft_ucx_address_part(const peer_t *peer, int part, size_t *length)
{
    blob_header_t header;
    size_t offset = sizeof(header);

    memcpy(&header, peer->blob, sizeof(header));
    for (int i = 0; i < part; ++i) {
        offset += header.lengths[i];
    }
    *length = header.lengths[part];
    return peer->blob + offset;
}

static bool blob_valid(const unsigned char *blob, size_t length)
{
    blob_header_t header;
    size_t total = sizeof(header);

    if (NULL == blob || length < sizeof(header)) {
        return false;
    }
    memcpy(&header, blob, sizeof(header));
    for (int i = 0; i < PARTS; ++i) {
        total += header.lengths[i];
    }
    return BLOB_VERSION == header.version && total == length;
}

/* A local lookup: the modex brought every peer's data (a connected job's
 * came with the connect). */
bool ompi_comm_ft_ucx_read_addresses(uint32_t rank)
{
    peer_t *peer = &ucx->peers[rank];
    unsigned char *blob = NULL;
    size_t length = 0;
    int rc;

    if (NULL != peer->blob) {
        return true;
    }
    OPAL_MODEX_RECV_STRING(rc, MODEX_KEY, &peer->name, (void **) &blob, &length);
    if (PMIX_SUCCESS != rc || !blob_valid(blob, length)) {
        free(blob);
        return false;
    }
    peer->blob = blob;
    return true;
}

const char *ompi_comm_ft_ucx_flag_path_of(uint32_t rank)
{
    size_t length;
    const char *path;

    if (!ompi_comm_ft_ucx_read_addresses(rank)) {
        return NULL;
    }
    path = ompi_comm_ft_ucx_address_part(&ucx->peers[rank], PART_FLAG_PATH, &length);
    return 0 < length && '\0' == path[length - 1] ? path : NULL;
}
