//! `mkinitrd -o OUT.cpio [--dir HOST_DIR[:DEST]]... [--file HOST_FILE:DEST[:MODE]]...`:
//! packs host files into the newc cpio archive that faultline unpacks as its
//! initramfs (Linux: `usr/gen_init_cpio.c`, driven by `usr/gen_initramfs.sh`).
//!
//! This file owns the whole tool: the command line, the tree of entries it
//! describes, and the newc writer. The reader is the kernel's
//! `kernel/src/fs/cpio.rs`, which documents the format; the tests here read
//! every archive they make back through it.
//!
//! - `--dir HOST_DIR[:DEST]` packs everything under `HOST_DIR` (directories,
//!   regular files and symlinks, recursively) under `DEST`, by default the
//!   root. `DEST` itself gets `HOST_DIR`'s permissions.
//! - `--file HOST_FILE:DEST[:MODE]` packs one file (following a symlink) as
//!   `DEST`, with `MODE` (octal, e.g. `755`) or else the host file's
//!   permissions.
//!
//! Missing parent directories are added with mode 0755, each directory comes
//! once and before its contents, and the archive ends with `TRAILER!!!`.
//! Names have no leading `/` (`etc/init`), as `find . | cpio` writes them,
//! and the root has no entry of its own. Two `--dir`s may fill the same
//! directory (the later one's permissions win); any other path given twice
//! is an error.
//!
//! The same inputs always give the same bytes, whatever the host's clock,
//! users or directory order: entries are sorted by path, uid, gid and mtime
//! are 0, and inodes are numbered 1, 2, ... in archive order.
//!
//! Where we simplify:
//! - Hard links are packed as separate files, each with its own copy of the
//!   data: a regular file with `nlink >= 2` would ask the unpacker to link
//!   names together, which the kernel does not do.
//! - Device nodes, FIFOs and sockets are an error (`gen_init_cpio` can make
//!   device nodes; faultline has no use for them).
//! - Host paths cannot contain `:`, which separates the parts of an argument.

use std::collections::BTreeMap;
use std::env;
use std::ffi::OsString;
use std::fs;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str =
    "usage: mkinitrd -o OUT.cpio [--dir HOST_DIR[:DEST]]... [--file HOST_FILE:DEST[:MODE]]...";

/// File type bits of `st_mode` (Linux: `include/uapi/linux/stat.h`).
const S_IFDIR: u32 = 0o040_000;
const S_IFREG: u32 = 0o100_000;
const S_IFLNK: u32 = 0o120_000;
/// The permission bits, set-id and sticky bits of `st_mode`.
const PERM_MASK: u32 = 0o7777;
/// Permissions of a parent directory no argument names.
const PARENT_DIR_PERM: u32 = 0o755;
/// Symlink permissions are never checked; Linux always shows 0777.
const SYMLINK_PERM: u32 = 0o777;

const MAGIC: &[u8] = b"070701";
const TRAILER_NAME: &str = "TRAILER!!!";
/// Header plus name, and data, are each padded to this alignment.
const ALIGN: usize = 4;

/// A path in the archive, as its components: `["etc", "init"]` is
/// `etc/init`, and the empty path is the root. Sorting these sorts a
/// directory right before its contents.
type ArchivePath = Vec<String>;

#[derive(Debug, PartialEq, Eq)]
struct Options {
    output: PathBuf,
    sources: Vec<Source>,
}

#[derive(Debug, PartialEq, Eq)]
enum Source {
    /// `--dir HOST_DIR[:DEST]`
    Dir { host: PathBuf, dest: ArchivePath },
    /// `--file HOST_FILE:DEST[:MODE]`
    File {
        host: PathBuf,
        dest: ArchivePath,
        perm: Option<u32>,
    },
}

#[derive(Debug)]
enum Node {
    Dir { perm: u32 },
    File { perm: u32, data: Vec<u8> },
    Symlink { target: Vec<u8> },
}

