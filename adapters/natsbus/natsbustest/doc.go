// Package natsbustest holds test helpers shared by the packages that run NATS in
// their tests (adapters/natsbus, runtime/supervisor): a check that no goroutine of
// nats-server, nats.go or the package under test outlives the tests.
//
// It imports neither NATS nor natsbus, so natsbus's own (internal) tests can use
// it.
package natsbustest
