//! The DTB's header and structure block checked whole before the `fdt`
//! crate, which trusts the blob, reads any of it (libfdt:
//! `fdt_check_full()`).

use super::DtbError;

/// `FDT_MAGIC`: the big-endian `u32` every DTB starts with.
pub(super) const FDT_MAGIC: u32 = 0xd00d_feed;
/// The header is ten big-endian `u32`s.
pub(super) const FDT_HEADER_SIZE: usize = 40;
/// `size_dt_struct`, which `fdt` relies on, first appeared in version 17.
pub(super) const FDT_MIN_VERSION: u32 = 17;
/// A blob whose `last_comp_version` is newer than this needs a newer parser.
pub(super) const FDT_LAST_COMP_VERSION: u32 = 17;
/// Size of one `/memreserve/` entry: a `u64` address and a `u64` size.
pub(super) const FDT_RSV_ENTRY_SIZE: usize = 16;
/// Deeper trees are rejected: `fdt` tracks parents in a fixed 64-entry array,
/// and real trees are a handful of levels deep.
pub(super) const FDT_MAX_DEPTH: usize = 32;

/// `FDT_BEGIN_NODE`: a node starts; its NUL-terminated name follows.
pub(super) const FDT_BEGIN_NODE: u32 = 0x1;
/// `FDT_END_NODE`: the innermost open node ends.
pub(super) const FDT_END_NODE: u32 = 0x2;
/// `FDT_PROP`: a property follows: value length, name offset into the
/// strings block, then the value.
pub(super) const FDT_PROP: u32 = 0x3;
/// `FDT_END`: the end of the structure block.
pub(super) const FDT_END: u32 = 0x9;

/// Positions of the header fields we read, in `u32`s from the start.
pub(super) const HDR_TOTALSIZE: usize = 1;
/// `off_dt_struct`: byte offset of the structure block in the blob.
pub(super) const HDR_OFF_DT_STRUCT: usize = 2;
/// `off_dt_strings`: byte offset of the strings block (property names).
pub(super) const HDR_OFF_DT_STRINGS: usize = 3;
/// `off_mem_rsvmap`: byte offset of the `/memreserve/` table.
pub(super) const HDR_OFF_MEM_RSVMAP: usize = 4;
/// `version`: the format version the blob was written in.
pub(super) const HDR_VERSION: usize = 5;
/// `last_comp_version`: the oldest version the blob stays compatible with.
pub(super) const HDR_LAST_COMP_VERSION: usize = 6;
/// `size_dt_strings`: length of the strings block in bytes.
pub(super) const HDR_SIZE_DT_STRINGS: usize = 8;
/// `size_dt_struct`: length of the structure block in bytes.
pub(super) const HDR_SIZE_DT_STRUCT: usize = 9;

/// Size of the DTB whose first bytes are `header`, read from the header's
/// `totalsize` field, or `None` if `header` does not start like a DTB.
///
/// The kernel gets only a pointer in `x0`: it reads the header through it,
/// asks this for the length, and then hands a slice that long to [`parse`](super::parse).
pub fn total_size(header: &[u8]) -> Option<usize> {
    if be32_at(header, 0)? != FDT_MAGIC {
        return None;
    }
    let size = be32_at(header, HDR_TOTALSIZE * 4)? as usize;
    (size >= FDT_HEADER_SIZE).then_some(size)
}
/// Validates the header and the structure block, so that nothing the `fdt`
/// crate does afterwards can panic, and returns the blob cut to `totalsize`.
pub(super) fn check_blob(dtb: &[u8]) -> Result<&[u8], DtbError> {
    if dtb.len() < FDT_HEADER_SIZE {
        return Err(DtbError::Truncated);
    }
    // In bounds now that the whole header is known to be there.
    let field = |index: usize| be32_at(dtb, index * 4).unwrap_or(0);
    if field(0) != FDT_MAGIC {
        return Err(DtbError::BadMagic);
    }
    let size = total_size(dtb).ok_or(DtbError::BadHeader)?;
    let blob = dtb.get(..size).ok_or(DtbError::Truncated)?;
    if field(HDR_VERSION) < FDT_MIN_VERSION || field(HDR_LAST_COMP_VERSION) > FDT_LAST_COMP_VERSION
    {
        return Err(DtbError::BadVersion);
    }

    let block = |offset: usize, size: usize| {
        let start = field(offset) as usize;
        blob.get(start..start + field(size) as usize)
            .ok_or(DtbError::BadHeader)
    };
    let structs = block(HDR_OFF_DT_STRUCT, HDR_SIZE_DT_STRUCT)?;
    let strings = block(HDR_OFF_DT_STRINGS, HDR_SIZE_DT_STRINGS)?;
    let rsvmap = blob
        .get(field(HDR_OFF_MEM_RSVMAP) as usize..)
        .ok_or(DtbError::BadHeader)?;
    let terminated = rsvmap
        .chunks_exact(FDT_RSV_ENTRY_SIZE)
        .any(|entry| entry.iter().all(|&byte| byte == 0));
    if !terminated {
        return Err(DtbError::BadHeader);
    }

    check_structure(structs, strings)?;
    Ok(blob)
}

