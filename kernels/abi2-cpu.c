/*
 * A CPU kernel image as <accel/kernel.h> built it at CPU kernel ABI 2,
 * before typed signatures: the descriptor ends at run_thread, so the
 * plugin knows its parameters' sizes only. Written out by hand, since the
 * header now makes ABI 3 images.
 */
#include <stdint.h>

struct abi2_block {
    uint32_t grid_dim[3];
    uint32_t block_dim[3];
    uint32_t block_idx[3];
    uint32_t shared_bytes;
    void *shared;
    uint32_t first_thread;
    const void *runtime;
    void *runtime_state;
};

struct abi2_kernel {
    uint32_t abi;
    uint32_t param_count;
    uint32_t param_sizes[64];
    void (*run_block)(const struct abi2_block *block, void *const *args);
    void (*run_thread)(const struct abi2_block *block, void *const *args,
                       uint32_t thread);
};

/* add_one_v2(n, data): data[i] += 1 for every i < n, thread by thread. */
static void abi2_add_one_thread(const struct abi2_block *block,
                                void *const *args, uint32_t thread)
{
    uint32_t n = *(const uint32_t *)args[0];
    uint32_t *data = *(uint32_t *const *)args[1];
    uint32_t threads = block->block_dim[0] * block->block_dim[1] *
                       block->block_dim[2];
    uint64_t i = (uint64_t)block->block_idx[0] * threads + thread;

    if (i < n)
        data[i] += 1;
}

static void abi2_add_one(const struct abi2_block *block, void *const *args)
{
    uint32_t threads = block->block_dim[0] * block->block_dim[1] *
                       block->block_dim[2];

    for (uint32_t t = block->first_thread; t < threads; t++)
        abi2_add_one_thread(block, args, t);
}

__attribute__((visibility("default")))
const struct abi2_kernel accel_cpu_kernel_add_one_v2 = {
    .abi = 2,
    .param_count = 2,
    .param_sizes = {sizeof(uint32_t), sizeof(uint32_t *)},
    .run_block = abi2_add_one,
    .run_thread = abi2_add_one_thread,
};
