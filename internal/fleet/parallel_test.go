package fleet

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

func TestInParallel(t *testing.T) {
	t.Parallel()
	var calls [1000]atomic.Int32
	err := inParallel(len(calls), func(i int) error {
		calls[i].Add(1)
		if i%300 == 7 {
			return fmt.Errorf("job %d", i)
		}
		return nil
	})
	for i := range calls {
		if n := calls[i].Load(); n != 1 {
			t.Fatalf("job %d ran %d times", i, n)
		}
	}
	// Every error, in the order of the jobs.
	if want := "job 7\njob 307\njob 607\njob 907"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
	if err := inParallel(0, func(int) error { return errors.New("called") }); err != nil {
		t.Errorf("no jobs: %v", err)
	}
}
