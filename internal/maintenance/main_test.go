package maintenance

import (
	"testing"

	"go.uber.org/goleak"
)

// The loops' tests need no database; goleak checks that no loop goroutine outlives them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
