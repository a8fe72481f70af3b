"""Translation-table descriptors of the 4K granule, stage 1, decoded as the
Arm ARM names their fields (DDI 0487, D8.3 "Translation table descriptor
formats", D8.4 "Memory attribute fields"); the kernel's own encoder is
`kernel/src/arch/aarch64/desc.rs`. Pure Python, no gdb: the host tests
(`scripts/gdb/test_desc.py`) check it against the kernel's encodings.
"""

# Arm levels 0-3 and the Linux names faultline uses for them.
LEVEL_NAMES = ("PGD", "PUD", "PMD", "PTE")
LEVEL_SHIFTS = (39, 30, 21, 12)
ENTRIES = 512

VALID = 1 << 0
TYPE = 1 << 1  # table (levels 0-2) or page (level 3); clear: block
ADDR_MASK = 0x0000_FFFF_FFFF_F000
RDONLY = 1 << 7  # AP[2]; with DBM set, clear means dirty (Linux PTE_RDONLY)
AF = 1 << 10
NG = 1 << 11
DBM = 1 << 51  # may be written (Linux PTE_WRITE): clean while AP[2] is set
CONT = 1 << 52
PXN = 1 << 53
UXN = 1 << 54
SW_DIRTY = 1 << 55  # software bit: written since mapped (Linux PTE_DIRTY)
PXN_TABLE = 1 << 59
UXN_TABLE = 1 << 60

# AttrIndx -> MAIR_EL1 slot, as boot.S programs it.
ATTRS = {0: "Device-nGnRE", 1: "Normal WB", 2: "Normal NC"}
# AP[2:1]: EL1 and EL0 access.
AP = {0: "EL1 RW, EL0 none", 1: "EL1 RW, EL0 RW", 2: "EL1 RO, EL0 none", 3: "EL1 RO, EL0 RO"}
SH = {0: "Non-shareable", 1: "(reserved)", 2: "Outer Shareable", 3: "Inner Shareable"}

# Entries one contiguous-bit block spans, at level 3 (Arm ARM D8.6.1):
# 16 x 4K = 64K, naturally aligned in VA and output address.
CONT_PTES = 16


def level_size(level):
    return 1 << LEVEL_SHIFTS[level]


def index(level, va):
    """The entry of `va` in a table at `level`."""
    return (va >> LEVEL_SHIFTS[level]) & (ENTRIES - 1)


def is_valid(desc):
    return desc & VALID != 0


def is_table(desc, level):
    """Does `desc`, read at `level`, point at a next-level table?"""
    return level < 3 and desc & (VALID | TYPE) == VALID | TYPE


def kind(desc, level):
    if not is_valid(desc):
        return "invalid" if desc else "none"
    if level == 3:
        return "page" if desc & TYPE else "reserved"
    return "table" if desc & TYPE else "block"


def out_addr(desc):
    """Output address (a leaf) or next-level table address (a table)."""
    return desc & ADDR_MASK


def prot(desc):
    """Every field but VALID, TYPE and the address: what two entries of one
    mapping share (the kernel's `Pte::prot`, Linux's `pgprot_t`)."""
    return desc & ~(ADDR_MASK | VALID | TYPE)


def is_dirty(desc):
    """Written since mapped clean (Linux: `pte_dirty`): the software bit, or
    the hardware's, DBM set with AP[2] clear."""
    return bool(desc & SW_DIRTY) or desc & (DBM | RDONLY) == DBM


def user_perms(desc):
    """EL0's r/w/x, as /proc/PID/ptdump prints them: writable is read-write
    now, or clean with DBM set (read-write once written)."""
    ap = (desc >> 6) & 3
    return "".join((
        "r" if ap & 1 else "-",
        "w" if ap == 1 or (ap == 3 and desc & DBM) else "-",
        "-" if desc & UXN else "x",
    ))


