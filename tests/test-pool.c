/*
 * The device memory pool on the null plugin: pages and slices, reuse,
 * relocation of outdated pages with refs and contents intact, pinned
 * allocations left in place, statistics.
 */
#include "support.h"

#include <stdlib.h>
#include <string.h>

/* 4 KiB allocations: 512 slices to a 2 MiB page. */
#define SLICE_BYTES 4096u
#define SLICES_PER_PAGE 512u

/* The pool's own device: null:0 and a stream. */
struct pool_case {
    struct support_null null;
    accel_device *device;
    accel_stream *stream;
};

static int setup(void **state)
{
    struct pool_case *c = calloc(1, sizeof *c);
    *state = c;
    if (c == NULL || support_null_open(&c->null, NULL) != 0)
        return -1;
    c->device = c->null.device;
    c->stream = c->null.stream;
    /* Compaction is explicit here unless a test turns the policy on. */
    accel_pool_policy manual = {.automatic = false, .outdated_percent = 25};
    return accel_device_set_pool_policy(c->device, &manual) == ACCEL_OK ? 0 : -1;
}

static int teardown(void **state)
{
    struct pool_case *c = *state;
    if (c != NULL)
        support_null_close(&c->null);
    free(c);
    return 0;
}

/* Fill a ref with a pattern that names it. */
static void fill(struct pool_case *c, accel_ref ref, uint32_t tag)
{
    uint32_t data[SLICE_BYTES / 4];
    for (uint32_t i = 0; i < SLICE_BYTES / 4; i++)
        data[i] = tag * 2654435761u + i;
    assert_status(accel_copy_to_device(c->stream, ref, 0, data, sizeof data),
                  ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
}

static void check(struct pool_case *c, accel_ref ref, uint32_t tag)
{
    uint32_t data[SLICE_BYTES / 4];
    assert_status(accel_copy_to_host(c->stream, data, ref, 0, sizeof data),
                  ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    for (uint32_t i = 0; i < SLICE_BYTES / 4; i++) {
        if (data[i] != tag * 2654435761u + i)
            fail_msg("ref %u: word %u is %u, expected %u", tag, i, data[i],
                     tag * 2654435761u + i);
    }
}

static void test_allocations_share_pages_and_are_counted(void **state)
{
    struct pool_case *c = *state;
    accel_ref refs[10];
    for (int i = 0; i < 10; i++)
        assert_status(accel_alloc(c->device, ACCEL_BYTE, SLICE_BYTES, &refs[i]),
                      ACCEL_OK);
    accel_memory_stats stats = support_memory_stats(c->device);
    assert_int_equal(stats.pages, 1);
    assert_int_equal(stats.slices, 10);
    assert_int_equal(stats.used_bytes, 10 * SLICE_BYTES);
    assert_true(stats.reserved_bytes >= 2u << 20);
    assert_int_equal(stats.pool_misses, 1);
    assert_int_equal(stats.pool_hits, 9);
    for (int i = 0; i < 10; i++)
        assert_status(accel_free(c->device, refs[i]), ACCEL_OK);
    stats = support_memory_stats(c->device);
    assert_int_equal(stats.slices, 0);
    assert_int_equal(stats.used_bytes, 0);
    /* The class's last page stays for the next allocation. */
    assert_int_equal(stats.pages, 1);
}

static void test_freed_slice_is_reused_without_a_new_page(void **state)
{
    struct pool_case *c = *state;
    accel_ref ref;
    for (int round = 0; round < 100; round++) {
        assert_status(accel_alloc(c->device, ACCEL_F32, 100, &ref), ACCEL_OK);
        assert_status(accel_free(c->device, ref), ACCEL_OK);
    }
    accel_memory_stats stats = support_memory_stats(c->device);
    assert_int_equal(stats.pool_misses, 1);
    assert_int_equal(stats.pool_hits, 99);
    assert_int_equal(stats.pages, 1);
}

static void test_large_allocation_gets_its_own_page(void **state)
{
    struct pool_case *c = *state;
    accel_ref big;
    assert_status(accel_alloc(c->device, ACCEL_BYTE, 5u << 20, &big), ACCEL_OK);
    accel_memory_stats stats = support_memory_stats(c->device);
    assert_int_equal(stats.pages, 1);
    assert_int_equal(stats.reserved_bytes, 5u << 20);
    assert_status(accel_free(c->device, big), ACCEL_OK);
    assert_status(accel_stream_sync(c->stream), ACCEL_OK);
    /* The freed page is kept as a spare: the next allocation of about its
     * size takes it without reaching the plugin. */
    stats = support_memory_stats(c->device);
    assert_int_equal(stats.pages, 1);
    assert_int_equal(stats.slices, 0);
    assert_status(accel_alloc(c->device, ACCEL_BYTE, (5u << 20) - 1000, &big),
                  ACCEL_OK);
    accel_memory_stats again = support_memory_stats(c->device);
    assert_int_equal(again.pool_hits, stats.pool_hits + 1);
    assert_int_equal(again.pool_misses, stats.pool_misses);
    assert_int_equal(again.pages, 1);
    assert_status(accel_free(c->device, big), ACCEL_OK);
    /* Compaction gives spares back. */
    assert_status(accel_device_compact(c->device, NULL), ACCEL_OK);
    stats = support_memory_stats(c->device);
    assert_int_equal(stats.pages, 0);
    assert_int_equal(stats.reserved_bytes, 0);
}

static void test_spare_pages_are_bounded_and_sized(void **state)
{
    struct pool_case *c = *state;
    accel_ref refs[6];
    for (int i = 0; i < 6; i++)
        assert_status(accel_alloc(c->device, ACCEL_BYTE, 2u << 20, &refs[i]),
                      ACCEL_OK);
    for (int i = 0; i < 6; i++)
        assert_status(accel_free(c->device, refs[i]), ACCEL_OK);
    /* At most four are kept. */
    assert_int_equal(support_memory_stats(c->device).pages, 4);
    /* A spare serves a size it does not waste as much again of: 8 MiB
     * takes a new page. */
    accel_ref big;
    uint64_t misses = support_memory_stats(c->device).pool_misses;
    assert_status(accel_alloc(c->device, ACCEL_BYTE, 8u << 20, &big), ACCEL_OK);
    assert_int_equal(support_memory_stats(c->device).pool_misses, misses + 1);
    assert_status(accel_free(c->device, big), ACCEL_OK);
}

/*
 * Three pages of slices, then most freed so that two pages fall under the
 * threshold: compaction moves their survivors and returns the pages,
 * every ref still reads what was written through it.
 */
static void test_compaction_moves_slices_and_keeps_contents(void **state)
{
    struct pool_case *c = *state;
    enum { N = 3 * SLICES_PER_PAGE };
    accel_ref *refs = calloc(N, sizeof *refs);
    assert_non_null(refs);
    for (uint32_t i = 0; i < N; i++) {
        assert_status(accel_alloc(c->device, ACCEL_BYTE, SLICE_BYTES, &refs[i]),
                      ACCEL_OK);
        fill(c, refs[i], i);
    }
    assert_int_equal(support_memory_stats(c->device).pages, 3);
    /* Keep all of the first page; 1 in 16 of the other two. */
    for (uint32_t i = SLICES_PER_PAGE; i < N; i++) {
        if (i % 16 != 0) {
            assert_status(accel_free(c->device, refs[i]), ACCEL_OK);
            refs[i].count = 0;
        }
    }
    /* Room for the survivors: free a part of the first page. */
    for (uint32_t i = 0; i < 100; i++) {
        assert_status(accel_free(c->device, refs[i]), ACCEL_OK);
        refs[i].count = 0;
    }
    /* The frees wait for the fills' streams; let them land first. */
    assert_status(accel_device_sync(c->device), ACCEL_OK);
    accel_memory_stats before = support_memory_stats(c->device);
    assert_int_equal(before.pending_frees, 0);
    uint32_t pages = 0;
    assert_status(accel_device_compact(c->device, &pages), ACCEL_OK);
    assert_int_equal(pages, 2);
    assert_status(accel_device_sync(c->device), ACCEL_OK);
    accel_memory_stats after = support_memory_stats(c->device);
    assert_int_equal(after.relocations - before.relocations,
                     2 * SLICES_PER_PAGE / 16);
    assert_int_equal(after.pages, 1);
    assert_int_equal(after.slices, before.slices);
    assert_true(after.reserved_bytes < before.reserved_bytes);
    for (uint32_t i = 0; i < N; i++) {
        if (refs[i].count == 0)
            continue;
        assert_status(accel_ref_check(c->device, refs[i]), ACCEL_OK);
        check(c, refs[i], i);
        assert_status(accel_free(c->device, refs[i]), ACCEL_OK);
    }
    free(refs);
}

static void test_pinned_allocation_is_never_moved(void **state)
{
    struct pool_case *c = *state;
    enum { N = 2 * SLICES_PER_PAGE };
    accel_ref *refs = calloc(N, sizeof *refs);
    assert_non_null(refs);
    for (uint32_t i = 0; i < N; i++)
        assert_status(accel_alloc(c->device, ACCEL_BYTE, SLICE_BYTES, &refs[i]),
                      ACCEL_OK);
    /* The second page keeps two slices, one of them pinned. */
    accel_ref pinned = refs[SLICES_PER_PAGE];
    accel_ref movable = refs[SLICES_PER_PAGE + 1];
    uint64_t address = 0, movable_address = 0;
    assert_status(accel_ref_native(c->device, pinned, &address), ACCEL_OK);
    fill(c, pinned, 7);
    fill(c, movable, 8);
    for (uint32_t i = SLICES_PER_PAGE + 2; i < N; i++)
        assert_status(accel_free(c->device, refs[i]), ACCEL_OK);
    for (uint32_t i = 0; i < 10; i++)
        assert_status(accel_free(c->device, refs[i]), ACCEL_OK);
    uint64_t moves = support_memory_stats(c->device).relocations;
    uint32_t pages = 0;
    assert_status(accel_device_compact(c->device, &pages), ACCEL_OK);
    assert_int_equal(pages, 0);
    assert_int_equal(support_memory_stats(c->device).relocations, moves);
    uint64_t after = 0;
    assert_status(accel_ref_native(c->device, pinned, &after), ACCEL_OK);
    assert_int_equal(after, address);
    check(c, pinned, 7);
    check(c, movable, 8);
    assert_status(accel_ref_native(c->device, movable, &movable_address),
                  ACCEL_OK);
    for (uint32_t i = 10; i < SLICES_PER_PAGE + 2; i++)
        assert_status(accel_free(c->device, refs[i]), ACCEL_OK);
    free(refs);
}

static void test_automatic_policy_compacts_on_free(void **state)
{
    struct pool_case *c = *state;
    accel_pool_policy automatic = {.automatic = true, .outdated_percent = 25};
    assert_status(accel_device_set_pool_policy(c->device, &automatic), ACCEL_OK);
    enum { N = 2 * SLICES_PER_PAGE };
    accel_ref *refs = calloc(N, sizeof *refs);
    assert_non_null(refs);
    for (uint32_t i = 0; i < N; i++) {
        assert_status(accel_alloc(c->device, ACCEL_BYTE, SLICE_BYTES, &refs[i]),
                      ACCEL_OK);
    }
    fill(c, refs[0], 100);
    fill(c, refs[SLICES_PER_PAGE], 200);
    /* Empty most of both pages: the first page's survivor and the second's
     * end up together, and one page goes back. */
    for (uint32_t i = 1; i < N; i++) {
        if (i != SLICES_PER_PAGE)
            assert_status(accel_free(c->device, refs[i]), ACCEL_OK);
    }
    assert_status(accel_device_sync(c->device), ACCEL_OK);
    accel_memory_stats stats = support_memory_stats(c->device);
    assert_true(stats.relocations >= 1);
    assert_int_equal(stats.pages, 1);
    check(c, refs[0], 100);
    check(c, refs[SLICES_PER_PAGE], 200);
    assert_status(accel_free(c->device, refs[0]), ACCEL_OK);
    assert_status(accel_free(c->device, refs[SLICES_PER_PAGE]), ACCEL_OK);
    free(refs);
}

static void test_bad_policy_is_rejected(void **state)
{
    struct pool_case *c = *state;
    accel_pool_policy zero = {.automatic = true, .outdated_percent = 0};
    accel_pool_policy over = {.automatic = true, .outdated_percent = 101};
    assert_status(accel_device_set_pool_policy(c->device, &zero),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_device_set_pool_policy(c->device, &over),
                  ACCEL_ERR_INVALID_ARGUMENT);
    assert_status(accel_device_set_pool_policy(c->device, NULL),
                  ACCEL_ERR_INVALID_ARGUMENT);
}

static void test_compaction_with_nothing_outdated_moves_nothing(void **state)
{
    struct pool_case *c = *state;
    accel_ref ref;
    assert_status(accel_alloc(c->device, ACCEL_BYTE, SLICE_BYTES, &ref),
                  ACCEL_OK);
    uint32_t pages = 99;
    assert_status(accel_device_compact(c->device, &pages), ACCEL_OK);
    assert_int_equal(pages, 0);
    assert_int_equal(support_memory_stats(c->device).relocations, 0);
    assert_status(accel_free(c->device, ref), ACCEL_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(test_allocations_share_pages_and_are_counted),
        T(test_freed_slice_is_reused_without_a_new_page),
        T(test_large_allocation_gets_its_own_page),
        T(test_spare_pages_are_bounded_and_sized),
        T(test_compaction_moves_slices_and_keeps_contents),
        T(test_pinned_allocation_is_never_moved),
        T(test_automatic_policy_compacts_on_free),
        T(test_bad_policy_is_rejected),
        T(test_compaction_with_nothing_outdated_moves_nothing),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
