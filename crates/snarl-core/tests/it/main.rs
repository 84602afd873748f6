//! Integration tests: one binary, one module per concern.

mod analytic;
mod bad_input;
mod common;
mod determinism;
mod docs;
mod endpoint;
mod fct;
mod mechanisms;
mod scenarios;
