// Package archtest holds no code, only a test: it enforces the layered import rules of the
// project's layout (shared/style.md §3) with `go list -deps`, so that a backwards arrow, such as
// the server importing client code or a leaf package growing a dependency, fails CI.
//
// The rules are data in archtest_test.go: one row per package with its layer and the packages
// of the module it may import. A new package must be added to that table before its first
// commit; the test says so when it meets one it does not know.
package archtest
