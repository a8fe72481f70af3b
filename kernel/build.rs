//! Links the kernel with `linker.ld` from the workspace root, and builds
//! the vDSO (`src/arch/aarch64/vdso/`) with the cross C compiler into
//! `$OUT_DIR/vdso.so`, which the kernel embeds.
use std::path::Path;
use std::process::Command;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let script = root.join("linker.ld").canonicalize().expect("linker.ld");
    if std::env::var("TARGET")
        .unwrap_or_default()
        .starts_with("aarch64-unknown-none")
    {
        println!("cargo:rustc-link-arg-bins=-T{}", script.display());
    }
    println!("cargo:rerun-if-changed={}", script.display());
    build_vdso(&root.join("kernel/src/arch/aarch64/vdso"));
}

/// A position-independent shared object with no libc and no relocations
/// (Linux: `arch/arm64/kernel/vdso/Makefile`).
fn build_vdso(dir: &Path) {
    let out = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("vdso.so");
    let cc = std::env::var("FAULTLINE_CROSS_CC").unwrap_or("aarch64-linux-gnu-gcc".into());
    for file in ["vdso.c", "vdso.lds"] {
        println!("cargo:rerun-if-changed={}", dir.join(file).display());
    }
    println!("cargo:rerun-if-env-changed=FAULTLINE_CROSS_CC");
    let status = Command::new(&cc)
        .args([
            "-O2",
            "-fPIC",
            "-nostdlib",
            "-shared",
            "-fno-stack-protector",
        ])
        .args(["-fno-asynchronous-unwind-tables", "-Wall", "-Werror"])
        .args(["-Wl,-soname=linux-vdso.so.1", "-Wl,--hash-style=both"])
        .args(["-Wl,-Bsymbolic", "-Wl,--no-undefined"])
        .arg(format!("-Wl,-T,{}", dir.join("vdso.lds").display()))
        .arg("-o")
        .arg(&out)
        .arg(dir.join("vdso.c"))
        .status();
    match status {
        Ok(s) if s.success() => {}
        _ => panic!(
            "building the vDSO needs {cc}: apt-get install gcc-aarch64-linux-gnu \
             (or set FAULTLINE_CROSS_CC)"
        ),
    }
}
