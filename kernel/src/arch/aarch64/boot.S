// Entry from QEMU and from PSCI CPU_ON: drop from EL2 to EL1, build the boot
// page tables, turn the MMU on and jump to the kernel's linked (high) address.
//
// Everything here runs at the physical address with the MMU off, so it only
// uses PC-relative addressing (adr/adrp). Linux: arch/arm64/kernel/head.S.

.equ PAGE_OFFSET,        0xffff000000000000

// MAIR_EL1: attr0 Device-nGnRE, attr1 Normal write-back, attr2 Normal
// non-cacheable (Arm ARM D19.2, MAIR_EL1). Indices match desc.rs MT_*.
.equ MAIR_VALUE,         0x0000000000440004 | (0xff << 8)

// TCR_EL1 (Arm ARM D19.2): 48-bit VA in both halves (T0SZ = T1SZ = 16),
// 4K granules (TG0 = 0b00, TG1 = 0b10), inner-shareable write-back walks.
// IPS and AS are filled in from ID_AA64MMFR0_EL1 at run time.
.equ TCR_T0SZ,           16
.equ TCR_T1SZ,           (16 << 16)
.equ TCR_IRGN0_WBWA,     (1 << 8)
.equ TCR_ORGN0_WBWA,     (1 << 10)
.equ TCR_SH0_INNER,      (3 << 12)
.equ TCR_IRGN1_WBWA,     (1 << 24)
.equ TCR_ORGN1_WBWA,     (1 << 26)
.equ TCR_SH1_INNER,      (3 << 28)
.equ TCR_TG1_4K,         (2 << 30)
.equ TCR_VALUE,          TCR_T0SZ | TCR_T1SZ | TCR_IRGN0_WBWA | TCR_ORGN0_WBWA | TCR_SH0_INNER | TCR_IRGN1_WBWA | TCR_ORGN1_WBWA | TCR_SH1_INNER | TCR_TG1_4K
.equ TCR_AS,             (1 << 36)

// SCTLR_EL1: RES1 bits, plus M (MMU), C (data cache), SA (SP alignment
// check), I (instruction cache), and what Linux lets EL0 do itself: DC ZVA
// (DZE), reading CTR_EL0 (UCT), WFI/WFE (nTWI, nTWE) and cache maintenance
// by VA (UCI, which JITs need to make new code visible).
.equ SCTLR_RES1,         (1 << 11) | (1 << 20) | (1 << 22) | (1 << 23) | (1 << 28) | (1 << 29)
.equ SCTLR_EL0_OPS,      (1 << 14) | (1 << 15) | (1 << 16) | (1 << 18) | (1 << 26)
.equ SCTLR_MMU_ON,       SCTLR_RES1 | SCTLR_EL0_OPS | (1 << 0) | (1 << 2) | (1 << 3) | (1 << 12)

// Boot map descriptors (level 1, 1 GiB blocks): AF | SH inner | AttrIndx.
.equ BOOT_BLOCK_DEVICE,  (1 << 54) | (1 << 53) | (1 << 10) | (0 << 2) | 1
.equ BOOT_BLOCK_NORMAL,  (1 << 10) | (3 << 8) | (1 << 2) | 1

.section .text.boot, "ax"
.global _start
_start:
    mov     x19, x0                 // DTB address from the loader (0 for an ELF -kernel)
    bl      el2_to_el1
    mov     x20, x0                 // the EL we were entered at

    // Zero .bss: the boot tables and the boot stack live there.
    adrp    x1, __bss_start
    add     x1, x1, :lo12:__bss_start
    adrp    x2, __bss_end
    add     x2, x2, :lo12:__bss_end
1:  cmp     x1, x2
    b.hs    2f
    stp     xzr, xzr, [x1], #16
    b       1b
2:
    bl      build_boot_tables
    adrp    x0, boot_pgd
    mov     x1, x0                  // TTBR1 uses the same boot tables
    bl      enable_mmu
    ldr     x1, =primary_high
    br      x1

primary_high:
    .cfi_startproc
    .cfi_undefined x30              // debuggers: the outermost frame
    ldr     x1, =boot_stack_top
    mov     sp, x1
    mov     x29, xzr                // terminate the frame-pointer chain
    mov     x30, xzr
    mov     x0, x19
    mov     x1, x20
    bl      kernel_main
    b       .
    .cfi_endproc

