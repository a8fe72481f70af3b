//! The layering docs/code-map.md promises, checked on the source text:
//! mm lies below fs and task, and all three below syscall.
//!
//! - **The fault path's mm files name nothing above mm.** A user fault
//!   runs from `arch/aarch64/fault.rs` (arm64's part, which may signal a
//!   task, as Linux's `arch/arm64/mm/fault.c` does) into the mm files
//!   listed in `FAULT_PATH`; a file system takes part only through the
//!   VMA's `VmOperations`. Those files may not use `crate::fs`,
//!   `crate::task`, `crate::syscall`, `crate::net` or `crate::ipc`, save
//!   the uses in `ALLOWED`, each with its reason.
//! - **Nothing below syscall names syscall**: not mm, fs, task, net or ipc.

use std::fs;
use std::path::Path;

/// The repository's root.
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// The mm files a user page fault runs in (directories: every `.rs` in them).
const FAULT_PATH: &[&str] = &[
    "kernel/src/mm/addr.rs",
    "kernel/src/mm/buddy.rs",
    "kernel/src/mm/fault.rs",
    "kernel/src/mm/fault_range.rs",
    "kernel/src/mm/filemap.rs",
    "kernel/src/mm/folio.rs",
    "kernel/src/mm/folio_index.rs",
    "kernel/src/mm/folio_index/xa_node.rs",
    "kernel/src/mm/frame.rs",
    "kernel/src/mm/huge_memory",
    "kernel/src/mm/memory.rs",
    "kernel/src/mm/mm_struct.rs",
    "kernel/src/mm/pcp.rs",
    "kernel/src/mm/pgtable.rs",
    "kernel/src/mm/ptlock.rs",
    "kernel/src/mm/vm_fault.rs",
    "kernel/src/mm/vm_ops.rs",
    "kernel/src/mm/vma.rs",
    "kernel/src/mm/vma_lock.rs",
    "kernel/src/mm/vmstat.rs",
];

/// Uses above mm that a fault-path file keeps: (file, path, why).
const ALLOWED: &[(&str, &str, &str)] = &[
    (
        "kernel/src/mm/vma.rs",
        "crate::fs::vfs::Inode",
        "the type of Vma::file, as Linux's vm_area_struct holds a struct file *",
    ),
    (
        "kernel/src/mm/vma_lock.rs",
        "crate::task::yield_now",
        "VmaLock::start_write, a writer's wait for a fault to leave the VMA \
         (Linux: down_write on the VMA's lock, which schedules)",
    ),
];

/// The modules above mm.
const ABOVE_MM: &[&str] = &["fs", "task", "syscall", "net", "ipc"];

/// Every `.rs` file at `path` (a file, or a directory searched whole).
fn rust_files(path: &Path, into: &mut Vec<std::path::PathBuf>) {
    if path.is_dir() {
        for entry in fs::read_dir(path).expect("a readable directory") {
            rust_files(&entry.expect("a directory entry").path(), into);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        into.push(path.to_path_buf());
    }
}

/// The `crate::` paths a Rust file names, as written up to the first
/// brace or non-path character: `crate::task::yield_now`, and for
/// `crate::{fs, task}` each of `crate::fs` and `crate::task`.
fn crate_paths(text: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for (at, _) in text.match_indices("crate::") {
        let rest = &text[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = group.split('}').next().unwrap_or("");
            for item in inner.split(',') {
                let item = item.trim();
                if !item.is_empty() {
                    paths.push(format!("crate::{item}"));
                }
            }
            continue;
        }
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        paths.push(format!("crate::{}", rest[..end].trim_end_matches(':')));
    }
    paths
}

/// The top module a `crate::` path names (`task` for `crate::task::x`).
fn top_module(path: &str) -> &str {
    path["crate::".len()..].split("::").next().unwrap_or("")
}

/// (file, path) for each use of one of `modules` in `files`.
fn uses_of(files: &[std::path::PathBuf], modules: &[&str]) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for file in files {
        let shown = file
            .strip_prefix(ROOT)
            .unwrap_or(file)
            .display()
            .to_string();
        let text = fs::read_to_string(file).expect("readable");
        for path in crate_paths(&text) {
            if modules.contains(&top_module(&path)) {
                found.push((shown.clone(), path));
            }
        }
    }
    found
}

#[test]
fn the_reader_finds_plain_and_grouped_paths() {
    let text =
        "use crate::task::signal::{self, X};\nuse crate::{fs, mm::addr};\nf(crate::syscall::nr)";
    assert_eq!(
        crate_paths(text),
        [
            "crate::task::signal",
            "crate::fs",
            "crate::mm::addr",
            "crate::syscall::nr"
        ]
    );
}

#[test]
fn the_fault_path_in_mm_names_nothing_above_mm() {
    let mut files = Vec::new();
    for path in FAULT_PATH {
        rust_files(&Path::new(ROOT).join(path), &mut files);
    }
    assert!(files.len() > 20, "only {} fault-path files", files.len());
    let mut allowed_seen = Vec::new();
    let mut wrong = Vec::new();
    for (file, path) in uses_of(&files, ABOVE_MM) {
        let allowed = ALLOWED
            .iter()
            .find(|(f, p, _)| file.ends_with(f) && path == *p);
        match allowed {
            Some(a) => allowed_seen.push(a.1),
            None => wrong.push(format!("{file}: {path}")),
        }
    }
    assert!(
        wrong.is_empty(),
        "the fault path reaches above mm:\n{}",
        wrong.join("\n")
    );
    for (file, path, _) in ALLOWED {
        assert!(
            allowed_seen.contains(path),
            "ALLOWED's {path} is used in {file} no more: drop it"
        );
    }
}

#[test]
fn nothing_below_syscall_names_syscall() {
    let mut files = Vec::new();
    for dir in ["mm", "fs", "task", "net", "ipc"] {
        rust_files(&Path::new(ROOT).join("kernel/src").join(dir), &mut files);
    }
    let uses = uses_of(&files, &["syscall"]);
    assert!(uses.is_empty(), "{uses:?}");
}
