/*
 * faultline's TLB model as a QEMU TCG plugin (QEMU 10, plugin API 4):
 * every EL0 instruction fetch and data access of the guest goes through a
 * model of an Arm core's TLBs (tlb_model.h), filled by walking the guest's
 * own page tables, so a contiguous-bit run or a PMD block costs one entry
 * as on hardware. `./qemu-run.sh --tlb` loads it; `--tlb-opt K=V` sets:
 *
 *   itlb=N dtlb=N l2=N l2_ways=N   sizes (default Neoverse-N1's: 48 48 1280 5;
 *                                  l2=0: no L2 TLB)
 *   linear=ADDR                    where the kernel's linear map puts
 *                                  physical address 0 (faultline's PAGE_OFFSET)
 *
 * and it writes, through QEMU's log (`-d plugin`, on stderr):
 *   tlb: mark=ID cpu=N asid=A itlb_access=.. itlb_miss=.. dtlb_access=..
 *        dtlb_miss=.. l2_access=.. l2_miss=.. faulted=..
 * when a program asks (below), and at exit such lines for each CPU
 * (`tlb: cpu=N ...`) and each address space that ran user code (`tlb:
 * mm=TABLE asid=A ...`, by its TTBR0 table), and the TLBIs the kernel ran
 * (`tlb: tlbi all=N asid=N va=N range=N`).
 *
 * A program marks a window with `hint #114`, which every Arm CPU runs as a
 * NOP: x0 = 1 empties this CPU's TLBs, 2 starts counting, 3 reports what
 * every CPU counted since the last 2, labelled with x1 (every CPU's, so a
 * window covers the processes a workload starts wherever they run; what
 * another CPU has not yet handed to the model, at its next kernel entry,
 * falls outside it).
 *
 * Why accesses are queued: a plugin cannot read physical memory in QEMU
 * 10.0, only virtual memory as the vCPU now sees it, and at EL0 that does
 * not include the kernel's linear map where the page tables are. So each
 * EL0 access is queued, and the queue is run through the model by the
 * first kernel translation block after it, at EL1, where the tables are
 * readable, before the kernel can have changed them. TLBI instructions
 * the kernel runs are decoded when translated and applied when executed,
 * to this CPU's model or, for the broadcast (IS/OS) forms, to every CPU's.
 * A fetch is seen before its instruction runs, so a fetch from a page not
 * yet mapped (the instruction abort that demand-faults program text in)
 * is seen too; its walk finds nothing, and the model counts it as
 * `faulted`, not as an access.
 *
 * Where we simplify: only EL0 accesses are modelled (the kernel's own
 * accesses take entries on hardware too); a fetch is one iTLB access per
 * translation block per page, not per fetch block; the walk assumes a 4K
 * granule and 48-bit VAs (faultline's TCR); with several CPUs, accesses
 * queued on one CPU are walked after a broadcast TLBI another CPU ran in
 * the meantime.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu-plugin-api.h"
#include "tlb_model.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = FAULTLINE_PLUGIN_API;

/* The marker instruction: HINT #114. */
#define MARK_INSN (0xd503201fu | (114u << 5))
#define ERET_INSN 0xd69f03e0u
enum { MARK_FLUSH = 1, MARK_BEGIN = 2, MARK_REPORT = 3 };

/* What a queued EL0 event is. */
enum kind { DATA, FETCH, MARK };

struct event {
    uint64_t va; /* the address; for MARK, the operation (x0) */
    uint64_t arg; /* MARK: the label (x1) */
    enum kind kind;
};

struct mm_stats {
    uint64_t table; /* TTBR0's table address; 0: a free slot */
    uint16_t asid;
    struct tlb_stats stats;
};

struct vcpu {
    struct event *queue;
    size_t len, cap;
    struct tlb tlb;
    struct tlb_stats begin; /* its counts at the last MARK_BEGIN */
    /* Set by an ERET to EL0, cleared by the next kernel block: code at
     * low addresses with this clear is the boot code, running from the
     * identity map, not a program. */
    bool at_el0;
};

#define MAX_MMS 1024

