/*
 * C++ kernels, written once for nvcc, hipcc and the CPU compiler
 * (<accel/kernel.h> compiled as C++17): kernels templated on types and
 * block sizes, a scan taking a functor, a matrix multiply templated on its
 * tile with 2D shared arrays, float4 arithmetic, structs with member
 * functions, namespaced overloads with default arguments and references,
 * constexpr, lambdas, and CUDA's fast math intrinsics.
 * tests/test-cxx-kernels.c checks each on the CPU plugin against a host
 * reference; the build compiles the same source to PTX and an AMD code
 * object where nvcc and hipcc are found.
 */
#include <accel/kernel.h>

/* ---- a reduction templated on the element type and the block size ---- */

ACCEL_KERNEL_TEMPLATE((typename T, uint32_t BLOCK), cxx_block_sum,
                      (uint32_t, n), (const T *, x), (T *, sums))
{
    ACCEL_SHARED(T, part, BLOCK);
    const uint32_t t = threadIdx.x;
    const uint64_t i = (uint64_t)blockIdx.x * BLOCK + t;

    part[t] = i < n ? x[i] : T(0);
    accel_sync_threads();
    for (uint32_t half = BLOCK / 2; half > 0; half /= 2) {
        if (t < half)
            part[t] += part[t + half];
        accel_sync_threads();
    }
    if (t == 0)
        sums[blockIdx.x] = part[0];
}
ACCEL_KERNEL_INSTANCE(cxx_block_sum, (float, 256u), cxx_block_sum_f32_256,
                      (uint32_t, n), (const float *, x), (float *, sums))
ACCEL_KERNEL_INSTANCE(cxx_block_sum, (double, 64u), cxx_block_sum_f64_64,
                      (uint32_t, n), (const double *, x), (double *, sums))
ACCEL_KERNEL_INSTANCE(cxx_block_sum, (int32_t, 128u), cxx_block_sum_i32_128,
                      (uint32_t, n), (const int32_t *, x), (int32_t *, sums))

/* ---- an inclusive block scan taking its operation as a functor ---- */

namespace cxx
{

template <typename T> struct plus {
    ACCEL_DEVICE T operator()(const T &a, const T &b) const
    {
        return a + b;
    }
};
template <typename T> struct maximum {
    ACCEL_DEVICE T operator()(const T &a, const T &b) const
    {
        return a > b ? a : b;
    }
};

} // namespace cxx

ACCEL_KERNEL_TEMPLATE((typename T, typename Op, uint32_t BLOCK), cxx_scan,
                      (const T *, x), (T *, y))
{
    ACCEL_SHARED(T, buf, BLOCK);
    const uint32_t t = threadIdx.x;
    const uint64_t base = (uint64_t)blockIdx.x * BLOCK;
    const Op op;

    buf[t] = x[base + t];
    accel_sync_threads();
    for (uint32_t d = 1; d < BLOCK; d *= 2) {
        T v = t >= d ? op(buf[t - d], buf[t]) : buf[t];
        accel_sync_threads();
        buf[t] = v;
        accel_sync_threads();
    }
    y[base + t] = buf[t];
}
ACCEL_KERNEL_INSTANCE(cxx_scan, (float, cxx::plus<float>, 128u),
                      cxx_scan_sum_f32, (const float *, x), (float *, y))
ACCEL_KERNEL_INSTANCE(cxx_scan, (int32_t, cxx::maximum<int32_t>, 64u),
                      cxx_scan_max_i32, (const int32_t *, x), (int32_t *, y))

/* ---- C = A B, n x n, templated on the tile; 2D shared arrays ---- */

ACCEL_KERNEL_TEMPLATE((uint32_t TILE), cxx_matmul, (uint32_t, n),
                      (const float *, a), (const float *, b), (float *, c))
{
    ACCEL_SHARED(float, ta, TILE][TILE);
    ACCEL_SHARED(float, tb, TILE][TILE);
    const uint32_t tx = threadIdx.x, ty = threadIdx.y;
    const uint32_t row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float sum = 0.0f;

    for (uint32_t t = 0; t < n; t += TILE) {
        ta[ty][tx] = row < n && t + tx < n ? a[(uint64_t)row * n + t + tx] : 0.0f;
        tb[ty][tx] = col < n && t + ty < n ? b[(uint64_t)(t + ty) * n + col]
                                           : 0.0f;
        accel_sync_threads();
        for (uint32_t k = 0; k < TILE; k++)
            sum += ta[ty][k] * tb[k][tx];
        accel_sync_threads();
    }
    if (row < n && col < n)
        c[(uint64_t)row * n + col] = sum;
}
ACCEL_KERNEL_INSTANCE(cxx_matmul, (8u), cxx_matmul_8, (uint32_t, n),
                      (const float *, a), (const float *, b), (float *, c))
ACCEL_KERNEL_INSTANCE(cxx_matmul, (16u), cxx_matmul_16, (uint32_t, n),
                      (const float *, a), (const float *, b), (float *, c))

/* ---- float4 arithmetic: y = a x + y, and |x|^2 per vector ---- */

ACCEL_DEVICE_FN float cxx_dot(const float4 &p, const float4 &q)
{
    return p.x * q.x + p.y * q.y + p.z * q.z + p.w * q.w;
}

