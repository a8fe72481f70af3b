//! Reader for the "newc" cpio archive that carries the initramfs: walks the
//! archive in place and yields one [`Entry`] per file, directory or symlink,
//! with names and contents borrowed from the archive (Linux: the
//! header/name/data state machine of `init/initramfs.c`; the format is
//! `Documentation/driver-api/early-userspace/buffer-format.rst`).
//!
//! An archive is a run of entries, each a 110-byte ASCII header, the file's
//! name and the file's data:
//!
//! ```text
//!   | "070701" | 13 fields of 8 hex digits | name | NUL | pad | data | pad |
//!   |<------------- 110 bytes ----------->|
//! ```
//!
//! Header and name together are padded with NULs to a multiple of 4 bytes,
//! and so is the data, so every header starts 4-aligned. The fields are, in
//! order: ino, mode, uid, gid, nlink, mtime, filesize, devmajor, devminor,
//! rdevmajor, rdevminor, namesize (counting the NUL) and check. An entry named
//! `TRAILER!!!` ends the archive.
//!
//! The archive comes from outside the kernel, so every length in it is
//! checked against the input: a malformed archive is an `Err`, never a panic
//! or a read past its end.
//!
//! Where we simplify:
//! - Only the first archive is read; anything after its trailer is ignored.
//!   Linux also unpacks further archives concatenated after it (which is how
//!   CPU microcode gets prepended to a distribution's initramfs).
//! - `070702` ("newc with CRC") is accepted, but its `check` field is not
//!   verified, where Linux compares it with the sum of the data bytes.
//! - Hard links are not matched up. newc stores a hard-linked file's data only
//!   with the last of its names, and Linux links the earlier names to it by
//!   `(devmajor, devminor, ino)` when `nlink >= 2`; here [`Entry::ino`] and
//!   [`Entry::nlink`] are passed through for a caller that wants to.
//! - The device numbers must be valid hex but are not returned, since
//!   nothing here creates device nodes.

use core::iter::FusedIterator;
use core::str;
pub use uapi::stat::{S_IFDIR, S_IFLNK, S_IFMT, S_IFREG};

/// The magic of a plain "newc" header.
const MAGIC_NEWC: &[u8] = b"070701";
/// The magic of "newc with CRC", the same header with `check` filled in.
const MAGIC_NEWC_CRC: &[u8] = b"070702";
/// Bytes of the magic at the start of every header.
const MAGIC_LEN: usize = 6;
/// Header fields after the magic, ino through check.
const FIELD_COUNT: usize = 13;
/// Hex digits in each header field.
const FIELD_DIGITS: usize = 8;
/// Bytes in a whole header: magic and fields, 110.
const HEADER_LEN: usize = MAGIC_LEN + FIELD_COUNT * FIELD_DIGITS;
/// Headers, and therefore names and data, are padded to this alignment.
const ALIGN: usize = 4;
/// The name of the entry that ends the archive (it has no file).
const TRAILER_NAME: &str = "TRAILER!!!";

/// One file, directory or symlink in the archive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry<'a> {
    /// The path, relative to the root it is unpacked into. Leading `/` and
    /// `./` are removed, so `/etc/init`, `./etc/init` and `etc/init` are all
    /// `etc/init`, and the root itself (`.`, which `find . | cpio` lists
    /// first) is `""`. Nothing else is changed: a `..` component is left for
    /// the unpacker to refuse.
    pub name: &'a str,
    /// The full `st_mode`: the [`S_IFMT`] type bits and the permission bits.
    pub mode: u32,
    /// The owner's user id.
    pub uid: u32,
    /// The owner's group id.
    pub gid: u32,
    /// Seconds since the Unix epoch.
    pub mtime: u32,
    /// A regular file's contents, or a symlink's target.
    pub data: &'a [u8],
    /// Names this file has (`st_nlink`); see the module doc on hard links.
    pub nlink: u32,
    /// The inode number in the archive, which with the device numbers tells a
    /// hard link's names apart; not the inode number it gets once unpacked.
    pub ino: u32,
}

/// The kinds of entry an initramfs unpacker treats differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileType {
    /// S_IFREG: a regular file, `data` is its contents.
    Regular,
    /// S_IFDIR: a directory, `data` is empty.
    Directory,
    /// S_IFLNK: a symbolic link, `data` is its target.
    Symlink,
    /// A device node, FIFO, socket or undefined type.
    Other,
}

impl Entry<'_> {
    /// What kind of file the [`S_IFMT`] bits of `mode` say this is.
    pub fn file_type(&self) -> FileType {
        match self.mode & S_IFMT {
            S_IFREG => FileType::Regular,
            S_IFDIR => FileType::Directory,
            S_IFLNK => FileType::Symlink,
            _ => FileType::Other,
        }
    }
}

/// Why an archive could not be read further.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpioError {
    /// An entry does not start with `070701` or `070702`.
    BadMagic,
    /// A header field holds something other than 8 hex digits.
    BadHeader,
    /// The input ends inside an entry: in its header, name, data or padding.
    Truncated,
    /// The name is empty, does not end in its NUL, has a NUL inside it, or
    /// is not UTF-8.
    BadName,
}

