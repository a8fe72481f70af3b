//! Links the kernel with `linker.ld` from the workspace root.
fn main() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let script = root.join("linker.ld").canonicalize().expect("linker.ld");
    if std::env::var("TARGET")
        .unwrap_or_default()
        .starts_with("aarch64-unknown-none")
    {
        println!("cargo:rustc-link-arg-bins=-T{}", script.display());
    }
    println!("cargo:rerun-if-changed={}", script.display());
}
