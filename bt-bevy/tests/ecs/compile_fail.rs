//! Mistakes in using the plugin that must not compile, each with the error
//! it gives (see `tests/compile_fail/README.md`).

#[test]
fn compile_fail_cases() {
    trybuild::TestCases::new().compile_fail("tests/compile_fail/*.rs");
}