/// The entries of an archive, in archive order, up to the trailer. After an
/// error there is nothing more: once one length is wrong, where the next
/// entry starts is unknown.
#[derive(Clone, Debug)]
pub struct CpioIter<'a> {
    /// The archive from the next entry's header on; empty once the trailer
    /// or an error has been reached.
    rest: &'a [u8],
}

/// Iterates over the entries of the newc archive `archive`.
pub fn parse(archive: &[u8]) -> CpioIter<'_> {
    CpioIter { rest: archive }
}

impl<'a> Iterator for CpioIter<'a> {
    type Item = Result<Entry<'a>, CpioError>;

    fn next(&mut self) -> Option<Self::Item> {
        // Input that ends cleanly between entries is taken as the end of the
        // archive, trailer or not.
        if self.rest.is_empty() {
            return None;
        }
        match split_entry(self.rest) {
            Ok(Some((entry, rest))) => {
                self.rest = rest;
                Some(Ok(entry))
            }
            Ok(None) => {
                self.rest = &[];
                None
            }
            Err(err) => {
                self.rest = &[];
                Some(Err(err))
            }
        }
    }
}

impl FusedIterator for CpioIter<'_> {}

/// Splits the entry at the start of `input` from the entries after it;
/// `None` for the trailer.
fn split_entry(input: &[u8]) -> Result<Option<(Entry<'_>, &[u8])>, CpioError> {
    let (header, rest) = input
        .split_first_chunk::<HEADER_LEN>()
        .ok_or(CpioError::Truncated)?;
    let (magic, fields) = header.split_at(MAGIC_LEN);
    if magic != MAGIC_NEWC && magic != MAGIC_NEWC_CRC {
        return Err(CpioError::BadMagic);
    }
    // In header order; the device numbers and the checksum go unused.
    let [ino, mode, uid, gid, nlink, mtime, filesize, _, _, _, _, namesize, _] =
        parse_fields(fields)?;

    let (name, rest) = take_padded(rest, HEADER_LEN, namesize)?;
    let name = parse_name(name)?;
    if name == TRAILER_NAME {
        return Ok(None);
    }
    let (data, rest) = take_padded(rest, 0, filesize)?;

    let entry = Entry {
        name: strip_root(name),
        mode,
        uid,
        gid,
        mtime,
        data,
        nlink,
        ino,
    };
    Ok(Some((entry, rest)))
}

/// The 13 header fields after the magic, each 8 hex digits of either case.
fn parse_fields(digits: &[u8]) -> Result<[u32; FIELD_COUNT], CpioError> {
    let mut fields = [0; FIELD_COUNT];
    for (field, digits) in fields.iter_mut().zip(digits.chunks_exact(FIELD_DIGITS)) {
        // By hand rather than `u32::from_str_radix`, which would also take a
        // leading `+`.
        *field = digits.iter().try_fold(0, |value: u32, &digit| {
            let digit = char::from(digit).to_digit(16).ok_or(CpioError::BadHeader)?;
            Ok((value << 4) | digit)
        })?;
    }
    Ok(fields)
}

/// Splits `len` bytes off the front of `input`, and skips the padding after
/// them. `offset` is where `input` starts within the entry: padding aligns
/// offsets from the entry's start, which is itself aligned.
fn take_padded(input: &[u8], offset: usize, len: u32) -> Result<(&[u8], &[u8]), CpioError> {
    // A length that does not fit in a `usize` cannot fit in the input either.
    let len = usize::try_from(len).map_err(|_| CpioError::Truncated)?;
    let (taken, rest) = input.split_at_checked(len).ok_or(CpioError::Truncated)?;
    // `len` is at most the input's length, so this cannot overflow.
    let padding = (ALIGN - (offset + len) % ALIGN) % ALIGN;
    let rest = rest.get(padding..).ok_or(CpioError::Truncated)?;
    Ok((taken, rest))
}

/// The name from its field of `namesize` bytes, which end in a NUL.
fn parse_name(with_nul: &[u8]) -> Result<&str, CpioError> {
    let name = with_nul.strip_suffix(&[0]).ok_or(CpioError::BadName)?;
    // A NUL inside would end the name early for anyone treating it as a C
    // string, so two readers could disagree about which file this is.
    if name.is_empty() || name.contains(&0) {
        return Err(CpioError::BadName);
    }
    str::from_utf8(name).map_err(|_| CpioError::BadName)
}

/// Removes leading `/` and `./`, and turns `.` into `""`, the root.
fn strip_root(mut name: &str) -> &str {
    loop {
        if let Some(rest) = name.strip_prefix('/') {
            name = rest;
        } else if let Some(rest) = name.strip_prefix("./") {
            name = rest;
        } else if name == "." {
            return "";
        } else {
            return name;
        }
    }
}

#[cfg(test)]
mod tests;