static struct vcpu *vcpus;
static unsigned nr_vcpus;
static struct mm_stats mms[MAX_MMS];
/* TLBIs executed, by scope: all, one ASID, one VA, a range. */
static uint64_t tlbis[4];
static unsigned mm_overflow;
static struct tlb_geometry geometry;
static uint64_t linear_map = 0xffff000000000000ull;
/* Model state is shared: a broadcast TLBI reaches every CPU's TLBs. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static struct qemu_plugin_register *reg_x[31], *reg_pc, *reg_ttbr0, *reg_spsr, *reg_tpidr;

/*
 * Which CPU a callback runs on. QEMU 10.0 hands callbacks the index of the
 * vCPU that translated the block, not of the one running it, when vCPUs
 * share one thread (round-robin TCG, as under -icount), and it shows
 * plugins no MPIDR_EL1. So with more than one CPU, the first callback of
 * each block reads TPIDR_EL1, whose low 6 bits hold faultline's CPU
 * number (arch/aarch64/cpu.rs: CPU_ID_MASK), into this_cpu, which the block's other callbacks
 * use. Thread-local, so each vCPU thread of multi-threaded TCG keeps its
 * own.
 */
static bool cpu_from_tpidr;
static __thread unsigned this_cpu;

static uint64_t read_reg(struct qemu_plugin_register *reg);

static unsigned cpu_of(unsigned vcpu_index)
{
    return cpu_from_tpidr ? this_cpu : vcpu_index;
}

/* For a block's first callback: learn which CPU runs it. */
static unsigned enter_block(unsigned vcpu_index)
{
    if (cpu_from_tpidr) {
        this_cpu = (read_reg(reg_tpidr) & 63) % nr_vcpus;
    }
    return cpu_of(vcpu_index);
}
static GByteArray *scratch;

static void outf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void outf(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    qemu_plugin_outs(line);
}

static uint64_t read_reg(struct qemu_plugin_register *reg)
{
    uint64_t v = 0;
    if (!reg)
        return 0;
    scratch->len = 0;
    int n = qemu_plugin_read_register(reg, scratch);
    if (n > 0)
        memcpy(&v, scratch->data, n < 8 ? n : 8);
    return v;
}

static bool read_u64(uint64_t va, uint64_t *out)
{
    scratch->len = 0;
    if (!qemu_plugin_read_memory_vaddr(va, scratch, 8) || scratch->len < 8)
        return false;
    memcpy(out, scratch->data, 8);
    return true;
}

/* A 4K-granule, 48-bit stage 1 walk from TTBR0's table, reading the
 * descriptors through the linear map (Arm ARM D8.3). */
static bool walk(void *ctx, uint64_t va, struct tlb_fill *fill)
{
    uint64_t table = *(uint64_t *)ctx;
    const uint64_t addr_mask = 0x0000fffffffff000ull;
    for (int level = 0; level <= 3; level++) {
        unsigned shift = 39 - 9 * level;
        uint64_t desc;
        if (!read_u64(linear_map + table + ((va >> shift) & 511) * 8, &desc))
            return false;
        if (!(desc & 1))
            return false;
        bool table_desc = (desc & 2) && level < 3;
        if (table_desc) {
            table = desc & addr_mask;
            continue;
        }
        if (level == 0 || (level < 3 && (desc & 2)))
            return false; /* reserved encodings */
        bool contiguous = desc & (1ull << 52);
        fill->shift = shift + (contiguous ? 4 : 0);
        fill->global = !(desc & (1ull << 11));
        return true;
    }
    return false;
}

static struct mm_stats *mm_of(uint64_t table, uint16_t asid)
{
    for (unsigned i = 0; i < MAX_MMS; i++) {
        struct mm_stats *m = &mms[(table / 4096 + i) % MAX_MMS];
        if (m->table == table || m->table == 0) {
            m->table = table;
            m->asid = asid;
            return m;
        }
    }
    mm_overflow++;
    return NULL;
}

static struct tlb_stats minus(struct tlb_stats a, struct tlb_stats b)
{
    return (struct tlb_stats){
        a.itlb_access - b.itlb_access, a.itlb_miss - b.itlb_miss,
        a.dtlb_access - b.dtlb_access, a.dtlb_miss - b.dtlb_miss,
        a.l2_access - b.l2_access, a.l2_miss - b.l2_miss, a.faulted - b.faulted};
}

static struct tlb_stats plus(struct tlb_stats a, struct tlb_stats b)
{
    struct tlb_stats zero = {0};
    return minus(a, minus(zero, b));
}

