//! Credentials: a process's user and group ids and its capability sets,
//! how the set*id(2) calls and exec change them, and who may look into
//! whom (Linux: `struct cred`, `kernel/sys.c` `__sys_setresuid` and
//! friends, `security/commoncap.c` `cap_task_fix_setuid`,
//! `cap_bprm_creds_from_file`, `kernel/ptrace.c`
//! `__ptrace_may_access`).
//!
//! Where we simplify: credentials are kept per process (Linux keeps them
//! per thread, and glibc's set*id calls make every thread's the same);
//! there are no user namespaces and no file capabilities. What files
//! allow these credentials is `fs/vfs/permission.rs`.

use alloc::sync::Arc;
pub use uapi::capability::{
    CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER, CAP_FSETID, CAP_IPC_LOCK,
    CAP_IPC_OWNER, CAP_KILL, CAP_SETGID, CAP_SETUID, CAP_SYS_ADMIN, CAP_SYS_PTRACE,
    CAP_SYS_RESOURCE, CAP_SYS_TIME,
};
use uapi::capability::{CAP_MAC_OVERRIDE, CAP_MKNOD};
pub use uapi::limits::NGROUPS_MAX;
pub use uapi::stat::{S_ISGID, S_ISUID};

/// A process's capability sets, one bit per capability (Linux:
/// `kernel_cap_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    /// The capabilities permission checks look at (`cap_effective`).
    pub effective: u64,
    /// The most the process may make effective (`cap_permitted`).
    pub permitted: u64,
    /// The capabilities that can pass across an exec (`cap_inheritable`).
    pub inheritable: u64,
}

impl Caps {
    /// Every capability Linux 6.12 knows: 0..=CAP_CHECKPOINT_RESTORE (40).
    pub const FULL_SET: u64 = (1 << 41) - 1;
    /// What root holds after exec (Linux: `cap_bprm_creds_from_file` for
    /// uid 0): everything effective and permitted, nothing inheritable.
    pub const ROOT: Caps = Caps {
        effective: Caps::FULL_SET,
        permitted: Caps::FULL_SET,
        inheritable: 0,
    };

    /// The sets `new` may replace `self` (Linux: `cap_capset`): nothing
    /// gained in permitted, inheritable within the old inheritable and
    /// permitted, effective within the new permitted. Capabilities past
    /// the last one Linux knows are dropped, as Linux's `cap_valid` mask.
    pub fn set(&self, new: Caps) -> Option<Caps> {
        let new = Caps {
            effective: new.effective & Caps::FULL_SET,
            permitted: new.permitted & Caps::FULL_SET,
            inheritable: new.inheritable & Caps::FULL_SET,
        };
        let allowed = new.permitted & !self.permitted == 0
            && new.inheritable & !(self.inheritable | self.permitted) == 0
            && new.effective & !new.permitted == 0;
        allowed.then_some(new)
    }
}

/// What an fsuid of 0 historically meant, which a change of fsuid to or
/// from 0 gives or takes away (Linux: `CAP_FS_MASK`).
const CAP_FS_MASK: u64 = 1 << CAP_CHOWN
    | 1 << CAP_MKNOD
    | 1 << CAP_DAC_OVERRIDE
    | 1 << CAP_DAC_READ_SEARCH
    | 1 << CAP_FOWNER
    | 1 << CAP_FSETID
    | 1 << CAP_MAC_OVERRIDE;

/// A process's credentials (Linux: `struct cred`): real, effective, saved
/// and file-system user and group ids, the supplementary groups and the
/// capability sets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cred {
    /// Real user id: who the process is.
    pub uid: u32,
    /// Effective user id: whom it acts as.
    pub euid: u32,
    /// Saved user id: what it may go back to.
    pub suid: u32,
    /// File-system user id: whom it acts as towards files.
    pub fsuid: u32,
    /// Real group id.
    pub gid: u32,
    /// Effective group id.
    pub egid: u32,
    /// Saved group id.
    pub sgid: u32,
    /// File-system group id.
    pub fsgid: u32,
    /// Supplementary groups, sorted (Linux: `group_info`, sorted by
    /// `groups_sort` so `in_group_p` can search it); shared between the
    /// copies fork and the set*id calls make.
    pub groups: Arc<[u32]>,
    /// The capability sets.
    pub caps: Caps,
}

