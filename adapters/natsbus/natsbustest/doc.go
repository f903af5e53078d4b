// Package natsbustest holds test helpers shared by the packages that run NATS in
// their tests (adapters/natsbus, runtime/supervisor, runtime/wire): a check that
// no goroutine of nats-server, nats.go or the package under test outlives the
// tests, and a JetStream cluster of several nats-servers in the process on loopback
// ports (StartCluster) whose nodes can be stopped and started again, for tests
// about a fleet on several machines.
//
// It imports nats-server but not natsbus, so natsbus's own (internal) tests can
// use it.
package natsbustest
