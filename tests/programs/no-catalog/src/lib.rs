//! A valid component that exports no `bardo:plugin/catalog`: the host must refuse to load it,
//! and `bardo audit` must still show what it imports (it reads a file: `wasi:filesystem`).

/// Exported as a plain core function; the component exports no interface at all.
#[unsafe(no_mangle)]
pub extern "C" fn not_a_plugin() -> u32 {
    std::fs::read("/etc/hostname").map_or(0, |bytes| bytes.len() as u32)
}