/// Walks the structure block token by token and checks that it is the one
/// shape `fdt` can read: a single root with an empty name, balanced nodes,
/// each node's properties before its children, every name a NUL-terminated
/// UTF-8 string inside its block, every value inside the structure block.
pub(super) fn check_structure(structs: &[u8], strings: &[u8]) -> Result<(), DtbError> {
    let bad = DtbError::BadStructure;
    let mut pos = 0;
    let mut depth: usize = 0;
    let mut seen_root = false;
    // Set once the current node has had a child: no property may follow.
    let mut after_child = false;

    loop {
        let token = be32_at(structs, pos).ok_or(bad)?;
        pos += 4;
        match token {
            FDT_BEGIN_NODE => {
                let name = c_str_at(structs, pos).ok_or(bad)?;
                let is_root = depth == 0;
                if is_root && (seen_root || !name.is_empty()) {
                    return Err(bad);
                }
                depth += 1;
                if depth > FDT_MAX_DEPTH {
                    return Err(bad);
                }
                seen_root = true;
                after_child = false;
                pos = align4(pos + name.len() + 1);
            }
            FDT_END_NODE => {
                depth = depth.checked_sub(1).ok_or(bad)?;
                after_child = true;
            }
            FDT_PROP => {
                if depth == 0 || after_child {
                    return Err(bad);
                }
                let len = be32_at(structs, pos).ok_or(bad)? as usize;
                let name_offset = be32_at(structs, pos + 4).ok_or(bad)? as usize;
                let name = c_str_at(strings, name_offset).ok_or(bad)?;
                // fdt reads these two as a u32 without checking the length.
                if matches!(name, "#address-cells" | "#size-cells") && len != 4 {
                    return Err(bad);
                }
                let value_end = pos + 8 + len;
                if value_end > structs.len() {
                    return Err(bad);
                }
                pos = align4(value_end);
            }
            FDT_END if seen_root && depth == 0 => return Ok(()),
            _ => return Err(bad),
        }
    }
}

/// Rounds `x` up to the 4-byte alignment every structure-block token has
/// (libfdt's `FDT_TAGALIGN`).
pub(super) fn align4(x: usize) -> usize {
    x.next_multiple_of(4)
}

/// The big-endian `u32` at byte `offset`, or `None` if it runs past the end
/// (libfdt's `fdt32_ld`, bounds-checked).
pub(super) fn be32_at(bytes: &[u8], offset: usize) -> Option<u32> {
    let word = bytes.get(offset..offset.checked_add(4)?)?;
    Some(u32::from_be_bytes(word.try_into().ok()?))
}

/// The NUL-terminated UTF-8 string starting at `offset`.
pub(super) fn c_str_at(bytes: &[u8], offset: usize) -> Option<&str> {
    let rest = bytes.get(offset..)?;
    let len = rest.iter().position(|&byte| byte == 0)?;
    core::str::from_utf8(&rest[..len]).ok()
}
