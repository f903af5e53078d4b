// Package browsertest drives Debian's headless Chromium for the tests of the
// project's pages (the backtest report, the fleet dashboard): the DevTools protocol
// over a pipe (--remote-debugging-pipe: no WebSocket, no port), pages opened in
// their own targets, expressions evaluated, clicks and typing as a person does
// them, full-page screenshots at a chosen width, and the comparison of a
// screenshot with a committed reference image within a tolerance that survives
// font antialiasing differences between machines (see CompareImages). It is
// imported by tests only.
//
// Without chromium on PATH a test skips, unless PITBOSS_REQUIRE_BROWSER=1 (CI,
// where scripts/ci-setup installs it) makes that a failure.
package browsertest
