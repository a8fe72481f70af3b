//! The kernel's own page tables (TTBR1): a linear map of all RAM in the
//! largest blocks that fit (1G, 2M), the kernel image in 4K pages with W^X,
//! and device registers as Device-nGnRE. Linux: `paging_init` and
//! `map_kernel` in `arch/arm64/mm/mmu.c`, which keep the image apart from
//! the linear map; here the image sits inside the linear map and those 2M
//! around it are simply mapped with pages.

use spin::Once;

use crate::arch::desc::PgProt;
use crate::arch::mmu;
use crate::mm::addr::{phys_to_virt, virt_to_phys, PhysAddr, PAGE_OFFSET, PAGE_SIZE};
use crate::mm::frame;
use crate::mm::pgtable::{self, Level, MapError, PageTable, PgtableMem};

/// Page-table memory from the page allocator, reached via the linear map.
pub struct KernelTables;

impl PgtableMem for KernelTables {
    fn alloc_table(&mut self) -> Option<PhysAddr> {
        frame::alloc_zeroed_pages(0)
    }
    fn free_table(&mut self, pa: PhysAddr) {
        frame::free_pages(pa, 0).expect("a table freed twice");
    }
    fn table(&self, pa: PhysAddr) -> &PageTable {
        // SAFETY: table pages come from alloc_table (or are the root) and
        // stay mapped in the linear map for the kernel's lifetime.
        unsafe { &*(phys_to_virt(pa) as *const PageTable) }
    }
}

/// The image's sections, from linker.ld.
pub struct ImageLayout {
    /// `.text`: [start, end) kernel virtual addresses, mapped read-only and
    /// executable.
    pub text: (usize, usize),
    /// `.rodata`: [start, end), mapped read-only, never executable.
    pub rodata: (usize, usize),
    /// .data and .bss up to the end of the image.
    pub data: (usize, usize),
}

/// The image's section boundaries, from the linker script's symbols
/// (Linux's `_stext`, `__start_rodata`, `_end`...).
pub fn image_layout() -> ImageLayout {
    extern "C" {
        static __text_start: u8;
        static __text_end: u8;
        static __rodata_start: u8;
        static __rodata_end: u8;
        static __data_start: u8;
        static __kernel_end: u8;
    }
    let a = |s: *const u8| s as usize;
    ImageLayout {
        text: (a(&raw const __text_start), a(&raw const __text_end)),
        rodata: (a(&raw const __rodata_start), a(&raw const __rodata_end)),
        data: (a(&raw const __data_start), a(&raw const __kernel_end)),
    }
}

/// The kernel map's root table (Linux's `swapper_pg_dir`), set once by
/// `init`; every CPU's TTBR1 points at it.
static KERNEL_PGD: Once<PhysAddr> = Once::new();

/// The root of the kernel's tables (valid after `init`).
pub fn kernel_pgd() -> PhysAddr {
    *KERNEL_PGD.get().expect("kmap::init not run")
}

/// Maps physical `[pa_start, pa_end)` at its linear-map address with `prot`,
/// in blocks up to 1G where alignment allows (Linux's `__create_pgd_mapping`);
/// an empty range maps nothing.
fn map(pgd: PhysAddr, pa_start: PhysAddr, pa_end: PhysAddr, prot: PgProt) {
    if pa_start >= pa_end {
        return;
    }
    let size = (pa_end.0 - pa_start.0) as usize;
    pgtable::map_range(
        &mut KernelTables,
        pgd,
        phys_to_virt(pa_start),
        pa_start,
        size,
        prot,
        Level::Pud,
    )
    .expect("building the kernel map");
}

/// Builds the kernel map for `ram` and `devices` (physical ranges) and
/// switches this CPU to it.
pub fn init(ram: &[(PhysAddr, PhysAddr)], devices: &[(PhysAddr, PhysAddr)]) {
    let pgd = frame::alloc_zeroed_pages(0).expect("kernel pgd");
    let img = image_layout();
    let pa = |va: usize| virt_to_phys(va);
    let sections = [
        (pa(img.text.0), pa(img.text.1), PgProt::KERNEL_ROX),
        (pa(img.rodata.0), pa(img.rodata.1), PgProt::KERNEL_RO),
        (pa(img.data.0), pa(img.data.1), PgProt::KERNEL),
    ];
    for &(start, end) in ram {
        // RAM below, inside and above the image; each section clipped to
        // this bank (the image lies in one bank).
        let img_start = pa(img.text.0).clamp(start, end);
        let img_end = pa(img.data.1).clamp(start, end);
        map(pgd, start, img_start, PgProt::KERNEL);
        for &(s, e, prot) in &sections {
            map(pgd, s.clamp(start, end), e.clamp(start, end), prot);
        }
        map(pgd, img_end, end, PgProt::KERNEL);
    }
    for &(start, end) in devices {
        map(
            pgd,
            start.align_down(PAGE_SIZE),
            end.align_up(PAGE_SIZE),
            PgProt::DEVICE,
        );
    }
    mmu::replace_ttbr1(pgd);
    KERNEL_PGD.call_once(|| pgd);
}

/// Maps `[va, va+size)` of the kernel half to `pa` in the live kernel map.
pub fn map_kernel_range(
    va: usize,
    pa: PhysAddr,
    size: usize,
    prot: PgProt,
) -> Result<(), MapError> {
    let r = pgtable::map_range(
        &mut KernelTables,
        kernel_pgd(),
        va,
        pa,
        size,
        prot,
        Level::Pmd,
    );
    mmu::publish_table_writes();
    r
}

/// Removes the leaf mappings of `[va, va+size)` from the live kernel map and
/// flushes their TLB entries.
pub fn unmap_kernel_range(va: usize, size: usize) -> Result<(), MapError> {
    pgtable::unmap_kernel_range(&KernelTables, kernel_pgd(), va, size, |va| {
        mmu::flush_tlb_kernel_page(va)
    })
}

/// How the kernel half is mapped: (1G blocks, 2M blocks, 4K pages).
pub fn leaf_counts() -> (usize, usize, usize) {
    let mut counts = (0, 0, 0);
    pgtable::for_each_leaf(
        &KernelTables,
        kernel_pgd(),
        PAGE_OFFSET,
        usize::MAX,
        &mut |_, level, _| match level {
            Level::Pud => counts.0 += 1,
            Level::Pmd => counts.1 += 1,
            _ => counts.2 += 1,
        },
    );
    counts
}
