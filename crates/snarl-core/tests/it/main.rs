//! Integration tests: one binary, one module per concern.

mod adaptive_routing;
mod analytic;
mod bad_input;
mod closed_loop;
mod collectives;
mod common;
mod dcqcn;
mod determinism;
mod docs;
mod endpoint;
mod fat_links;
mod fct;
mod golden;
mod gpu_nodes;
mod honest_numbers;
mod ibcc;
mod infiniband;
mod isolation;
mod layering;
mod load_balancing;
mod lossless_ethernet;
mod mechanisms;
mod memory;
mod nccl;
mod per_pair_cc;
mod pfc;
mod presets;
mod python;
mod receivers;
mod recovery;
mod scenarios;
mod schema;
mod stop_after;
mod toy_collector;
mod toy_routing;
mod toy_window_cc;
mod traffic_mix;
mod trees;
mod vc_choice;
mod victim_aggressor;
mod voq;
mod watchdog;
mod wire;
mod workload;

/// Counts allocations for the memory tests (only in the child processes they start).
#[global_allocator]
static ALLOCATOR: memory::Counting = memory::Counting;