/// The three ids a set*id call may change, `None` for "leave it" (the C
/// calls' -1).
pub type Ids = (Option<u32>, Option<u32>, Option<u32>);

impl Cred {
    /// init's: root, no supplementary groups, every capability.
    pub fn root() -> Cred {
        Cred {
            uid: 0,
            euid: 0,
            suid: 0,
            fsuid: 0,
            gid: 0,
            egid: 0,
            sgid: 0,
            fsgid: 0,
            groups: Arc::from([]),
            caps: Caps::ROOT,
        }
    }

    /// Is `cap` in the effective set (Linux: `capable`)?
    pub fn capable(&self, cap: u32) -> bool {
        self.caps.effective & (1 << cap) != 0
    }

    /// Is `gid` the fsgid or a supplementary group (Linux: `in_group_p`)?
    pub fn in_group(&self, gid: u32) -> bool {
        self.fsgid == gid || self.groups.binary_search(&gid).is_ok()
    }

    /// setgroups(2) (Linux: `may_setgroups`, `set_groups`): the list,
    /// sorted, needs CAP_SETGID. None for EPERM.
    pub fn setgroups(&self, list: &[u32]) -> Option<Cred> {
        if !self.capable(CAP_SETGID) {
            return None;
        }
        let mut sorted = alloc::vec::Vec::from(list);
        sorted.sort_unstable();
        Some(Cred {
            groups: Arc::from(sorted),
            ..self.clone()
        })
    }

    /// Could an unprivileged caller take `id`: is it one of `of` (its
    /// current real, effective and saved ids)?
    fn one_of(id: Option<u32>, of: [u32; 3]) -> bool {
        id.is_none_or(|id| of.contains(&id))
    }

    /// setresuid(2) (Linux: `__sys_setresuid`): each id given must be one
    /// of the current three, unless CAP_SETUID; the fsuid follows the
    /// euid. None for EPERM.
    pub fn setresuid(&self, (r, e, s): Ids) -> Option<Cred> {
        let ids = [self.uid, self.euid, self.suid];
        let allowed = [r, e, s].iter().all(|&id| Self::one_of(id, ids));
        if !allowed && !self.capable(CAP_SETUID) {
            return None;
        }
        let mut new = self.clone();
        new.uid = r.unwrap_or(self.uid);
        new.euid = e.unwrap_or(self.euid);
        new.suid = s.unwrap_or(self.suid);
        new.fsuid = new.euid;
        Some(self.fix_setuid(new))
    }

    /// setreuid(2) (Linux: `__sys_setreuid`): the real id may become the
    /// effective one, the effective any of the three, unless CAP_SETUID; a
    /// change of the real id, or of the effective one away from the real,
    /// saves the new effective id.
    pub fn setreuid(&self, r: Option<u32>, e: Option<u32>) -> Option<Cred> {
        let r_ok = Self::one_of(r, [self.uid, self.euid, self.euid]);
        let e_ok = Self::one_of(e, [self.uid, self.euid, self.suid]);
        if !(self.capable(CAP_SETUID) || r_ok && e_ok) {
            return None;
        }
        let mut new = self.clone();
        new.uid = r.unwrap_or(self.uid);
        new.euid = e.unwrap_or(self.euid);
        if r.is_some() || e.is_some_and(|e| e != self.uid) {
            new.suid = new.euid;
        }
        new.fsuid = new.euid;
        Some(self.fix_setuid(new))
    }

    /// setuid(2) (Linux: `__sys_setuid`): with CAP_SETUID all three ids,
    /// else only the effective one, to the real or saved id.
    pub fn setuid(&self, uid: u32) -> Option<Cred> {
        let mut new = self.clone();
        if self.capable(CAP_SETUID) {
            new.uid = uid;
            new.suid = uid;
        } else if uid != self.uid && uid != self.suid {
            return None;
        }
        new.euid = uid;
        new.fsuid = uid;
        Some(self.fix_setuid(new))
    }

    /// setfsuid(2) (Linux: `__sys_setfsuid`): the fsuid becomes `uid` if
    /// it is one of the four ids or the caller has CAP_SETUID; it never
    /// fails, the caller learns the old fsuid either way.
    pub fn setfsuid(&self, uid: u32) -> Cred {
        let ids = [self.uid, self.euid, self.suid, self.fsuid];
        if !ids.contains(&uid) && !self.capable(CAP_SETUID) {
            return self.clone();
        }
        let mut new = self.clone();
        new.fsuid = uid;
        // Linux: `cap_task_fix_setuid(LSM_SETID_FS)`.
        if self.fsuid == 0 && uid != 0 {
            new.caps.effective &= !CAP_FS_MASK;
        } else if self.fsuid != 0 && uid == 0 {
            new.caps.effective |= CAP_FS_MASK & new.caps.permitted;
        }
        new
    }