ACCEL_KERNEL(cxx_axpy4, (uint32_t, n), (float, a), (const float4 *, x),
             (float4 *, y), (float *, norms))
{
    const uint64_t i = accel_global_idx_x();

    if (i >= n)
        return;
    float4 v = x[i];
    float4 r = a * v + y[i];
    r -= make_float4(0.5f, 0.5f, 0.5f, 0.5f);
    r *= 2.0f;
    y[i] = -r / 4.0f;
    norms[i] = cxx_dot(v, v);
}

/* ---- structs with member functions, namespaced overloads ---- */

namespace cxx
{

struct point {
    float x, y;

    ACCEL_DEVICE float norm2() const
    {
        return x * x + y * y;
    }
    ACCEL_DEVICE point operator+(const point &o) const
    {
        return point{x + o.x, y + o.y};
    }
    ACCEL_DEVICE void scale_by(float k)
    {
        x *= k;
        y *= k;
    }
};

constexpr float half = 0.5f;

ACCEL_DEVICE_FN float weigh(float v, float k = 2.0f)
{
    return v * k;
}
ACCEL_DEVICE_FN double weigh(double v, double k = 3.0)
{
    return v * k;
}
ACCEL_DEVICE_FN int weigh(int v, int k = 4)
{
    return v * k;
}
ACCEL_DEVICE_FN void bump(float &v)
{
    v += 1.0f;
}

} // namespace cxx

ACCEL_KERNEL(cxx_members, (uint32_t, n), (const float *, xs), (const float *, ys),
             (float *, out_f), (double *, out_d), (int32_t *, out_i))
{
    const uint64_t i = accel_global_idx_x();

    if (i >= n)
        return;
    cxx::point p{xs[i], ys[i]};
    cxx::point q = p + cxx::point{1.0f, -1.0f};
    q.scale_by(cxx::half);
    auto square = [](float v) { return v * v; };
    float f = cxx::weigh(q.norm2()) + square(p.x);
    cxx::bump(f);
    out_f[i] = f;
    out_d[i] = cxx::weigh((double)xs[i]);
    out_i[i] = cxx::weigh((int)i) + cxx::weigh((int)i, 1);
}

/* ---- a transpose through a 2D shared array, 16 x 16 blocks ---- */

#define CXX_TILE 16

ACCEL_KERNEL(cxx_transpose, (uint32_t, rows), (uint32_t, cols),
             (const float *, in), (float *, out))
{
    ACCEL_SHARED(float, tile, CXX_TILE][CXX_TILE + 1);
    uint32_t x = blockIdx.x * CXX_TILE + threadIdx.x;
    uint32_t y = blockIdx.y * CXX_TILE + threadIdx.y;

    if (x < cols && y < rows)
        tile[threadIdx.y][threadIdx.x] = in[(uint64_t)y * cols + x];
    accel_sync_threads();
    x = blockIdx.y * CXX_TILE + threadIdx.x;
    y = blockIdx.x * CXX_TILE + threadIdx.y;
    if (x < rows && y < cols)
        out[(uint64_t)y * rows + x] = tile[threadIdx.x][threadIdx.y];
}

/* ---- CUDA's fast math intrinsics and the float overloads ---- */

#define CXX_FAST_OUTPUTS 12

ACCEL_KERNEL(cxx_fast_math, (uint32_t, n), (const float *, x), (float *, y))
{
    const uint64_t i = accel_global_idx_x();

    if (i >= n)
        return;
    const float v = x[i]; /* in (0.1, 2.1) */
    float *o = y + i * CXX_FAST_OUTPUTS;
    float s, c;

    __sincosf(v, &s, &c);
    o[0] = __expf(v);
    o[1] = __logf(v);
    o[2] = __log2f(v);
    o[3] = __powf(2.0f, v);
    o[4] = __sinf(v) + __cosf(v);
    o[5] = __fdividef(v, 3.0f);
    o[6] = __saturatef(v - 1.0f);
    o[7] = rsqrtf(v);
    o[8] = s * c;
    o[9] = __log10f(v) + __tanf(v * 0.5f);
    o[10] = exp(v) + log(v); /* the float overloads, as under nvcc */
    o[11] = abs(-v) + __fmaf_rn(v, 2.0f, 1.0f);
}

/* ---- written as for nvcc: CUDA's own spellings in the body ---- */

#define CXX_SPELLINGS_BLOCK 128

ACCEL_KERNEL(cxx_cuda_spellings, (uint32_t, n), (const float *, x),
             (float *, block_max), (unsigned int *, count), (int *, bits))
{
    __shared__ float s[CXX_SPELLINGS_BLOCK];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + t;

    s[t] = i < n ? __ldg(&x[i]) : -1e30f;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half >>= 1) {
        if (t < half)
            s[t] = max(s[t], s[t + half]);
        __syncthreads();
    }
    if (t == 0)
        block_max[blockIdx.x] = s[0];
    if (i < n && x[i] > 0.5f)
        atomicAdd(count, 1u);
    if (i < n)
        bits[i] = __popc(__float_as_uint(x[i])) + min((int)i, 7) +
                  __clz(i + 1) + warpSize;
}
