/*
 * The median of a test's batches: the figure the overhead programs report,
 * so that a descheduling of the shared machine during one batch does not
 * move it.
 */
#ifndef BTL_FT_BENCH_MEDIAN_H
#define BTL_FT_BENCH_MEDIAN_H

#include <stdlib.h>

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *values, int count)
{
    qsort(values, (size_t)count, sizeof *values, compare_double);
    return values[count / 2];
}

#endif
