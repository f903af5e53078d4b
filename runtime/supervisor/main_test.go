package supervisor_test

import (
	"testing"

	"github.com/pitbossdev/pitboss/runtime/supervisor/supervisortest"
)

// TestMain runs the tests (or a fake agent, when the supervisor under test started
// this binary as one) and checks that no goroutine leaked.
func TestMain(m *testing.M) { supervisortest.Main(m) }
