/*
 * Host tests of the TLB model (tlb_model.c), against layouts whose miss
 * counts can be worked out by hand. `make test`'s host stage builds and
 * runs it; it prints `tlb model: N passed, M failed`.
 */
#include "tlb_model.h"

#include <stdio.h>

static int passed, failed;

#define CHECK_EQ(what, got, want)                                              \
    do {                                                                       \
        unsigned long long g_ = (got), w_ = (want);                            \
        if (g_ == w_) {                                                        \
            passed++;                                                          \
        } else {                                                               \
            failed++;                                                          \
            printf("FAIL %s:%d %s: got %llu, want %llu\n", __FILE__, __LINE__, \
                   what, g_, w_);                                              \
        }                                                                      \
    } while (0)

/* A fake page table: every address maps with the same size and scope, and
 * walks are counted. */
struct layout {
    uint8_t shift;
    bool global;
    unsigned walks;
};

static bool walk(void *ctx, uint64_t va, struct tlb_fill *f)
{
    struct layout *l = ctx;
    (void)va;
    l->walks++;
    f->shift = l->shift;
    f->global = l->global;
    return true;
}

static bool unmapped(void *ctx, uint64_t va, struct tlb_fill *f)
{
    (void)ctx, (void)va, (void)f;
    return false;
}

#define BASE 0x400000000ull

/* `rounds` passes over 16 consecutive 4K pages, one load each. */
static void sweep16(struct tlb *t, struct layout *l, unsigned rounds)
{
    for (unsigned r = 0; r < rounds; r++)
        for (unsigned i = 0; i < 16; i++)
            tlb_model_access(t, 1, BASE + i * 4096ull, false, walk, l);
}

static void reach_decides_misses(void)
{
    /* Four L1 entries and no L2: a cyclic sweep of 16 4K pages misses
     * every time, 16 pages in one contiguous (64K) or block (2M) entry
     * miss once. */
    static const struct {
        const char *name;
        uint8_t shift;
        unsigned misses;
    } cases[] = {{"4K pages", 12, 64}, {"contpte block", 16, 1}, {"PMD block", 21, 1}};
    for (unsigned c = 0; c < 3; c++) {
        struct tlb t;
        struct layout l = {cases[c].shift, false, 0};
        tlb_model_init(&t, (struct tlb_geometry){4, 4, 0, 0});
        sweep16(&t, &l, 4);
        CHECK_EQ(cases[c].name, t.stats.dtlb_miss, cases[c].misses);
        CHECK_EQ(cases[c].name, l.walks, cases[c].misses);
        CHECK_EQ("accesses", t.stats.dtlb_access, 64);
        tlb_model_free(&t);
    }
}

static void l2_catches_l1_evictions(void)
{
    /* With N1's sizes the 16 pages fit L1: 16 misses, then none. With a
     * 4-entry L1 and a 64-entry L2, L1 misses each time, L2 only cold. */
    struct tlb t;
    struct layout l = {12, false, 0};
    tlb_model_init(&t, TLB_DEFAULT_GEOMETRY);
    sweep16(&t, &l, 4);
    CHECK_EQ("N1 dTLB misses", t.stats.dtlb_miss, 16);
    CHECK_EQ("N1 walks", t.stats.l2_miss, 16);
    tlb_model_free(&t);

    l.walks = 0;
    tlb_model_init(&t, (struct tlb_geometry){4, 4, 64, 4});
    sweep16(&t, &l, 4);
    CHECK_EQ("small L1 misses", t.stats.dtlb_miss, 64);
    CHECK_EQ("L2 lookups", t.stats.l2_access, 64);
    CHECK_EQ("L2 misses", t.stats.l2_miss, 16);
    CHECK_EQ("walks", l.walks, 16);
    tlb_model_free(&t);
}

static void lru_keeps_the_recently_used(void)
{
    /* Two entries, A B A C A B: C evicts B (A was used since), B then
     * evicts C: four misses. */
    struct tlb t;
    struct layout l = {12, false, 0};
    tlb_model_init(&t, (struct tlb_geometry){2, 2, 0, 0});
    uint64_t a = BASE, b = BASE + 4096, c = BASE + 8192;
    uint64_t seq[] = {a, b, a, c, a, b};
    for (unsigned i = 0; i < 6; i++)
        tlb_model_access(&t, 1, seq[i], false, walk, &l);
    CHECK_EQ("LRU misses", t.stats.dtlb_miss, 4);
    tlb_model_free(&t);
}