/* One `tlb: WHAT counts...` line. */
static void report(const char *what, struct tlb_stats s)
{
    outf("tlb: %s itlb_access=%" PRIu64 " itlb_miss=%" PRIu64 " dtlb_access=%" PRIu64
         " dtlb_miss=%" PRIu64 " l2_access=%" PRIu64 " l2_miss=%" PRIu64 " faulted=%" PRIu64 "\n",
         what, s.itlb_access, s.itlb_miss, s.dtlb_access, s.dtlb_miss, s.l2_access, s.l2_miss,
         s.faulted);
}

/* Runs this CPU's queued EL0 events through its model: called at EL1, on
 * the first kernel translation block after user code ran. */
static void drain(unsigned vcpu_index, void *udata)
{
    (void)udata;
    unsigned cpu = enter_block(vcpu_index);
    struct vcpu *v = &vcpus[cpu];
    v->at_el0 = false;
    if (v->len == 0)
        return;
    uint64_t ttbr0 = read_reg(reg_ttbr0);
    uint16_t asid = ttbr0 >> 48;
    uint64_t table = ttbr0 & 0x0000fffffffffffeull;

    pthread_mutex_lock(&lock);
    struct tlb_stats before = v->tlb.stats;
    for (size_t i = 0; i < v->len; i++) {
        struct event *e = &v->queue[i];
        if (e->kind != MARK) {
            tlb_model_access(&v->tlb, asid, e->va, e->kind == FETCH, walk, &table);
        } else if (e->va == MARK_FLUSH) {
            tlb_model_flush_all(&v->tlb);
        } else if (e->va == MARK_BEGIN) {
            for (unsigned c = 0; c < nr_vcpus; c++)
                vcpus[c].begin = vcpus[c].tlb.stats;
        } else if (e->va == MARK_REPORT) {
            struct tlb_stats sum = {0};
            for (unsigned c = 0; c < nr_vcpus; c++)
                sum = plus(sum, minus(vcpus[c].tlb.stats, vcpus[c].begin));
            char what[64];
            snprintf(what, sizeof(what), "mark=%" PRIu64 " cpu=%u asid=%u", e->arg, cpu, asid);
            report(what, sum);
        }
    }
    struct mm_stats *m = mm_of(table, asid);
    if (m)
        m->stats = plus(m->stats, minus(v->tlb.stats, before));
    pthread_mutex_unlock(&lock);
    v->len = 0;
}

static void enqueue(struct vcpu *v, uint64_t va, uint64_t arg, enum kind kind)
{
    if (v->len == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 4096;
        struct event *q = realloc(v->queue, cap * sizeof(*q));
        if (!q) {
            fprintf(stderr, "tlb plugin: out of memory\n");
            abort();
        }
        v->queue = q;
        v->cap = cap;
    }
    v->queue[v->len++] = (struct event){va, arg, kind};
}

static void on_data(unsigned vcpu_index, qemu_plugin_meminfo_t info, uint64_t va, void *udata)
{
    (void)info, (void)udata;
    struct vcpu *v = &vcpus[cpu_of(vcpu_index)];
    if (v->at_el0)
        enqueue(v, va, 0, DATA);
}

/*
 * Where the running user block starts, read from the PC: QEMU translates
 * Arm code position-independently (CF_PCREL) and runs one translation of
 * a page wherever a process maps that page, so a shared library's blocks
 * run at each process's own address for it, and the address a block was
 * translated at is not the one it is fetched from.
 */
static __thread uint64_t block_pc;

/* A user block starts: the fetch from its first page. */
static void on_user_block(unsigned vcpu_index, void *udata)
{
    (void)udata;
    struct vcpu *v = &vcpus[enter_block(vcpu_index)];
    block_pc = read_reg(reg_pc);
    if (v->at_el0)
        enqueue(v, block_pc, 0, FETCH);
}

/* The block goes on into its next page, `udata` bytes from its start. */
static void on_next_page(unsigned vcpu_index, void *udata)
{
    struct vcpu *v = &vcpus[cpu_of(vcpu_index)];
    if (v->at_el0)
        enqueue(v, block_pc + (uintptr_t)udata, 0, FETCH);
}

static void on_mark(unsigned vcpu_index, void *udata)
{
    (void)udata;
    struct vcpu *v = &vcpus[cpu_of(vcpu_index)];
    if (v->at_el0)
        enqueue(v, read_reg(reg_x[0]), read_reg(reg_x[1]), MARK);
}

