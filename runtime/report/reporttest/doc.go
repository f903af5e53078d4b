// Package reporttest holds test helpers for the packages that write reports
// (runtime/report, runtime/backtest): the comparison of an output with its golden
// file. It is imported by tests only.
package reporttest
