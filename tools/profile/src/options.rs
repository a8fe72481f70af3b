//! The command line: profile's own options, and everything else passed on
//! to qemu-run.sh as it is.

use std::path::PathBuf;

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// `--iter-syscall NR`: entries of this system call delimit iterations.
    pub iter_syscall: u64,
    /// `--every K`: only every K-th of them, from the first.
    pub every: u64,
    /// `--span NR`: measure from one entry of this call to the next.
    pub span_syscall: u64,
    /// `--user BIN`: the user program whose `svc`s and functions to read;
    /// by default the program `--run` or `--append "... -- run PROG"` names,
    /// from build/rootfs-user.
    pub user: Option<PathBuf>,
    /// `--top N`: how many functions each list shows.
    pub top: usize,
    /// `--out DIR`: also write DIR/report.txt and DIR/stacks.txt.
    pub out: Option<PathBuf>,
    /// Everything else, for qemu-run.sh.
    pub qemu_run: Vec<String>,
}

/// What to do.
#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    /// Profile a boot.
    Profile(Options),
    /// Print the usage text.
    Help,
}

/// Where `make build` puts the user programs that go into the initrd.
const ROOTFS_USER: &str = "build/rootfs-user";

/// Parses the arguments after the program's name.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Command, String> {
    let mut options = Options {
        iter_syscall: 233,
        every: 1,
        span_syscall: 113,
        user: None,
        top: 30,
        out: None,
        qemu_run: Vec::new(),
    };
    let mut run_program: Option<String> = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--iter-syscall" => options.iter_syscall = number(&arg, &value()?)?,
            "--every" => {
                options.every = number(&arg, &value()?)?;
                if options.every == 0 {
                    return Err("--every must be at least 1".into());
                }
            }
            "--span" => options.span_syscall = number(&arg, &value()?)?,
            "--user" => options.user = Some(value()?.into()),
            "--top" => options.top = number(&arg, &value()?)? as usize,
            "--out" => options.out = Some(value()?.into()),
            "-h" | "--help" => return Ok(Command::Help),
            "--run" | "--append" => {
                let value = value()?;
                let program = if arg == "--run" {
                    Some(value.as_str())
                } else {
                    value.split_once("-- run ").map(|(_, rest)| rest)
                };
                if let Some(program) = program {
                    run_program = Some(program.split(' ').next().unwrap_or("").to_owned());
                }
                options.qemu_run.push(arg);
                options.qemu_run.push(value);
            }
            _ => options.qemu_run.push(arg),
        }
    }
    if options.user.is_none() {
        options.user = run_program.map(|program| format!("{ROOTFS_USER}{program}").into());
    }
    Ok(Command::Profile(options))
}

/// `value` as a number, or an error naming `option`.
fn number(option: &str, value: &str) -> Result<u64, String> {
    value
        .parse()
        .map_err(|_| format!("{option}: not a number: {value}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The options `args` parse to, which must be a profile's.
    fn parse_ok(args: &[&str]) -> Options {
        match parse(args.iter().map(|s| s.to_string())) {
            Ok(Command::Profile(options)) => options,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    #[test]
    fn defaults_and_pass_through() {
        let o = parse_ok(&[
            "--smp",
            "1",
            "--mem",
            "1G",
            "--icount",
            "--append",
            "thp_shmem=2M:always -- run /bin/bench/finish_fault size=65536 iters=20",
        ]);
        assert_eq!(
            (o.iter_syscall, o.every, o.span_syscall, o.top),
            (233, 1, 113, 30)
        );
        assert_eq!(o.out, None);
        assert_eq!(
            o.qemu_run,
            [
                "--smp",
                "1",
                "--mem",
                "1G",
                "--icount",
                "--append",
                "thp_shmem=2M:always -- run /bin/bench/finish_fault size=65536 iters=20"
            ]
        );
        assert_eq!(
            o.user,
            Some(PathBuf::from("build/rootfs-user/bin/bench/finish_fault"))
        );
    }

    #[test]
    fn own_options_are_not_passed_on() {
        let o = parse_ok(&[
            "--iter-syscall",
            "113",
            "--every",
            "2",
            "--span",
            "64",
            "--top",
            "5",
            "--out",
            "/tmp/p",
            "--run",
            "/bin/bench/lat_pagefault pages=512",
            "--smp",
            "1",
        ]);
        assert_eq!(
            (o.iter_syscall, o.every, o.span_syscall, o.top),
            (113, 2, 64, 5)
        );
        assert_eq!(o.out, Some(PathBuf::from("/tmp/p")));
        assert_eq!(
            o.qemu_run,
            ["--run", "/bin/bench/lat_pagefault pages=512", "--smp", "1"]
        );
        assert_eq!(
            o.user,
            Some(PathBuf::from("build/rootfs-user/bin/bench/lat_pagefault"))
        );
    }

    #[test]
    fn user_binary_comes_from_the_last_program_named_unless_given() {
        let o = parse_ok(&["--append", "strace", "--smp", "1"]);
        assert_eq!(o.user, None);
        let o = parse_ok(&["--run", "/bin/a", "--append", "x -- run /bin/b c"]);
        assert_eq!(o.user, Some(PathBuf::from("build/rootfs-user/bin/b")));
        let o = parse_ok(&["--user", "prog.elf", "--run", "/bin/a"]);
        assert_eq!(o.user, Some(PathBuf::from("prog.elf")));
    }

    #[test]
    fn rejects_bad_values() {
        let parse_err = |args: &[&str]| parse(args.iter().map(|s| s.to_string())).unwrap_err();
        assert_eq!(parse_err(&["--every"]), "--every needs a value");
        assert_eq!(parse_err(&["--every", "0"]), "--every must be at least 1");
        assert_eq!(parse_err(&["--top", "x"]), "--top: not a number: x");
        assert_eq!(parse(["-h".to_string()]), Ok(Command::Help));
    }
}
