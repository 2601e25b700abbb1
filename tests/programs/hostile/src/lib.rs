//! A hostile plugin: each tool abuses the host in one way. The host must turn every one into a
//! typed error for that call and keep serving. `hostile_echo` is the well-behaved control.

use bardo_sdk::{Category, Error, ReadTool, ToolDef, chain, events, tool_def};
use schemars::JsonSchema;
use serde::Deserialize;
use std::hint::black_box;

#[derive(Deserialize, JsonSchema)]
struct NoParams {}

#[derive(Deserialize, JsonSchema)]
struct EchoParams {
    /// Returned as is.
    text: String,
}

fn def(name: &str, what: &str) -> ToolDef {
    tool_def::<NoParams>(name, what, Category::Testnet)
}

macro_rules! hostile {
    ($ty:ident, $name:literal, $what:literal, $body:block) => {
        struct $ty;
        impl ReadTool for $ty {
            const NAME: &'static str = $name;
            type Params = NoParams;
            type Output = String;
            fn def() -> ToolDef {
                def($name, $what)
            }
            fn run(_: NoParams) -> Result<String, Error> $body
        }
    };
}

hostile!(Spin, "hostile_spin", "Loops forever on pure compute.", {
    let mut x = 0u64;
    loop {
        x = black_box(x.wrapping_add(1));
    }
});

hostile!(HostSpin, "hostile_host_spin", "Loops forever calling host imports.", {
    loop {
        events::log(events::Level::Trace, "spinning");
        let _ = black_box(chain::block_number(31337));
    }
});

hostile!(
    ReadSpin,
    "hostile_read_spin",
    "Reads the chain until a read is refused, and returns that error.",
    {
        loop {
            black_box(chain::block_number(31337)?);
        }
    }
);

hostile!(MemoryBomb, "hostile_memory_bomb", "Allocates until memory runs out.", {
    // Allocate without touching the pages: memory grows fast, fuel barely moves.
    let mut hoard: Vec<Vec<u8>> = Vec::new();
    loop {
        let mut chunk = Vec::with_capacity(16 << 20);
        chunk.push(1u8);
        hoard.push(black_box(chunk));
    }
});

#[expect(unconditional_recursion, reason = "the point of the test program")]
fn recurse(depth: u64) -> u64 {
    black_box(recurse(black_box(depth + 1))) + 1
}

hostile!(Recurse, "hostile_recurse", "Recurses without bound.", { Ok(recurse(0).to_string()) });

/// Each frame holds a buffer in linear memory (the shadow stack Rust keeps there, below its
/// data): unbounded, it runs past the stack's start, which the guest sees as an access outside
/// its memory rather than as wasmtime's own stack limit.
#[expect(unconditional_recursion, reason = "the point of the test program")]
fn recurse_in_memory(depth: u64) -> u64 {
    let frame = black_box([depth as u8; 1024]);
    black_box(recurse_in_memory(black_box(depth + 1))) + u64::from(black_box(&frame)[7])
}

hostile!(
    RecurseInMemory,
    "hostile_recurse_in_memory",
    "Recurses without bound, a 1 KiB buffer per frame.",
    { Ok(recurse_in_memory(0).to_string()) }
);

hostile!(Panic, "hostile_panic", "Panics.", { panic!("hostile plugin panicked on purpose") });

hostile!(HugeOutput, "hostile_huge_output", "Returns a 5 MB result.", { Ok("x".repeat(5_000_000)) });

/// Calls this instance has served: with a fresh instance per call, always 1.
static SERVED: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

hostile!(Remember, "hostile_remember", "Counts the calls its instance has served, in its own memory.", {
    Ok((SERVED.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1).to_string())
});

struct Echo;
impl ReadTool for Echo {
    const NAME: &'static str = "hostile_echo";
    type Params = EchoParams;
    type Output = String;
    fn def() -> ToolDef {
        tool_def::<EchoParams>(Self::NAME, "Returns `text`: the well-behaved control.", Category::Testnet)
    }
    fn run(p: EchoParams) -> Result<String, Error> {
        Ok(p.text)
    }
}

bardo_sdk::plugin! {
    name: "hostile",
    read: [Spin, HostSpin, ReadSpin, MemoryBomb, Recurse, RecurseInMemory, Panic, HugeOutput, Remember, Echo],
}
