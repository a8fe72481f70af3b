//! The options of a /proc instance, given to mount(2) as `hidepid=2,...`
//! or one by one to fsconfig(2) (Linux: `proc_parse_param` and
//! `proc_show_options` in `fs/proc/root.c`): `hidepid=` who sees whose
//! `/proc/PID`, `gid=` a group exempt from it, `subset=pid` a /proc of
//! process directories only.

use alloc::format;
use alloc::string::String;

use crate::errno::{Errno, KResult};

/// `hidepid=`: which processes' directories a caller may see or enter
/// (Linux: `enum proc_hidepid`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HidePid {
    /// `off` (0): everyone's, as without the option.
    #[default]
    Off,
    /// `noaccess` (1): every directory is listed, but only those of
    /// processes the caller may trace can be entered.
    NoAccess,
    /// `invisible` (2): only the directories of processes the caller may
    /// trace, or all for the `gid=` group.
    Invisible,
    /// `ptraceable` (4): only those of processes the caller may trace,
    /// whatever its group.
    Ptraceable,
}

impl HidePid {
    /// The value as a number (0, 1, 2, 4) or a name; EINVAL for any other.
    fn parse(value: &str) -> KResult<HidePid> {
        Ok(match value {
            "0" | "off" => HidePid::Off,
            "1" | "noaccess" => HidePid::NoAccess,
            "2" | "invisible" => HidePid::Invisible,
            "4" | "ptraceable" => HidePid::Ptraceable,
            _ => return Err(Errno::EINVAL),
        })
    }

    /// The name /proc/mounts shows (Linux: `hidepid2str`).
    fn name(self) -> &'static str {
        match self {
            HidePid::Off => "off",
            HidePid::NoAccess => "noaccess",
            HidePid::Invisible => "invisible",
            HidePid::Ptraceable => "ptraceable",
        }
    }
}

/// A /proc instance's options (Linux: the fields of `proc_fs_info` they
/// set).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcOptions {
    /// `hidepid=`.
    pub hidepid: HidePid,
    /// `gid=`: the group whose members see every directory under
    /// `hidepid=invisible`; None for root's group 0, the default.
    pub gid: Option<u32>,
    /// `subset=pid`: only the process directories, `self` and
    /// `thread-self` are there.
    pub subset_pid: bool,
}

impl ProcOptions {
    /// Takes one option, `key` with `value` (None for a flag or a value
    /// that is no string). EINVAL for an unknown key, a missing or bad
    /// value, with the message Linux logs for it.
    pub fn set(&mut self, key: &str, value: Option<&str>) -> Result<(), String> {
        let known = matches!(key, "hidepid" | "gid" | "subset");
        let Some(value) = value.filter(|_| known) else {
            return Err(if known {
                format!("proc: Bad value for '{key}'")
            } else {
                format!("proc: Unknown parameter '{key}'")
            });
        };
        match key {
            "hidepid" => {
                self.hidepid = HidePid::parse(value)
                    .map_err(|_| format!("proc: unknown value of hidepid - {value}\n"))?
            }
            "gid" => {
                let gid: u32 = value
                    .parse()
                    .map_err(|_| format!("proc: Bad value for '{key}'"))?;
                self.gid = (gid != 0).then_some(gid);
            }
            // A list; Linux knows only `pid`.
            _ => {
                for part in value.split(',').filter(|p| !p.is_empty()) {
                    if part != "pid" {
                        return Err(format!("proc: unsupported subset option - {part}\n"));
                    }
                    self.subset_pid = true;
                }
            }
        }
        Ok(())
    }

    /// The options of mount(2)'s data, comma-separated `key=value` pairs.
    pub fn parse(data: &str) -> KResult<ProcOptions> {
        let mut options = ProcOptions::default();
        for opt in data.split(',').filter(|o| !o.is_empty()) {
            let (key, value) = match opt.split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => (opt, None),
            };
            options.set(key, value).map_err(|_| Errno::EINVAL)?;
        }
        Ok(options)
    }

    /// What /proc/mounts shows after `rw,relatime`, each with its leading
    /// comma (Linux: `proc_show_options`).
    pub fn show(&self) -> String {
        let mut s = String::new();
        if let Some(gid) = self.gid {
            s += &format!(",gid={gid}");
        }
        if self.hidepid != HidePid::Off {
            s += &format!(",hidepid={}", self.hidepid.name());
        }
        if self.subset_pid {
            s += ",subset=pid";
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidepid_takes_numbers_and_names_and_shows_names() {
        for (given, shown) in [
            ("hidepid=2", ",hidepid=invisible"),
            ("hidepid=invisible", ",hidepid=invisible"),
            ("hidepid=1", ",hidepid=noaccess"),
            ("hidepid=4", ",hidepid=ptraceable"),
            ("hidepid=0", ""),
            ("hidepid=off,gid=5,subset=pid", ",gid=5,subset=pid"),
        ] {
            let o = ProcOptions::parse(given).unwrap();
            assert_eq!(o.show(), shown, "{given}");
        }
    }

    #[test]
    fn bad_options_are_einval() {
        for bad in [
            "hidepid=3",
            "hidepid=5",
            "hidepid=visible",
            "hidepid",
            "gid=-1",
            "gid=x",
            "subset=sys",
            "size=1m",
        ] {
            assert_eq!(ProcOptions::parse(bad), Err(Errno::EINVAL), "{bad}");
        }
        assert_eq!(ProcOptions::parse(""), Ok(ProcOptions::default()));
        let mut o = ProcOptions::default();
        assert_eq!(
            o.set("hidepid", Some("3")),
            Err(String::from("proc: unknown value of hidepid - 3\n"))
        );
        assert_eq!(
            o.set("hidepid", None),
            Err(String::from("proc: Bad value for 'hidepid'"))
        );
        assert_eq!(
            o.set("k", Some("1")),
            Err(String::from("proc: Unknown parameter 'k'"))
        );
    }
}
