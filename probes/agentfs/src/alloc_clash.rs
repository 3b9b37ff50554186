//! Expected NOT to link. wsfs's tests/read_allocations.rs and benches/layers.rs install their
//! own `#[global_allocator]` (a counting allocator); turso, which agentfs-sdk pulls with its
//! default features, installs mimalloc as the global allocator. Two global allocators in one
//! binary are a hard error, so those two wsfs targets could not be built with an `agentfs`
//! feature on. run.sh builds this binary and records the compiler's message.
use std::alloc::{GlobalAlloc, Layout, System};

struct Counting;

// SAFETY: forwards to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let _ = agentfs_sdk::AgentFS::open(agentfs_sdk::AgentFSOptions::ephemeral()).await;
    });
}
