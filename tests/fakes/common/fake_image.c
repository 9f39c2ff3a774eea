/*
 * The fake runtimes' kernels: CPU images of <accel/kernel.h> kernels (an
 * ELF shared object for this machine), in place of a GPU's code. An image
 * is written to a memory file and opened with dlopen; a kernel NAME is its
 * accel_cpu_kernel_NAME descriptor, whose blocks a launch runs one by one
 * on the stream's thread.
 */
#include "fake_core.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* elf.h's EM_AMDGPU, which older C libraries lack. */
#define FAKE_EM_AMDGPU 224

size_t fake_image_size(const void *image, size_t available, const char **out_why)
{
    ElfW(Ehdr) header;
    size_t end;

    if (available < sizeof(header) || memcmp(image, ELFMAG, SELFMAG) != 0) {
        *out_why = "the fake runtime runs CPU images only: this is not an ELF "
                   "shared object";
        return 0;
    }
    memcpy(&header, image, sizeof(header));
    if (header.e_machine == FAKE_EM_AMDGPU) {
        *out_why =
            "an AMD GPU code object: the fake runtime runs CPU images only";
        return 0;
    }
    if (header.e_ident[EI_CLASS] !=
            (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
        header.e_type != ET_DYN) {
        *out_why = "the ELF image is not a shared object for this machine";
        return 0;
    }
    end = (size_t)header.e_shoff + (size_t)header.e_shnum * header.e_shentsize;
    for (unsigned i = 0; i < header.e_phnum; i++) {
        ElfW(Phdr) segment;
        size_t at = (size_t)header.e_phoff + i * sizeof(segment);

        if (at > available || available - at < sizeof(segment))
            break;
        memcpy(&segment, (const char *)image + at, sizeof(segment));
        if ((size_t)(segment.p_offset + segment.p_filesz) > end)
            end = (size_t)(segment.p_offset + segment.p_filesz);
    }
    if (end > available) {
        *out_why = "the ELF image is truncated";
        return 0;
    }
    return end;
}

bool fake_image_open(const void *image, size_t size,
                     struct fake_image *out_image, const char **out_why)
{
    char path[64];
    int fd = memfd_create("fake-gpu-module", MFD_CLOEXEC);
    size_t done = 0;

    *out_why = "out of memory";
    if (fd < 0)
        return false;
    while (done < size) {
        ssize_t n = write(fd, (const char *)image + done, size - done);

        if (n <= 0) {
            close(fd);
            return false;
        }
        done += (size_t)n;
    }
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    out_image->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (out_image->handle == NULL) {
        *out_why = dlerror();
        close(fd);
        return false;
    }
    out_image->fd = fd;
    return true;
}

void fake_image_close(struct fake_image *image)
{
    if (image->handle == NULL)
        return;
    dlclose(image->handle);
    close(image->fd);
    image->handle = NULL;
}

const struct accel_cpu_kernel *fake_image_kernel(const struct fake_image *image,
                                                 const char *name)
{
    char symbol[sizeof(ACCEL_CPU_KERNEL_PREFIX) + 128];
    const struct accel_cpu_kernel *kernel;

    if (strlen(name) >= 128)
        return NULL;
    snprintf(symbol, sizeof(symbol), ACCEL_CPU_KERNEL_PREFIX "%s", name);
    kernel = dlsym(image->handle, symbol);
    return kernel != NULL && kernel->abi == ACCEL_CPU_KERNEL_ABI ? kernel : NULL;
}

/* Aligned to its size up to 16, as kernel.h lays arguments out. */
static size_t fake_param_align(uint32_t size)
{
    size_t align = 1;

    while (align < size && align < 16)
        align *= 2;
    return align;
}

size_t fake_param_offset(const struct accel_cpu_kernel *kernel, uint32_t index)
{
    size_t offset = 0;

    for (uint32_t i = 0; i <= index; i++) {
        size_t align = fake_param_align(kernel->param_sizes[i]);

        offset = (offset + align - 1) & ~(align - 1);
        if (i < index)
            offset += kernel->param_sizes[i];
    }
    return offset;
}

bool fake_launch_copy_args(struct fake_launch *launch, void *const *params)
{
    const struct accel_cpu_kernel *kernel = launch->kernel;
    uint32_t last = kernel->param_count;
    size_t bytes = last == 0 ? 1
                             : fake_param_offset(kernel, last - 1) +
                                   kernel->param_sizes[last - 1];

    launch->arg_bytes = aligned_alloc(16, (bytes + 15) & ~(size_t)15);
    if (launch->arg_bytes == NULL)
        return false;
    for (uint32_t i = 0; i < kernel->param_count; i++) {
        launch->args[i] = launch->arg_bytes + fake_param_offset(kernel, i);
        memcpy(launch->args[i], params[i], kernel->param_sizes[i]);
    }
    return true;
}

void fake_launch_run(const struct fake_launch *launch)
{
    struct accel_cpu_block block = {
        {launch->grid[0], launch->grid[1], launch->grid[2]},
        {launch->block[0], launch->block[1], launch->block[2]},
        {0, 0, 0},
        launch->shared_bytes,
        NULL,
        0, /* first_thread: the whole block; these kernels take no barrier */
        NULL,
        NULL};
    void *shared = NULL;

    if (launch->shared_bytes != 0) {
        shared = aligned_alloc(64, (launch->shared_bytes + 63u) & ~63u);
        if (shared == NULL)
            return;
        block.shared = shared;
    }
    for (uint32_t z = 0; z < launch->grid[2]; z++) {
        for (uint32_t y = 0; y < launch->grid[1]; y++) {
            for (uint32_t x = 0; x < launch->grid[0]; x++) {
                block.block_idx[0] = x;
                block.block_idx[1] = y;
                block.block_idx[2] = z;
                launch->kernel->run_block(&block, launch->args);
            }
        }
    }
    free(shared);
}
