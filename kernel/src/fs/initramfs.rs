//! Unpacks the initrd (a newc cpio archive) into the root tmpfs at boot
//! (Linux: `init/initramfs.c`, `unpack_to_rootfs`).

use super::cpio::{self, FileType};
use super::vfs::{self, Inode, O_CREAT, O_TRUNC, O_WRONLY};
use crate::errno::Errno;
use alloc::sync::Arc;

/// What unpacking did: entries created, entries skipped (device nodes,
/// unsafe names, errors), and the archive error that stopped it, if any.
pub struct Unpacked {
    /// Directories, files and symlinks made (a directory that was there
    /// already counts).
    pub created: usize,
    /// Entries not made: device nodes and other types, names with `..`, and
    /// any whose creation failed.
    pub skipped: usize,
    /// Why the archive could not be read to its end, if it could not; what
    /// came before that point is unpacked.
    pub error: Option<cpio::CpioError>,
}

/// Creates every directory, file and symlink of `archive` under `root`.
/// An entry that cannot be created is skipped and counted, like Linux does
/// (it prints and carries on); it never stops the boot.
pub fn unpack(root: &Arc<Inode>, archive: &[u8]) -> Unpacked {
    let mut done = Unpacked {
        created: 0,
        skipped: 0,
        error: None,
    };
    for entry in cpio::parse(archive) {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                done.error = Some(e);
                break;
            }
        };
        if entry.name.is_empty() {
            continue; // the root itself
        }
        if entry.name.split('/').any(|c| c == "..") {
            done.skipped += 1;
            continue;
        }
        let path = entry.name;
        let perm = entry.mode & 0o7777;
        let result = match entry.file_type() {
            FileType::Directory => match vfs::mkdir(root, path, perm) {
                Err(Errno::EEXIST) => Ok(()),
                r => r,
            },
            FileType::Regular => vfs::open(root, path, O_CREAT | O_WRONLY | O_TRUNC, perm)
                .and_then(|f| f.write(entry.data))
                .map(|_| ()),
            FileType::Symlink => match core::str::from_utf8(entry.data) {
                Ok(target) => vfs::symlink(target, root, path),
                Err(_) => Err(Errno::EINVAL),
            },
            FileType::Other => Err(Errno::EOPNOTSUPP),
        };
        match result {
            Ok(()) => done.created += 1,
            Err(_) => done.skipped += 1,
        }
    }
    done
}
