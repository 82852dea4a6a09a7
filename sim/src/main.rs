//! `a3ctl-sim`: run the simulator standalone.
fn main() {}
