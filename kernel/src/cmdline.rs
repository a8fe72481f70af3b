//! The kernel command line (`/chosen/bootargs`): space-separated `flag` and
//! `key=value` words, as Linux's `parse_args` reads them (without quoting).
//! Pure logic, host-tested.

/// The whole command line, borrowed from the DTB's `/chosen/bootargs`
/// (Linux's `boot_command_line`).
#[derive(Copy, Clone, Debug)]
pub struct Cmdline<'a>(pub &'a str);

impl<'a> Cmdline<'a> {
    /// The value of the last `key=value` word (later words win, as in Linux).
    pub fn get(&self, key: &str) -> Option<&'a str> {
        self.0
            .split_ascii_whitespace()
            .filter_map(|w| w.split_once('='))
            .filter(|(k, _)| *k == key)
            .map(|(_, v)| v)
            .next_back()
    }

    /// `initrd=<start>,<size>` (Linux's `early_initrd`): where a boot loader
    /// that could not say so in the DTB put the initrd. Numbers are hex with
    /// `0x`, or decimal; the size may end in K or M.
    pub fn initrd(&self) -> Option<(u64, u64)> {
        let (start, size) = self.get("initrd")?.split_once(',')?;
        Some((parse_number(start)?, parse_number(size)?))
    }

    /// Whether the bare word `flag` appears.
    pub fn has(&self, flag: &str) -> bool {
        self.0.split_ascii_whitespace().any(|w| w == flag)
    }
}

/// `0x1f`, `31`, `4K`, `2M`.
fn parse_number(s: &str) -> Option<u64> {
    let (digits, shift) = match s.as_bytes().last()? {
        b'K' | b'k' => (&s[..s.len() - 1], 10),
        b'M' | b'm' => (&s[..s.len() - 1], 20),
        _ => (s, 0),
    };
    let n = match digits.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok()?,
        None => digits.parse().ok()?,
    };
    n.checked_mul(1 << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_values() {
        let c = Cmdline("  ktest panic=test  fault_around_bytes=4096 ktest=x");
        assert!(c.has("ktest"));
        assert!(!c.has("panic"));
        assert!(!c.has("test"));
        assert_eq!(c.get("panic"), Some("test"));
        assert_eq!(c.get("fault_around_bytes"), Some("4096"));
        assert_eq!(c.get("missing"), None);
    }

    #[test]
    fn initrd_location() {
        assert_eq!(
            Cmdline("initrd=0x41000000,636").initrd(),
            Some((0x4100_0000, 636))
        );
        assert_eq!(
            Cmdline("x initrd=0x41000000,4M").initrd(),
            Some((0x4100_0000, 4 << 20))
        );
        assert_eq!(Cmdline("initrd=1024,2K").initrd(), Some((1024, 2048)));
        assert_eq!(Cmdline("initrd=0x41000000").initrd(), None);
        assert_eq!(Cmdline("initrd=0xzz,5").initrd(), None);
        assert_eq!(Cmdline("").initrd(), None);
    }

    #[test]
    fn last_value_wins_and_empty_values() {
        let c = Cmdline("a=1 a=2 b= c");
        assert_eq!(c.get("a"), Some("2"));
        assert_eq!(c.get("b"), Some(""));
        assert_eq!(c.get("c"), None);
        assert!(Cmdline("").get("a").is_none());
    }
}
