//! Build script shared by the user binary crates (init, tests): links every
//! binary with `user/user.ld` into a static executable laid out in 4 KiB
//! pages (lld's aarch64 default would pad file offsets to 64 KiB).
use std::path::Path;

fn main() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../user.ld")
        .canonicalize()
        .expect("user/user.ld");
    if std::env::var("TARGET").unwrap_or_default() == "aarch64-unknown-none" {
        println!("cargo:rustc-link-arg-bins=-T{}", script.display());
        println!("cargo:rustc-link-arg-bins=-zmax-page-size=4096");
    }
    println!("cargo:rerun-if-changed={}", script.display());
}
