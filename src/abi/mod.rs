pub mod api;
pub mod dispatch;
pub mod envelope;
pub mod ffi;
pub mod handles;
pub mod profiles;
pub mod session;
pub mod specs;
