//! `#!` scripts (Linux: `fs/binfmt_script.c`): a file that starts with
//! `#!` names the program that runs it. exec reads the first line, runs
//! the interpreter instead, and passes it the optional argument and the
//! script's path before the caller's arguments after `argv[0]`:
//! `#!/bin/sh -e` run as `./s a b` becomes `/bin/sh -e ./s a b`.

/// How much of the file the `#!` line may take (Linux: `BINPRM_BUF_SIZE`).
pub const BINPRM_BUF_SIZE: usize = 256;

/// A parsed `#!` line: the interpreter and its one optional argument.
#[derive(Debug, PartialEq, Eq)]
pub struct Shebang<'a> {
    /// The interpreter's path, what exec runs instead of the script.
    pub interp: &'a [u8],
    /// The one optional argument after it, inner blanks kept.
    pub arg: Option<&'a [u8]>,
}

/// Does `b` separate words on a `#!` line? Only space and tab, as Linux.
fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// The `#!` line of `head` (the file's first bytes), or None if the file
/// is no script. As Linux: the line ends at a newline or at
/// `BINPRM_BUF_SIZE`; if it is cut there, the interpreter's name must have
/// ended before the cut (else ENOEXEC, returned as `Err(())`); everything
/// after the name but for the blanks around it is one argument; a line
/// with no interpreter is ENOEXEC.
pub fn parse(head: &[u8]) -> Option<Result<Shebang<'_>, ()>> {
    let rest = head.strip_prefix(b"#!")?;
    let head = &head[..head.len().min(BINPRM_BUF_SIZE)];
    let rest = &rest[..rest.len().min(head.len().saturating_sub(2))];
    let (line, cut) = match rest.iter().position(|&b| b == b'\n') {
        Some(nl) => (&rest[..nl], false),
        None => (rest, head.len() == BINPRM_BUF_SIZE),
    };
    let start = line.iter().position(|&b| !is_blank(b))?;
    let line = &line[start..];
    let end = line.iter().position(|&b| is_blank(b));
    if end.is_none() && cut {
        return Some(Err(()));
    }
    let interp = &line[..end.unwrap_or(line.len())];
    let arg = end
        .map(|e| line[e..].trim_ascii())
        .filter(|a| !a.is_empty());
    Some(Ok(Shebang { interp, arg }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok<'a>(interp: &'a str, arg: Option<&'a str>) -> Option<Result<Shebang<'a>, ()>> {
        Some(Ok(Shebang {
            interp: interp.as_bytes(),
            arg: arg.map(str::as_bytes),
        }))
    }

    #[test]
    fn interpreter_and_one_argument() {
        assert_eq!(parse(b"#!/bin/sh\necho\n"), ok("/bin/sh", None));
        assert_eq!(parse(b"#! /bin/sh -e \nx"), ok("/bin/sh", Some("-e")));
        // Everything after the name is one argument, inner blanks kept.
        assert_eq!(
            parse(b"#!/usr/bin/env python3 -u\n"),
            ok("/usr/bin/env", Some("python3 -u"))
        );
        assert_eq!(parse(b"#!/bin/busybox\tsh"), ok("/bin/busybox", Some("sh")));
    }

    #[test]
    fn not_a_script_or_no_interpreter() {
        assert_eq!(parse(b"\x7fELF"), None);
        assert_eq!(parse(b"#"), None);
        // "#!" with nothing after it: no interpreter, ENOEXEC.
        assert_eq!(parse(b"#!\n"), None);
        assert_eq!(parse(b"#!   \t\n"), None);
    }

    #[test]
    fn a_line_longer_than_the_buffer() {
        // The name fits and is followed by a blank: the argument is cut.
        let mut long = b"#!/bin/sh ".to_vec();
        long.resize(300, b'x');
        let parsed = parse(&long).unwrap().unwrap();
        assert_eq!(parsed.interp, b"/bin/sh");
        assert_eq!(parsed.arg.unwrap().len(), BINPRM_BUF_SIZE - 10);
        // The name itself runs past the buffer: ENOEXEC.
        let mut name = b"#!/".to_vec();
        name.resize(300, b'a');
        assert_eq!(parse(&name), Some(Err(())));
    }
}
