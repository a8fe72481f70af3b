//! The kernel command line (`/chosen/bootargs`): space-separated `flag` and
//! `key=value` words, as Linux's `parse_args` reads them (without quoting).
//! Pure logic, host-tested.

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

    /// Whether the bare word `flag` appears.
    pub fn has(&self, flag: &str) -> bool {
        self.0.split_ascii_whitespace().any(|w| w == flag)
    }
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
    fn last_value_wins_and_empty_values() {
        let c = Cmdline("a=1 a=2 b= c");
        assert_eq!(c.get("a"), Some("2"));
        assert_eq!(c.get("b"), Some(""));
        assert_eq!(c.get("c"), None);
        assert!(Cmdline("").get("a").is_none());
    }
}