    /// What a change of user ids does to the capabilities (Linux:
    /// `cap_emulate_setxuid`): leaving root in all three ids loses every
    /// capability; the effective set follows the effective id away from
    /// root and back.
    fn fix_setuid(&self, mut new: Cred) -> Cred {
        let was_root = self.uid == 0 || self.euid == 0 || self.suid == 0;
        let is_root = new.uid == 0 || new.euid == 0 || new.suid == 0;
        if was_root && !is_root {
            new.caps.permitted = 0;
            new.caps.effective = 0;
        }
        if self.euid == 0 && new.euid != 0 {
            new.caps.effective = 0;
        }
        if self.euid != 0 && new.euid == 0 {
            new.caps.effective = new.caps.permitted;
        }
        new
    }

    /// setresgid(2) (Linux: `__sys_setresgid`), as [`Cred::setresuid`] with
    /// CAP_SETGID; capabilities do not change.
    pub fn setresgid(&self, (r, e, s): Ids) -> Option<Cred> {
        let ids = [self.gid, self.egid, self.sgid];
        let allowed = [r, e, s].iter().all(|&id| Self::one_of(id, ids));
        if !allowed && !self.capable(CAP_SETGID) {
            return None;
        }
        let mut new = self.clone();
        new.gid = r.unwrap_or(self.gid);
        new.egid = e.unwrap_or(self.egid);
        new.sgid = s.unwrap_or(self.sgid);
        new.fsgid = new.egid;
        Some(new)
    }

    /// setregid(2) (Linux: `__sys_setregid`), as [`Cred::setreuid`].
    pub fn setregid(&self, r: Option<u32>, e: Option<u32>) -> Option<Cred> {
        let r_ok = Self::one_of(r, [self.gid, self.egid, self.egid]);
        let e_ok = Self::one_of(e, [self.gid, self.egid, self.sgid]);
        if !(self.capable(CAP_SETGID) || r_ok && e_ok) {
            return None;
        }
        let mut new = self.clone();
        new.gid = r.unwrap_or(self.gid);
        new.egid = e.unwrap_or(self.egid);
        if r.is_some() || e.is_some_and(|e| e != self.gid) {
            new.sgid = new.egid;
        }
        new.fsgid = new.egid;
        Some(new)
    }

    /// setgid(2) (Linux: `__sys_setgid`), as [`Cred::setuid`].
    pub fn setgid(&self, gid: u32) -> Option<Cred> {
        let mut new = self.clone();
        if self.capable(CAP_SETGID) {
            new.gid = gid;
            new.sgid = gid;
        } else if gid != self.gid && gid != self.sgid {
            return None;
        }
        new.egid = gid;
        new.fsgid = gid;
        Some(new)
    }

    /// setfsgid(2) (Linux: `__sys_setfsgid`), as [`Cred::setfsuid`]
    /// without the capability change.
    pub fn setfsgid(&self, gid: u32) -> Cred {
        let ids = [self.gid, self.egid, self.sgid, self.fsgid];
        if !ids.contains(&gid) && !self.capable(CAP_SETGID) {
            return self.clone();
        }
        Cred {
            fsgid: gid,
            ..self.clone()
        }
    }

    /// The credentials after exec of a program whose mode is `mode` and
    /// whose owner is `owner` (uid, gid), with no file capabilities
    /// (Linux: `bprm_fill_uid`, then `cap_bprm_creds_from_file`): a
    /// set-user-ID program makes its owner the effective id, a
    /// set-group-ID one (with group execute) its group; saved and
    /// file-system ids follow the effective ones; a process with root as
    /// real or effective id gets every capability permitted (and its
    /// inheritable ones), effective only for an effective root; anyone
    /// else has none.
    pub fn exec(&self, mode: u32, (uid, gid): (u32, u32)) -> Cred {
        let mut new = self.clone();
        if mode & S_ISUID != 0 {
            new.euid = uid;
        }
        if mode & (S_ISGID | 0o010) == S_ISGID | 0o010 {
            new.egid = gid;
        }
        new.suid = new.euid;
        new.fsuid = new.euid;
        new.sgid = new.egid;
        new.fsgid = new.egid;
        let root = new.uid == 0 || new.euid == 0;
        new.caps.permitted = if root {
            Caps::FULL_SET | self.caps.inheritable
        } else {
            0
        };
        new.caps.effective = if new.euid == 0 { new.caps.permitted } else { 0 };
        new
    }

