//! The five tools. Each takes a validated path and a call control and returns typed data.

pub mod edit;
pub mod list;
pub mod read;
pub mod write;
