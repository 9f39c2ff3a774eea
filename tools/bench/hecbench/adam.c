/*
 * HeCBench's adam (src/adam-cuda/main.cu; Apache-2.0, the Colossal-AI
 * authors): one Adam optimizer launch of the templated kernel
 * adam<float, float>, 10000 parameters, 200 time steps each, 256-thread
 * blocks, where every thread computes powf(beta1, t) and powf(beta2, t) of
 * the same t (block-uniform libm calls). The kernel updates the
 * parameters and both moments in place, so all three are put back before
 * each step and all three are compared with reference.h's host loop. Its
 * input generation is C++ (std::mt19937), in adam-omp.cpp.
 */
#include "../hecbench.h"

#define VECTOR_SIZE 10000
#define TIME_STEP 200
#define THREADS_PER_BLOCK 256

extern const char hb_adam_cl[];
void hb_adam_init(void *const buffers[]);
void hb_adam_openmp(void *const buffers[]);
void hb_adam_reference(void *const buffers[]);

static bool step(const struct hb_launcher *l)
{
    /* main's constants; mode is ADAM_MODE_0 (eps under the square root). */
    return hb_launch(
        l,
        &(struct hb_launch){
            "adam_float",
            {(VECTOR_SIZE + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK, 1, 1},
            {THREADS_PER_BLOCK, 1, 1},
            0,
            13,
            {HB_BUF(0), HB_BUF(1), HB_BUF(2), HB_BUF(3), HB_F32(0.9f),
             HB_F32(0.999f), HB_F32(1e-8f), HB_F32(256.f), HB_F32(1e-3f),
             HB_I32(TIME_STEP), HB_I64(VECTOR_SIZE), HB_I32(0), HB_F32(0.5f)}});
}

const struct hb_program hb_adam = {
    .name = "adam",
    .origin = "src/adam-cuda/main.cu",
    .license = "Apache-2.0",
    .covers = "templated kernel, grid-stride loop, block-uniform powf, sqrtf",
    .size = "10000 parameters x 200 time steps",
    .opencl = hb_adam_cl,
    .buffer_count = 4,
    .buffers = {{"d_p", HB_F32, VECTOR_SIZE * 4, true, true},
                {"d_m", HB_F32, VECTOR_SIZE * 4, true, true},
                {"d_v", HB_F32, VECTOR_SIZE * 4, true, true},
                {"d_g", HB_F32, VECTOR_SIZE * 4, false, false}},
    .init = hb_adam_init,
    .step = step,
    .openmp = hb_adam_openmp,
    .reference = hb_adam_reference,
    .tolerance = 1e-4,
};