    /// Does exec with these credentials change who the process is, so
    /// that it runs in secure mode (Linux: `bprm->secureexec`, AT_SECURE)
    /// and may not be dumped?
    pub fn secure_exec(&self) -> bool {
        self.euid != self.uid || self.egid != self.gid
    }

    /// Does going from these credentials to `new` change whom the
    /// process acts as, so that it may no longer be dumped (Linux:
    /// `commit_creds`' dumpability check)? A change of effective or
    /// file-system id, or a capability gained.
    pub fn changes_dumpability(&self, new: &Cred) -> bool {
        (self.euid, self.egid, self.fsuid, self.fsgid) != (new.euid, new.egid, new.fsuid, new.fsgid)
            || new.caps.permitted & !self.caps.permitted != 0
            || new.caps.effective & !self.caps.effective != 0
    }

    /// May a process with these credentials signal one with `target`'s
    /// (Linux: `kill_ok_by_cred`)? Its real or effective id must be the
    /// target's real or saved one, or it holds CAP_KILL.
    pub fn may_kill(&self, target: &Cred) -> bool {
        [self.uid, self.euid]
            .iter()
            .any(|id| *id == target.uid || *id == target.suid)
            || self.capable(CAP_KILL)
    }

    /// May a process with these credentials look into the files and
    /// memory of another, with credentials `target`, which is
    /// `dumpable` (PR_SET_DUMPABLE) or has no memory left (Linux:
    /// `__ptrace_may_access` in PTRACE_MODE_REALCREDS, with
    /// `cap_ptrace_access_check`)? The same ids all round, or
    /// CAP_SYS_PTRACE; then a target that is not dumpable also needs
    /// CAP_SYS_PTRACE, and one with capabilities beyond the caller's
    /// permitted set too.
    pub fn may_ptrace(&self, target: &Cred, dumpable: bool) -> bool {
        let same_ids = [target.uid, target.euid, target.suid] == [self.uid; 3]
            && [target.gid, target.egid, target.sgid] == [self.gid; 3];
        let within = target.caps.permitted & !self.caps.permitted == 0;
        self.capable(CAP_SYS_PTRACE) || (same_ids && dumpable && within)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOBODY: u32 = 65534;

    #[test]
    fn root_dropping_its_effective_id_loses_effective_caps_only() {
        let root = Cred::root();
        let nobody = root.setresuid((None, Some(NOBODY), None)).unwrap();
        assert_eq!(
            (nobody.uid, nobody.euid, nobody.suid, nobody.fsuid),
            (0, NOBODY, 0, NOBODY)
        );
        assert_eq!(nobody.caps.effective, 0);
        assert_eq!(nobody.caps.permitted, Caps::FULL_SET);
        // Back to 0: one of the ids it holds, and the caps come back.
        let back = nobody.setresuid((None, Some(0), None)).unwrap();
        assert_eq!(back.caps.effective, Caps::FULL_SET);
        assert_eq!(back, Cred::root());
    }

    #[test]
    fn leaving_root_everywhere_drops_every_capability_for_good() {
        let user = Cred::root().setuid(1000).unwrap();
        assert_eq!((user.uid, user.euid, user.suid), (1000, 1000, 1000));
        assert_eq!(user.caps.permitted, 0);
        assert_eq!(user.setuid(0), None, "no way back");
        assert_eq!(user.setresuid((None, Some(0), None)), None);
        assert_eq!(user.setreuid(Some(1000), Some(1000)), Some(user));
    }

    #[test]
    fn setreuid_saves_the_new_effective_id() {
        let root = Cred::root();
        let swapped = root.setreuid(Some(1000), Some(2000)).unwrap();
        assert_eq!(
            (swapped.uid, swapped.euid, swapped.suid),
            (1000, 2000, 2000)
        );
        // Only the effective id, set to the real one: nothing saved.
        let same = Cred::root().setreuid(None, Some(0)).unwrap();
        assert_eq!(same.suid, 0);
    }

    #[test]
    fn fsuid_moves_the_file_capabilities() {
        let root = Cred::root();
        let fs = root.setfsuid(1000);
        assert_eq!(fs.fsuid, 1000);
        assert_eq!(fs.caps.effective, Caps::FULL_SET & !CAP_FS_MASK);
        assert_eq!(fs.setfsuid(0).caps.effective, Caps::FULL_SET);
        // Without CAP_SETUID an fsuid outside the four ids is ignored.
        let user = Cred::root().setuid(1000).unwrap();
        assert_eq!(user.setfsuid(0), user);
    }

    #[test]
    fn group_ids_need_cap_setgid() {
        let user = Cred::root().setgid(100).unwrap().setuid(1000).unwrap();
        assert_eq!((user.gid, user.egid, user.sgid), (100, 100, 100));
        assert_eq!(user.setgid(0), None);
        assert_eq!(user.setresgid((Some(100), None, None)), Some(user.clone()));
        assert_eq!(user.setregid(None, Some(5)), None);
    }

    #[test]
    fn exec_gives_root_its_capabilities_and_others_none() {
        let dropped = Cred::root().setresuid((None, Some(NOBODY), None)).unwrap();
        let after = dropped.exec(0o755, (0, 0));
        assert_eq!(after.suid, NOBODY);
        // Real root: everything permitted, nothing effective.
        assert_eq!(after.caps.permitted, Caps::FULL_SET);
        assert_eq!(after.caps.effective, 0);
        let user = Cred::root().setuid(1000).unwrap().exec(0o755, (0, 0));
        assert_eq!(
            user.caps,
            Caps {
                effective: 0,
                permitted: 0,
                inheritable: 0
            }
        );
        assert_eq!(Cred::root().exec(0o755, (0, 0)), Cred::root());
    }

    #[test]
    fn a_set_user_id_program_runs_as_its_owner() {
        let user = Cred::root().setuid(1000).unwrap();
        let as_root = user.exec(0o4755, (0, 0));
        assert_eq!((as_root.uid, as_root.euid, as_root.suid), (1000, 0, 0));
        assert_eq!(as_root.caps.effective, Caps::FULL_SET);
        assert!(as_root.secure_exec());
        // Set-group-ID without group execute is a locking hint, not a
        // change of group.
        let g = user.exec(0o2745, (5, 5));
        assert_eq!(g.egid, user.egid);
        assert_eq!(user.exec(0o2755, (5, 5)).egid, 5);
        assert!(!user.exec(0o755, (0, 0)).secure_exec());
    }

    #[test]
    fn supplementary_groups_need_cap_setgid_and_count_for_in_group() {
        let root = Cred::root().setgroups(&[30, 10, 20]).unwrap();
        assert_eq!(&*root.groups, &[10, 20, 30]);
        assert!(root.in_group(20) && root.in_group(0) && !root.in_group(5));
        let user = root.setuid(1000).unwrap();
        assert!(user.in_group(10), "groups survive setuid");
        assert_eq!(user.setgroups(&[]), None);
    }

    #[test]
    fn signals_need_a_shared_id_or_cap_kill() {
        let root = Cred::root();
        let user = root.setuid(1000).unwrap();
        let other = root.setuid(2000).unwrap();
        assert!(root.may_kill(&user));
        assert!(!user.may_kill(&root));
        assert!(!user.may_kill(&other));
        assert!(user.may_kill(&user));
        // A set-user-ID program's saved id still lets its user signal it.
        let suid = user.exec(0o4755, (0, 0));
        assert!(user.may_kill(&suid));
    }

    #[test]
    fn ptrace_needs_the_same_ids_or_cap_sys_ptrace() {
        let root = Cred::root();
        let user = root.setuid(1000).unwrap();
        assert!(root.may_ptrace(&user, true));
        assert!(
            root.may_ptrace(&user, false),
            "CAP_SYS_PTRACE covers not dumpable"
        );
        assert!(user.may_ptrace(&user, true));
        assert!(!user.may_ptrace(&user, false));
        assert!(!user.may_ptrace(&root, true));
        // Effective id dropped: real ids still match, but no capability
        // for a target that is not dumpable.
        let dropped = root.setresuid((None, Some(NOBODY), None)).unwrap();
        assert!(dropped.may_ptrace(&root, true));
        assert!(!dropped.may_ptrace(&root, false));
    }
}
