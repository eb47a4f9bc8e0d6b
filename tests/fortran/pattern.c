/* SPDX-License-Identifier: BSD-3-Clause */
/* xfer-synth's pattern for the Fortran test component (fsynth.f90): one element of dataset ds,
 * step, global index g (the C-order linear index, which is the column-major index of the same
 * element in a Fortran array of the reversed shape), in each type the test uses. */
#include <stdint.h>

#include "synth_pattern.h"

double fsynth_f64(int64_t ds, int64_t step, int64_t g);
float fsynth_f32(int64_t ds, int64_t step, int64_t g);
int64_t fsynth_i64(int64_t ds, int64_t step, int64_t g);
int32_t fsynth_i32(int64_t ds, int64_t step, int64_t g);
int8_t fsynth_i8(int64_t ds, int64_t step, int64_t g);
int16_t fsynth_i16(int64_t ds, int64_t step, int64_t g);

#define FSYNTH_VALUE(T, XT)                                                                        \
    T v;                                                                                           \
    xfer_synth_element(XT, 0, (uint64_t) ds, (uint64_t) step, (uint64_t) g, &v);                   \
    return v

double fsynth_f64(int64_t ds, int64_t step, int64_t g)
{
    FSYNTH_VALUE(double, XFER_TYPE_FLOAT64);
}

float fsynth_f32(int64_t ds, int64_t step, int64_t g)
{
    FSYNTH_VALUE(float, XFER_TYPE_FLOAT32);
}

int64_t fsynth_i64(int64_t ds, int64_t step, int64_t g)
{
    FSYNTH_VALUE(int64_t, XFER_TYPE_INT64);
}

int32_t fsynth_i32(int64_t ds, int64_t step, int64_t g)
{
    FSYNTH_VALUE(int32_t, XFER_TYPE_INT32);
}

int8_t fsynth_i8(int64_t ds, int64_t step, int64_t g)
{
    FSYNTH_VALUE(int8_t, XFER_TYPE_UINT8);
}

int16_t fsynth_i16(int64_t ds, int64_t step, int64_t g)
{
    FSYNTH_VALUE(int16_t, XFER_TYPE_UINT16);
}