static void asids_tag_entries(void)
{
    struct tlb t;
    struct layout nonglobal = {12, false, 0}, global = {12, true, 0};
    tlb_model_init(&t, TLB_DEFAULT_GEOMETRY);
    tlb_model_access(&t, 1, BASE, false, walk, &nonglobal);
    tlb_model_access(&t, 2, BASE, false, walk, &nonglobal);
    tlb_model_access(&t, 1, BASE, false, walk, &nonglobal);
    CHECK_EQ("one page, two ASIDs", nonglobal.walks, 2);
    tlb_model_access(&t, 1, BASE + (1ull << 30), false, walk, &global);
    tlb_model_access(&t, 2, BASE + (1ull << 30), false, walk, &global);
    CHECK_EQ("a global page, two ASIDs", global.walks, 1);
    tlb_model_free(&t);
}

static void fetches_and_data_are_apart(void)
{
    struct tlb t;
    struct layout l = {12, false, 0};
    tlb_model_init(&t, (struct tlb_geometry){4, 4, 0, 0});
    tlb_model_access(&t, 1, BASE, true, walk, &l);
    tlb_model_access(&t, 1, BASE, false, walk, &l);
    tlb_model_access(&t, 1, BASE, true, walk, &l);
    CHECK_EQ("iTLB misses", t.stats.itlb_miss, 1);
    CHECK_EQ("dTLB misses", t.stats.dtlb_miss, 1);
    CHECK_EQ("iTLB accesses", t.stats.itlb_access, 2);
    tlb_model_free(&t);
}

static void tlbi_removes_what_it_names(void)
{
    struct tlb t;
    struct layout cont = {16, false, 0};
    tlb_model_init(&t, TLB_DEFAULT_GEOMETRY);
    sweep16(&t, &cont, 1);
    /* A VA anywhere in the 64K entry removes all of it (from L2 too). */
    tlb_model_flush_range(&t, BASE + 5 * 4096, BASE + 6 * 4096, 1);
    sweep16(&t, &cont, 1);
    CHECK_EQ("TLBI VAE1 in a contpte block", cont.walks, 2);
    /* Another ASID's TLBI leaves it. */
    tlb_model_flush_range(&t, BASE, BASE + 65536, 7);
    tlb_model_flush_asid(&t, 7);
    sweep16(&t, &cont, 1);
    CHECK_EQ("another ASID's TLBI", cont.walks, 2);
    /* ASIDE1 removes it; VAAE1 (asid -1) too. */
    tlb_model_flush_asid(&t, 1);
    sweep16(&t, &cont, 1);
    CHECK_EQ("TLBI ASIDE1", cont.walks, 3);
    tlb_model_flush_range(&t, BASE, BASE + 4096, -1);
    sweep16(&t, &cont, 1);
    CHECK_EQ("TLBI VAAE1", cont.walks, 4);
    tlb_model_free(&t);

    /* ASIDE1 keeps global entries; VMALLE1 does not; a range misses what
     * lies outside it. */
    struct layout global = {12, true, 0};
    tlb_model_init(&t, TLB_DEFAULT_GEOMETRY);
    sweep16(&t, &global, 1);
    tlb_model_flush_asid(&t, 1);
    sweep16(&t, &global, 1);
    CHECK_EQ("ASIDE1 keeps global entries", global.walks, 16);
    tlb_model_flush_range(&t, BASE + 4 * 4096, BASE + 8 * 4096, 1);
    sweep16(&t, &global, 1);
    CHECK_EQ("a 4-page range", global.walks, 20);
    tlb_model_flush_all(&t);
    sweep16(&t, &global, 1);
    CHECK_EQ("VMALLE1", global.walks, 36);
    tlb_model_free(&t);
}

static void unmapped_addresses_fill_nothing(void)
{
    struct tlb t;
    tlb_model_init(&t, TLB_DEFAULT_GEOMETRY);
    tlb_model_access(&t, 1, BASE, false, unmapped, NULL);
    tlb_model_access(&t, 1, BASE, false, unmapped, NULL);
    CHECK_EQ("faulting accesses", t.stats.faulted, 2);
    CHECK_EQ("are not counted as accesses", t.stats.dtlb_access, 0);
    CHECK_EQ("nor as walks", t.stats.l2_miss, 0);
    tlb_model_free(&t);
}

static void geometry_is_checked(void)
{
    struct tlb t;
    CHECK_EQ("L2 ways must divide it", tlb_model_init(&t, (struct tlb_geometry){48, 48, 1280, 3}), (unsigned long long)-1);
    CHECK_EQ("an L1 is needed", tlb_model_init(&t, (struct tlb_geometry){0, 48, 0, 0}), (unsigned long long)-1);
    CHECK_EQ("N1's sizes", tlb_model_init(&t, TLB_DEFAULT_GEOMETRY), 0);
    tlb_model_free(&t);
}

int main(void)
{
    reach_decides_misses();
    l2_catches_l1_evictions();
    lru_keeps_the_recently_used();
    asids_tag_entries();
    fetches_and_data_are_apart();
    tlbi_removes_what_it_names();
    unmapped_addresses_fill_nothing();
    geometry_is_checked();
    printf("tlb model: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
