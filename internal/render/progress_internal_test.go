package render

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type recorder []string

func (r *recorder) Stage(m string)  { *r = append(*r, "stage "+m) }
func (r *recorder) Update(m string) { *r = append(*r, "update "+m) }
func (r *recorder) Print(m string)  { *r = append(*r, "print "+m) }

// TestBuildEvents routes the build package's lines: events update the
// status, a failure and its output stay; lines split across writes are
// joined, and a last line without its end is flushed.
func TestBuildEvents(t *testing.T) {
	t.Parallel()
	var r recorder
	w := buildEvents(&r)
	fmt.Fprint(w, "build 1/2 shop/a/api: building\nbuild 1/2 shop/a/api: pus")
	fmt.Fprint(w, "hed reg/x:1@sha256:aa\nbuild 2/2 shop/b/api: failed: exit 1\n    | step 3\n    | no")
	w.flush()
	want := recorder{
		"update build 1/2 shop/a/api: building",
		"update build 1/2 shop/a/api: pushed reg/x:1@sha256:aa",
		"print build 2/2 shop/b/api: failed: exit 1",
		"print     | step 3",
		"print     | no",
	}
	if d := cmp.Diff(want, r); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
