//! The `a3ctl` binary: [`a3ctl::commands::main`] is the whole program (it lives in the library so
//! that the library, not this crate, compiles the commands' futures).

fn main() -> std::process::ExitCode {
    a3ctl::commands::main()
}