fn main() -> ExitCode {
    let options = match parse_args(env::args_os().skip(1)) {
        Ok(options) => options,
        Err(err) => {
            eprintln!("mkinitrd: {err}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    // The archive is built in memory first, so a bad input leaves no
    // half-written output behind.
    let written = build(&options.sources).and_then(|archive| {
        fs::write(&options.output, archive)
            .map_err(|err| format!("{}: {err}", options.output.display()))
    });
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("mkinitrd: {err}");
            ExitCode::FAILURE
        }
    }
}

fn parse_args(args: impl IntoIterator<Item = OsString>) -> Result<Options, String> {
    let mut args = args.into_iter();
    let mut output = None;
    let mut sources = Vec::new();
    while let Some(flag) = args.next() {
        let flag = utf8(flag)?;
        let mut value = || {
            args.next()
                .ok_or_else(|| format!("{flag} needs a value"))
                .and_then(utf8)
        };
        match flag.as_str() {
            "-o" if output.is_some() => return Err("-o given twice".into()),
            "-o" => output = Some(PathBuf::from(value()?)),
            "--dir" => sources.push(parse_dir(&value()?)?),
            "--file" => sources.push(parse_file(&value()?)?),
            _ => return Err(format!("unknown argument {flag:?}")),
        }
    }
    let output = output.ok_or("-o OUT.cpio is required")?;
    Ok(Options { output, sources })
}

/// Arguments are split at `:` and become archive names, which are UTF-8.
fn utf8(arg: OsString) -> Result<String, String> {
    arg.into_string()
        .map_err(|arg| format!("argument {arg:?} is not UTF-8"))
}

/// `HOST_DIR[:DEST]`
fn parse_dir(value: &str) -> Result<Source, String> {
    let (host, dest) = match value.split(':').collect::<Vec<_>>()[..] {
        [host] => (host, ""),
        [host, dest] => (host, dest),
        _ => return Err(format!("--dir {value}: expected HOST_DIR[:DEST]")),
    };
    Ok(Source::Dir {
        host: host.into(),
        dest: parse_dest(dest)?,
    })
}

/// `HOST_FILE:DEST[:MODE]`
fn parse_file(value: &str) -> Result<Source, String> {
    let (host, dest, mode) = match value.split(':').collect::<Vec<_>>()[..] {
        [host, dest] => (host, dest, None),
        [host, dest, mode] => (host, dest, Some(mode)),
        _ => return Err(format!("--file {value}: expected HOST_FILE:DEST[:MODE]")),
    };
    let dest = parse_dest(dest)?;
    if dest.is_empty() {
        return Err(format!("--file {value}: the destination is the root"));
    }
    let perm = match mode {
        None => None,
        Some(mode) => match u32::from_str_radix(mode, 8) {
            Ok(perm) if perm <= PERM_MASK => Some(perm),
            _ => return Err(format!("--file {value}: {mode:?} is not an octal mode")),
        },
    };
    Ok(Source::File {
        host: host.into(),
        dest,
        perm,
    })
}

/// An archive path from `/a/b`, `a/b` or `./a//b`. `..` is refused: it
/// would climb out of the root the archive is unpacked into.
fn parse_dest(dest: &str) -> Result<ArchivePath, String> {
    let components: ArchivePath = dest
        .split('/')
        .filter(|component| !component.is_empty() && *component != ".")
        .map(String::from)
        .collect();
    if components.iter().any(|component| component == "..") {
        return Err(format!("destination {dest:?} contains \"..\""));
    }
    Ok(components)
}

/// The whole archive for `sources`.
fn build(sources: &[Source]) -> Result<Vec<u8>, String> {
    let mut tree = BTreeMap::new();
    for source in sources {
        match source {
            Source::Dir { host, dest } => add_host_dir(&mut tree, host, dest)?,
            Source::File { host, dest, perm } => {
                let data = fs::read(host).map_err(|err| host_error(host, err))?;
                let perm = match perm {
                    Some(perm) => *perm,
                    None => metadata(host)?.mode() & PERM_MASK,
                };
                add(&mut tree, dest.clone(), Node::File { perm, data })?;
            }
        }
    }
    add_parents(&mut tree)?;
    write_archive(&tree)
}

/// `host`, a directory, as `dest`, and everything under it.
fn add_host_dir(
    tree: &mut BTreeMap<ArchivePath, Node>,
    host: &Path,
    dest: &ArchivePath,
) -> Result<(), String> {
    let meta = metadata(host)?;
    if !meta.is_dir() {
        return Err(format!("{}: not a directory", host.display()));
    }
    // The root has no entry of its own.
    if !dest.is_empty() {
        let perm = meta.mode() & PERM_MASK;
        add(tree, dest.clone(), Node::Dir { perm })?;
    }
    let entries = fs::read_dir(host).map_err(|err| host_error(host, err))?;
    for entry in entries {
        let entry = entry.map_err(|err| host_error(host, err))?;
        let host_path = entry.path();
        let name = entry
            .file_name()
            .into_string()
            .map_err(|_| format!("{}: name is not UTF-8", host_path.display()))?;
        let mut path = dest.clone();
        path.push(name);
        // Not following symlinks: they are packed as symlinks.
        let meta = fs::symlink_metadata(&host_path).map_err(|err| host_error(&host_path, err))?;
        let file_type = meta.file_type();
        if file_type.is_dir() {
            add_host_dir(tree, &host_path, &path)?;
        } else if file_type.is_file() {
            let data = fs::read(&host_path).map_err(|err| host_error(&host_path, err))?;
            let perm = meta.mode() & PERM_MASK;
            add(tree, path, Node::File { perm, data })?;
        } else if file_type.is_symlink() {
            let target = fs::read_link(&host_path).map_err(|err| host_error(&host_path, err))?;
            let target = target.into_os_string().into_vec();
            add(tree, path, Node::Symlink { target })?;
        } else {
            return Err(format!(
                "{}: not a directory, regular file or symlink",
                host_path.display()
            ));
        }
    }
    Ok(())
}

/// Puts `node` at `path`, through any link an earlier source made for one
/// of its parents. Directories merge; anything else must be new.
fn add(
    tree: &mut BTreeMap<ArchivePath, Node>,
    path: ArchivePath,
    node: Node,
) -> Result<(), String> {
    // A directory merges into the one a link at its own path names, too.
    let path = through_links(tree, path, matches!(node, Node::Dir { .. }))?;
    match (tree.get_mut(&path), node) {
        (None, node) => {
            tree.insert(path, node);
        }
        (Some(Node::Dir { perm }), Node::Dir { perm: new_perm }) => *perm = new_perm,
        (Some(_), _) => return Err(format!("{}: given twice", path.join("/"))),
    }
    Ok(())
}

/// `path` with each parent that is a link in `tree` replaced by the link's
/// target (and the last component too if `follow_last`), as the kernel's
/// unpacker would resolve it: a merged-/usr root's `bin -> usr/bin` takes
/// another source's `bin/tests` to `usr/bin/tests`.
fn through_links(
    tree: &BTreeMap<ArchivePath, Node>,
    path: ArchivePath,
    follow_last: bool,
) -> Result<ArchivePath, String> {
    let mut path = path;
    // Linux's limit on links followed in one lookup (`MAXSYMLINKS`).
    for _ in 0..40 {
        let last = path.len().saturating_sub(usize::from(!follow_last));
        let link = (1..=last).find_map(|len| match tree.get(&path[..len]) {
            Some(Node::Symlink { target }) => Some((len, target)),
            _ => None,
        });
        let Some((len, target)) = link else {
            return Ok(path);
        };
        let target = String::from_utf8_lossy(target);
        let mut resolved: ArchivePath = if target.starts_with('/') {
            Vec::new()
        } else {
            path[..len - 1].to_vec()
        };
        for component in target.split('/') {
            match component {
                "" | "." => {}
                ".." => {
                    resolved.pop();
                }
                _ => resolved.push(component.to_string()),
            }
        }
        resolved.extend_from_slice(&path[len..]);
        path = resolved;
    }
    Err(format!("{}: too many levels of links", path.join("/")))
}

/// Adds a directory for each missing ancestor of every path; an ancestor
/// that is there must be a directory.
fn add_parents(tree: &mut BTreeMap<ArchivePath, Node>) -> Result<(), String> {
    let mut missing = Vec::new();
    for path in tree.keys() {
        for len in 1..path.len() {
            let parent = &path[..len];
            match tree.get(parent) {
                None => missing.push(parent.to_vec()),
                Some(Node::Dir { .. }) => {}
                Some(_) => {
                    return Err(format!(
                        "{}: parent {} is not a directory",
                        path.join("/"),
                        parent.join("/")
                    ))
                }
            }
        }
    }
    for parent in missing {
        tree.insert(
            parent,
            Node::Dir {
                perm: PARENT_DIR_PERM,
            },
        );
    }
    Ok(())
}

fn write_archive(tree: &BTreeMap<ArchivePath, Node>) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    for (ino, (path, node)) in (1..).zip(tree) {
        // nlink as `gen_init_cpio` writes it: 2 for a directory, whatever its
        // subdirectories, and 1 otherwise; the unpacker counts links itself.
        let (mode, nlink, data): (u32, u32, &[u8]) = match node {
            Node::Dir { perm } => (S_IFDIR | perm, 2, &[]),
            Node::File { perm, data } => (S_IFREG | perm, 1, data),
            Node::Symlink { target } => (S_IFLNK | SYMLINK_PERM, 1, target),
        };
        write_entry(&mut out, ino, mode, nlink, &path.join("/"), data)?;
    }
    write_entry(&mut out, 0, 0, 1, TRAILER_NAME, &[])?;
    Ok(out)
}

