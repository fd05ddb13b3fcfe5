/*
 * Copyright (c) 2026      The btl_ft authors.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * The text a user wrote for a numeric MCA variable of the detector or the
 * survivor allreduce, read again. Open MPI reads "abc" as 0 and "2x" as 2
 * without a word (strtoull and strtod with their ends unchecked), so a
 * typo would run the job with a value nobody asked for. Only the
 * environment keeps the text (mpirun --mca and OMPI_MCA_* both land
 * there); a value from a parameter file is taken as Open MPI read it.
 * The parameters of both show a value they refuse here, one way.
 */

#ifndef OMPI_COMM_FT_PARAM_TEXT_H
#define OMPI_COMM_FT_PARAM_TEXT_H

#include <stdbool.h>

/* The value of `name` (the full name, e.g. "mpi_ft_survivors_radix") as
 * the environment holds it, or NULL. */
const char *ompi_comm_ft_param_text(const char *name);
/* Whether `text` is a whole number as Open MPI reads one (decimal, 0x hex
 * or 0 octal, optionally signed and followed by one of k, m, g), with only
 * blanks after it. */
bool ompi_comm_ft_param_text_is_integer(const char *text);
/* Whether `text` is a number as strtod reads one, with only blanks after;
 * its value in *value when it is. */
bool ompi_comm_ft_param_text_is_real(const char *text, double *value);

/* Shows the help file's invalid-value for `name`, `value` ("(empty)" when
 * NULL) and `rule` (what the value must be: "must be positive"), and
 * returns OMPI_ERR_BAD_PARAM: what MPI_Init returns. */
int ompi_comm_ft_param_text_invalid(const char *name, const char *value, const char *rule);
/* OMPI_SUCCESS unless the environment holds a text for `name` that is not
 * a whole number (`whole`) or not a number: then it is shown invalid, with
 * "must be a whole number" or "must be a number". */
int ompi_comm_ft_param_text_check_number(const char *name, bool whole);

#endif /* OMPI_COMM_FT_PARAM_TEXT_H */
