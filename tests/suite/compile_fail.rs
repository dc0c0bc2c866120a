//! Misuses of the DSL that must not compile, each with the error it gives.

#[test]
#[cfg_attr(miri, ignore)] // runs rustc
fn compile_fail_cases() {
    trybuild::TestCases::new().compile_fail("tests/compile_fail/*.rs");
}
