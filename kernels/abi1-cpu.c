/*
 * A CPU kernel image as <accel/kernel.h> built it at CPU kernel ABI 1,
 * before barriers: the descriptor ends at run_block, and run_block runs
 * every thread of the block and knows only the block fields ABI 1 had.
 * Written out by hand, since the header now makes ABI 2 images.
 */
#include <stdint.h>

struct abi1_block {
    uint32_t grid_dim[3];
    uint32_t block_dim[3];
    uint32_t block_idx[3];
    uint32_t shared_bytes;
    void *shared;
};

struct abi1_kernel {
    uint32_t abi;
    uint32_t param_count;
    uint32_t param_sizes[64];
    void (*run_block)(const struct abi1_block *block, void *const *args);
};

/* add_one_v1(n, data): data[i] += 1 for every i < n. */
static void abi1_add_one(const struct abi1_block *block, void *const *args)
{
    uint32_t n = *(const uint32_t *)args[0];
    uint32_t *data = *(uint32_t *const *)args[1];
    uint32_t threads = block->block_dim[0] * block->block_dim[1] *
                       block->block_dim[2];

    for (uint32_t t = 0; t < threads; t++) {
        uint64_t i = (uint64_t)block->block_idx[0] * threads + t;

        if (i < n)
            data[i] += 1;
    }
}

__attribute__((visibility("default")))
const struct abi1_kernel accel_cpu_kernel_add_one_v1 = {
    .abi = 1,
    .param_count = 2,
    .param_sizes = {sizeof(uint32_t), sizeof(uint32_t *)},
    .run_block = abi1_add_one,
};