/* An exception return: to EL0 if SPSR_EL1.M is 0b0000. */
static void on_eret(unsigned vcpu_index, void *udata)
{
    (void)udata;
    vcpus[cpu_of(vcpu_index)].at_el0 = (read_reg(reg_spsr) & 15) == 0;
}

/* A TLBI's scope, decoded from `SYS #0, C8, Cm, #op2, Xt` when translated. */
struct tlbi {
    uint8_t crm, op2, rt;
};

static void on_tlbi(unsigned vcpu_index, void *udata)
{
    struct tlbi op;
    uintptr_t packed = (uintptr_t)udata;
    op.crm = packed >> 16, op.op2 = packed >> 8, op.rt = packed;
    uint64_t xt = op.rt == 31 ? 0 : read_reg(reg_x[op.rt]);
    /* CRm 1, 2, 3, 5: Outer or Inner Shareable, every CPU; 6, 7: this one.
     * CRm 2, 5, 6: the range forms (FEAT_TLBIRANGE). */
    bool broadcast = op.crm != 6 && op.crm != 7;
    bool range = op.crm == 2 || op.crm == 5 || op.crm == 6;
    bool all_asids = op.op2 == 3 || op.op2 == 7;
    int asid = all_asids ? -1 : (int)(xt >> 48);
    uint64_t start, end;
    if (range) {
        /* BaseADDR[36:0] in pages, NUM[43:39], SCALE[45:44]: (NUM+1) <<
         * (5*SCALE+1) pages. */
        uint64_t num = (xt >> 39) & 31, scale = (xt >> 44) & 3;
        start = (xt & ((1ull << 37) - 1)) << 12;
        end = start + (((num + 1) << (5 * scale + 1)) << 12);
    } else {
        start = (xt & ((1ull << 44) - 1)) << 12;
        end = start + 4096;
    }
    unsigned cpu = cpu_of(vcpu_index);
    pthread_mutex_lock(&lock);
    tlbis[range ? 3 : op.op2 == 0 ? 0 : op.op2 == 2 ? 1 : 2]++;
    for (unsigned c = 0; c < nr_vcpus; c++) {
        if (!broadcast && c != cpu)
            continue;
        struct tlb *t = &vcpus[c].tlb;
        if (!range && op.op2 == 0)
            tlb_model_flush_all(t);
        else if (!range && op.op2 == 2)
            tlb_model_flush_asid(t, (uint16_t)(xt >> 48));
        else
            tlb_model_flush_range(t, start, end, asid);
    }
    pthread_mutex_unlock(&lock);
}

static uint32_t insn_word(struct qemu_plugin_insn *insn)
{
    uint32_t word = 0;
    if (qemu_plugin_insn_size(insn) == 4)
        qemu_plugin_insn_data(insn, &word, 4);
    return word;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    uint64_t start = qemu_plugin_tb_vaddr(tb);
    bool user = !(start >> 63);
    qemu_plugin_register_vcpu_tb_exec_cb(tb, user ? on_user_block : drain, QEMU_PLUGIN_CB_R_REGS,
                                         NULL);
    uint64_t page = start >> 12;
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint32_t word = insn_word(insn);
        if (!user) {
            if (word == ERET_INSN)
                qemu_plugin_register_vcpu_insn_exec_cb(insn, on_eret, QEMU_PLUGIN_CB_R_REGS, NULL);
            if ((word & 0xfffff000u) == 0xd5088000u) {
                uintptr_t op = ((word >> 8) & 15) << 16 | ((word >> 5) & 7) << 8 | (word & 31);
                qemu_plugin_register_vcpu_insn_exec_cb(insn, on_tlbi, QEMU_PLUGIN_CB_R_REGS,
                                                       (void *)op);
            }
            continue;
        }
        uint64_t va = qemu_plugin_insn_vaddr(insn);
        if (va >> 12 != page) {
            page = va >> 12;
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_next_page, QEMU_PLUGIN_CB_NO_REGS,
                                                   (void *)(uintptr_t)(va - start));
        }
        if (word == MARK_INSN)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark, QEMU_PLUGIN_CB_R_REGS, NULL);
        qemu_plugin_register_vcpu_mem_cb(insn, on_data, QEMU_PLUGIN_CB_NO_REGS,
                                         QEMU_PLUGIN_MEM_RW, NULL);
    }
}