/// Appends one entry to `out`, which holds the archive from its start.
fn write_entry(
    out: &mut Vec<u8>,
    ino: u32,
    mode: u32,
    nlink: u32,
    name: &str,
    data: &[u8],
) -> Result<(), String> {
    let filesize = u32::try_from(data.len())
        .map_err(|_| format!("{name}: larger than the 4 GiB a newc entry can hold"))?;
    let namesize = u32::try_from(name.len() + 1).map_err(|_| format!("{name}: name too long"))?;
    // In header order: ino, mode, uid, gid, nlink, mtime, filesize, devmajor,
    // devminor, rdevmajor, rdevminor, namesize, check.
    let fields = [ino, mode, 0, 0, nlink, 0, filesize, 0, 0, 0, 0, namesize, 0];
    out.extend_from_slice(MAGIC);
    for field in fields {
        out.extend_from_slice(format!("{field:08X}").as_bytes());
    }
    out.extend_from_slice(name.as_bytes());
    out.push(0);
    pad(out);
    out.extend_from_slice(data);
    pad(out);
    Ok(())
}

fn pad(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(ALIGN) {
        out.push(0);
    }
}

fn metadata(host: &Path) -> Result<fs::Metadata, String> {
    fs::metadata(host).map_err(|err| host_error(host, err))
}

