/* The TLB model; what it models and where it simplifies: tlb_model.h. */
#include "tlb_model.h"

#include <stdlib.h>

/* The translation sizes an AArch64 4K-granule walk can end in: a page, a
 * contiguous run of 16 pages, a PMD block, a contiguous run of 16 PMD
 * blocks, a PUD block. */
static const uint8_t shifts[] = {12, 16, 21, 25, 30};
#define NR_SHIFTS (sizeof(shifts) / sizeof(shifts[0]))

static int level_init(struct tlb_level *l, unsigned entries, unsigned ways)
{
    l->clock = 0;
    l->sets = 0;
    l->ways = 0;
    l->e = NULL;
    if (entries == 0)
        return 0;
    if (ways == 0 || entries % ways)
        return -1;
    l->e = calloc(entries, sizeof(*l->e));
    if (!l->e)
        return -1;
    l->sets = entries / ways;
    l->ways = ways;
    return 0;
}

int tlb_model_init(struct tlb *t, struct tlb_geometry g)
{
    *t = (struct tlb){0};
    if (g.itlb == 0 || g.dtlb == 0)
        return -1;
    if (level_init(&t->itlb, g.itlb, g.itlb) || level_init(&t->dtlb, g.dtlb, g.dtlb) ||
        level_init(&t->l2, g.l2, g.l2_ways)) {
        tlb_model_free(t);
        return -1;
    }
    return 0;
}

void tlb_model_free(struct tlb *t)
{
    free(t->itlb.e);
    free(t->dtlb.e);
    free(t->l2.e);
    *t = (struct tlb){0};
}

static bool matches(const struct tlb_entry *e, uint16_t asid, uint64_t va)
{
    return e->shift && e->tag == va >> e->shift && (e->global || e->asid == asid);
}

/* The set an entry of 2^shift bytes for `va` lives in. A fully associative
 * level has one; a set-associative one indexes by the entry's own size, so
 * a lookup probes each size's set, as multi-size hardware TLBs do. */
static struct tlb_entry *set_of(struct tlb_level *l, uint64_t va, uint8_t shift)
{
    return &l->e[((va >> shift) % l->sets) * l->ways];
}

static struct tlb_entry *lookup(struct tlb_level *l, uint16_t asid, uint64_t va)
{
    unsigned probes = l->sets == 1 ? 1 : NR_SHIFTS;
    for (unsigned p = 0; p < probes; p++) {
        struct tlb_entry *set = set_of(l, va, shifts[p]);
        for (unsigned w = 0; w < l->ways; w++) {
            if (matches(&set[w], asid, va)) {
                set[w].stamp = ++l->clock;
                return &set[w];
            }
        }
    }
    return NULL;
}

/* Puts `new` in its set, over a free slot or the least recently used. */
static void fill(struct tlb_level *l, struct tlb_entry new, uint64_t va)
{
    struct tlb_entry *set = set_of(l, va, new.shift);
    struct tlb_entry *victim = &set[0];
    for (unsigned w = 0; w < l->ways; w++) {
        if (!set[w].shift) {
            victim = &set[w];
            break;
        }
        if (set[w].stamp < victim->stamp)
            victim = &set[w];
    }
    new.stamp = ++l->clock;
    *victim = new;
}

void tlb_model_access(struct tlb *t, uint16_t asid, uint64_t va, bool fetch,
                      tlb_walk_fn walk, void *ctx)
{
    struct tlb_level *l1 = fetch ? &t->itlb : &t->dtlb;
    uint64_t *access = fetch ? &t->stats.itlb_access : &t->stats.dtlb_access;
    uint64_t *miss = fetch ? &t->stats.itlb_miss : &t->stats.dtlb_miss;
    if (lookup(l1, asid, va)) {
        ++*access;
        return;
    }
    struct tlb_entry *hit = t->l2.e ? lookup(&t->l2, asid, va) : NULL;
    struct tlb_entry new;
    if (hit) {
        new = *hit;
    } else {
        struct tlb_fill f;
        if (!walk(ctx, va, &f)) {
            /* Nothing maps it: the access faults, and the kernel's
             * handler makes it run again. It counts then. */
            t->stats.faulted++;
            return;
        }
        new = (struct tlb_entry){
            .tag = va >> f.shift, .asid = asid, .shift = f.shift, .global = f.global};
        if (t->l2.e)
            fill(&t->l2, new, va);
        t->stats.l2_miss++;
    }
    fill(l1, new, va);
    ++*access;
    ++*miss;
    if (t->l2.e)
        t->stats.l2_access++;
}

static void level_flush(struct tlb_level *l, uint64_t start, uint64_t end,
                        int asid, bool keep_global)
{
    for (unsigned i = 0; i < l->sets * l->ways; i++) {
        struct tlb_entry *e = &l->e[i];
        if (!e->shift)
            continue;
        uint64_t first = e->tag << e->shift;
        uint64_t last = first + ((1ull << e->shift) - 1);
        bool overlaps = first < end && last >= start;
        bool owner = e->global ? !keep_global : asid < 0 || e->asid == asid;
        if (overlaps && owner)
            e->shift = 0;
    }
}

static void flush(struct tlb *t, uint64_t start, uint64_t end, int asid,
                  bool keep_global)
{
    level_flush(&t->itlb, start, end, asid, keep_global);
    level_flush(&t->dtlb, start, end, asid, keep_global);
    level_flush(&t->l2, start, end, asid, keep_global);
}

void tlb_model_flush_all(struct tlb *t)
{
    flush(t, 0, UINT64_MAX, -1, false);
}

void tlb_model_flush_asid(struct tlb *t, uint16_t asid)
{
    flush(t, 0, UINT64_MAX, asid, true);
}

void tlb_model_flush_range(struct tlb *t, uint64_t start, uint64_t end, int asid)
{
    flush(t, start, end, asid, false);
}
