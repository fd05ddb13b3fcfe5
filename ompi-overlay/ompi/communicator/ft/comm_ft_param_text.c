/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

#include "ompi_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ompi/communicator/ft/comm_ft_detector.h"
#include "ompi/communicator/ft/comm_ft_param_text.h"
#include "ompi/constants.h"
#include "opal/util/show_help.h"

const char *ompi_comm_ft_param_text(const char *name)
{
    char env_name[128];

    snprintf(env_name, sizeof(env_name), "%s%s", OPAL_MCA_PREFIX, name);
    return getenv(env_name);
}

static bool only_blanks(const char *end)
{
    return '\0' == end[strspn(end, " \t")];
}

bool ompi_comm_ft_param_text_is_integer(const char *text)
{
    char *end = NULL;

    errno = 0;
    /* unsigned where it can be: a 64-bit seed may be above INT64_MAX */
    if (NULL != strchr(text, '-')) {
        (void) strtoll(text, &end, 0);
    } else {
        (void) strtoull(text, &end, 0);
    }
    if (end == text || 0 != errno) {
        return false;
    }
    if (NULL != strchr("kKmMgG", *end) && '\0' != *end) {
        ++end;
    }
    return only_blanks(end);
}

bool ompi_comm_ft_param_text_is_real(const char *text, double *value)
{
    char *end = NULL;

    errno = 0;
    *value = strtod(text, &end);
    return end != text && 0 == errno && only_blanks(end);
}

int ompi_comm_ft_param_text_invalid(const char *name, const char *value, const char *rule)
{
    opal_show_help(OMPI_FT_DETECTOR_HELP_FILE, "invalid-value", true, name,
                   NULL == value ? "(empty)" : value, rule);
    return OMPI_ERR_BAD_PARAM;
}

int ompi_comm_ft_param_text_check_number(const char *name, bool whole)
{
    const char *text = ompi_comm_ft_param_text(name);
    double ignored;

    if (NULL == text || (whole ? ompi_comm_ft_param_text_is_integer(text)
                               : ompi_comm_ft_param_text_is_real(text, &ignored))) {
        return OMPI_SUCCESS;
    }
    return ompi_comm_ft_param_text_invalid(name, text, whole ? "must be a whole number" : "must be a number");
}
