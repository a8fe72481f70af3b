//! The live kernel page tables, read back by the MMU itself (`AT S1E1R/W`
//! into PAR_EL1) and by the software walker.

use core::sync::atomic::{AtomicU64, Ordering};

use super::{ensure, Test, TestResult};
use crate::arch::cont_block;
use crate::arch::desc::PgProt;
use crate::arch::esr::FaultStatus;
use crate::arch::mmu::{at_translate, AtAccess};
use crate::arch::trap::{probe_load, probe_store};
use crate::mm::addr::{phys_to_virt, virt_to_phys, PAGE_SIZE, PMD_SIZE};
use crate::mm::frame;
use crate::mm::kmap::{self, KernelTables};
use crate::mm::pgtable::{translate, Level};

/// The kernel page table tests, in the order `run_all` runs them.
pub const TESTS: &[Test] = &[
    Test {
        name: "kmap_linear_map_uses_blocks",
        run: linear_map_uses_blocks,
    },
    Test {
        name: "kmap_image_is_w_xor_x",
        run: image_is_w_xor_x,
    },
    Test {
        name: "kmap_write_to_text_faults",
        run: write_to_text_faults,
    },
    Test {
        name: "kmap_write_to_rodata_faults",
        run: write_to_rodata_faults,
    },
    Test {
        name: "kmap_devices_are_device_memory",
        run: devices_are_device_memory,
    },
    Test {
        name: "kmap_map_and_unmap_page_and_block",
        run: map_and_unmap,
    },
    Test {
        name: "cont_block_pairs_cover_all_16_entries",
        run: cont_block_pairs_cover_all_16_entries,
    },
];

/// A value in `.rodata`, which the kernel map must map read-only.
static RODATA_PROBE: u64 = 0x1234_5678;
/// A value in `.data`, which the kernel map must map read-write,
/// never executable.
static DATA_PROBE: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(1);

/// The linear map reaches a free 2M block's last page through a PMD or PUD
/// block, and the software walker and the MMU (`AT S1E1W`) agree on its PA.
fn linear_map_uses_blocks() -> TestResult {
    // The last page of the first free RAM block: far from the image.
    let pa = frame::alloc_pages(9).ok_or("no 2M block")?;
    let va = phys_to_virt(pa) + PMD_SIZE - PAGE_SIZE;
    let t = translate(&KernelTables, kmap::kernel_pgd(), va).ok_or("linear map hole")?;
    let hw = at_translate(va, AtAccess::KernelWrite)
        .map_err(|par| alloc::format!("AT S1E1W failed: PAR {:#x}", par));
    frame::free_pages(pa, 9).map_err(|e| alloc::format!("{:?}", e))?;
    ensure!(
        t.level == Level::Pmd || t.level == Level::Pud,
        "linear map at {:?}, not a block",
        t.level
    );
    ensure!(t.pa == virt_to_phys(va), "walker says {:#x}", t.pa.0);
    ensure!(hw? == virt_to_phys(va), "AT disagrees with the linear map");
    let (g1, m2, _) = kmap::leaf_counts();
    ensure!(g1 + m2 > 0, "no blocks in the kernel map");
    Ok(())
}

/// `.text`, `.rodata` and `.data` are mapped with 4K PTEs as ROX, RO and RW
/// (never W+X, as Linux's `CONFIG_STRICT_KERNEL_RWX`), and `AT` agrees on
/// which of them take a read and a write.
fn image_is_w_xor_x() -> TestResult {
    let img = kmap::image_layout();
    let text = linear_map_uses_blocks as *const () as usize;
    let rodata = &RODATA_PROBE as *const u64 as usize;
    let data = &DATA_PROBE as *const _ as usize;
    ensure!(
        (img.text.0..img.text.1).contains(&text),
        "test fn not in .text"
    );
    for (va, want) in [
        (text, PgProt::KERNEL_ROX),
        (rodata, PgProt::KERNEL_RO),
        (data, PgProt::KERNEL),
    ] {
        let t = translate(&KernelTables, kmap::kernel_pgd(), va).ok_or("image not mapped")?;
        ensure!(
            t.level == Level::Pte,
            "image mapped at {:?} at {:#x}",
            t.level,
            va
        );
        ensure!(
            t.pte.prot() == want,
            "{:#x}: {:?}, want {:?}",
            va,
            t.pte.prot(),
            want
        );
        ensure!(
            !(t.pte.prot().is_writable() && t.pte.prot().is_kernel_exec()),
            "{:#x} is W+X",
            va
        );
        let read = at_translate(va, AtAccess::KernelRead);
        ensure!(
            read == Ok(virt_to_phys(va)),
            "AT S1E1R {:#x}: {:?}",
            va,
            read
        );
        let write = at_translate(va, AtAccess::KernelWrite);
        ensure!(
            write.is_ok() == want.is_writable(),
            "AT S1E1W {:#x}: {:?}",
            va,
            write
        );
    }
    Ok(())
}

