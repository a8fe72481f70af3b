"""ESR_EL1, the exception syndrome, decoded as the kernel's
`arch/aarch64/esr.rs` decodes and prints it (Arm ARM D24.2.40: EC; for
aborts the fault status code, and for data aborts WnR). Pure Python, no
gdb.
"""

EC_NAMES = {
    0x00: "Unknown", 0x01: "WfiWfe", 0x07: "FpSimdAccess", 0x0E: "IllegalState",
    0x15: "Svc64", 0x18: "SysRegTrap", 0x20: "InstrAbortLowerEl", 0x21: "InstrAbortSameEl",
    0x22: "PcAlignment", 0x24: "DataAbortLowerEl", 0x25: "DataAbortSameEl",
    0x26: "SpAlignment", 0x2C: "Fp64", 0x2F: "SError", 0x30: "BreakpointLowerEl",
    0x31: "BreakpointSameEl", 0x32: "SoftwareStepLowerEl", 0x33: "SoftwareStepSameEl",
    0x34: "WatchpointLowerEl", 0x35: "WatchpointSameEl", 0x3C: "Brk64",
}
INSTR_ABORTS = (0x20, 0x21)
DATA_ABORTS = (0x24, 0x25)


def ec(esr):
    return esr >> 26 & 0x3F


def is_abort(esr):
    return ec(esr) in INSTR_ABORTS + DATA_ABORTS


def fault_status(esr):
    """An abort's fault status code by name (the kernel's `FaultStatus`)."""
    fsc = esr & 0x3F
    level = fsc & 3
    if fsc <= 0x03:
        return f"AddressSize({level})"
    if fsc <= 0x07:
        return f"Translation({level})"
    if 0x09 <= fsc <= 0x0B:
        return f"AccessFlag({level})"
    if 0x0D <= fsc <= 0x0F:
        return f"Permission({level})"
    return {0x10: "SyncExternal", 0x21: "Alignment", 0x30: "TlbConflict"}.get(fsc, f"Other({fsc})")


def is_write(esr):
    """WnR, except for cache maintenance (CM), which reports WnR = 1 too."""
    return ec(esr) in DATA_ABORTS and esr >> 6 & 1 and not esr >> 8 & 1


def describe(esr):
    """As the kernel's `Display` for `Esr` prints it, in its parentheses:
    `DataAbortLowerEl, Translation(3), write`."""
    name = EC_NAMES.get(ec(esr), f"Other({ec(esr)})")
    if not is_abort(esr):
        return name
    text = f"{name}, {fault_status(esr)}"
    if ec(esr) in DATA_ABORTS:
        text += ", write" if is_write(esr) else ", read"
    return text
