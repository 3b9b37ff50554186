pub mod api;
pub mod dispatch;
pub mod envelope;
pub mod ffi;
pub mod handles;
// The profile engine and data (issue 18); the workspace applies it from the next commit.
#[allow(dead_code)]
pub mod profiles;
pub mod specs;
