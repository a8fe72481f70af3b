//! Names and paths from user space as the kernel's `str`s. Linux's names
//! are bytes, any but `/` and NUL; the kernel here handles them as UTF-8
//! strings, so a byte that is not part of valid UTF-8 travels as one
//! character of U+10FF80..=U+10FFFF (the byte plus 0x10FF00, from the
//! last private-use plane), and turns back into that byte on the way out
//! (getdents, readlink, getcwd). A name of any bytes is then found,
//! created and listed as on Linux (Python's "surrogateescape", on
//! characters a Rust `String` may hold).

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

/// The character standing for byte `b` (0x80..=0xff) is `ESCAPE + b`.
const ESCAPE: u32 = 0x10_ff00;

/// A user name's bytes as a string, each byte outside valid UTF-8
/// escaped.
pub fn from_bytes(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => {
            let bytes = e.into_bytes();
            let mut out = String::with_capacity(bytes.len() + 8);
            for chunk in bytes.utf8_chunks() {
                out.push_str(chunk.valid());
                for &b in chunk.invalid() {
                    out.push(char::from_u32(ESCAPE + u32::from(b)).expect("a valid character"));
                }
            }
            out
        }
    }
}

/// The bytes a string made by `from_bytes` came from.
pub fn to_bytes(s: &str) -> Cow<'_, [u8]> {
    let escaped = |c: char| (ESCAPE + 0x80..=ESCAPE + 0xff).contains(&u32::from(c));
    if !s.chars().any(escaped) {
        return Cow::Borrowed(s.as_bytes());
    }
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        if escaped(c) {
            out.push((u32::from(c) - ESCAPE) as u8);
        } else {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn utf8_names_are_unchanged() {
        let s = from_bytes(b"caf\xc3\xa9/x".to_vec());
        assert_eq!(s, "café/x");
        assert!(matches!(to_bytes(&s), Cow::Borrowed(_)));
    }

    #[test]
    fn any_bytes_go_there_and_back() {
        for b in 1..=255u8 {
            let name = vec![b'a', b, b'z'];
            let s = from_bytes(name.clone());
            assert_eq!(&*to_bytes(&s), &name[..], "byte {b:#x}");
        }
        // A lone continuation byte and a cut sequence are two names.
        let (a, b) = (from_bytes(vec![0x80]), from_bytes(vec![0xc3]));
        assert_ne!(a, b);
        assert_eq!(&*to_bytes(&a), &[0x80]);
        let mixed = vec![0xff, b'/', 0xc3, 0xa9, 0xfe];
        assert_eq!(&*to_bytes(&from_bytes(mixed.clone())), &mixed[..]);
    }
}
