//! Integration tests: one binary, one module per concern.

mod analytic;
mod bad_input;
mod determinism;
mod scenarios;
mod common;
