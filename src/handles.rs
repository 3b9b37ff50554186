//! Workspace handles: opaque non-zero ids, never reused, mapped to shared workspaces and the
//! profile each serves.

use crate::error::{ErrorCode, Result, WsfsError};
use crate::profiles::Profile;
use crate::tools::ToolSet;
use crate::workspace::Workspace;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::LazyLock;
use std::sync::{Arc, RwLock};

/// An open workspace as the ABI serves it: the workspace, the tools it offers natively (the
/// built-in ones and the Wasm tools its config loaded) and the profile it serves.
pub struct Opened {
    pub ws: Arc<Workspace>,
    pub tools: ToolSet,
    /// `None` for the native tools (`wsfs`), which never reach the profile engine.
    pub profile: Option<&'static Profile>,
}

impl Opened {
    pub fn profile_name(&self) -> &str {
        self.profile.map_or(crate::profiles::DEFAULT, |p| &p.name)
    }
}

static WORKSPACES: LazyLock<RwLock<HashMap<u64, Arc<Opened>>>> = LazyLock::new(Default::default);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

pub fn insert(opened: Opened) -> u64 {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    WORKSPACES
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .insert(id, Arc::new(opened));
    id
}

/// The workspace for a handle. Calls hold the `Arc`, so closing a handle lets them finish.
pub fn get(id: u64) -> Result<Arc<Opened>> {
    WORKSPACES
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .get(&id)
        .cloned()
        .ok_or_else(|| invalid(id))
}

pub fn remove(id: u64) -> Result<Arc<Opened>> {
    WORKSPACES
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&id)
        .ok_or_else(|| invalid(id))
}

fn invalid(id: u64) -> WsfsError {
    WsfsError::new(
        ErrorCode::InvalidWorkspace,
        format!("workspace handle {id} is not open (never opened, or already closed)"),
    )
}