def fields(desc, level):
    """The descriptor's fields, by their Arm ARM names, in bit order."""
    k = kind(desc, level)
    if k in ("none", "invalid", "reserved"):
        return [("raw", f"{desc:#018x}")]
    if k == "table":
        return [
            ("NextLevelTableAddr", f"{out_addr(desc):#x}"),
            ("PXNTable", int(bool(desc & PXN_TABLE))),
            ("UXNTable", int(bool(desc & UXN_TABLE))),
        ]
    ap = (desc >> 6) & 3
    attr = (desc >> 2) & 7
    return [
        ("OA", f"{out_addr(desc):#x}"),
        ("AttrIndx", f"{attr} ({ATTRS.get(attr, '?')})"),
        ("AP", f"{ap:02b} ({AP[ap]})"),
        ("SH", f"{(desc >> 8) & 3:02b} ({SH[(desc >> 8) & 3]})"),
        ("AF", int(bool(desc & AF))),
        ("nG", int(bool(desc & NG))),
        ("DBM", int(bool(desc & DBM))),
        ("Contiguous", int(bool(desc & CONT))),
        ("PXN", int(bool(desc & PXN))),
        ("UXN", int(bool(desc & UXN))),
        ("dirty(sw)", int(bool(desc & SW_DIRTY))),
    ]


def describe(desc, level):
    """One line: the raw value, the kind, and the decoded fields."""
    text = " ".join(f"{name}={value}" for name, value in fields(desc, level))
    return f"{desc:#018x} {kind(desc, level):7} {text}"


def cont_block_problems(entries, first_va):
    """What breaks the contiguous-bit rules (Arm ARM D8.6.1) in the 16
    level-3 entries `entries` of one aligned block starting at `first_va`:
    every entry valid with the bit set, output addresses consecutive from a
    64K-aligned one, the same attributes. QEMU does not check these; a
    real CPU may then give any of the entries' translations, or a TLB
    conflict abort."""
    problems = []
    if first_va % (CONT_PTES << 12):
        problems.append(f"block VA {first_va:#x} not 64K-aligned")
    base = out_addr(entries[0])
    if base % (CONT_PTES << 12):
        problems.append(f"output address {base:#x} not 64K-aligned")
    for i, desc in enumerate(entries):
        if not is_valid(desc) or not desc & CONT:
            problems.append(f"entry {i} {'invalid' if not is_valid(desc) else 'without the contiguous bit'}")
            continue
        if out_addr(desc) != base + (i << 12):
            problems.append(f"entry {i} maps {out_addr(desc):#x}, not {base + (i << 12):#x}")
        # Access and dirty state may differ per entry (the hardware's dirty
        # state is AP[2] where DBM is set); everything else may not.
        state = AF | SW_DIRTY | (RDONLY if desc & entries[0] & DBM else 0)
        if prot(desc) & ~state != prot(entries[0]) & ~state:
            problems.append(f"entry {i} attributes differ from entry 0")
    return problems


def ptdump_lines(leaves):
    """The kernel's /proc/PID/ptdump (`mm::ptdump::ptdump`) from
    (va, level, desc) leaves in address order: one line per run of leaves
    at one level, with the same attributes, mapping consecutive output
    addresses."""
    lines = []
    run = None  # [start, end, level, pa, desc]

    def flush(r):
        start, end, level, pa, desc = r
        name = {1: "PUD", 2: "PMD"}.get(level, "PTE")
        extra = "".join((
            " cont" if desc & CONT else "",
            " young" if desc & AF else "",
            " dirty" if is_dirty(desc) else "",
        ))
        lines.append(f"{start:012x}-{end:012x} {name} pa={pa:x} {user_perms(desc)} user{extra}")

    for va, level, desc in leaves:
        size = level_size(level)
        if (run and run[1] == va and run[2] == level and prot(run[4]) == prot(desc)
                and run[3] + (run[1] - run[0]) == out_addr(desc)):
            run[1] += size
            continue
        if run:
            flush(run)
        run = [va, va + size, level, out_addr(desc), desc]
    if run:
        flush(run)
    return lines
