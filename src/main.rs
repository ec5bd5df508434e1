fn main() -> std::process::ExitCode {
    warpjit::cli::main()
}
