/*
 * A model of an Arm core's TLBs, for faultline's QEMU plugin (plugin.c):
 * an L1 instruction TLB and an L1 data TLB, fully associative, and a
 * unified, set-associative L2 TLB behind them, all replaced least recently
 * used first. One entry holds one translation however large the hardware
 * lets it be: a 4K page, a 64K contiguous-bit run of 16 PTEs, a 2M PMD
 * block, a 32M contiguous run of PMD blocks, a 1G block. That coalescing is
 * what the contiguous bit and large folios buy on real cores, and what
 * QEMU's own softmmu TLB, which always works in 4K pages, does not show.
 *
 * Entries are tagged with the ASID they were filled under unless the
 * translation is global (nG clear), and TLBI's operations remove them.
 *
 * Where we simplify: no walk caches (a walk costs one count, whatever its
 * depth), no prefetching, an L1 miss that hits L2 costs nothing beyond its
 * count, and L1 entries are looked up by every page size at once, as a
 * fully associative CAM does. Pure C with no QEMU in it: test_model.c
 * tests it on the host. Its functions are named tlb_model_* because QEMU
 * itself exports tlb_init, tlb_flush and friends.
 */
#ifndef FAULTLINE_TLB_MODEL_H
#define FAULTLINE_TLB_MODEL_H

#include <stdbool.h>
#include <stdint.h>

/* Sizes, in entries. l2 == 0: no L2, an L1 miss walks the tables. */
struct tlb_geometry {
    unsigned itlb, dtlb, l2, l2_ways;
};

/* Neoverse-N1's (its TRM, "Memory management unit"): 48-entry L1 TLBs,
 * a 1280-entry 5-way L2 TLB. */
#define TLB_DEFAULT_GEOMETRY ((struct tlb_geometry){48, 48, 1280, 5})

/* What a table walk found: the translation covers the naturally aligned
 * 2^shift bytes around the address, for one ASID or for all (global). */
struct tlb_fill {
    uint8_t shift;
    bool global;
};

/* Walks the tables for `va`; false if nothing maps it (no entry is made). */
typedef bool (*tlb_walk_fn)(void *ctx, uint64_t va, struct tlb_fill *fill);

struct tlb_entry {
    uint64_t tag;    /* va >> shift */
    uint64_t stamp;  /* last use, for LRU */
    uint16_t asid;
    uint8_t shift;   /* 0: the slot is free */
    bool global;
};

struct tlb_level {
    struct tlb_entry *e;
    unsigned sets, ways;
    uint64_t clock;
};

struct tlb_stats {
    uint64_t itlb_access, itlb_miss;
    uint64_t dtlb_access, dtlb_miss;
    /* L1 misses that looked in L2, and those that missed it there and
     * walked the tables. */
    uint64_t l2_access, l2_miss;
    /* Accesses whose walk found nothing: they fault, and are counted
     * when the kernel's handler has them run again. */
    uint64_t faulted;
};

struct tlb {
    struct tlb_level itlb, dtlb, l2;
    struct tlb_stats stats;
};

/* 0, or -1 if a size is not one the model takes or memory ran out. */
int tlb_model_init(struct tlb *t, struct tlb_geometry g);
void tlb_model_free(struct tlb *t);

/* One access by ASID `asid` to `va`: a fetch if `fetch`, else a load or
 * store. Counts it, and on a miss everywhere asks `walk`; if that finds
 * nothing, counts a fault instead. */
void tlb_model_access(struct tlb *t, uint16_t asid, uint64_t va, bool fetch,
                tlb_walk_fn walk, void *ctx);

/* TLBI's scopes. `asid` < 0: every ASID (VAA, VMALL). Global entries go
 * by VA, never by ASID, as the architecture says. */
void tlb_model_flush_all(struct tlb *t);
void tlb_model_flush_asid(struct tlb *t, uint16_t asid);
/* Entries that translate any address in [start, end) for `asid` (or for
 * all ASIDs when `asid` < 0, and global ones always). */
void tlb_model_flush_range(struct tlb *t, uint64_t start, uint64_t end, int asid);

#endif