// PSCI CPU_ON lands here with x0 = the physical address of this CPU's
// SecondaryBoot record: { stack_top (VA), ttbr1 (PA), cpu }.
.global secondary_entry
secondary_entry:
    mov     x19, x0
    bl      el2_to_el1
    adrp    x0, boot_pgd            // identity map, to survive turning the MMU on
    ldr     x1, [x19, #8]           // the kernel's real tables
    bl      enable_mmu
    ldr     x1, =secondary_high
    br      x1

secondary_high:
    .cfi_startproc
    .cfi_undefined x30
    ldr     x1, =PAGE_OFFSET
    add     x19, x19, x1            // the record, through the linear map
    ldr     x1, [x19]
    mov     sp, x1
    mov     x29, xzr
    mov     x30, xzr
    mov     x0, x19
    bl      secondary_main
    b       .
    .cfi_endproc

// Leave EL2 (QEMU -machine virtualization=on) for EL1 with EL1 allowed to use
// the timers and the GICv3 system registers. Returns at EL1 either way, with
// x0 = the exception level we were entered at.
el2_to_el1:
    mrs     x0, CurrentEL
    lsr     x0, x0, #2
    cmp     x0, #2
    b.ne    1f
    mov     x0, #(1 << 31)          // HCR_EL2.RW: EL1 is AArch64
    msr     hcr_el2, x0
    mrs     x0, cnthctl_el2
    orr     x0, x0, #3              // EL1PCTEN | EL1PCEN: no timer traps
    msr     cnthctl_el2, x0
    msr     cntvoff_el2, xzr
    mrs     x0, midr_el1
    msr     vpidr_el2, x0
    mrs     x0, mpidr_el1
    msr     vmpidr_el2, x0
    mov     x0, #0x33ff             // CPTR_EL2: RES1 bits, no FP/SIMD trap
    msr     cptr_el2, x0
    msr     hstr_el2, xzr
    mrs     x0, id_aa64pfr0_el1     // GIC system registers implemented?
    ubfx    x0, x0, #24, #4
    cbz     x0, 2f
    mrs     x0, S3_4_C12_C9_5       // ICC_SRE_EL2
    orr     x0, x0, #1              // SRE
    orr     x0, x0, #8              // Enable: EL1 may use ICC_SRE_EL1
    msr     S3_4_C12_C9_5, x0
    isb
2:  ldr     x0, =SCTLR_RES1
    msr     sctlr_el1, x0
    mov     x0, #0x3c5              // EL1h, DAIF masked
    msr     spsr_el2, x0
    msr     elr_el2, x30
    mov     x0, #2
    eret
1:  ret

// Boot map: one level-0 table pointing at one level-1 table of 1 GiB blocks,
// devices at 0-1G and RAM at 1G-5G (QEMU virt, up to 4 GiB). Used as the
// identity map in TTBR0 and, until the kernel builds its own, as the linear
// map in TTBR1 (VA bits 47:39 are 0 in both).
build_boot_tables:
    adrp    x0, boot_pgd
    adrp    x1, boot_pud
    orr     x2, x1, #3              // table descriptor
    str     x2, [x0]
    ldr     x2, =BOOT_BLOCK_DEVICE
    str     x2, [x1]
    ldr     x2, =BOOT_BLOCK_NORMAL
    mov     x3, #1
1:  orr     x4, x2, x3, lsl #30
    str     x4, [x1, x3, lsl #3]
    add     x3, x3, #1
    cmp     x3, #5
    b.lo    1b
    dsb     ishst
    ret

// x0 = TTBR0 (PA), x1 = TTBR1 (PA). Clobbers x0-x3.
enable_mmu:
    ldr     x2, =MAIR_VALUE
    msr     mair_el1, x2
    ldr     x2, =TCR_VALUE
    mrs     x3, id_aa64mmfr0_el1
    bfi     x2, x3, #32, #3         // IPS = PARange
    ubfx    x3, x3, #4, #4          // ASIDBits: 0b0010 = 16-bit ASIDs
    cmp     x3, #2
    b.ne    1f
    orr     x2, x2, #TCR_AS
1:  msr     tcr_el1, x2
    msr     ttbr0_el1, x0
    msr     ttbr1_el1, x1
    isb
    tlbi    vmalle1
    dsb     nsh
    ldr     x2, =SCTLR_MMU_ON
    msr     sctlr_el1, x2
    isb
    ret

.ltorg

.section .bss.boot, "aw", @nobits
.balign 4096
.global boot_pgd
boot_pgd:
    .space 4096
boot_pud:
    .space 4096
.balign 16
boot_stack:
    .space 65536
.global boot_stack_top
boot_stack_top:
