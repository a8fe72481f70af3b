//! Who may do what to a file: the owner, group and other permission bits
//! checked against a process's file-system ids, and the capabilities that
//! override them (Linux: `fs/namei.c` `generic_permission`,
//! `check_sticky`; `fs/attr.c` `setattr_prepare`, `chown_ok`;
//! `fs/inode.c` `inode_owner_or_capable`).
//!
//! Pure logic on an [`Owner`] (a file's mode, uid and gid) and a
//! [`Cred`]: the VFS asks through `Inode::permission` with the caller's
//! credentials. Where we simplify: no ACLs, no user namespaces, no
//! read-only or immutable files.

use crate::errno::{Errno, KResult};
use crate::task::cred::{
    Cred, CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER, CAP_FSETID,
};
use uapi::stat::{S_IFDIR, S_ISGID, S_ISVTX};

/// MAY_EXEC: run a file, or search (look names up in) a directory.
pub const MAY_EXEC: u32 = 1;
/// MAY_WRITE: write a file, or add and remove names in a directory.
pub const MAY_WRITE: u32 = 2;
/// MAY_READ: read a file, or list a directory.
pub const MAY_READ: u32 = 4;

/// What permission checks read of an inode: its mode and owner.
#[derive(Clone, Copy, Debug)]
pub struct Owner {
    /// `i_mode`: file type and permission bits.
    pub mode: u32,
    /// `i_uid`.
    pub uid: u32,
    /// `i_gid`.
    pub gid: u32,
}

impl Owner {
    /// Is the inode a directory?
    fn is_dir(&self) -> bool {
        self.mode & 0o170000 == S_IFDIR
    }
}

/// May `cred` access `inode` as `mask` (MAY_READ, MAY_WRITE, MAY_EXEC)
/// asks? The owner's bits apply to its owner, the group's to its group,
/// the others' to everyone else; then CAP_DAC_OVERRIDE allows anything
/// but running a file no one may run, and CAP_DAC_READ_SEARCH reading and
/// searching (Linux: `generic_permission`). EACCES if not.
pub fn generic_permission(cred: &Cred, inode: Owner, mask: u32) -> KResult<()> {
    let mask = mask & (MAY_READ | MAY_WRITE | MAY_EXEC);
    let bits = if cred.fsuid == inode.uid {
        inode.mode >> 6
    } else if cred.in_group(inode.gid) {
        inode.mode >> 3
    } else {
        inode.mode
    };
    if mask & !bits & 7 == 0 {
        return Ok(());
    }
    if inode.is_dir() {
        if mask & MAY_WRITE == 0 && cred.capable(CAP_DAC_READ_SEARCH) {
            return Ok(());
        }
        if cred.capable(CAP_DAC_OVERRIDE) {
            return Ok(());
        }
        return Err(Errno::EACCES);
    }
    if (mask & MAY_EXEC == 0 || inode.mode & 0o111 != 0) && cred.capable(CAP_DAC_OVERRIDE) {
        return Ok(());
    }
    if mask == MAY_READ && cred.capable(CAP_DAC_READ_SEARCH) {
        return Ok(());
    }
    Err(Errno::EACCES)
}

/// Is `cred` the inode's owner, or holds CAP_FOWNER (Linux:
/// `inode_owner_or_capable`)? Needed for chmod, explicit timestamps and
/// O_NOATIME.
pub fn owner_or_capable(cred: &Cred, inode: Owner) -> bool {
    cred.fsuid == inode.uid || cred.capable(CAP_FOWNER)
}

/// May `cred` remove (or rename away) the name of `victim` from the
/// directory `dir`, given it may write there? Not in a sticky directory
/// unless it owns the victim or the directory, or holds CAP_FOWNER
/// (Linux: `check_sticky`, EPERM from `may_delete`).
pub fn may_delete_sticky(cred: &Cred, dir: Owner, victim: Owner) -> KResult<()> {
    if dir.mode & S_ISVTX == 0
        || cred.fsuid == victim.uid
        || cred.fsuid == dir.uid
        || cred.capable(CAP_FOWNER)
    {
        return Ok(());
    }
    Err(Errno::EPERM)
}

/// chmod's rules (Linux: `setattr_prepare`, then `setattr_copy`): only
/// the owner or CAP_FOWNER (else EPERM); a caller outside the file's
/// group, without CAP_FSETID, loses the set-group-ID bit it asks for.
/// The permission bits to store.
pub fn chmod(cred: &Cred, inode: Owner, perm: u32) -> KResult<u32> {
    if !owner_or_capable(cred, inode) {
        return Err(Errno::EPERM);
    }
    if !cred.in_group(inode.gid) && !cred.capable(CAP_FSETID) {
        return Ok(perm & !S_ISGID);
    }
    Ok(perm)
}

/// chown's rules (Linux: `chown_ok`, `chgrp_ok`): with CAP_CHOWN
/// anything; else only the owner, keeping the owner, and giving the file
/// to one of its own groups. EPERM if not.
pub fn chown(cred: &Cred, inode: Owner, uid: Option<u32>, gid: Option<u32>) -> KResult<()> {
    if cred.capable(CAP_CHOWN) {
        return Ok(());
    }
    let owner = cred.fsuid == inode.uid;
    let uid_ok = uid.is_none_or(|u| owner && u == inode.uid);
    let gid_ok = gid.is_none_or(|g| owner && (g == inode.gid || cred.in_group(g)));
    if uid_ok && gid_ok {
        Ok(())
    } else {
        Err(Errno::EPERM)
    }
}

/// The group a new inode in `dir` gets: the directory's if it is
/// set-group-ID (BSD group semantics), else the creator's fsgid; a new
/// directory there inherits the bit (Linux: `inode_init_owner`). The
/// owner and the mode to give it.
pub fn init_owner(cred: &Cred, dir: Owner, mode: u32) -> Owner {
    let mut mode = mode;
    let gid = if dir.mode & S_ISGID != 0 {
        if mode & 0o170000 == S_IFDIR {
            mode |= S_ISGID;
        }
        dir.gid
    } else {
        cred.fsgid
    };
    Owner {
        mode,
        uid: cred.fsuid,
        gid,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOBODY: u32 = 65534;

    fn nobody() -> Cred {
        Cred::root()
            .setgid(NOBODY)
            .and_then(|c| c.setuid(NOBODY))
            .unwrap()
    }

    fn file(mode: u32, uid: u32, gid: u32) -> Owner {
        Owner {
            mode: 0o100000 | mode,
            uid,
            gid,
        }
    }

    fn dir(mode: u32, uid: u32, gid: u32) -> Owner {
        Owner {
            mode: S_IFDIR | mode,
            uid,
            gid,
        }
    }

    #[test]
    fn owner_group_and_other_bits_apply_in_turn() {
        let user = nobody();
        let mine = file(0o604, NOBODY, 0);
        assert!(generic_permission(&user, mine, MAY_READ | MAY_WRITE).is_ok());
        // The owner's bits are the only ones that count for the owner.
        let locked_out = file(0o066, NOBODY, NOBODY);
        assert_eq!(
            generic_permission(&user, locked_out, MAY_READ),
            Err(Errno::EACCES)
        );
        let group = file(0o640, 0, NOBODY);
        assert!(generic_permission(&user, group, MAY_READ).is_ok());
        assert_eq!(
            generic_permission(&user, group, MAY_WRITE),
            Err(Errno::EACCES)
        );
        assert_eq!(
            generic_permission(&user, file(0o600, 0, 0), MAY_READ),
            Err(Errno::EACCES)
        );
    }

    #[test]
    fn root_overrides_all_but_running_what_no_one_may_run() {
        let root = Cred::root();
        assert!(generic_permission(&root, file(0o000, 5, 5), MAY_READ | MAY_WRITE).is_ok());
        assert_eq!(
            generic_permission(&root, file(0o644, 0, 0), MAY_EXEC),
            Err(Errno::EACCES)
        );
        assert!(generic_permission(&root, file(0o100, 5, 5), MAY_EXEC).is_ok());
        assert!(generic_permission(&root, dir(0o000, 5, 5), MAY_EXEC).is_ok());
        // Root with its effective id dropped has no capabilities.
        let dropped = root.setresuid((None, Some(NOBODY), None)).unwrap();
        assert_eq!(
            generic_permission(&dropped, dir(0o700, 0, 0), MAY_EXEC),
            Err(Errno::EACCES)
        );
    }

    #[test]
    fn the_sticky_bit_keeps_others_names() {
        let user = nobody();
        let tmp = dir(0o1777, 0, 0);
        assert_eq!(
            may_delete_sticky(&user, tmp, file(0o644, 0, 0)),
            Err(Errno::EPERM)
        );
        assert!(may_delete_sticky(&user, tmp, file(0o644, NOBODY, 0)).is_ok());
        assert!(may_delete_sticky(&user, dir(0o777, 0, 0), file(0o644, 0, 0)).is_ok());
        assert!(may_delete_sticky(&Cred::root(), tmp, file(0o644, 5, 5)).is_ok());
    }

    #[test]
    fn chmod_and_chown_belong_to_the_owner() {
        let user = nobody();
        assert_eq!(chmod(&user, file(0o644, 0, 0), 0o777), Err(Errno::EPERM));
        assert_eq!(chmod(&user, file(0o644, NOBODY, 0), 0o2755), Ok(0o755));
        assert_eq!(
            chmod(&user, file(0o644, NOBODY, NOBODY), 0o2755),
            Ok(0o2755)
        );
        let mine = file(0o644, NOBODY, NOBODY);
        assert_eq!(chown(&user, mine, Some(0), None), Err(Errno::EPERM));
        assert!(chown(&user, mine, Some(NOBODY), Some(NOBODY)).is_ok());
        assert_eq!(chown(&user, mine, None, Some(0)), Err(Errno::EPERM));
        assert!(chown(&Cred::root(), mine, Some(1), Some(2)).is_ok());
    }

    #[test]
    fn a_set_group_id_directory_hands_down_its_group() {
        let user = nobody();
        let shared = dir(0o2775, 0, 50);
        let f = init_owner(&user, shared, 0o100644);
        assert_eq!((f.uid, f.gid, f.mode), (NOBODY, 50, 0o100644));
        let d = init_owner(&user, shared, S_IFDIR | 0o755);
        assert_eq!(d.mode, S_IFDIR | 0o2755);
        let plain = init_owner(&user, dir(0o755, 0, 50), 0o100644);
        assert_eq!(plain.gid, NOBODY);
    }
}