/// Checks that a kernel write to `va` takes a level-3 permission fault with
/// FAR = `va` and ESR's WnR set, while a read succeeds.
fn expect_permission_fault_on_write(va: usize) -> TestResult {
    let old = probe_load(va).map_err(|f| alloc::format!("read faulted: {:?}", f))?;
    // SAFETY: writes back the value already there, should the store succeed.
    match unsafe { probe_store(va, old) } {
        Ok(()) => Err(alloc::format!("write to {:#x} succeeded", va)),
        Err(f) => {
            ensure!(f.far == va as u64, "FAR {:#x}, want {:#x}", f.far, va);
            ensure!(f.esr.is_write(), "ESR {} not a write", f.esr);
            ensure!(
                f.esr.fault_status() == Some(FaultStatus::Permission(3)),
                "ESR {}",
                f.esr
            );
            Ok(())
        }
    }
}

/// A write to this function's own code takes a permission fault.
fn write_to_text_faults() -> TestResult {
    expect_permission_fault_on_write(write_to_text_faults as *const () as usize & !7)
}

/// A write to `RODATA_PROBE` takes a permission fault.
fn write_to_rodata_faults() -> TestResult {
    expect_permission_fault_on_write(&RODATA_PROBE as *const u64 as usize)
}

/// The UART's MMIO is mapped as device memory (`PgProt::DEVICE`), not normal
/// cacheable memory.
fn devices_are_device_memory() -> TestResult {
    let uart = phys_to_virt(crate::mm::addr::PhysAddr(0x0900_0000));
    let t = translate(&KernelTables, kmap::kernel_pgd(), uart).ok_or("UART not mapped")?;
    ensure!(
        t.pte.prot() == PgProt::DEVICE && t.pte.prot().is_device(),
        "UART mapped {:?}",
        t.pte.prot()
    );
    Ok(())
}

/// A VA outside the linear map (whose top is PAGE_OFFSET + 4G at most).
const TEST_VA: usize = 0xffff_8000_0000_0000;

/// `map_kernel_range` maps a 4K page (RW) and a 2M block (RO) outside the
/// linear map, where `AT` and the walker see them with the right level and
/// permissions, and `unmap_kernel_range` leaves a translation fault behind.
fn map_and_unmap() -> TestResult {
    let page = frame::alloc_zeroed_pages(0).ok_or("oom")?;
    let block = frame::alloc_pages(9).ok_or("no 2M block")?;
    let block_va = TEST_VA + PMD_SIZE;
    kmap::map_kernel_range(TEST_VA, page, PAGE_SIZE, PgProt::KERNEL)
        .map_err(|e| alloc::format!("{:?}", e))?;
    kmap::map_kernel_range(block_va, block, PMD_SIZE, PgProt::KERNEL_RO)
        .map_err(|e| alloc::format!("{:?}", e))?;
    let result = (|| {
        // SAFETY: TEST_VA maps our fresh page.
        unsafe { probe_store(TEST_VA + 8, 0xfeed) }.map_err(|f| alloc::format!("{:?}", f))?;
        // SAFETY: the same page through the linear map.
        let via_linear = unsafe { *((phys_to_virt(page) + 8) as *const u64) };
        ensure!(via_linear == 0xfeed, "alias reads {:#x}", via_linear);
        ensure!(
            at_translate(TEST_VA, AtAccess::KernelWrite) == Ok(page),
            "AT on the page"
        );
        let t = translate(&KernelTables, kmap::kernel_pgd(), block_va + 0x12345)
            .ok_or("block missing")?;
        ensure!(t.level == Level::Pmd, "2M mapped at {:?}", t.level);
        ensure!(
            at_translate(block_va + 0x12345, AtAccess::KernelRead) == Ok(block.add(0x12345)),
            "AT on the block"
        );
        ensure!(
            at_translate(block_va, AtAccess::KernelWrite).is_err(),
            "read-only block is writable"
        );
        Ok(())
    })();
    kmap::unmap_kernel_range(TEST_VA, PAGE_SIZE).map_err(|e| alloc::format!("{:?}", e))?;
    kmap::unmap_kernel_range(block_va, PMD_SIZE).map_err(|e| alloc::format!("{:?}", e))?;
    ensure!(
        at_translate(TEST_VA, AtAccess::KernelRead).is_err(),
        "page still translates after unmap"
    );
    let f = probe_load(block_va)
        .err()
        .ok_or("block still readable after unmap")?;
    ensure!(
        matches!(f.esr.fault_status(), Some(FaultStatus::Translation(_))),
        "ESR {}",
        f.esr
    );
    frame::free_pages(page, 0).map_err(|e| alloc::format!("{:?}", e))?;
    frame::free_pages(block, 9).map_err(|e| alloc::format!("{:?}", e))?;
    result
}

/// `cont_block`'s pairs of loads and stores reach each of the 16 entries:
/// `write` gives entry k the first value plus k pages, and `none` sees a
/// single non-zero entry wherever it is.
fn cont_block_pairs_cover_all_16_entries() -> TestResult {
    let block: [AtomicU64; 16] = core::array::from_fn(|_| AtomicU64::new(0));
    ensure!(cont_block::none(&block), "an empty block read as used");
    for k in 0..16 {
        block[k].store(1 << 12, Ordering::Relaxed);
        ensure!(!cont_block::none(&block), "entry {k} alone went unseen");
        block[k].store(0, Ordering::Relaxed);
    }
    let first = 0x4000_0000_0743;
    cont_block::write(&block, first);
    for (k, entry) in block.iter().enumerate() {
        let want = first + (k * PAGE_SIZE) as u64;
        let got = entry.load(Ordering::Relaxed);
        ensure!(got == want, "entry {k}: {got:#x}, not {want:#x}");
    }
    Ok(())
}
