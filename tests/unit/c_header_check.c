/* Compiled as C11: proves btl_ft.h is a valid C header, and links C callers
 * against the C++ implementation. */
#include "btl_ft/btl_ft.h"

int btl_ft_c_header_check(void);

int btl_ft_c_header_check(void) {
    int kind = -1;
    btl_ft_config_t config = {0};
    btl_ft_callbacks_t callbacks = {0};
    btl_ft_detector_t *detector = 0;
    char error[64];
    if (btl_ft_parse_propagator("chord", &kind) != 0 || kind != BTL_FT_PROPAGATOR_CHORD) return 1;
    /* all-zero config: rejected, never created */
    if (btl_ft_create(&config, &callbacks, &detector, error, sizeof error) != -1 || detector != 0) return 2;
    {
        const btl_ft_job_extent_t jobs[2] = {{7, 2, 0}, {3, 1, 1}};
        btl_ft_membership_t *membership = btl_ft_membership_create(jobs, 2);
        uint32_t rank = 0;
        int found = NULL != membership ? btl_ft_membership_rank_of(membership, 7, 1, &rank) : -1;
        btl_ft_membership_destroy(membership);
        if (found != 0 || rank != 1) return 3; /* job 7 first: it was there first */
    }
    return 0;
}