static void on_vcpu_init(qemu_plugin_id_t id, unsigned vcpu_index)
{
    (void)id, (void)vcpu_index;
    pthread_mutex_lock(&lock);
    if (!reg_ttbr0) {
        GArray *regs = qemu_plugin_get_registers();
        qemu_plugin_reg_descriptor *d = (qemu_plugin_reg_descriptor *)regs->data;
        for (unsigned i = 0; i < regs->len; i++) {
            unsigned x;
            char rest;
            if (sscanf(d[i].name, "x%u%c", &x, &rest) == 1 && x < 31)
                reg_x[x] = d[i].handle;
            else if (!strcmp(d[i].name, "pc"))
                reg_pc = d[i].handle;
            else if (!strcmp(d[i].name, "TTBR0_EL1"))
                reg_ttbr0 = d[i].handle;
            else if (!strcmp(d[i].name, "SPSR_EL1"))
                reg_spsr = d[i].handle;
            else if (!strcmp(d[i].name, "TPIDR_EL1"))
                reg_tpidr = d[i].handle;
        }
        g_array_free(regs, 1);
        if (!reg_pc || !reg_ttbr0 || !reg_spsr || !reg_tpidr || !reg_x[30]) {
            fprintf(stderr, "tlb plugin: this QEMU shows no pc, TTBR0_EL1, SPSR_EL1, TPIDR_EL1 "
                            "or x0-x30\n");
            abort();
        }
    }
    pthread_mutex_unlock(&lock);
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
    (void)id, (void)udata;
    pthread_mutex_lock(&lock);
    char what[64];
    for (unsigned c = 0; c < nr_vcpus; c++) {
        snprintf(what, sizeof(what), "cpu=%u", c);
        if (vcpus[c].tlb.stats.itlb_access)
            report(what, vcpus[c].tlb.stats);
    }
    for (unsigned i = 0; i < MAX_MMS; i++) {
        snprintf(what, sizeof(what), "mm=%#" PRIx64 " asid=%u", mms[i].table, mms[i].asid);
        if (mms[i].table)
            report(what, mms[i].stats);
    }
    outf("tlb: tlbi all=%" PRIu64 " asid=%" PRIu64 " va=%" PRIu64 " range=%" PRIu64 "\n", tlbis[0],
         tlbis[1], tlbis[2], tlbis[3]);
    if (mm_overflow)
        outf("tlb: %u drains found no room for their mm's counts\n", mm_overflow);
    pthread_mutex_unlock(&lock);
}

static bool parse_option(const char *opt)
{
    char key[32];
    unsigned long long value;
    if (sscanf(opt, "%31[^=]=%lli", key, &value) != 2)
        return false;
    if (!strcmp(key, "itlb"))
        geometry.itlb = value;
    else if (!strcmp(key, "dtlb"))
        geometry.dtlb = value;
    else if (!strcmp(key, "l2"))
        geometry.l2 = value;
    else if (!strcmp(key, "l2_ways"))
        geometry.l2_ways = value;
    else if (!strcmp(key, "linear"))
        linear_map = value;
    else
        return false;
    return true;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                           int argc, char **argv)
{
    if (!info->system_emulation || strcmp(info->target_name, "aarch64") ||
        info->version.cur < FAULTLINE_PLUGIN_API) {
        fprintf(stderr, "tlb plugin: needs qemu-system-aarch64 with plugin API %d (QEMU 10)\n",
                FAULTLINE_PLUGIN_API);
        return -1;
    }
    geometry = TLB_DEFAULT_GEOMETRY;
    for (int i = 0; i < argc; i++) {
        if (!parse_option(argv[i])) {
            fprintf(stderr, "tlb plugin: bad option %s (itlb= dtlb= l2= l2_ways= linear=)\n",
                    argv[i]);
            return -1;
        }
    }
    nr_vcpus = info->system.max_vcpus;
    cpu_from_tpidr = nr_vcpus > 1;
    vcpus = calloc(nr_vcpus, sizeof(*vcpus));
    scratch = g_byte_array_new();
    for (unsigned c = 0; c < nr_vcpus; c++) {
        if (tlb_model_init(&vcpus[c].tlb, geometry)) {
            fprintf(stderr, "tlb plugin: bad sizes (l2 must be a multiple of l2_ways)\n");
            return -1;
        }
    }
    qemu_plugin_register_vcpu_init_cb(id, on_vcpu_init);
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
