// Package archtest holds the test that enforces the import rules of
// docs/design/architecture.md: which package may import what. The rules live in
// Rules; the check runs over `go list` output of the whole module.
package archtest