fn host_error(host: &Path, err: std::io::Error) -> String {
    format!("{}: {err}", host.display())
}

#[cfg(test)]
#[path = "../../../kernel/src/fs"]
mod kernel_fs {
    pub mod cpio;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel_fs::cpio::{Entry, FileType};
    use std::fs::{File, Permissions};
    use std::os::unix::fs::{symlink, PermissionsExt};
    use std::os::unix::net::UnixListener;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, SystemTime};

    /// A directory under the system temporary directory, removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new() -> Scratch {
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let name = format!(
                "mkinitrd-test-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            );
            let path = env::temp_dir().join(name);
            let _ = fs::remove_dir_all(&path);
            fs::create_dir(&path).unwrap();
            Scratch(path)
        }

        /// Makes `path` (and its parents) a directory with `perm`.
        fn dir(&self, path: &str, perm: u32) -> &Scratch {
            let host = self.0.join(path);
            fs::create_dir_all(&host).unwrap();
            fs::set_permissions(&host, Permissions::from_mode(perm)).unwrap();
            self
        }

        fn file(&self, path: &str, perm: u32, data: &[u8]) -> &Scratch {
            let host = self.0.join(path);
            fs::write(&host, data).unwrap();
            fs::set_permissions(&host, Permissions::from_mode(perm)).unwrap();
            self
        }

        fn symlink(&self, path: &str, target: &str) -> &Scratch {
            symlink(target, self.0.join(path)).unwrap();
            self
        }

        fn path(&self, path: &str) -> PathBuf {
            self.0.join(path)
        }

        /// `HOST` or `HOST:rest` for an argument, with `HOST` this directory.
        fn arg(&self, rest: &str) -> String {
            format!("{}{rest}", self.0.display())
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    /// A tree with each kind of entry, and permissions set explicitly so the
    /// umask does not matter.
    fn sample_tree() -> Scratch {
        let scratch = Scratch::new();
        scratch
            .dir("bin", 0o755)
            .file("bin/init", 0o755, b"#!init\n")
            .dir("etc", 0o750)
            .file("etc/motd", 0o644, b"hello, faultline\n")
            .file("etc/empty", 0o600, b"")
            .dir("etc/private", 0o700)
            .symlink("motd", "etc/motd");
        scratch
    }

    fn build_args(args: &[&str]) -> Result<Vec<u8>, String> {
        let mut argv = vec![OsString::from("-o"), OsString::from("unused.cpio")];
        argv.extend(args.iter().map(OsString::from));
        build(&parse_args(argv)?.sources)
    }

    /// Every entry of `archive`, failing the test on a parse error.
    fn entries(archive: &[u8]) -> Vec<Entry<'_>> {
        kernel_fs::cpio::parse(archive)
            .map(|entry| entry.unwrap())
            .collect()
    }

    /// `(name, mode, data)` of each entry.
    fn listing<'a>(entries: &[Entry<'a>]) -> Vec<(&'a str, u32, &'a [u8])> {
        entries
            .iter()
            .map(|entry| (entry.name, entry.mode, entry.data))
            .collect()
    }

    /// What every archive the tool makes must satisfy: each name once, its
    /// parent directory before it, the fixed header fields, and the trailer.
    fn check_invariants(archive: &[u8]) {
        let entries = entries(archive);
        for (index, entry) in entries.iter().enumerate() {
            assert!(!entry.name.is_empty() && !entry.name.starts_with('/'));
            assert_eq!(usize::try_from(entry.ino).unwrap(), index + 1);
            assert_eq!((entry.uid, entry.gid, entry.mtime), (0, 0, 0));
            let expected_nlink = match entry.file_type() {
                FileType::Directory => 2,
                _ => 1,
            };
            assert_eq!(entry.nlink, expected_nlink, "{}", entry.name);
            let earlier = &entries[..index];
            assert!(
                earlier.iter().all(|other| other.name != entry.name),
                "{}",
                entry.name
            );
            if let Some((parent, _)) = entry.name.rsplit_once('/') {
                let parent_first = earlier
                    .iter()
                    .any(|other| other.name == parent && other.file_type() == FileType::Directory);
                assert!(parent_first, "{} before its parent", entry.name);
            }
        }
        // The trailer's name, its NUL, and the padding that makes its 110-byte
        // header and name 124 bytes.
        assert!(archive.ends_with(b"TRAILER!!!\0\0\0\0"));
    }

    #[test]
    fn packs_a_directory_tree() {
        let tree = sample_tree();
        let archive = build_args(&["--dir", &tree.arg("")]).unwrap();
        check_invariants(&archive);
        let entries = entries(&archive);
        let expected: [(&str, u32, &[u8]); 7] = [
            ("bin", 0o040_755, b""),
            ("bin/init", 0o100_755, b"#!init\n"),
            ("etc", 0o040_750, b""),
            ("etc/empty", 0o100_600, b""),
            ("etc/motd", 0o100_644, b"hello, faultline\n"),
            ("etc/private", 0o040_700, b""),
            ("motd", 0o120_777, b"etc/motd"),
        ];
        assert_eq!(listing(&entries), expected);
        let types: Vec<FileType> = entries.iter().map(Entry::file_type).collect();
        use FileType::{Directory, Regular, Symlink};
        assert_eq!(
            types,
            [Directory, Regular, Directory, Regular, Regular, Directory, Symlink]
        );
    }

    #[test]
    fn puts_a_directory_under_its_destination() {
        let tree = Scratch::new();
        tree.dir("top", 0o711).file("top/f", 0o640, b"f");
        // `/usr/share` and `usr/share` are the same destination; the
        // directories above it get the default mode.
        for dest in [":/usr/share/top", ":usr/share/top/", ":./usr//share/top"] {
            let archive = build_args(&["--dir", &tree.arg(&format!("/top{dest}"))]).unwrap();
            check_invariants(&archive);
            let expected: [(&str, u32, &[u8]); 4] = [
                ("usr", 0o040_755, b""),
                ("usr/share", 0o040_755, b""),
                ("usr/share/top", 0o040_711, b""),
                ("usr/share/top/f", 0o100_640, b"f"),
            ];
            assert_eq!(listing(&entries(&archive)), expected, "{dest}");
        }
    }

    #[test]
    fn packs_a_file_at_its_destination_with_its_mode() {
        let host = Scratch::new();
        host.file("init", 0o640, b"ELF...").symlink("link", "init");
        let archive = build_args(&[
            "--file",
            &host.arg("/init:/sbin/init:4755"),
            "--file",
            &host.arg("/init:/etc/init.conf"),
            // A symlink given to --file is followed.
            "--file",
            &host.arg("/link:/sbin/via-link:0700"),
        ])
        .unwrap();
        check_invariants(&archive);
        let expected: [(&str, u32, &[u8]); 5] = [
            ("etc", 0o040_755, b""),
            ("etc/init.conf", 0o100_640, b"ELF..."),
            ("sbin", 0o040_755, b""),
            ("sbin/init", 0o104_755, b"ELF..."),
            ("sbin/via-link", 0o100_700, b"ELF..."),
        ];
        assert_eq!(listing(&entries(&archive)), expected);
    }

    #[test]
    fn sorts_each_directory_right_before_its_contents() {
        let tree = Scratch::new();
        // `-` sorts before `/` bytewise, so a plain string sort would put
        // `a-b` between `a` and `a/b`.
        tree.dir("a/b", 0o755)
            .file("a/b/c", 0o644, b"")
            .file("a-b", 0o644, b"")
            .file("a.b", 0o644, b"")
            .file("A", 0o644, b"");
        let archive = build_args(&["--dir", &tree.arg("")]).unwrap();
        check_invariants(&archive);
        let names: Vec<&str> = entries(&archive).iter().map(|entry| entry.name).collect();
        assert_eq!(names, ["A", "a", "a/b", "a/b/c", "a-b", "a.b"]);
    }

    #[test]
    fn merges_directories_from_several_sources() {
        let first = Scratch::new();
        first.dir("etc", 0o700).file("etc/a", 0o644, b"a");
        let second = Scratch::new();
        second.dir("etc", 0o755).file("etc/b", 0o644, b"b");
        let archive = build_args(&[
            "--dir",
            &first.arg(""),
            "--dir",
            &second.arg(":/"),
            "--file",
            &first.arg("/etc/a:/etc/c"),
        ])
        .unwrap();
        check_invariants(&archive);
        let expected: [(&str, u32, &[u8]); 4] = [
            ("etc", 0o040_755, b""),
            ("etc/a", 0o100_644, b"a"),
            ("etc/b", 0o100_644, b"b"),
            ("etc/c", 0o100_644, b"a"),
        ];
        assert_eq!(listing(&entries(&archive)), expected);
    }

    #[test]
    fn files_under_a_linked_directory_go_where_it_points() {
        let merged = Scratch::new();
        merged
            .dir("usr", 0o755)
            .dir("usr/bin", 0o755)
            .symlink("bin", "usr/bin")
            .dir("opt", 0o755)
            .symlink("opt/up", "../usr");
        let more = Scratch::new();
        more.dir("bin", 0o755).dir("bin/tests", 0o755);
        more.file("bin/tests/t", 0o755, b"t");
        let archive = build_args(&[
            "--dir",
            &merged.arg(""),
            "--dir",
            &more.arg(""),
            "--file",
            &more.arg("/bin/tests/t:/opt/up/bin/u"),
        ])
        .unwrap();
        check_invariants(&archive);
        let expected: [(&str, u32, &[u8]); 7] = [
            ("bin", 0o120_777, b"usr/bin"),
            ("opt", 0o040_755, b""),
            ("opt/up", 0o120_777, b"../usr"),
            ("usr", 0o040_755, b""),
            ("usr/bin", 0o040_755, b""),
            ("usr/bin/tests", 0o040_755, b""),
            ("usr/bin/tests/t", 0o100_755, b"t"),
        ];
        let got = listing(&entries(&archive));
        assert_eq!(got[..7], expected[..], "{got:?}");
        assert!(got.iter().any(|e| e.0 == "usr/bin/u"), "{got:?}");
    }

    #[test]
    fn refuses_conflicting_paths() {
        let host = Scratch::new();
        host.file("f", 0o644, b"").dir("d/sub", 0o755);
        let file_as_x = host.arg("/f:/x");
        let file_as_x_y = host.arg("/f:/x/y");
        let file_as_x_d = host.arg("/f:/x/d");
        let dir_as_x = host.arg(":/x");
        let d_as_x = host.arg("/d:/x");
        let cases: [(&[&str], &str); 4] = [
            (
                &["--file", &file_as_x, "--file", &file_as_x],
                "x: given twice",
            ),
            (
                &["--file", &file_as_x, "--file", &file_as_x_y],
                "x/y: parent x is not a directory",
            ),
            (
                &["--dir", &dir_as_x, "--file", &file_as_x_d],
                "x/d: given twice",
            ),
            (&["--file", &file_as_x, "--dir", &d_as_x], "x: given twice"),
        ];
        for (args, expected) in cases {
            assert_eq!(build_args(args), Err(expected.to_string()), "{args:?}");
        }
    }

    #[test]
    fn refuses_unpackable_host_files() {
        let host = Scratch::new();
        host.file("f", 0o644, b"");
        let _socket = UnixListener::bind(host.path("socket")).unwrap();
        let err = build_args(&["--dir", &host.arg("")]).unwrap_err();
        assert!(
            err.ends_with("socket: not a directory, regular file or symlink"),
            "{err}"
        );

        let err = build_args(&["--dir", &host.arg("/f")]).unwrap_err();
        assert!(err.ends_with("f: not a directory"), "{err}");
        let err = build_args(&["--file", &host.arg("/missing:/x")]).unwrap_err();
        assert!(err.contains("missing: "), "{err}");
    }

    #[test]
    fn output_depends_only_on_names_contents_and_permissions() {
        let first = sample_tree();
        // The same tree, made in another order and at another time.
        let second = Scratch::new();
        second
            .symlink("motd", "etc/motd")
            .dir("etc/private", 0o700)
            .dir("etc", 0o750)
            .file("etc/empty", 0o600, b"")
            .file("etc/motd", 0o644, b"hello, faultline\n")
            .dir("bin", 0o755)
            .file("bin/init", 0o755, b"#!init\n");
        let an_hour_ago = SystemTime::now() - Duration::from_secs(3600);
        File::options()
            .write(true)
            .open(second.path("etc/motd"))
            .unwrap()
            .set_modified(an_hour_ago)
            .unwrap();

        let archive = build_args(&[
            "--dir",
            &first.arg(""),
            "--file",
            &first.arg("/bin/init:/init"),
        ]);
        let again = build_args(&[
            "--dir",
            &first.arg(""),
            "--file",
            &first.arg("/bin/init:/init"),
        ]);
        let other = build_args(&[
            "--dir",
            &second.arg(""),
            "--file",
            &second.arg("/bin/init:/init"),
        ]);
        let archive = archive.unwrap();
        assert_eq!(again.unwrap(), archive);
        assert_eq!(other.unwrap(), archive);
    }

    #[test]
    fn writes_a_trailer_even_with_nothing_to_pack() {
        let archive = build_args(&[]).unwrap();
        check_invariants(&archive);
        assert!(entries(&archive).is_empty());
        assert_eq!(&archive[..MAGIC.len()], MAGIC);
    }

    #[test]
    fn parses_the_command_line() {
        let args = |args: &[&str]| parse_args(args.iter().map(OsString::from));
        let file = |host: &str, dest: &[&str], perm| Source::File {
            host: host.into(),
            dest: dest.iter().map(|c| c.to_string()).collect(),
            perm,
        };
        let dir = |host: &str, dest: &[&str]| Source::Dir {
            host: host.into(),
            dest: dest.iter().map(|c| c.to_string()).collect(),
        };
        assert_eq!(
            args(&[
                "--dir",
                "root",
                "-o",
                "out.cpio",
                "--file",
                "a:/b/c:755",
                "--dir",
                "d:/e",
                "--file",
                "x:y"
            ]),
            Ok(Options {
                output: "out.cpio".into(),
                sources: vec![
                    dir("root", &[]),
                    file("a", &["b", "c"], Some(0o755)),
                    dir("d", &["e"]),
                    file("x", &["y"], None),
                ],
            })
        );
        let errors: [(&[&str], &str); 11] = [
            (&[], "-o OUT.cpio is required"),
            (&["-o"], "-o needs a value"),
            (&["-o", "a", "-o", "b"], "-o given twice"),
            (&["-o", "a", "--frob"], "unknown argument \"--frob\""),
            (
                &["-o", "a", "--file", "x"],
                "--file x: expected HOST_FILE:DEST[:MODE]",
            ),
            (
                &["-o", "a", "--file", "x:/"],
                "--file x:/: the destination is the root",
            ),
            (
                &["-o", "a", "--file", "x:y:9"],
                "--file x:y:9: \"9\" is not an octal mode",
            ),
            (
                &["-o", "a", "--file", "x:y:10000"],
                "--file x:y:10000: \"10000\" is not an octal mode",
            ),
            (
                &["-o", "a", "--file", "x:y:1:2"],
                "--file x:y:1:2: expected HOST_FILE:DEST[:MODE]",
            ),
            (
                &["-o", "a", "--dir", "x:y:z"],
                "--dir x:y:z: expected HOST_DIR[:DEST]",
            ),
            (
                &["-o", "a", "--dir", "x:a/../b"],
                "destination \"a/../b\" contains \"..\"",
            ),
        ];
        for (argv, expected) in errors {
            assert_eq!(args(argv), Err(expected.to_string()), "{argv:?}");
        }
    }
}
