/*
 * Example kernels, one source for every backend: nvcc makes PTX of it,
 * hipcc a code object, cc (through examples-cpu.c) a CPU shared object.
 * See <accel/kernel.h> for what the CPU form supports.
 */
#include <accel/kernel.h>

/* Does nothing: what a launch costs by itself. */
ACCEL_KERNEL(empty)
{
}

/* y = a * x + y over n elements, one thread each. */
ACCEL_KERNEL(saxpy, (uint32_t, n), (float, a), (const float *ACCEL_RESTRICT, x),
             (float *ACCEL_RESTRICT, y))
{
    uint64_t i = accel_global_idx_x();

    if (i < n)
        y[i] = a * x[i] + y[i];
}

/* c = a + b over n elements, one thread each. */
ACCEL_KERNEL(vadd, (uint32_t, n), (const float *ACCEL_RESTRICT, a),
             (const float *ACCEL_RESTRICT, b), (float *ACCEL_RESTRICT, c))
{
    uint64_t i = accel_global_idx_x();

    if (i < n)
        c[i] = a[i] + b[i];
}

/*
 * out = transpose(in) for a rows x cols matrix of floats whose rows are
 * `in_pitch` bytes apart (as a pitched allocation lays them out); out has
 * cols rows of rows elements, `out_pitch` bytes apart. x runs along in's
 * columns, y along its rows.
 */
ACCEL_KERNEL(transpose_f32, (float *ACCEL_RESTRICT, out), (uint64_t, out_pitch),
             (const float *ACCEL_RESTRICT, in), (uint64_t, in_pitch),
             (uint32_t, rows), (uint32_t, cols))
{
    uint64_t col = accel_global_idx_x();
    uint64_t row = accel_global_idx_y();
    const float *in_row;
    float *out_row;

    if (col >= cols || row >= rows)
        return;
    in_row = (const float *)((const char *)in + row * in_pitch);
    out_row = (float *)((char *)out + col * out_pitch);
    out_row[row] = in_row[col];
}

/*
 * Sum of n floats. Each thread sums a grid-stride slice, then adds it to
 * its block's entry of block_sums (gridDim.x entries) and to *total; both
 * start at zero. Atomics instead of a block barrier, so that the CPU form
 * runs it: floating-point sums in another order, so exact only for values
 * whose partial sums are exact.
 */
ACCEL_KERNEL(reduce_sum_f32, (uint64_t, n), (const float *ACCEL_RESTRICT, x),
             (float *, block_sums), (float *, total))
{
    uint64_t stride = accel_global_size_x();
    float sum = 0.0f;

    for (uint64_t i = accel_global_idx_x(); i < n; i += stride)
        sum += x[i];
    accel_atomic_add_f32(&block_sums[blockIdx.x], sum);
    accel_atomic_add_f32(total, sum);
}
