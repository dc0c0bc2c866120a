//! Misuses of the DSL that must not compile, each with the error it gives.

#[test]
#[cfg_attr(miri, ignore)] // runs rustc
#[cfg_attr(
    rust_src,
    ignore = "the toolchain has rust-src, with which rustc quotes the standard library in \
              the expected errors: run them with CI=1 on a toolchain without it (see \
              tests/compile_fail/README.md)"
)]
fn compile_fail_cases() {
    trybuild::TestCases::new().compile_fail("tests/compile_fail/*.rs");
}
